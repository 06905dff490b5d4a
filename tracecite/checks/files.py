"""``verify-files``: re-read cited ``file:`` sources under a root (docs/reference/commands.md).

A path is resolved with symlinks followed and refused if it lands outside the root, before
anything is opened; only regular files are read, never blocking on a FIFO or a device. A file
whose name ends in ``.pdf`` is a PDF (docs/guides/pdf.md), read as bytes under the PDF cap
(``--max-pdf-bytes``) and matched on its pages' text.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.live.records import Loaded
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.model import document_kind

PDF_SUFFIX = ".pdf"


def file_uri_path(uri: str) -> str:
    """The percent-decoded path of ``file:relative`` or ``file:///absolute`` (TC300 else)."""
    rest = uri[5:]
    if rest.startswith("//"):
        host, slash, path = rest[2:].partition("/")
        if host not in ("", "localhost") or not slash:
            raise FetchError(Code.URL_INVALID, "file: URI with a host other than localhost")
        rest = "/" + path
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    try:
        path = unquote(rest, errors="strict")
        # A lone surrogate (from the trace's JSON) names no file the system can be asked for.
        path.encode("utf-8")
    except UnicodeError:
        raise FetchError(Code.URL_INVALID, "file: URI is not UTF-8 after decoding") from None
    if not path or "\x00" in path:
        raise FetchError(Code.URL_INVALID, "file: URI with an empty or invalid path")
    return path


def _os_failure(exc: OSError, verb: str) -> FetchError:
    """What a failed ``stat`` or ``open`` of a source file means (TC320/TC322)."""
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):  # ENOTDIR: a file on the way
        return FetchError(Code.FILE_MISSING, "file does not exist")
    if exc.errno == errno.ELOOP:
        return FetchError(Code.FILE_UNREADABLE, "symbolic link loop")
    return FetchError(Code.FILE_UNREADABLE, f"file cannot be {verb} ({exc.strerror or 'error'})")


def _html_name(uri: str) -> bool:
    """Whether ``uri`` names an HTML file (by its name, as :meth:`FileLoader.load` reads it)."""
    try:
        return document_kind(file_uri_path(uri)) == "html"
    except FetchError:  # its load fails: nothing to parse
        return False


class FileLoader:
    """Reads ``file:`` sources under ``root`` with the size cap, for the live run (see
    :class:`~tracecite.checks.live.records.Loader`). Files have no host: nothing is limited per
    host."""

    kind = SourceKind.FILE
    expects_html = False  # the parse workers start only when an HTML file is cited
    hosts = None

    def __init__(self, root: str, max_bytes: int, max_pdf_bytes: int | None = None, *,
                 rendered: frozenset[str] = frozenset()) -> None:
        self.root = os.path.realpath(root)
        self.max_bytes = max_bytes
        self.max_pdf_bytes = max_bytes if max_pdf_bytes is None else max(max_bytes,
                                                                         max_pdf_bytes)
        # Documents' Markdown sources: matched on their rendered text (docs/guides/documents.md).
        self.rendered = rendered

    def cites_html(self, uris: Iterable[str]) -> bool:
        """Whether any of ``uris`` names an HTML file matched on its visible text (the parse
        workers are for those only)."""
        return any(uri not in self.rendered and _html_name(uri) for uri in uris)

    def resolve(self, uri: str) -> str:
        """The real path of a ``file:`` URI, refused (TC321) if outside the root."""
        real = os.path.realpath(os.path.join(self.root, file_uri_path(uri)))
        if os.path.commonpath([self.root, real]) != self.root:
            raise FetchError(Code.FILE_OUTSIDE_ROOT, "path resolves outside the root")
        return real

    def read(self, real: str) -> str:
        """The UTF-8 text of the file at a resolved path; raises :class:`FetchError`
        (TC320–TC322)."""
        data = self.read_bytes(real, self.max_bytes)
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise FetchError(Code.FILE_UNREADABLE, "file is not UTF-8") from None

    def read_bytes(self, real: str, cap: int) -> bytes:
        """The bytes of the file at a resolved path, at most ``cap`` of them; raises
        :class:`FetchError` (TC320–TC322)."""
        too_large = f"file is larger than the {cap}-byte cap"
        try:
            # Refuse what is not a regular file before opening it: opening a device can act.
            if not stat.S_ISREG(os.stat(real).st_mode):
                raise FetchError(Code.FILE_UNREADABLE, "not a regular file")
        except OSError as exc:
            raise _os_failure(exc, "examined") from None
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer; we refuse it below anyway.
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise _os_failure(exc, "opened") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise FetchError(Code.FILE_UNREADABLE, "not a regular file")
            if info.st_size > cap:
                raise FetchError(Code.FILE_UNREADABLE, too_large)
            data = handle.read(cap + 1)
        if len(data) > cap:  # it grew since fstat
            raise FetchError(Code.FILE_UNREADABLE, too_large)
        return data

    @staticmethod
    def key(uri: str) -> str:
        """Each URI as cited is one source."""
        return uri

    @staticmethod
    def host(uri: str) -> None:
        """Files are not loaded from a host."""
        return None

    def load(self, uri: str, *, claimed: bool = False,
             validators: Mapping[str, str] | None = None) -> Loaded:
        """The file ``uri`` names (raises :class:`FetchError`): HTML files (by the cited name)
        are matched on their visible text, PDF files on their pages' text (loaded as bytes).
        ``claimed`` is never set: files have no host."""
        name = file_uri_path(uri).lower()
        if name.endswith(PDF_SUFFIX):
            return Loaded(MatchKind.PDF, self.read_bytes(self.resolve(uri), self.max_pdf_bytes))
        text = self.read(self.resolve(uri))
        if uri in self.rendered:
            from tracecite.inputs.documents import rendered_text
            from tracecite.visible import ParseLimitError

            try:  # a str is text, never a path
                return Loaded(MatchKind.TEXT, rendered_text(text))
            except ParseLimitError as error:  # its raw HTML past the parser's bounds
                raise FetchError(Code.PARSE_LIMIT, str(error)) from None
        html = document_kind(name) == "html"
        return Loaded(MatchKind.HTML if html else MatchKind.TEXT, text)
