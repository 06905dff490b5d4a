"""Local servers for the fetcher tests: loopback only, ephemeral ports, every one stops by itself.

- `HTTPTestServer`: a threaded HTTP/1.1 keep-alive server answering from a route table, or HTTPS
  with a certificate from a trustme CA; it records requests, connections and TLS SNI names.
- `RawServer`: accepts TCP connections and runs a script on each, for replies no well-behaved
  server sends (trickles, resets, endless bodies, no status line, huge headers).

Every loop here is bounded in count or in time, and each server shuts itself down after
`LIFETIME` seconds even if a test forgets to stop it.
"""

from __future__ import annotations

import datetime
import os
import socket
import socketserver
import ssl
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any

import trustme

LIFETIME = 30.0
"""Seconds after which any server stops on its own."""

CONNECTION_IDLE = 5.0
"""Seconds a server-side connection waits for the client before giving up."""


# --------------------------------------------------------------------------------------------
# TLS


def server_tls_context(
    ca: trustme.CA,
    *names: str,
    expired: bool = False,
    sni_log: list[str | None] | None = None,
) -> ssl.SSLContext:
    """A server context with a certificate for ``names`` from ``ca``; records SNI in ``sni_log``."""
    if expired:
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = ca.issue_cert(
            *names,
            not_before=now - datetime.timedelta(days=30),
            not_after=now - datetime.timedelta(days=1),
        )
    else:
        cert = ca.issue_cert(*names)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(context)
    if sni_log is not None:
        log = sni_log

        def remember(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
            log.append(name)

        context.sni_callback = remember
    return context


# --------------------------------------------------------------------------------------------
# The route-table HTTP(S) server


@dataclass(frozen=True)
class Reply:
    """What a route answers: status, headers (in order) and body.

    ``Content-Length`` is added unless the headers already frame the body.
    """

    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/html; charset=utf-8"),)
    body: bytes = b""


@dataclass(frozen=True)
class Request:
    """One request as the server saw it (header names lower-cased)."""

    path: str
    headers: dict[str, str]
    client_port: int  # the same for every request on one connection


Route = Reply | Callable[[Request], Reply]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse can be tested
    timeout = CONNECTION_IDLE
    server: _ThreadedServer

    def do_GET(self) -> None:
        owner = self.server.owner
        request = Request(
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            client_port=self.client_address[1],
        )
        with owner.lock:
            owner.requests.append(request)
        route = owner.routes.get(self.path)
        if route is None:
            reply = Reply(404, (("Content-Type", "text/plain"),), b"no such route")
        elif isinstance(route, Reply):
            reply = route
        else:
            reply = route(request)
        self.send_response(reply.status)
        names = {name.lower() for name, _ in reply.headers}
        for name, value in reply.headers:
            self.send_header(name, value)
        if not names & {"content-length", "transfer-encoding"}:
            self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean


class _ThreadedServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: HTTPTestServer, address: tuple[str, int], family: int) -> None:
        self.owner = owner
        self.address_family = family
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that hang up early are what many tests are about

    def finish_request(self, request: Any, client_address: Any) -> None:
        owner = self.owner
        with owner.lock:
            owner.connections += 1
        request.settimeout(CONNECTION_IDLE)
        if owner.tls is None:
            super().finish_request(request, client_address)
            return
        try:  # the handshake runs here, in the connection's thread, not in the accept loop
            wrapped = owner.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            with owner.lock:
                owner.handshake_failures += 1
            return
        try:
            super().finish_request(wrapped, client_address)
        finally:
            wrapped.close()


class HTTPTestServer:
    """A keep-alive HTTP/1.1 server on ``host`` (loopback) answering from ``routes``.

    Pass ``tls`` (see `server_tls_context`) for HTTPS. ``port`` 0 picks a free port.
    """

    def __init__(
        self,
        routes: dict[str, Route] | None = None,
        *,
        tls: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.tls = tls
        self.lock = threading.Lock()
        self.requests: list[Request] = []
        self.connections = 0
        self.handshake_failures = 0
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._server = _ThreadedServer(self, (host, port), family)
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True,
        )
        self._timer = threading.Timer(LIFETIME, self.stop)
        self._timer.daemon = True
        self._stopped = False

    def start(self) -> HTTPTestServer:
        """Start serving in a background thread."""
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop accepting and close the listening socket (idempotent)."""
        with self.lock:
            if self._stopped:
                return
            self._stopped = True
        self._timer.cancel()
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> HTTPTestServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


# --------------------------------------------------------------------------------------------
# The scripted raw-socket server


@dataclass
class RawConnection:
    """One accepted connection handed to a script: the socket and the request head read so far."""

    sock: socket.socket
    index: int  # 0 for the first connection the server accepted
    stopping: threading.Event
    request: bytes = b""

    def read_request(self) -> bytes:
        """Read one request head (up to 64 KiB); ``b""`` if the client closed first."""
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            try:
                piece = self.sock.recv(4096)
            except OSError:
                return b""
            if not piece:
                return b""
            data += piece
        self.request = data
        return data

    def send(self, data: bytes) -> bool:
        """Send ``data``; False once the client has gone away."""
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        return True

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; False if the server is stopping."""
        return not self.stopping.wait(seconds)


Script = Callable[[RawConnection], None]


@dataclass
class RawServer:
    """Runs ``script`` on every accepted connection (after reading the request head by default)."""

    script: Script
    host: str = "127.0.0.1"
    read_first: bool = True
    tls: ssl.SSLContext | None = None  # TLS handshake first (in the connection's thread)
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((self.host, 0))
        self._listener.listen(16)
        self._listener.settimeout(0.01)
        self.port: int = self._listener.getsockname()[1]
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)

    def start(self) -> RawServer:
        """Start accepting in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting; scripts see ``stopping`` set and finish (idempotent)."""
        self.stopping.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        self._listener.close()

    def _accept_loop(self) -> None:
        started = time.monotonic()
        while not self.stopping.is_set() and time.monotonic() - started < LIFETIME:
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            with self._lock:
                index = self.connections
                self.connections += 1
            threading.Thread(target=self._serve, args=(sock, index), daemon=True).start()
        self.stopping.set()

    def _serve(self, sock: socket.socket, index: int) -> None:
        try:
            sock.settimeout(CONNECTION_IDLE)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_side=True)
        except OSError:  # includes ssl.SSLError
            sock.close()
            return
        connection = RawConnection(sock, index, self.stopping)
        try:
            if self.read_first:
                head = connection.read_request()
                with self._lock:
                    self.requests.append(head)
                if not head:
                    return
            self.script(connection)
        except OSError:
            pass
        finally:
            sock.close()

    def __enter__(self) -> RawServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class FullBacklog:
    """A loopback port whose accept queue is full: new connects hang (their SYNs are dropped)."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(0)  # never accepted: one queued connection fills it
        self.port: int = self._listener.getsockname()[1]
        self._filler = socket.create_connection(("127.0.0.1", self.port), timeout=1)

    def close(self) -> None:
        """Release the port."""
        self._filler.close()
        self._listener.close()


# --------------------------------------------------------------------------------------------
# Scripts


def head(status: str = "200 OK", headers: Iterable[tuple[str, str]] = ()) -> bytes:
    """An HTTP/1.1 status line and header block."""
    lines = [f"HTTP/1.1 {status}"] + [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def send_bytes(data: bytes) -> Script:
    """Send exactly ``data``, then close the connection gracefully."""

    def script(connection: RawConnection) -> None:
        connection.send(data)

    return script


def trickle(data: bytes, interval: float, *, first: bytes = b"") -> Script:
    """Send ``first``, then ``data`` one byte every ``interval`` seconds, until the client goes."""

    def script(connection: RawConnection) -> None:
        if first and not connection.send(first):
            return
        for byte in data:
            if not connection.send(bytes([byte])) or not connection.wait(interval):
                return

    return script


def silent(seconds: float = 10.0) -> Script:
    """Accept, read the request (if asked to) and never answer, for at most ``seconds``."""

    def script(connection: RawConnection) -> None:
        connection.sock.settimeout(0.1)
        end = time.monotonic() + seconds
        while time.monotonic() < end and not connection.stopping.is_set():
            try:
                if connection.sock.recv(4096) == b"":
                    return  # the client gave up
            except TimeoutError:
                continue

    return script


def send_outside_tls(data: bytes) -> Script:
    """On a TLS connection, write ``data`` to the TCP stream itself, not as a TLS record."""

    def script(connection: RawConnection) -> None:
        os.write(connection.sock.fileno(), data)
        connection.wait(0.5)

    return script


def reset_after(data: bytes) -> Script:
    """Send ``data``, then abort the connection with a TCP RST."""

    def script(connection: RawConnection) -> None:
        connection.send(data)
        time.sleep(0.05)  # let the data leave before the reset
        connection.sock.setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0),
        )

    return script


def stream(first: bytes, pieces: Iterator[bytes], max_seconds: float = 10.0) -> Script:
    """Send ``first`` then ``pieces`` until the client leaves, the pieces end or time is up."""

    def script(connection: RawConnection) -> None:
        if not connection.send(first):
            return
        end = time.monotonic() + max_seconds
        for piece in pieces:
            if time.monotonic() > end or connection.stopping.is_set():
                return
            if not connection.send(piece):
                return

    return script


def chunked(pieces: Iterable[bytes], limit: int = 100_000) -> Iterator[bytes]:
    """Frame ``pieces`` with chunked transfer coding (at most ``limit`` chunks, then the end)."""
    for count, piece in enumerate(pieces):
        if count >= limit:
            break
        if piece:
            yield f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    yield b"0\r\n\r\n"


def zeros_gzip(total: int, piece: int = 1 << 16) -> Iterator[bytes]:
    """A gzip stream of ``total`` zero bytes, made lazily: a bomb that costs nothing to make."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(piece)
    sent = 0
    while sent < total:
        out = compressor.compress(block[: min(piece, total - sent)])
        sent += min(piece, total - sent)
        if out:
            yield out
    yield compressor.flush()


def keepalive_then_drop(reply: bytes) -> Script:
    """First connection: answer one request, then close when the next request arrives.

    That is a kept-alive connection the server closed just as the client reused it. Later
    connections answer every request.
    """

    def script(connection: RawConnection) -> None:
        if not connection.send(reply):
            return
        if connection.index == 0:
            connection.read_request()
            return
        for _ in range(10):
            if not connection.read_request() or not connection.send(reply):
                return

    return script


@dataclass
class Servers:
    """Starts local servers for one test and stops them all at teardown."""

    started: list[HTTPTestServer | RawServer] = field(default_factory=list)

    def http(self, routes: dict[str, Route] | None = None, **kwargs: Any) -> HTTPTestServer:
        server = HTTPTestServer(routes, **kwargs).start()
        self.started.append(server)
        return server

    def raw(self, script: Script, **kwargs: Any) -> RawServer:
        server = RawServer(script, **kwargs).start()
        self.started.append(server)
        return server

    def stop(self) -> None:
        for server in self.started:
            server.stop()
