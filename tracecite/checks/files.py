"""``verify-files``: re-read cited ``file:`` sources under a root (SPEC §3).

A path is resolved with symlinks followed and refused if it lands outside the root, before
anything is opened; only regular files are read, never blocking on a FIFO or a device.
"""

from __future__ import annotations

import errno
import os
import stat
from urllib.parse import unquote

from tracecite.checks.live import HTML, TEXT
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError

HTML_SUFFIXES = (".html", ".htm", ".xhtml")


def is_file_uri(uri: str) -> bool:
    """Whether a source URI is a ``file:`` URI."""
    return uri[:5].lower() == "file:"


def file_uri_path(uri: str) -> str:
    """The percent-decoded path of ``file:relative`` or ``file:///absolute`` (TC300 else)."""
    rest = uri[5:]
    if rest.startswith("//"):
        host, slash, path = rest[2:].partition("/")
        if host not in ("", "localhost") or not slash:
            raise FetchError(Code.URL_INVALID, "file: URI with a host other than localhost")
        rest = "/" + path
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    path = unquote(rest, errors="strict")
    if not path or "\x00" in path:
        raise FetchError(Code.URL_INVALID, "file: URI with an empty or invalid path")
    return path


class FileLoader:
    """Reads ``file:`` sources under ``root`` with the size cap."""

    def __init__(self, root: str, max_bytes: int) -> None:
        self.root = os.path.realpath(root)
        self.max_bytes = max_bytes

    def resolve(self, uri: str) -> str:
        """The real path of a ``file:`` URI, refused (TC321) if outside the root."""
        try:
            path = file_uri_path(uri)
        except UnicodeDecodeError:
            raise FetchError(Code.URL_INVALID, "file: URI is not UTF-8 after decoding") from None
        real = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([self.root, real]) != self.root:
            raise FetchError(Code.FILE_OUTSIDE_ROOT, "path resolves outside the root")
        return real

    def read(self, uri: str) -> tuple[str, str]:
        """The real path and UTF-8 text of the file; raises :class:`FetchError` (TC320–TC322)."""
        real = self.resolve(uri)
        try:
            # Refuse what is not a regular file before opening it: opening a device can act.
            if not stat.S_ISREG(os.stat(real).st_mode):
                raise FetchError(Code.FILE_UNREADABLE, "not a regular file")
        except (FileNotFoundError, NotADirectoryError):  # ENOTDIR: a file on the way
            raise FetchError(Code.FILE_MISSING, "file does not exist") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise FetchError(Code.FILE_UNREADABLE, "symbolic link loop") from None
            raise FetchError(Code.FILE_UNREADABLE,
                             f"file cannot be examined ({exc.strerror or 'error'})") from None
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer; we refuse it below anyway.
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, NotADirectoryError):
            raise FetchError(Code.FILE_MISSING, "file does not exist") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise FetchError(Code.FILE_UNREADABLE, "symbolic link loop") from None
            raise FetchError(Code.FILE_UNREADABLE,
                             f"file cannot be opened ({exc.strerror or 'error'})") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise FetchError(Code.FILE_UNREADABLE, "not a regular file")
            if info.st_size > self.max_bytes:
                raise FetchError(Code.FILE_UNREADABLE,
                                 f"file is larger than the {self.max_bytes}-byte cap")
            data = handle.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise FetchError(Code.FILE_UNREADABLE,
                             f"file is larger than the {self.max_bytes}-byte cap")
        try:
            return real, data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise FetchError(Code.FILE_UNREADABLE, "file is not UTF-8") from None

    def __call__(self, uri: str) -> tuple[str, str]:
        """``(kind, text)``: HTML files (by the cited name) are matched on their visible text."""
        _, text = self.read(uri)
        kind = HTML if file_uri_path(uri).lower().endswith(HTML_SUFFIXES) else TEXT
        return kind, text
