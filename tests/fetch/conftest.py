"""Fixtures and helpers for the fetch tests: a trustme CA, local servers, fetchers wired to
them, and the small helpers the test modules share (`fetch_error`, `redirect`, `HTML`).

Nothing here reaches beyond loopback: fetchers get their addresses from ``--connect-to`` rules
pointing at 127.0.0.1 (or ::1), or from a resolver the test injects; the default resolver used
here fails the test instead of asking DNS.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
import trustme

from tests.fetch.servers import HTTPTestServer, RawServer, Reply, Servers, server_tls_context
from tracecite.fetch.body import ByteBudget
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.options import ConnectTo, FetchOptions

HOST = "example.test"
LOOPBACK = ipaddress.ip_network("127.0.0.1/32")
HTML = (("Content-Type", "text/html; charset=utf-8"),)
MiB = 1024 * 1024

StartRaw = Callable[..., RawServer]
StartServer = Callable[..., HTTPTestServer]


def fetch_error(fetcher: PinnedFetcher, url: str) -> FetchError:
    """Fetch ``url``, expecting a FetchError, and return it."""
    with pytest.raises(FetchError) as caught:
        fetcher.fetch(url)
    return caught.value


def redirect(status: int, location: str) -> Reply:
    """A redirect reply with a short body."""
    return Reply(status, (("Location", location),), b"moved")


def no_dns(host: str, port: int) -> list[str]:
    """The resolver of every test fetcher that is not given one: a lookup is a test bug."""
    raise AssertionError(f"unexpected name lookup for {host}:{port}")


@pytest.fixture
def http_server() -> Iterator[HTTPTestServer]:
    """A plain HTTP server on 127.0.0.1; add routes to ``.routes``."""
    with HTTPTestServer() as server:
        yield server


@pytest.fixture
def sni_log() -> list[str | None]:
    """The SNI names the `https_server` saw, one per handshake."""
    return []


@pytest.fixture
def https_server(ca: trustme.CA, sni_log: list[str | None]) -> Iterator[HTTPTestServer]:
    """An HTTPS server on 127.0.0.1 with a certificate for example.test from `ca`."""
    with HTTPTestServer(tls=server_tls_context(ca, HOST, sni_log=sni_log)) as server:
        yield server


@pytest.fixture
def start_server(servers: Servers) -> Callable[..., HTTPTestServer]:
    """Start extra `HTTPTestServer`s (stopped at teardown)."""
    return servers.http


@pytest.fixture
def raw_server(servers: Servers) -> Callable[..., RawServer]:
    """Start `RawServer`s running a script (stopped at teardown)."""
    return servers.raw


MakeFetcher = Callable[..., PinnedFetcher]


@pytest.fixture
def make_fetcher(ca_path: str) -> Iterator[MakeFetcher]:
    """Build a fetcher that reaches example.test:80 and :443 on local ports (closed at teardown).

    ``http``/``https``: local ports for example.test; ``routes``: more ``ConnectTo`` rules;
    ``allow``: ``allow_net`` (127.0.0.1/32 by default); ``trust``: whether to pass the test CA;
    ``pdf_loads``: the fetcher's budget of PDFs loading at once.
    Other keyword arguments go to `FetchOptions`.
    """
    fetchers: list[PinnedFetcher] = []

    def make(
        *,
        http: int | None = None,
        https: int | None = None,
        routes: Sequence[ConnectTo] = (),
        allow: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network] = (LOOPBACK,),
        trust: bool = True,
        resolver: Callable[[str, int], Sequence[str]] = no_dns,
        pdf_loads: ByteBudget | None = None,
        **options: Any,
    ) -> PinnedFetcher:
        rules = list(routes)
        if http is not None:
            rules.append(ConnectTo(HOST, 80, "127.0.0.1", http))
        if https is not None:
            rules.append(ConnectTo(HOST, 443, "127.0.0.1", https))
        fetcher = PinnedFetcher(
            FetchOptions(
                connect_to=tuple(rules),
                allow_net=tuple(allow),
                ca_cert=ca_path if trust else None,
                **options,
            ),
            resolver=resolver,
            pdf_loads=pdf_loads,
        )
        fetchers.append(fetcher)
        return fetcher

    yield make
    for fetcher in fetchers:
        fetcher.close()
