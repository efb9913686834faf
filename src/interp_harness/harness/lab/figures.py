"""A cell's figures as the orchestrator accepts them: PNG bytes checked before anything stores or
forwards them.

The kernel renders the figures a cell left open (harness/lab/kernel.py) and sends them base64 in
its `done` frame, but the kernel runs the cell's code: the bytes are untrusted. Each must be
valid base64 of at most the operator's size (HARNESS_LAB_MAX_FIGURE_KB), start with the PNG
signature and a well-formed IHDR chunk (its CRC right) whose width and height are within
FIGURE_MAX_SIDE and FIGURE_MAX_PIXELS, and end with the IEND chunk; at most the operator's number
(HARNESS_LAB_MAX_FIGURES) are taken. The image data itself is not decoded here: the providers
that read it decode it, and nothing in the harness does.
"""

from __future__ import annotations

import base64
import binascii
import zlib

from pydantic import BaseModel

from interp_harness.agents.images import MAX_IMAGE_SIDE

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"
FIGURE_MAX_SIDE = MAX_IMAGE_SIDE  # pixels, either side: what an agent's message may carry
# pixels in all (a 640x480 figure, matplotlib's default, is 307,200)
FIGURE_MAX_PIXELS = 2048 * 2048


class Figure(BaseModel):
    """One accepted figure: PNG bytes and the size its header says."""

    png: bytes
    width: int
    height: int

    def line(self, number: int) -> str:
        """What every agent reads of it (a text agent learns a figure was made)."""
        return f"[figure {number}: {self.width}x{self.height} PNG]"


class NotAFigure(ValueError):
    """Why a blob the lab sent is not accepted as a figure."""


def png_size(data: bytes, max_bytes: int) -> tuple[int, int]:
    """(width, height) of a PNG within the bounds; NotAFigure saying why otherwise."""
    if len(data) > max_bytes:
        raise NotAFigure(f"{len(data):,} bytes, over the limit of {max_bytes:,}")
    if not data.startswith(PNG_SIGNATURE) or len(data) < 8 + 25 + len(_IEND):
        raise NotAFigure("not a PNG image")
    length, kind = int.from_bytes(data[8:12], "big"), data[12:16]
    header, crc = data[16:29], data[29:33]
    if kind != b"IHDR" or length != 13 or zlib.crc32(kind + header) != int.from_bytes(crc, "big"):
        raise NotAFigure("not a PNG image (no valid IHDR chunk)")
    if not data.endswith(_IEND):
        raise NotAFigure("not a PNG image (no IEND chunk at its end)")
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    if not (0 < width <= FIGURE_MAX_SIDE and 0 < height <= FIGURE_MAX_SIDE):
        raise NotAFigure(f"{width}x{height} pixels, over {FIGURE_MAX_SIDE} a side")
    if width * height > FIGURE_MAX_PIXELS:
        raise NotAFigure(f"{width}x{height} pixels, over {FIGURE_MAX_PIXELS:,} in all")
    return width, height


def accept_figures(
    encoded: list[str], max_figures: int, max_bytes: int
) -> tuple[list[Figure], list[str]]:
    """The figures of a `done` frame that pass the checks (at most `max_figures`), and a note for
    each one refused (for the cell's reply; the refused bytes go nowhere)."""
    figures: list[Figure] = []
    notes: list[str] = []
    for text in encoded:
        if len(figures) >= max_figures:
            notes.append(f"[a figure was refused: at most {max_figures} are sent per cell]")
            continue
        try:
            data = base64.b64decode(text, validate=True)
            width, height = png_size(data, max_bytes)
        except (binascii.Error, ValueError) as e:
            why = str(e) if isinstance(e, NotAFigure) else "not base64"
            notes.append(f"[a figure was refused: {why}]")
            continue
        figures.append(Figure(png=data, width=width, height=height))
    return figures, notes
