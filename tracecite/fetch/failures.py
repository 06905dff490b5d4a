"""Network failures → registry codes: what urllib3, http.client, ssl or the socket raised, turned
into one ``FetchError`` (docs/reference/fetching.md).

Decisions the specification leaves open:

- A reply that is not HTTP/1.x (an HTTP/0.9-style reply without a status line, ``HTTP/2``), a
  header line over 64 KiB or more than 100 headers, conflicting ``Content-Length`` values, a bad
  chunk, a body shorter than its ``Content-Length``, a reset, and a TLS error after the handshake
  are connection failures (TC311). TLS errors during the handshake are TC312.
- Failure details are TraceCite's own words (OS error names, OpenSSL reasons): nothing the
  server sent is echoed.
"""

from __future__ import annotations

import errno
import http.client
import os
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager

from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    InvalidChunkLength,
    InvalidHeader,
    NewConnectionError,
    ReadTimeoutError,
)

from tracecite.codes import Code
from tracecite.fetch.connection import FetchClock
from tracecite.fetch.errors import FetchError

NETWORK_EXCEPTIONS = (HTTPError, OSError, http.client.HTTPException)
"""What a network step can raise; ``network_failure`` turns each into a ``FetchError``."""


def network_failure(exc: BaseException, clock: FetchClock) -> FetchError:
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
def network_errors(clock: FetchClock) -> Iterator[None]:
    """Wrap the low-level exceptions of one network step, once, into ``FetchError``."""
    try:
        yield
    except NETWORK_EXCEPTIONS as exc:
        raise network_failure(exc, clock) from exc


def is_stale_connection(exc: BaseException) -> bool:
    """True when a kept-alive connection was closed by the server just before we used it."""
    stale = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
             ConnectionAbortedError)
    return any(isinstance(e, stale) for e in _causes(exc))


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
