"""The pinned fetcher: GET one http(s) URL safely, following redirects by hand (SPEC §4).

Every hop runs the same pipeline: URL rules (``parse_target``) → ``--connect-to`` override or one
name lookup → address policy → a connection to exactly the address that was checked, with the
original host name as ``Host``, TLS SNI and certificate name. Nothing in here looks a name up a
second time: the pools are keyed by IP address and open their sockets to that IP literal directly.

One deadline covers a whole source: the name lookups (run on a small thread pool, since
``getaddrinfo`` has no timeout), every connect, TLS handshake, request, redirect and the body. Each
socket operation gets only the time that is left, so a server that trickles one byte a second is
cut at the deadline like one that never answers.

TLS: the system trust store plus ``ca_cert``, TLS 1.2 or later, and the host name checked by
OpenSSL during the handshake (``server_hostname`` = the URL's host). urllib3's ``assert_hostname``
is deliberately not used: it would switch ``check_hostname`` off on the shared ``SSLContext`` and
match the name in Python after the handshake instead.

Decisions the specification leaves open:

- Content codings: ``identity``, ``gzip``/``x-gzip`` (several members allowed; junk after a
  complete member is ignored) and ``deflate`` (zlib-wrapped or raw, told apart by the zlib header)
  are decoded here, stacked in any order, at most four deep. Any other coding (``br``, ``zstd``,
  ``compress``, …) is TC316, decided from the headers before the body is read: we never advertise
  them, and decoding them would need a dependency.
- Compressed data that is corrupt or ends early → TC317: the body cannot be decoded to text.
- Both the bytes on the wire and the decoded body are capped at ``max_bytes``; a
  ``Content-Length`` over the cap is refused before reading (TC314), compressed or not.
- Type, charset and coding are checked from the headers, before the body is read. No
  ``Content-Type`` (or an empty one): accepted when the body is valid UTF-8, otherwise TC317 like
  any body that is not UTF-8. Several ``Content-Type`` headers: the last counts. A malformed one
  (no ``type/subtype``) is TC316.
- A declared charset must be ``utf-8``/``utf8`` or ``us-ascii``/``ascii`` (case-insensitive,
  quoted or not); the body is always decoded as strict UTF-8, a leading BOM removed.
- A reply that is not HTTP/1.x (an HTTP/0.9-style reply without a status line, ``HTTP/2``), a
  header line over 64 KiB or more than 100 headers, conflicting ``Content-Length`` values, a bad
  chunk, a body shorter than its ``Content-Length``, a reset, and a TLS error after the handshake
  are connection failures (TC311). TLS errors during the handshake are TC312.
- A body longer than its ``Content-Length``: the message ends where ``Content-Length`` says
  (HTTP/1.1 framing); the excess is never read and urllib3 drops that connection before reuse.
- Several different ``Location`` headers are TC310. ``Location`` bytes are read as UTF-8 (falling
  back to Latin-1). Redirect bodies up to 64 KiB are read and dropped so the connection can be
  reused; longer or unframed ones close the connection.
- A kept-alive connection that the server closed just as it was reused is retried once on a new
  connection to the same validated address; nothing else is ever retried.
- At most ``per_host`` requests are in flight to one host name at once, each redirect hop counted
  on the host it goes to; a hop waits for a free slot within the source's deadline (TC313 if none
  frees up). Host names are counted apart even when they share an address, as browsers do.
- Failure details are TraceCite's own words (OS error names, OpenSSL reasons, header tokens that
  pass a strict pattern): nothing the server sent is echoed.
"""

from __future__ import annotations

import concurrent.futures
import errno
import http.client
import ipaddress
import os
import re
import socket
import ssl
import sys
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv6Address
from types import TracebackType
from typing import Any

from urllib3 import BaseHTTPResponse, HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import (
    ClosedPoolError,
    ConnectTimeoutError,
    HTTPError,
    InvalidChunkLength,
    InvalidHeader,
    NewConnectionError,
    ReadTimeoutError,
)
from urllib3.util import Timeout

from tracecite.codes import Code
from tracecite.fetch.address_policy import AddressPolicy, Resolver, system_resolver
from tracecite.fetch.errors import FetchError
from tracecite.fetch.hosts import HostSlots
from tracecite.fetch.limits import MAX_BYTES, MAX_REDIRECTS, MAX_TIMEOUT
from tracecite.fetch.options import ConnectTo, FetchOptions, parse_connect_to
from tracecite.fetch.url_policy import Target, follow_redirect, parse_target

__all__ = [
    "MAX_BYTES",
    "MAX_REDIRECTS",
    "MAX_TIMEOUT",
    "ConnectTo",
    "FetchOptions",
    "Page",
    "PinnedFetcher",
    "is_json_type",
    "parse_connect_to",
]

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_READ_CHUNK = 64 * 1024
_MAX_POOLS = 64  # least recently used pools beyond this are closed
_LOOKUP_THREADS = 16
_MAX_CODINGS = 4
_UTF8_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})
_ACCEPT = "text/html,application/xhtml+xml,text/*;q=0.9,application/json;q=0.9,*/*;q=0.8"
_TOKEN = re.compile(r"[a-z0-9!#$%&'*+.^_`|~-]{1,64}")


# --------------------------------------------------------------------------------------------
# Results (the options are in tracecite.fetch.options)


@dataclass(frozen=True)
class Page:
    """A fetched page: final URL, status, media type (``""`` when absent) and UTF-8 text."""

    url: str
    status: int
    media_type: str
    text: str


# --------------------------------------------------------------------------------------------
# The deadline, enforced on every socket operation


@dataclass
class _Clock:
    """The current fetch's deadline, and what happened during the current request attempt."""

    deadline: float
    timeout: float
    opened: int = 0  # sockets opened (0: the pool handed out a kept-alive connection)
    handshake_failed: bool = False  # a TLS error then is TC312; after the handshake, TC311


# Set for the duration of one fetch in the calling thread; every urllib3 socket operation for that
# fetch runs in that thread, so the sockets below can find the deadline without any plumbing.
_CLOCK: ContextVar[_Clock | None] = ContextVar("tracecite_fetch_clock", default=None)


def _arm(sock: socket.socket) -> None:
    """Give the next blocking operation on ``sock`` only the time left before the deadline."""
    clock = _CLOCK.get()
    if clock is None:
        return
    remaining = clock.deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("the fetch deadline has passed")
    sock.settimeout(remaining)


class _DeadlineSocket(socket.socket):
    """A TCP socket whose sends and receives never outlast the fetch deadline.

    urllib3 timeouts apply per operation, and http.client reads in loops, so a per-operation
    timeout alone lets a trickling server run forever. The arguments pass through untouched:
    ``ssl.SSLSocket``, which comes after this class in ``_DeadlineSSLSocket``, has defaults of
    its own.
    """

    def recv(self, *args: Any, **kwargs: Any) -> bytes:
        _arm(self)
        return super().recv(*args, **kwargs)

    def recv_into(self, *args: Any, **kwargs: Any) -> int:
        _arm(self)
        return super().recv_into(*args, **kwargs)

    def send(self, *args: Any, **kwargs: Any) -> int:
        _arm(self)
        return super().send(*args, **kwargs)

    def sendall(self, *args: Any, **kwargs: Any) -> None:
        _arm(self)
        super().sendall(*args, **kwargs)


class _DeadlineSSLSocket(_DeadlineSocket, ssl.SSLSocket):
    """The TLS counterpart (installed as the context's socket class): the same deadline on
    ``SSLSocket``'s reads and writes, and a failed handshake noted for the error's code."""

    def do_handshake(self, block: bool = False) -> None:
        try:
            super().do_handshake(block)
        except ssl.SSLError:
            clock = _CLOCK.get()
            if clock is not None:
                clock.handshake_failed = True
            raise


def _open_socket(conn: HTTPConnection) -> socket.socket:
    """Connect to the pool's IP literal itself: no name lookup can happen on this path."""
    address = ipaddress.ip_address(conn.host)  # pools are only ever created for validated IPs
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = _DeadlineSocket(family, socket.SOCK_STREAM)
    clock = _CLOCK.get()
    if clock is not None:
        clock.opened += 1
    try:
        sock.settimeout(conn.timeout)  # only outside a fetch; _arm() narrows it to the deadline
        for option in conn.socket_options or ():
            sock.setsockopt(*option)
        _arm(sock)
        sock.connect((str(address), conn.port))
        # The TLS handshake that follows runs under this timeout as a whole (CPython keeps one
        # deadline for the handshake), so give it exactly the time that is left.
        _arm(sock)
    except TimeoutError as exc:
        sock.close()
        raise ConnectTimeoutError(conn, "connect timed out") from exc
    except OSError as exc:
        sock.close()
        raise NewConnectionError(conn, "connect failed") from exc
    sys.audit("http.client.connect", conn, conn.host, conn.port)
    return sock


class _PinnedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _open_socket(self)


class _PinnedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _open_socket(self)


class _PinnedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _PinnedHTTPConnection


class _PinnedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _PinnedHTTPSConnection


def _tls_context(ca_cert: str | None) -> ssl.SSLContext:
    """System trust store (plus ``ca_cert``), name checks by OpenSSL, TLS 1.2 or later."""
    context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.hostname_checks_common_name = False  # browsers accept subjectAltName only
    if ca_cert is not None:
        _load_ca_bundle(context, ca_cert)
    context.sslsocket_class = _DeadlineSSLSocket
    return context


def _load_ca_bundle(context: ssl.SSLContext, ca_cert: str) -> None:
    try:
        context.load_verify_locations(cafile=ca_cert)
    except OSError as exc:  # ssl.SSLError is an OSError too
        raise ValueError(f"cannot load CA certificates from {ca_cert}: {exc}") from exc


# --------------------------------------------------------------------------------------------
# Network failures → registry codes


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it wraps: causes, contexts and exceptions urllib3 keeps in ``args``."""
    seen: set[int] = set()
    todo = [exc]
    while todo and len(seen) < 20:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(arg for arg in current.args if isinstance(arg, BaseException))
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                todo.append(linked)


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, NewConnectionError):  # urllib3 derives it from ConnectTimeoutError
        return False
    return isinstance(exc, (TimeoutError, ReadTimeoutError, ConnectTimeoutError))


def _connect_detail(chain: list[BaseException]) -> str:
    # Only our own words and OS error names: exception messages can quote server bytes.
    for exc in chain:
        if isinstance(exc, (InvalidChunkLength, InvalidHeader)):
            return f"malformed HTTP reply ({type(exc).__name__})"
        if isinstance(exc, http.client.IncompleteRead):
            return "the connection closed before the end of the body"
        if isinstance(exc, http.client.RemoteDisconnected):
            return "the server closed the connection without replying"
        if isinstance(exc, http.client.BadStatusLine):
            return "the reply does not start with an HTTP/1.x status line"
        if isinstance(exc, http.client.LineTooLong):
            return "a header or chunk line in the reply is too long"
        if isinstance(exc, http.client.HTTPException):
            return f"malformed HTTP reply ({type(exc).__name__})"
        if isinstance(exc, ssl.SSLError):  # its errno is OpenSSL's, not the OS's
            return f"the TLS connection broke ({exc.reason or type(exc).__name__})"
    for exc in chain:
        number = exc.errno if isinstance(exc, OSError) else None
        if number is not None and number in errno.errorcode:
            return f"{errno.errorcode[number]}: {os.strerror(number)}"
    return f"connection failed ({type(chain[-1]).__name__})"


def _tls_detail(chain: list[BaseException]) -> str:
    for exc in chain:
        if isinstance(exc, ssl.SSLCertVerificationError) and exc.verify_message:
            return f"certificate rejected: {exc.verify_message}"
    for exc in chain:
        if isinstance(exc, ssl.SSLError) and exc.reason:
            return f"TLS failed: {exc.reason}"
    return "TLS failed"


def _network_failure(exc: BaseException, clock: _Clock) -> FetchError:
    """Turn what urllib3, http.client, ssl or the socket raised into one registry code."""
    chain = list(_causes(exc))
    if time.monotonic() >= clock.deadline or any(_is_timeout(e) for e in chain):
        return FetchError(Code.TIMEOUT, f"no complete response within {clock.timeout:g} s")
    # A TLS error in the handshake (certificate, protocol version, not TLS at all) is TC312;
    # one on an established connection is a broken connection like a reset.
    if clock.handshake_failed and any(isinstance(e, ssl.SSLError) for e in chain):
        return FetchError(Code.TLS_FAILED, _tls_detail(chain))
    return FetchError(Code.CONNECT_FAILED, _connect_detail(chain))


@contextmanager
def _network_errors(clock: _Clock) -> Iterator[None]:
    """Wrap the low-level exceptions of one network step, once, into ``FetchError``."""
    try:
        yield
    except (HTTPError, OSError, http.client.HTTPException) as exc:
        raise _network_failure(exc, clock) from exc


def _is_stale_connection(exc: BaseException) -> bool:
    """True when a kept-alive connection was closed by the server just before we used it."""
    stale = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
             ConnectionAbortedError)
    return any(isinstance(e, stale) for e in _causes(exc))


def _time_left(clock: _Clock) -> float:
    remaining = clock.deadline - time.monotonic()
    if remaining <= 0:
        raise FetchError(Code.TIMEOUT, f"no complete response within {clock.timeout:g} s")
    return remaining


# --------------------------------------------------------------------------------------------
# Headers and body


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


def is_json_type(media_type: str) -> bool:
    """Whether a (lower-case) media type is JSON: ``application/json`` or a ``+json`` type."""
    return media_type == "application/json" or media_type.endswith("+json")


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


def _location(response: BaseHTTPResponse) -> str | None:
    values = response.headers.getlist("Location")
    if len(set(values)) > 1:
        raise FetchError(Code.REDIRECT_INVALID, "several different Location headers")
    if not values:
        return None
    try:  # http.client decodes header bytes as Latin-1; servers mean UTF-8
        return values[0].encode("latin-1").decode("utf-8")
    except UnicodeError:
        return values[0]


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
                yield out

    def finish(self) -> None:
        """Raise TC317 when the body ended in the middle of a compressed stream."""
        if self._decoder is not None or self._head:
            raise self._corrupt()

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


def _wire_pieces(response: BaseHTTPResponse, clock: _Clock, max_bytes: int) -> Iterator[bytes]:
    """The body as it arrives, checked against the deadline and the cap before every read."""
    received = 0
    while True:
        _time_left(clock)
        with _network_errors(clock):
            piece = response.read(_READ_CHUNK, decode_content=False)
        if not piece:
            return
        received += len(piece)
        if received > max_bytes:
            raise FetchError(Code.TOO_LARGE, f"the body is over {max_bytes} bytes")
        yield piece


def _skip_short_body(response: BaseHTTPResponse, clock: _Clock) -> None:
    """Read a short redirect body so its connection can serve the next hop; drop longer ones."""
    length = response.length_remaining
    if length is None or length > _READ_CHUNK:
        return
    try:
        for _ in _wire_pieces(response, clock, _READ_CHUNK):
            pass
    except FetchError:
        pass  # the connection is closed instead; a passed deadline shows on the next hop


def _read_text(
    response: BaseHTTPResponse, codings: list[str], clock: _Clock, max_bytes: int,
) -> str:
    pieces: Iterable[bytes] = _wire_pieces(response, clock, max_bytes)
    for coding in reversed(codings):  # the last coding applied is the first to undo
        pieces = _decoded(pieces, _Inflater(coding))
    body = bytearray()
    for piece in pieces:
        if len(body) + len(piece) > max_bytes:
            raise FetchError(Code.TOO_LARGE, f"the decoded body is over {max_bytes} bytes")
        body += piece
    try:
        return body.decode("utf-8-sig")  # strict UTF-8; a leading BOM is dropped
    except UnicodeDecodeError:
        raise FetchError(Code.NOT_UTF8, "the body is not valid UTF-8") from None


# --------------------------------------------------------------------------------------------
# The fetcher


_PoolKey = tuple[str, str, int, str]  # scheme, IP address, port, host name (SNI and Host)


@dataclass
class _Pools:
    """Connection pools keyed by ``_PoolKey``, least recently used first."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    by_key: OrderedDict[_PoolKey, HTTPConnectionPool] = field(default_factory=OrderedDict)
    closed: bool = False


class PinnedFetcher:
    """Fetches http(s) pages under SPEC §4's rules; thread-safe, reuses connections.

    ``resolver`` answers ``(host, port)`` with IP strings; tests inject one so that nothing
    outside loopback is ever asked or reached.
    """

    def __init__(self, options: FetchOptions, resolver: Resolver = system_resolver) -> None:
        self._options = options
        self._resolver = resolver
        self._policy = AddressPolicy(allow=options.allow_net)
        if options.ca_cert is not None:
            # Check the bundle now, cheaply; the full context (which reads the system store)
            # is built with the first https pool.
            _load_ca_bundle(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), options.ca_cert)
        self._tls: ssl.SSLContext | None = None
        self._connect_to: dict[tuple[str, int], ConnectTo] = {}
        for rule in options.connect_to:
            self._connect_to.setdefault((rule.host, rule.port), rule)  # first match wins, as curl
        self._headers = {
            "User-Agent": options.user_agent,
            "Accept": _ACCEPT,
            "Accept-Encoding": "gzip, deflate",
        }
        self._pools = _Pools()
        self._hosts = HostSlots(options.per_host)
        # getaddrinfo has no timeout of its own: lookups run here so the deadline still holds.
        self._lookups = concurrent.futures.ThreadPoolExecutor(
            max_workers=_LOOKUP_THREADS, thread_name_prefix="tracecite-lookup",
        )

    def __enter__(self) -> PinnedFetcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection; the fetcher cannot be used afterwards."""
        with self._pools.lock:
            self._pools.closed = True
            pools = list(self._pools.by_key.values())
            self._pools.by_key.clear()
        for pool in pools:
            pool.close()
        self._lookups.shutdown(wait=False, cancel_futures=True)

    @property
    def per_host(self) -> int:
        """Requests in flight to one host at most (``FetchOptions.per_host``)."""
        return self._options.per_host

    @property
    def hosts(self) -> HostSlots:
        """The request slots per host that every fetch counts on (see ``fetch``'s ``claimed``)."""
        return self._hosts

    def fetch(self, url: str, *, claimed: bool = False) -> Page:
        """GET ``url`` and return its text; raises ``FetchError`` with the registry code.

        ``claimed``: the caller has claimed a slot of :attr:`hosts` for the URL's host
        (``parse_target(url).host``); the first hop uses it instead of waiting, and frees it.
        """
        clock = _Clock(time.monotonic() + self._options.timeout, self._options.timeout)
        token = _CLOCK.set(clock)
        try:
            target = parse_target(url)
            for redirects in range(MAX_REDIRECTS + 1):
                # Each hop holds a slot on its own host until its body is read or dropped.
                with (self._hosts.claimed(target.host) if claimed and not redirects
                      else self._hosts.hold(target.host, clock.deadline, clock.timeout)):
                    response = self._request(target, clock)
                    try:
                        if response.status not in _REDIRECT_STATUSES:
                            return self._page(target, response, clock)
                        if redirects == MAX_REDIRECTS:
                            break
                        target = follow_redirect(target, _location(response))
                        _skip_short_body(response, clock)
                    finally:
                        # Returns a fully read connection to its pool; closes any other.
                        response.close()
                        response.release_conn()
            raise FetchError(Code.REDIRECT_LIMIT, f"more than {MAX_REDIRECTS} redirects")
        finally:
            _CLOCK.reset(token)

    # -- one hop ------------------------------------------------------------------------------

    def _request(self, target: Target, clock: _Clock) -> BaseHTTPResponse:
        address, port = self._destination(target, clock)
        headers = {**self._headers, "Host": target.host}  # URL ports are always the default
        for attempt in (1, 2):
            pool = self._pool(target, address, port)
            remaining = _time_left(clock)
            clock.opened, clock.handshake_failed = 0, False
            try:
                return pool.urlopen(
                    "GET",
                    target.path,
                    headers=headers,
                    retries=False,
                    redirect=False,
                    assert_same_host=False,
                    timeout=Timeout(connect=remaining, read=remaining),
                    preload_content=False,
                    decode_content=False,
                    release_conn=False,
                )
            except (HTTPError, OSError, http.client.HTTPException) as exc:
                # Retried once: a pool evicted by another thread between lookup and use, or
                # a kept-alive connection the server closed before this request was sent.
                retry = isinstance(exc, ClosedPoolError) or (
                    not clock.opened and _is_stale_connection(exc))
                if attempt == 2 or not retry:
                    raise _network_failure(exc, clock) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _destination(self, target: Target, clock: _Clock) -> tuple[IPv4Address | IPv6Address, int]:
        """The one validated address (and port) this hop connects to."""
        rule = self._connect_to.get((target.host, target.port))
        if rule is not None:
            answers: list[str] = [rule.address]
            port = rule.address_port
        elif target.ip is not None:
            answers = [str(target.ip)]
            port = target.port
        else:
            answers = self._lookup(target, clock)
            port = target.port
        address = self._policy.pick(target, answers)
        if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # the same host, reached without dual-stack sockets
        return address, port

    def _lookup(self, target: Target, clock: _Clock) -> list[str]:
        future = self._lookups.submit(self._resolver, target.host, target.port)
        try:
            return list(future.result(timeout=_time_left(clock)))
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise FetchError(
                Code.TIMEOUT, f"no answer for {target.host} within {clock.timeout:g} s",
            ) from None

    def _pool(self, target: Target, address: IPv4Address | IPv6Address, port: int,
              ) -> HTTPConnectionPool:
        key: _PoolKey = (target.scheme, str(address), port, target.host)
        evicted = None
        with self._pools.lock:
            if self._pools.closed:
                raise RuntimeError("PinnedFetcher.fetch() called after close()")
            pool = self._pools.by_key.get(key)
            if pool is not None:
                self._pools.by_key.move_to_end(key)
                return pool
            if target.scheme == "https":
                if self._tls is None:
                    self._tls = _tls_context(self._options.ca_cert)
                pool = _PinnedHTTPSPool(
                    str(address), port, maxsize=self._options.per_host, retries=False,
                    ssl_context=self._tls, server_hostname=target.host,
                )
            else:
                pool = _PinnedHTTPPool(str(address), port, maxsize=self._options.per_host,
                                       retries=False)
            self._pools.by_key[key] = pool
            if len(self._pools.by_key) > _MAX_POOLS:
                _, evicted = self._pools.by_key.popitem(last=False)
        if evicted is not None:
            evicted.close()  # idle connections close now, busy ones when released
        return pool

    def _page(self, target: Target, response: BaseHTTPResponse, clock: _Clock) -> Page:
        status = response.status
        if not 200 <= status <= 299:
            raise FetchError(Code.HTTP_STATUS, f"HTTP status {status}", status=status)
        # Everything that can be refused from the headers is refused before reading the body.
        media_type, charset = _content_type(response)
        if media_type and not _is_text_type(media_type):
            raise FetchError(
                Code.CONTENT_TYPE_UNSUPPORTED, f"content type {_safe(media_type)} is not text",
            )
        if charset and charset not in _UTF8_CHARSETS:
            raise FetchError(Code.NOT_UTF8, f"declared charset {_safe(charset)} is not UTF-8")
        codings = _content_codings(response)
        max_bytes = self._options.max_bytes
        length = response.length_remaining  # None when chunked or unknown
        if length is not None and length > max_bytes:
            raise FetchError(Code.TOO_LARGE, f"Content-Length {length} is over {max_bytes} bytes")
        text = _read_text(response, codings, clock, max_bytes)
        return Page(url=target.url, status=status, media_type=media_type, text=text)
