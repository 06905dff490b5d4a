"""Pinned connections: sockets opened to one validated IP literal, under the fetch's deadline,
and the TLS context they use (docs/reference/fetching.md).

The pools here are created only for addresses the address policy has passed, and their sockets
connect to that IP literal directly: no name is ever looked up on this path. The host name
travels separately, as ``Host`` and as the TLS server name.

One deadline covers a whole source. urllib3 timeouts apply per socket operation and http.client
reads in loops, so a server that trickles one byte a second never trips them. Instead every
connect, send and receive here gets only the time left before the deadline of the fetch running
in this thread, so a trickling server is cut at the deadline like one that never answers.

TLS: the system trust store plus ``ca_cert`` (read once a run: :mod:`~tracecite.fetch.ca_bundle`),
TLS 1.2 or later, and the host name checked by OpenSSL during the handshake (``server_hostname`` =
the URL's host). urllib3's ``assert_hostname`` is deliberately not used: it would switch
``check_hostname`` off on the shared ``SSLContext`` and match the name in Python after the
handshake instead.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError


@dataclass
class FetchClock:
    """One fetch's deadline, and what happened during its current request attempt.

    ``deadline`` is a ``time.monotonic()`` value; ``timeout`` the seconds it was set from, for
    messages. The sockets below record on the clock whether the attempt opened a connection and
    whether a TLS handshake failed, which decide the retry and the error's code.
    """

    deadline: float
    timeout: float
    opened: int = 0  # sockets opened (0: the pool handed out a kept-alive connection)
    handshake_failed: bool = False  # a TLS error then is TC312; after the handshake, TC311

    def remaining(self) -> float:
        """Seconds left before the deadline; TC313 when there are none."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise FetchError(Code.TIMEOUT, f"no complete response within {self.timeout:g} s")
        return remaining

    def begin_attempt(self) -> None:
        """Forget what the previous request attempt recorded."""
        self.opened, self.handshake_failed = 0, False


# Set for the duration of one fetch in the calling thread; every urllib3 socket operation for that
# fetch runs in that thread, so the sockets below can find the deadline without any plumbing.
_CLOCK: ContextVar[FetchClock | None] = ContextVar("tracecite_fetch_clock", default=None)


@contextmanager
def enforced(clock: FetchClock) -> Iterator[None]:
    """Hold every pinned socket operation in this thread to ``clock`` until the block ends."""
    token = _CLOCK.set(clock)
    try:
        yield
    finally:
        _CLOCK.reset(token)


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

    The arguments pass through untouched: ``ssl.SSLSocket``, which comes after this class in
    ``_DeadlineSSLSocket``, has defaults of its own.
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


class PinnedHTTPConnectionPool(HTTPConnectionPool):
    """urllib3's HTTP pool for one validated IP address (its ``host``), under the deadline."""

    ConnectionCls = _PinnedHTTPConnection


class PinnedHTTPSConnectionPool(HTTPSConnectionPool):
    """The HTTPS pool: give it ``server_hostname`` and a context from ``tls_context``."""

    ConnectionCls = _PinnedHTTPSConnection


def tls_context(bundle: ssl.SSLContext | None) -> ssl.SSLContext:
    """System trust store (plus the CA bundle of ``bundle``, a context from
    the run's loaded ``--ca-cert``, which becomes this one), name checks by
    OpenSSL, TLS 1.2 or later."""
    if bundle is None:
        context = ssl.create_default_context()
    else:
        context = bundle
        context.load_default_certs()  # beside the bundle, as create_default_context() loads it
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.hostname_checks_common_name = False  # browsers accept subjectAltName only
    context.sslsocket_class = _DeadlineSSLSocket
    return context
