"""The web UI's icon, `/favicon.ico`: a browser asks for it on every first page, and a 404 there
fills the server's log. A 32x32 ICO holding one PNG (a white ring on dark blue: a lens), drawn
here once at import, so no binary file ships with the package."""

from __future__ import annotations

import struct
import zlib

SIZE = 32
_BACK = (22, 50, 79, 255)  # the nav bar's colour in web.css (#16324f)
_RING = (255, 255, 255, 255)
_CLEAR = (0, 0, 0, 0)


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    cx = cy = (SIZE - 1) / 2
    # rounded corners: clear outside a square with a radius of 6
    r, dx, dy = 6, min(x, SIZE - 1 - x), min(y, SIZE - 1 - y)
    if dx < r and dy < r and (r - dx) ** 2 + (r - dy) ** 2 > r * r:
        return _CLEAR
    d = ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5
    return _RING if 7 <= d <= 10.5 else _BACK


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png() -> bytes:
    """The icon as a 32x32 RGBA PNG."""
    rows = b"".join(
        b"\x00" + b"".join(bytes(_pixel(x, y)) for x in range(SIZE)) for y in range(SIZE)
    )
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 9))
        + _chunk(b"IEND", b"")
    )


def ico() -> bytes:
    """One PNG image in an ICO directory (every current browser reads a PNG inside an ICO)."""
    image = png()
    directory = struct.pack("<HHH", 0, 1, 1)  # reserved, type 1 (icon), one image
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(image), 6 + 16)
    return directory + entry + image


FAVICON = ico()
