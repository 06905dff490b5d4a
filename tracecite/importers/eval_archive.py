"""The ``.eval`` archive of an Inspect AI log, a member at a time: each member's bytes checked
against its CRC, zstd members (which current Inspect writes, and ``zipfile`` reads only from
Python 3.14) decompressed with the ``zstandard`` package of the ``tracecite[inspect]`` extra.
Whatever is wrong with the archive is TC107, located by :class:`Place`; a file the disk cannot
read is TC101, as any input.

Bounded (docs/guides/importers.md): a member whose size decompressed is past the run's bound
(``--max-member-bytes``) is TC107 "too large" before a byte of it is decompressed, and a member
is read in chunks that never go past its declared size, so a zip bomb costs at most the bound."""

from __future__ import annotations

import errno
import importlib.util
import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Protocol, cast

from tracecite.errors import TraceCiteError
from tracecite.importers.model import Unsupported
from tracecite.inputs.files import unreadable

INSTALL_HINT = "install tracecite[inspect]"
"""What a zstd-compressed archive needs when the ``zstandard`` package is missing."""

ZIP_MAGIC = b"PK\x03\x04"
_ZSTD = 93  # the zip compression method number of zstd
_CHUNK = 1 << 20
CORRUPT: tuple[type[Exception], ...] = (zipfile.BadZipFile, zlib.error, EOFError, ValueError)
"""What a truncated or corrupt archive raises as it is read; an OSError may be either that or
a disk's error, which :func:`read_error` tells apart."""
try:
    import lzma
except ImportError:  # pragma: no cover - a Python built without lzma
    pass
else:
    CORRUPT += (lzma.LZMAError,)
READ_FAILURES: tuple[type[Exception], ...] = (*CORRUPT, OSError)
"""Everything reading the archive may raise that :func:`read_error` turns into a finding."""


@dataclass(frozen=True)
class Place:
    """Where in the log a JSON document is: the file, and the archive member holding it."""

    display: str
    member: str | None = None

    def error(self, json_path: str, what: str, *, line: int | None = None) -> Unsupported:
        where = json_path if self.member is None else f"{self.member}: {json_path}"
        return Unsupported(self.display, where, what, line=line)


def read_error(exc: Exception, place: Place, corrupt: str) -> TraceCiteError:
    """What an error while the archive is read (one of :data:`CORRUPT`, or an OSError) says:
    TC101, the input cannot be read, for a disk's error, even one ``zipfile`` turned into
    "not a zip file"; else TC107 ``corrupt``, a seek before the file's start (EINVAL, where the
    offsets of a corrupt archive point) among them."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__context__
    if isinstance(cause, OSError) and cause.errno != errno.EINVAL:
        return TraceCiteError(unreadable(place.display, cause))
    return place.error("$", corrupt)


def member_bytes(archive: zipfile.ZipFile, opened: BinaryIO, info: zipfile.ZipInfo,
                 place: Place, max_bytes: int) -> bytearray:
    """One member's bytes, checked against its CRC; TC107 "too large" for a member that
    decompresses past ``max_bytes``."""
    if info.flag_bits & 0x1:
        raise place.error("$", "the member is encrypted")
    if info.file_size > max_bytes:
        # The size the archive declares is all a decompression may give (both readers stop
        # there, and a member that would go on fails its CRC), so it is checked first.
        raise place.error("$", f"the member is too large: {info.file_size} bytes decompressed, "
                               f"past the bound of {max_bytes} (--max-member-bytes)")
    if info.compress_type == _ZSTD and not _zipfile_reads_zstd():
        return _zstd_member(opened, info, place)
    try:
        with archive.open(info) as member:
            return _chunks(member, info.file_size, place)
    except NotImplementedError:
        raise place.error("$", "the member is compressed with a method TraceCite cannot "
                               "read") from None
    except READ_FAILURES as exc:
        raise read_error(exc, place, "the member is truncated or corrupt") from None


class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _chunks(member: _Reader, size: int, place: Place) -> bytearray:
    """The member read a chunk at a time, never past ``size`` (a member that gives more is
    corrupt): one buffer, never a second copy of it."""
    out = bytearray()
    while chunk := member.read(_CHUNK):
        out += chunk
        if len(out) > size:
            raise place.error("$", "the member is truncated or corrupt")
    return out


class _Window:
    """The next ``size`` bytes of a file, as a reader: a member's compressed data; a file
    that ends before them is corrupt (``EOFError``)."""

    def __init__(self, opened: BinaryIO, size: int) -> None:
        self._opened = opened
        self._left = size

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all that is left for -1)."""
        want = self._left if size < 0 else min(size, self._left)
        data = self._opened.read(want) if want else b""
        if len(data) != want:
            raise EOFError("the archive ends inside a member")
        self._left -= want
        return data


def _zipfile_reads_zstd() -> bool:
    """Whether ``zipfile`` reads zstd members itself: from Python 3.14, when the interpreter
    was built with its ``compression.zstd`` module."""
    try:
        return (hasattr(zipfile, "ZIP_ZSTANDARD")
                and importlib.util.find_spec("compression.zstd") is not None)
    except ImportError:  # no "compression" package at all
        return False


def _zstd_member(opened: BinaryIO, info: zipfile.ZipInfo, place: Place) -> bytearray:
    """A zstd-compressed member (which ``zipfile`` reads only from Python 3.14), decompressed
    with ``zstandard``: frame after frame, as Inspect writes one frame per 200 MiB."""
    try:
        import zstandard
    except ImportError:
        raise place.error("$", "the member is compressed with zstd, which needs the zstandard "
                               f"package: {INSTALL_HINT}") from None
    corrupt = place.error("$", "the member is truncated or corrupt")
    failures: tuple[type[Exception], ...] = (zstandard.ZstdError, *READ_FAILURES)
    try:
        opened.seek(info.header_offset)
        local = opened.read(30)
        if len(local) != 30 or local[:4] != ZIP_MAGIC:
            raise corrupt
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        opened.seek(info.header_offset + 30 + name_length + extra_length)
        # A reader, not a decompressobj: it gives at most what is asked for, where one
        # decompress call of a chunk could give gigabytes (zstd's ratio has no useful bound).
        with zstandard.ZstdDecompressor().stream_reader(
                cast(BinaryIO, _Window(opened, info.compress_size)), read_across_frames=True,
                closefd=False) as reader:
            out = _chunks(reader, info.file_size, place)
    except failures as exc:
        raise read_error(exc, place, "the member is truncated or corrupt") from None
    if len(out) != info.file_size or zlib.crc32(out) != info.CRC:
        raise corrupt
    return out
