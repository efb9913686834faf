"""An Inspect log read within the operator's bounds (`harness import-inspect`).

A `.eval` log is a zip: a few hundred kB of it may inflate to gigabytes (a decompression bomb),
and Inspect reads each sample member whole. So the log is first copied into a private folder:
each member's declared size, and their sum, are checked against the bounds (a first check, but
the sizes are the file's word), then every member is inflated here in small chunks through a
counter that stops past the bound, and written to a copy (recompressed cheaply). Inspect then
parses that copy, whose sizes are what was read, never the original. A `.json` log is copied the
same way, counted.
"""

from __future__ import annotations

import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from interp_harness.harness.settings import Settings

CHUNK = 1 << 16  # bytes inflated at a time: what one read may cost, whatever the ratio
# A log has a member per sample and a few more; the central directory is parsed whole by
# zipfile (hundreds of bytes of memory per entry), so its entry count is checked first.
MAX_MEMBERS = 100_000
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a member's local file header (APPNOTE 4.3.7)
_LOCAL_SIGNATURE = b"PK\x03\x04"
ZSTD = 93  # Inspect writes its members with zstandard
_MEMBER_SETTING = "HARNESS_IMPORT_MAX_MEMBER_BYTES"
_LOG_SETTING = "HARNESS_IMPORT_MAX_LOG_BYTES"


@dataclass(frozen=True)
class LogBounds:
    """The most bytes one member of a `.eval` (one sample, as a rule) and the whole log may
    inflate to (HARNESS_IMPORT_MAX_MEMBER_BYTES, HARNESS_IMPORT_MAX_LOG_BYTES; operator only)."""

    member_bytes: int
    log_bytes: int

    @classmethod
    def from_settings(cls, settings: Settings) -> LogBounds:
        return cls(settings.import_max_member_bytes, settings.import_max_log_bytes)


class LogRefused(ValueError):
    """The file is past the bounds, or not a log that can be read within them."""


def bounded_copy(path: Path, folder: Path, bounds: LogBounds) -> Path:
    """A copy of the log at `path` in `folder` (`log.eval` or `log.json`) that Inspect may parse:
    every member inflated and counted here. LogRefused past a bound, or for a file that is not a
    zip (`.eval`) or not a `.json`."""
    suffix = path.suffix.lower()
    if suffix not in (".eval", ".json"):
        raise LogRefused(f"not an Inspect eval log (a .eval or .json file, not {suffix or '-'!r})")
    out = folder / f"log{suffix}"
    with open(path, "rb") as f:  # one open file: what is checked is what is copied
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise LogRefused("not a regular file")
        if suffix == ".json":
            with open(out, "wb") as w:
                _copy(f.read, w, bounds.log_bytes, _past("the log", bounds.log_bytes, _LOG_SETTING))
        else:
            _copy_zip(f, out, bounds)
    return out


def _declared(what: str, size: int, bound: int, setting: str) -> LogRefused:
    return LogRefused(
        f"too large: {what} declares {size:,} bytes inflated, over the {bound:,} the operator "
        f"allows ({setting}); refused unread, as a possible decompression bomb"
    )


def _past(what: str, bound: int, setting: str) -> LogRefused:
    return LogRefused(
        f"too large: {what} inflates past the {bound:,} bytes the operator allows ({setting}); "
        "reading stopped there, as a possible decompression bomb"
    )


def _copy_zip(f: BinaryIO, out: Path, bounds: LogBounds) -> None:
    size = os.fstat(f.fileno()).st_size
    if size > bounds.log_bytes:
        raise LogRefused(
            f"too large: the file is {size:,} bytes, over the {bounds.log_bytes:,} the operator "
            f"allows a log to inflate to ({_LOG_SETTING})"
        )
    end = zipfile._EndRecData(f)  # type: ignore[attr-defined]  # the record ZipFile parses
    if end is None:
        raise LogRefused("not an Inspect eval log (not a zip file)")
    if end[zipfile._ECD_ENTRIES_TOTAL] > MAX_MEMBERS:  # type: ignore[attr-defined]
        raise LogRefused(
            f"too many members: the zip lists {end[zipfile._ECD_ENTRIES_TOTAL]:,}, "  # type: ignore[attr-defined]
            f"at most {MAX_MEMBERS:,} are read"
        )
    try:
        infos = zipfile.ZipFile(f).infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise LogRefused(f"not an Inspect eval log (not a readable zip: {e})"[:500]) from e
    declared = 0
    for info in infos:  # the sizes the file declares: refused before anything is inflated
        if info.file_size > bounds.member_bytes:
            what = f"member {info.filename[:200]!r}"
            raise _declared(what, info.file_size, bounds.member_bytes, _MEMBER_SETTING)
        declared += info.file_size
    if declared > bounds.log_bytes:
        raise _declared("the log", declared, bounds.log_bytes, _LOG_SETTING)
    last = {i.filename: i for i in infos}  # Inspect reads a repeated name's last entry
    left = bounds.log_bytes
    with zipfile.ZipFile(out, "w", allowZip64=True, **_copy_compression()) as dst:
        for info in last.values():
            if bounds.member_bytes <= left:
                bound = bounds.member_bytes
                past = _past(f"member {info.filename[:200]!r}", bound, _MEMBER_SETTING)
            else:  # the whole log's bound comes first
                bound, past = left, _past("the log", bounds.log_bytes, _LOG_SETTING)
            with dst.open(info.filename, "w", force_zip64=True) as w:
                left -= _copy(_inflater(f, info), w, bound, past)


def _copy_compression() -> dict[str, Any]:
    """How the copy's members are written: compressed at level 1, because Inspect reads a stored
    member with two copies of it in memory and a compressed one with one (measured: 712 against
    513 MB for a 200 MiB sample). Zstandard, Inspect's own, where zipfile has it (inspect-ai
    teaches it, or Python 3.14); else deflate."""
    zstd = getattr(zipfile, "ZIP_ZSTANDARD", None)
    return {"compression": zstd or zipfile.ZIP_DEFLATED, "compresslevel": 1}


def _copy(read: Callable[[int], bytes], w: Any, bound: int, past: LogRefused) -> int:
    """Copies `read(CHUNK)` to `w` until it returns nothing; `past` beyond `bound` bytes."""
    n = 0
    while chunk := read(CHUNK):
        n += len(chunk)
        if n > bound:
            raise past
        w.write(chunk)
    return n


def _inflater(f: BinaryIO, info: zipfile.ZipInfo) -> Callable[[int], bytes]:
    """`read(n)`: at most n more bytes of the member's inflated content (b"" at its end), from
    its compressed bytes as the central directory bounds them; LogRefused when they do not
    inflate as declared (size, CRC) or use a method Inspect does not write."""
    name = info.filename[:200]
    if info.flag_bits & 0x1:
        raise LogRefused(f"member {name!r} is encrypted")
    f.seek(info.header_offset)
    head = f.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size or head[:4] != _LOCAL_SIGNATURE:
        raise LogRefused(f"not an Inspect eval log (member {name!r} has no local header)")
    *_, name_len, extra_len = _LOCAL_HEADER.unpack(head)
    start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
    raw = _Slice(f, start, info.compress_size)
    if info.compress_type == zipfile.ZIP_STORED:
        body: Callable[[int], bytes] = raw.read
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        body = _Deflated(raw).read
    elif info.compress_type == ZSTD:
        import zstandard  # inspect-ai's own dependency (its zip members are zstandard)

        body = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read
    else:
        raise LogRefused(f"member {name!r}: compression method {info.compress_type} is not read")
    seen = 0
    crc = 0

    def read(n: int) -> bytes:
        nonlocal seen, crc
        try:
            data = body(n)
        except Exception as e:  # zlib's and zstandard's own kinds: a member that is not valid
            raise LogRefused(f"member {name!r} does not inflate: {e}"[:500]) from e
        seen += len(data)
        if seen > info.file_size:  # more than declared: the rest is not read
            raise LogRefused(
                f"not as declared: member {name!r} inflates past the {info.file_size:,} bytes the "
                "zip declares; reading stopped there, as a possible decompression bomb"
            )
        crc = zlib.crc32(data, crc)
        if not data and (seen != info.file_size or crc != info.CRC):
            raise LogRefused(f"member {name!r} is corrupt (its size or CRC is not as declared)")
        return data

    return read


class _Slice:
    """`length` bytes of `f` from `start`, read in pieces (the member's compressed bytes)."""

    def __init__(self, f: BinaryIO, start: int, length: int) -> None:
        self.f, self.pos, self.left = f, start, length

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.f.seek(self.pos)
        data = self.f.read(n)
        self.pos += len(data)
        self.left -= len(data)
        return data


class _Deflated:
    """A deflated stream's inflated bytes, at most `n` per read (zlib's max_length)."""

    def __init__(self, raw: _Slice) -> None:
        self.raw = raw
        self.z = zlib.decompressobj(-zlib.MAX_WBITS)

    def read(self, n: int) -> bytes:
        while not self.z.eof:
            if self.z.unconsumed_tail:
                data = self.z.decompress(self.z.unconsumed_tail, n)
            else:
                chunk = self.raw.read(CHUNK)
                if not chunk:
                    return b""  # cut short: the size and CRC check says so
                data = self.z.decompress(chunk, n)
            if data:
                return data
        return b""
