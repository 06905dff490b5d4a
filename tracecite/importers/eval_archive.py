"""The ``.eval`` archive of an Inspect AI log, a member at a time: each member's bytes checked
against its CRC, zstd members (which current Inspect writes, and ``zipfile`` reads only from
Python 3.14) decompressed with the ``zstandard`` package of the ``tracecite[inspect]`` extra.
Whatever is wrong with the archive is TC107, located by :class:`Place`."""

from __future__ import annotations

import importlib.util
import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import BinaryIO

from tracecite.importers.model import Unsupported

INSTALL_HINT = "install tracecite[inspect]"
"""What a zstd-compressed archive needs when the ``zstandard`` package is missing."""

ZIP_MAGIC = b"PK\x03\x04"
_ZSTD = 93  # the zip compression method number of zstd
_CHUNK = 1 << 20
CORRUPT: tuple[type[Exception], ...] = (zipfile.BadZipFile, zlib.error, EOFError, OSError,
                                         ValueError)
try:
    import lzma
except ImportError:  # pragma: no cover - a Python built without lzma
    pass
else:
    CORRUPT += (lzma.LZMAError,)


@dataclass(frozen=True)
class Place:
    """Where in the log a JSON document is: the file, and the archive member holding it."""

    display: str
    member: str | None = None

    def error(self, json_path: str, what: str, *, line: int | None = None) -> Unsupported:
        where = json_path if self.member is None else f"{self.member}: {json_path}"
        return Unsupported(self.display, where, what, line=line)


def member_bytes(archive: zipfile.ZipFile, opened: BinaryIO, info: zipfile.ZipInfo,
                 place: Place) -> bytes:
    """One member's bytes, checked against its CRC."""
    if info.flag_bits & 0x1:
        raise place.error("$", "the member is encrypted")
    if info.compress_type == _ZSTD and not _zipfile_reads_zstd():
        return _zstd_member(opened, info, place)
    try:
        with archive.open(info) as member:
            return member.read()
    except NotImplementedError:
        raise place.error("$", "the member is compressed with a method TraceCite cannot "
                               "read") from None
    except CORRUPT:
        raise place.error("$", "the member is truncated or corrupt") from None


def _zipfile_reads_zstd() -> bool:
    """Whether ``zipfile`` reads zstd members itself: from Python 3.14, when the interpreter
    was built with its ``compression.zstd`` module."""
    try:
        return (hasattr(zipfile, "ZIP_ZSTANDARD")
                and importlib.util.find_spec("compression.zstd") is not None)
    except ImportError:  # no "compression" package at all
        return False


def _zstd_member(opened: BinaryIO, info: zipfile.ZipInfo, place: Place) -> bytes:
    """A zstd-compressed member (which ``zipfile`` reads only from Python 3.14), decompressed
    with ``zstandard``: frame after frame, as Inspect writes one frame per 200 MiB."""
    try:
        import zstandard
    except ImportError:
        raise place.error("$", "the member is compressed with zstd, which needs the zstandard "
                               f"package: {INSTALL_HINT}") from None
    corrupt = place.error("$", "the member is truncated or corrupt")
    failures: tuple[type[Exception], ...] = (zstandard.ZstdError, *CORRUPT)
    try:
        opened.seek(info.header_offset)
        local = opened.read(30)
        if len(local) != 30 or local[:4] != ZIP_MAGIC:
            raise corrupt
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        opened.seek(info.header_offset + 30 + name_length + extra_length)
        out = bytearray()
        remaining = info.compress_size
        decompressor = zstandard.ZstdDecompressor()
        frame = decompressor.decompressobj()
        in_frame = False
        while remaining:
            chunk = opened.read(min(remaining, _CHUNK))
            if not chunk:
                raise corrupt
            remaining -= len(chunk)
            while chunk:
                in_frame = True
                out += frame.decompress(chunk)
                if len(out) > info.file_size:
                    raise corrupt
                chunk = b""
                if frame.eof:
                    chunk = frame.unused_data
                    frame = decompressor.decompressobj()
                    in_frame = False
    except failures:
        raise corrupt from None
    if in_frame or len(out) != info.file_size or zlib.crc32(out) != info.CRC:
        raise corrupt
    return bytes(out)
