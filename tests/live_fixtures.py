"""Fixtures for the live commands' tests: a test CA, a local site, and a guard against DNS.

Every server listens on 127.0.0.1 and the commands reach it only through ``--connect-to``,
``--allow-net`` and ``--ca-cert`` (`Site.flags`). `no_dns` makes any name lookup fail the test,
so nothing is ever asked of the machine's resolver (which is not on loopback).

The fixture functions are named ``*_fixture`` and registered under the short name, so a module
imports them (with ``# noqa: F401``: pytest finds them by their registered names)
and its tests take ``site``, ``no_dns``, … as arguments without shadowing an import.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from tests.fetch.servers import HTTPTestServer, Reply, Request, Route, server_tls_context

HOST = "example.test"
"""The host name every test URL uses; --connect-to sends it to a local port."""

TEXT = (("Content-Type", "text/plain; charset=utf-8"),)
HTML = (("Content-Type", "text/html; charset=utf-8"),)
JSON = (("Content-Type", "application/json"),)


def text(body: str | bytes, *, headers: tuple[tuple[str, str], ...] = TEXT,
         status: int = 200) -> Reply:
    """A reply with ``body`` (UTF-8 when ``str``), plain text by default."""
    return Reply(status, headers, body.encode("utf-8") if isinstance(body, str) else body)


def html(body: str) -> Reply:
    """An HTML reply."""
    return text(body, headers=HTML)


def redirect(location: str | None, status: int = 302) -> Reply:
    """A redirect to ``location`` (none at all when ``None``)."""
    headers = TEXT if location is None else (*TEXT, ("Location", location))
    return Reply(status, headers, b"moved")


# ---- DNS ------------------------------------------------------------------------------------

Lookups = list[tuple[Any, Any]]


def _is_ip_literal(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is None:
        return True
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, str(host))
        except OSError:
            continue
        return True
    return False


@pytest.fixture(name="no_dns")
def no_dns_fixture(monkeypatch: pytest.MonkeyPatch) -> Lookups:
    """Fail any name lookup (IP literals still pass); returns the names that were asked for.

    The fetcher's resolver calls ``socket.getaddrinfo``; a name reaching it here is a test bug,
    and the AssertionError surfaces as TC900 (exit 3) in the run.
    """
    asked: Lookups = []
    real = socket.getaddrinfo

    def guarded(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if _is_ip_literal(host):
            return real(host, port, *args, **kwargs)
        asked.append((host, port))
        raise AssertionError(f"unexpected name lookup for {host!r}")

    monkeypatch.setattr(socket, "getaddrinfo", guarded)
    return asked


# ---- the site -------------------------------------------------------------------------------

class Site:
    """``http://example.test`` and ``https://example.test`` served from one route table.

    ``flags`` are the command-line options that reach it; ``paths`` lists the request paths both
    servers saw, in order.
    """

    def __init__(self, ca: trustme.CA, ca_path: str) -> None:
        self.ca_path = ca_path
        self.routes: dict[str, Route] = {}
        self.http = HTTPTestServer()
        self.https = HTTPTestServer(tls=server_tls_context(ca, HOST))
        for server in (self.http, self.https):
            server.routes = self.routes  # one table for both schemes

    def start(self) -> Site:
        """Start both servers."""
        self.http.start()
        self.https.start()
        return self

    def stop(self) -> None:
        """Stop both servers."""
        self.http.stop()
        self.https.stop()

    def route(self, path: str, reply: Route) -> str:
        """Serve ``reply`` at ``path``; return the https URL of ``path``."""
        self.routes[path] = reply
        return f"https://{HOST}{path}"

    @property
    def connect_to(self) -> list[str]:
        """``--connect-to`` options for example.test:80 and :443."""
        return ["--connect-to", f"{HOST}:80:127.0.0.1:{self.http.port}",
                "--connect-to", f"{HOST}:443:127.0.0.1:{self.https.port}"]

    @property
    def flags(self) -> list[str]:
        """Every option needed to reach the site: connect-to, allow-net and the CA."""
        return [*self.connect_to, "--allow-net", "127.0.0.0/8", "--ca-cert", self.ca_path]

    @property
    def paths(self) -> list[str]:
        """Request paths seen by both servers."""
        return [r.path for r in [*self.http.requests, *self.https.requests]]

    @property
    def connections(self) -> int:
        """TCP connections both servers accepted."""
        return self.http.connections + self.https.connections


@pytest.fixture(name="site")
def site_fixture(ca: trustme.CA, ca_path: str, no_dns: Lookups) -> Iterator[Site]:
    """A running `Site` with a certificate from the suite's test CA (tests/conftest.py), stopped
    at teardown; name lookups fail the test meanwhile."""
    running = Site(ca, ca_path).start()
    try:
        yield running
    finally:
        running.stop()


class InFlight:
    """A route that holds each request for ``delay`` seconds and records the peak concurrency."""

    def __init__(self, reply: Reply, delay: float) -> None:
        self.reply = reply
        self.delay = delay
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def __call__(self, request: Request) -> Reply:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.delay)
        finally:
            with self.lock:
                self.now -= 1
        return self.reply


# ---- files ----------------------------------------------------------------------------------

def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_guarded(call: Callable[[], int], *, seconds: float,
                unblock: Callable[[], None] = lambda: None) -> int:
    """Run ``call`` in a thread; fail if it takes more than ``seconds`` (then ``unblock`` it)."""
    outcome: list[int | BaseException] = []

    def target() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        unblock()
        worker.join(5)
        pytest.fail(f"the command blocked for more than {seconds} s")
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def unblock_fifo(path: Path) -> Callable[[], None]:
    """Open ``path`` (a FIFO) for writing so a reader blocked opening it is released."""

    def unblock() -> None:
        import os

        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return
        os.close(fd)

    return unblock
