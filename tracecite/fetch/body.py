"""A response's body: its type, charset and content codings from the headers, then its bytes
read under the deadline and the size cap, decoded to text (docs/reference/fetching.md).

Decisions the specification leaves open:

- Content codings: ``identity``, ``gzip``/``x-gzip`` (several members allowed; junk after a
  complete member is ignored) and ``deflate`` (zlib-wrapped or raw, told apart by the zlib header)
  are decoded here, stacked in any order, at most four deep. Any other coding (``br``, ``zstd``,
  ``compress``, …) is TC316, decided from the headers before the body is read: we never advertise
  them, and decoding them would need a dependency.
- Compressed data that is corrupt → TC317: the body cannot be decoded to text. A stream that
  ends early (the HTTP framing complete, the gzip or deflate stream not) after some of it was
  decoded is a body cut short, TC311 and retried like one without a coding
  (docs/web-over-time.md#retries): the server or a proxy lost the rest, and the next attempt may
  well get all of it. One that ends before a single byte of it decoded is "corrupt from its
  first bytes", TC317: nothing shows it was ever a sound stream (a gzip header and then junk
  reads the same).
- Both the bytes on the wire and the decoded body are capped at ``max_bytes``; a
  ``Content-Length`` over the cap is refused before reading (TC314), compressed or not.
- Type and coding are checked from the headers, before the body is read; the charset after it,
  since the bytes decide (below). No ``Content-Type`` (or an empty one): accepted when the body is
  valid UTF-8, otherwise TC317 like any body that is not UTF-8. Several ``Content-Type`` headers:
  the last counts. A malformed one (no ``type/subtype``) is TC316.
- Charsets, as browsers decide them: a body starting with the UTF-8 BOM is UTF-8 whatever the
  header says. Otherwise a declared ``utf-8``/``utf8``/``us-ascii``/``ascii`` (case-insensitive,
  quoted or not) is read as UTF-8, and any other declared charset is accepted only when the body
  is pure ASCII, whose bytes mean the same in UTF-8 — except for charsets in which ASCII bytes
  mean something else (UTF-16/32, UTF-7, the ISO-2022 and HZ shift encodings, EBCDIC code
  pages), which stay TC317. The body is always decoded as strict UTF-8, a leading BOM removed.
- A body longer than its ``Content-Length``: the message ends where ``Content-Length`` says
  (HTTP/1.1 framing); the excess is never read and urllib3 drops that connection before reuse.
- Redirect bodies up to 64 KiB are read and dropped so the connection can be reused; longer or
  unframed ones close the connection.
- A header value is quoted in a message only when it passes a strict token pattern: headers are
  server text, and nothing the server sent is echoed.
- PDFs (docs/guides/pdf.md): ``application/pdf``, or no type and a body that starts with
  ``%PDF-``, are kept as bytes (no charset applies). Their cap is the PDF cap
  (``--max-pdf-bytes``), and only once the body is known to be a PDF: from the header for a
  typed one (its ``Content-Length`` is checked against the PDF cap); for an untyped one, once
  its first decoded bytes are in, so an untyped body that is not a PDF stays under
  ``max_bytes``.
- PDFs loading at once (docs/guides/pdf.md#limits): a page's text is bounded by the run's
  loader threads times ``max_bytes``, but a PDF may be raised to 32 MiB, and dozens of such
  loads at once would hold a gigabyte. So a PDF's load reserves its size (its
  ``Content-Length``, or the whole cap when that is unknown or the body is compressed) from
  one :class:`ByteBudget` of :data:`PDF_LOADING` bytes before its body is read, and the caller
  gives it back once the run's parse pool has the body (which keeps at most its own 64 MiB in
  memory, the rest on disk). A reservation is all or nothing, made before a single byte is
  read, and a load that holds one never waits for another: no two loads wait on each other.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator

from urllib3 import BaseHTTPResponse

from tracecite.codes import Code
from tracecite.fetch.connection import FetchClock
from tracecite.fetch.errors import FetchError
from tracecite.fetch.failures import network_errors
from tracecite.pdf import PDF_MAGIC, is_pdf

ACCEPT = "text/html,application/xhtml+xml,text/*;q=0.9,application/json;q=0.9,*/*;q=0.8"
"""The ``Accept`` request header: HTML first, then the other types read as text here."""

ACCEPT_ENCODING = "gzip, deflate"
"""The ``Accept-Encoding`` request header: the content codings decoded here."""

_READ_CHUNK = 64 * 1024
_MAX_CODINGS = 4
# The Encoding Standard's UTF-8 labels, and ASCII.
_UTF8_CHARSETS = frozenset({
    "utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8",
    "us-ascii", "ascii",
})
# Charsets in which a pure-ASCII body does not mean what it means in UTF-8 (matched at the
# start of the label).
_NOT_ASCII_COMPATIBLE = re.compile(
    r"utf-?(?:16|32)|ucs-?[24]|(?:cs|x-)?unicode|utf-?7|(?:cs)?iso-?2022|hz-gb|replacement"
    r"|ebcdic|(?:cp|ibm)-?(?:037|273|277|278|280|284|285|297|420|424|500|871|875|1026|114\d)\b",
)
_UTF8_BOM = b"\xef\xbb\xbf"
PDF_TYPE = "application/pdf"
"""The media type of a PDF."""
_TOKEN = re.compile(r"[a-z0-9!#$%&'*+.^_`|~-]{1,64}")


def is_json_type(media_type: str) -> bool:
    """Whether a (lower-case) media type is JSON: ``application/json`` or a ``+json`` type."""
    return media_type == "application/json" or media_type.endswith("+json")


def read_body(response: BaseHTTPResponse, clock: FetchClock, max_bytes: int,
              max_pdf_bytes: int | None = None, budget: ByteBudget | None = None,
              ) -> tuple[str, str | bytes, Held | None]:
    """The media type (``""`` when absent) and the text of a page's body, or a PDF's bytes,
    with what the PDF holds of ``budget`` (None for a page, or without a budget).

    Everything that can be refused from the headers (type, codings, a ``Content-Length`` over
    the cap) is refused before the body is read; the charset is decided with the bytes. A PDF
    may be as large as ``max_pdf_bytes`` (when larger than ``max_bytes``). Before a PDF's body
    is read, its size is reserved from ``budget`` (the module docstring); the time
    spent waiting for it is added to the deadline, since the site did not take it. The caller
    releases the reservation once the body is handed over.
    """
    pdf_cap = max(max_bytes, max_pdf_bytes or 0)
    media_type, charset = _content_type(response)
    if media_type and media_type != PDF_TYPE and not _is_text_type(media_type):
        raise FetchError(
            Code.CONTENT_TYPE_UNSUPPORTED, f"content type {_safe(media_type)} is not text",
        )
    codings = _content_codings(response)
    length = response.length_remaining  # None when chunked or unknown
    # An untyped body may be a PDF: its length is checked against its cap once it is known.
    header_cap = pdf_cap if media_type in (PDF_TYPE, "") else max_bytes
    if length is not None and length > header_cap:
        raise FetchError(Code.TOO_LARGE, f"Content-Length {length} is over {header_cap} bytes")
    # A PDF's size is reserved before its body is read: an untyped one's once it shows %PDF-.
    reservation = _Reservation(budget, clock, pdf_cap if codings or length is None
                               else min(length, pdf_cap))
    cap = _Cap(pdf_cap if media_type == PDF_TYPE else max_bytes,
               pdf_cap if media_type == "" else None, reservation.make)
    try:
        if media_type == PDF_TYPE:
            reservation.make()
        body = _read_bytes(response, codings, clock, cap)
        if media_type == PDF_TYPE or (media_type == "" and is_pdf(body)):
            return media_type, body, reservation.take()
        return media_type, _text(body, charset), None
    finally:
        reservation.release()  # what the caller was not given: a failed read's


# -- the budget of PDF bodies loading at once ----------------------------------------------


PDF_LOADING = 64 * 1024 * 1024
"""Bytes of PDF bodies being loaded at once, at most (one body of any size always may)."""


class Held:
    """Bytes reserved from a :class:`ByteBudget` by one thread: given back once, by
    :meth:`release`, or when the reservation is dropped unreleased (a caller that never hands
    the body over cannot keep the budget for ever)."""

    def __init__(self, budget: ByteBudget, size: int, thread: int) -> None:
        self._budget: ByteBudget | None = budget
        self.size = size
        self.thread = thread

    def release(self) -> None:
        """Give the bytes back; once (later calls do nothing)."""
        budget, self._budget = self._budget, None
        if budget is not None:
            budget._give_back(self)

    def __del__(self) -> None:
        self.release()


class ByteBudget:
    """At most ``total`` bytes reserved at once, across threads; a reservation larger than the
    whole budget is granted when nothing else is held. A thread that holds a reservation is
    never made to wait for another: it would wait for itself."""

    def __init__(self, total: int = PDF_LOADING) -> None:
        self.total = total
        self._used = 0
        self._holders: dict[int, int] = {}  # thread → reservations it holds
        # Reentrant: a reservation dropped by the garbage collector gives its bytes back in
        # whatever thread collects it, which may be inside reserve() here.
        self._changed = threading.Condition(threading.RLock())

    @property
    def used(self) -> int:
        """Bytes reserved now."""
        with self._changed:
            return self._used

    def reserve(self, size: int) -> Held:
        """Reserve ``size`` bytes, waiting until they fit."""
        size = max(0, size)
        thread = threading.get_ident()
        with self._changed:
            while (self._used and self._used + size > self.total
                   and thread not in self._holders):
                self._changed.wait()
            self._used += size
            self._holders[thread] = self._holders.get(thread, 0) + 1
        return Held(self, size, thread)

    def _give_back(self, held: Held) -> None:
        with self._changed:
            self._used -= held.size
            left = self._holders.pop(held.thread, 1) - 1
            if left:
                self._holders[held.thread] = left
            self._changed.notify_all()


class _Reservation:
    """A PDF's reservation of ``size`` bytes from ``budget``, made once the body is known to be
    a PDF (:meth:`make`), the wait added to the clock's deadline."""

    def __init__(self, budget: ByteBudget | None, clock: FetchClock, size: int) -> None:
        self._budget = budget
        self._clock = clock
        self._size = size
        self._held: Held | None = None

    def make(self) -> None:
        """Reserve the bytes (once)."""
        if self._budget is None or self._held is not None:
            return
        started = time.monotonic()
        self._held = self._budget.reserve(self._size)
        self._clock.deadline += time.monotonic() - started

    def take(self) -> Held | None:
        """The reservation, now the caller's to release."""
        held, self._held = self._held, None
        return held

    def release(self) -> None:
        """Give back what is still held here."""
        held, self._held = self._held, None
        if held is not None:
            held.release()


class _Cap:
    """The body cap: ``value``, or ``pdf`` once the first decoded bytes show a PDF (an
    untyped body); the wire allows the larger until then."""

    def __init__(self, value: int, pdf: int | None,
                 on_pdf: Callable[[], None] = lambda: None) -> None:
        self.value = value
        self.pdf = pdf
        self.wire = max(value, pdf or 0)
        self._on_pdf = on_pdf

    def look(self, head: bytes) -> None:
        """Decide the cap from the body's first decoded bytes (enough to tell a PDF); a PDF's
        ``on_pdf`` is called then, before more of it is read."""
        if self.pdf is not None:
            if is_pdf(head):
                self.value = self.pdf
                self._on_pdf()
            self.pdf = None
            self.wire = self.value


def read_head(response: BaseHTTPResponse, clock: FetchClock, limit: int) -> bytes:
    """At most the first ``limit`` decoded bytes of a body, for a look at an error page; ``b""``
    or what was read when the body cannot be read (a failure here is not the source's finding).
    """
    head = bytearray()
    try:
        pieces: Iterable[bytes] = _wire_pieces(response, clock, limit + _READ_CHUNK)
        for coding in reversed(_content_codings(response)):
            pieces = _decoded(pieces, _Inflater(coding))
        for piece in pieces:
            head += piece
            if len(head) >= limit:
                break
    except FetchError:
        pass
    return bytes(head[:limit])


def drain_short_body(response: BaseHTTPResponse, clock: FetchClock) -> None:
    """Read a short redirect body so its connection can serve the next hop; drop longer ones."""
    length = response.length_remaining
    if length is None or length > _READ_CHUNK:
        return
    try:
        for _ in _wire_pieces(response, clock, _READ_CHUNK):
            pass
    except FetchError:
        pass  # the connection is closed instead; a passed deadline shows on the next hop


# -- headers ----------------------------------------------------------------------------------


def _safe(value: str) -> str:
    """A header token (or ``type/subtype``) fit to quote in a message; headers are server text."""
    ok = all(_TOKEN.fullmatch(part) for part in value.split("/", 1))
    return value if ok else "(not shown)"


def _content_type(response: BaseHTTPResponse) -> tuple[str, str | None]:
    """The lower-cased ``type/subtype`` (``""`` when absent) and the charset parameter."""
    values = response.headers.getlist("Content-Type")
    value = values[-1].strip() if values else ""  # several headers: the last one wins
    if not value:
        return "", None
    media_type, _, parameters = value.partition(";")
    media_type = media_type.strip().lower()
    kind, slash, subtype = media_type.partition("/")
    if not (slash and _TOKEN.fullmatch(kind) and _TOKEN.fullmatch(subtype)):
        raise FetchError(Code.CONTENT_TYPE_UNSUPPORTED, "malformed Content-Type")
    charset = None
    for parameter in parameters.split(";"):
        name, equals, raw = parameter.partition("=")
        if equals and name.strip().lower() == "charset":
            raw = raw.strip()
            if len(raw) >= 2 and raw[0] == raw[-1] == '"':
                raw = raw[1:-1]
            charset = raw.strip().lower()
    return media_type, charset


def _is_text_type(media_type: str) -> bool:
    return (media_type.startswith("text/") or media_type == "application/xhtml+xml"
            or is_json_type(media_type))


def _content_codings(response: BaseHTTPResponse) -> list[str]:
    """The content codings in the order the server applied them; TC316 for unsupported ones."""
    codings = [
        token.strip().lower()
        for value in response.headers.getlist("Content-Encoding")
        for token in value.split(",")
    ]
    codings = [c for c in codings if c and c != "identity"]
    for coding in codings:
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise FetchError(
                Code.CONTENT_TYPE_UNSUPPORTED,
                f"content coding {_safe(coding)} is not supported (gzip and deflate are)",
            )
    if len(codings) > _MAX_CODINGS:
        raise FetchError(Code.CONTENT_TYPE_UNSUPPORTED, "too many stacked content codings")
    return codings


# -- content codings --------------------------------------------------------------------------


def _is_zlib_header(head: bytes) -> bool:
    """RFC 1950: compression method 8, window ≤ 32 KiB, header check bits."""
    return head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and ((head[0] << 8) | head[1]) % 31 == 0


class _Inflater:
    """Undoes one gzip or deflate content coding, yielding at most ``_READ_CHUNK`` bytes a time.

    ``decompress(data, max_length)`` keeps what it could not yet expand in ``unconsumed_tail``,
    so a bomb never expands further than the consumer pulls.
    """

    def __init__(self, coding: str) -> None:
        self._coding = coding
        self._gzip = coding != "deflate"
        self._decoder: zlib._Decompress | None = None
        self._head = b""  # deflate: the first bytes, until zlib or raw can be told apart
        self._complete = False  # one whole stream (gzip: member) has been decoded
        self._decoded = False  # some output came out: a stream that ends now was cut short
        self._ended = False  # whatever follows is ignored

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Yield the decoded output for ``data``."""
        more = bool(data)
        while more and not self._ended:
            if self._decoder is None:
                data = self._start(data)
                if self._decoder is None:
                    return
            try:
                out = self._decoder.decompress(data, _READ_CHUNK)
            except zlib.error as exc:
                if not self._complete:
                    raise self._corrupt() from exc
                # Junk after a complete gzip member (often zero padding) is ignored, as urllib3
                # and the gzip tool do.
                self._decoder, self._ended = None, True
                return
            if self._decoder.eof:
                data = self._decoder.unused_data
                self._decoder = None
                self._complete = True
                self._ended = not self._gzip  # gzip members may follow; deflate has one stream
                more = bool(data)
            else:
                data = self._decoder.unconsumed_tail
                # A full output buffer means zlib may hold more output even with no input left.
                more = bool(data) or len(out) == _READ_CHUNK
            if out:
                self._decoded = True
                yield out

    def finish(self) -> None:
        """Raise when the body ended in the middle of a compressed stream: TC311 when some of
        it had decoded (cut short, worth another attempt), TC317 when nothing had."""
        if self._decoder is None and not self._head:
            return
        if not (self._decoded or self._complete):
            raise self._corrupt()
        raise FetchError(Code.CONNECT_FAILED,
                         f"the body ended inside its {self._coding} content coding")

    def _start(self, data: bytes) -> bytes:
        if self._gzip:
            self._decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip, or zlib mislabelled
            return data
        self._head += data
        if len(self._head) < 2:
            return b""
        data, self._head = self._head, b""
        wbits = zlib.MAX_WBITS if _is_zlib_header(data) else -zlib.MAX_WBITS
        self._decoder = zlib.decompressobj(wbits)
        return data

    def _corrupt(self) -> FetchError:
        return FetchError(Code.NOT_UTF8, f"the {self._coding} content coding is corrupt")


def _decoded(pieces: Iterable[bytes], inflater: _Inflater) -> Iterator[bytes]:
    for piece in pieces:
        yield from inflater.feed(piece)
    inflater.finish()


# -- reading ----------------------------------------------------------------------------------


def _wire_pieces(response: BaseHTTPResponse, clock: FetchClock, max_bytes: int | _Cap,
                 ) -> Iterator[bytes]:
    """The body as it arrives, checked against the deadline and the cap before every read."""
    received = 0
    while True:
        clock.remaining()
        cap = max_bytes.wire if isinstance(max_bytes, _Cap) else max_bytes
        with network_errors(clock):
            piece = response.read(_piece_size(response, max_bytes, cap - received),
                                  decode_content=False)
        if not piece:
            return
        received += len(piece)
        if received > cap:
            raise FetchError(Code.TOO_LARGE, f"the body is over {cap} bytes")
        yield piece


def _piece_size(response: BaseHTTPResponse, max_bytes: int | _Cap, room: int) -> int:
    """How much to ask for next: the rest of a body of known length at once, in one buffer,
    once its cap is decided (a body read for its text or a PDF, within the cap; an untyped
    one's first piece shows whether it is a PDF, which is reserved before more is read);
    :data:`_READ_CHUNK` otherwise. Every receive still keeps to the deadline."""
    left = response.length_remaining
    if (isinstance(max_bytes, _Cap) and max_bytes.pdf is None and left is not None
            and _READ_CHUNK < left <= room):
        return left
    return _READ_CHUNK


def _read_bytes(
    response: BaseHTTPResponse, codings: list[str], clock: FetchClock, cap: _Cap,
) -> bytes:
    pieces: Iterable[bytes] = _wire_pieces(response, clock, cap)
    for coding in reversed(codings):  # the last coding applied is the first to undo
        pieces = _decoded(pieces, _Inflater(coding))
    # Joined once at the end: a body grown piece by piece and then copied out would take
    # fresh pages from the system twice (large buffers are mapped anew each time), and a
    # page fault is dearer than the copy.
    kept: list[bytes] = []
    size = 0
    for piece in pieces:
        if cap.pdf is not None and size + len(piece) >= len(PDF_MAGIC):
            cap.look(b"".join(kept)[:len(PDF_MAGIC)] + piece[:len(PDF_MAGIC)])
        size += len(piece)
        if size > cap.value:
            raise FetchError(Code.TOO_LARGE, f"the decoded body is over {cap.value} bytes")
        kept.append(piece)
    body = b"".join(kept)
    if cap.pdf is not None:  # a body shorter than the mark: not a PDF
        cap.look(body)
    return body


def _text(body: bytes, charset: str | None) -> str:
    """The body as text, or TC317 when the charset and the bytes do not make it UTF-8."""
    if (charset and charset not in _UTF8_CHARSETS
            and not body.startswith(_UTF8_BOM)  # the BOM decides over the header
            and (not body.isascii() or _NOT_ASCII_COMPATIBLE.match(charset))):
        raise FetchError(Code.NOT_UTF8, f"declared charset {_safe(charset)} is not UTF-8")
    try:
        return body.decode("utf-8-sig")  # strict UTF-8; a leading BOM is dropped
    except UnicodeDecodeError:
        raise FetchError(Code.NOT_UTF8, "the body is not valid UTF-8") from None
