"""Tests of pinned connections against local servers: TLS (trust, names, expiry, the CA
bundle) and the deadline on every socket operation (loopback only, see conftest.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest
import trustme

from tests.fetch.conftest import HOST, HTML, MakeFetcher, StartRaw, StartServer, fetch_error
from tests.fetch.servers import (
    FullBacklog,
    HTTPTestServer,
    Reply,
    head,
    server_tls_context,
    silent,
    trickle,
)
from tracecite.codes import Code
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.options import FetchOptions

pytestmark = pytest.mark.network


# --------------------------------------------------------------------------------------------
# TLS and the CA bundle


def test_unreadable_ca_bundle_is_a_value_error(tmp_path: Any) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n")
    with pytest.raises(ValueError, match="CA certificates"):
        PinnedFetcher(FetchOptions(ca_cert=str(bogus)))
    with pytest.raises(ValueError, match="CA certificates"):
        PinnedFetcher(FetchOptions(ca_cert=str(tmp_path / "missing.pem")))


def test_unknown_ca_is_a_tls_failure(
    https_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    https_server.routes["/"] = Reply(200, HTML, b"secret")
    error = fetch_error(make_fetcher(https=https_server.port, trust=False), "https://example.test/")
    assert error.code is Code.TLS_FAILED
    assert https_server.requests == []


def test_certificate_for_another_name(
    ca: trustme.CA, start_server: StartServer, make_fetcher: MakeFetcher,
) -> None:
    server = start_server({"/": Reply(200, HTML, b"x")}, tls=server_tls_context(ca, "other.test"))
    error = fetch_error(make_fetcher(https=server.port), "https://example.test/")
    assert error.code is Code.TLS_FAILED
    assert "mismatch" in error.detail.lower()
    assert server.requests == []


def test_expired_certificate(
    ca: trustme.CA, start_server: StartServer, make_fetcher: MakeFetcher,
) -> None:
    server = start_server(
        {"/": Reply(200, HTML, b"x")}, tls=server_tls_context(ca, HOST, expired=True),
    )
    error = fetch_error(make_fetcher(https=server.port), "https://example.test/")
    assert error.code is Code.TLS_FAILED
    assert "expired" in error.detail


def test_https_to_a_plain_http_server(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    error = fetch_error(make_fetcher(https=http_server.port), "https://example.test/")
    assert error.code is Code.TLS_FAILED


def test_tls_handshake_that_never_completes(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    server = raw_server(silent(), read_first=False)
    started = time.monotonic()
    error = fetch_error(make_fetcher(https=server.port, timeout=1), "https://example.test/")
    assert error.code is Code.TIMEOUT
    assert time.monotonic() - started < 1.5


# --------------------------------------------------------------------------------------------
# The deadline on every socket operation


@pytest.mark.slow
def test_trickling_reply_is_cut_at_the_deadline(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    reply = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "2")]) + b"ok"
    server = raw_server(trickle(reply, 1.0))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=2), "http://example.test/")
    elapsed = time.monotonic() - started
    assert error.code is Code.TIMEOUT
    assert 1.9 < elapsed < 2.75


def test_trickling_body_is_cut_at_the_deadline(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "1000")])
    server = raw_server(trickle(b"x" * 1000, 0.2, first=first))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=1.5), "http://example.test/")
    assert error.code is Code.TIMEOUT
    assert time.monotonic() - started < 2


def test_a_large_body_asked_for_at_once_is_cut_at_the_deadline(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    """Every receive keeps to the deadline, however much is asked for."""
    first = head(headers=[("Content-Type", "text/plain"), ("Content-Length", str(1 << 20))])
    server = raw_server(trickle(b"x" * 1000, 0.2, first=first))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=1.5), "http://example.test/")
    assert error.code is Code.TIMEOUT
    assert time.monotonic() - started < 2


def test_connect_that_never_completes(make_fetcher: MakeFetcher) -> None:
    backlog = FullBacklog()
    try:
        started = time.monotonic()
        error = fetch_error(make_fetcher(http=backlog.port, timeout=0.7), "http://example.test/")
        assert error.code is Code.TIMEOUT
        assert time.monotonic() - started < 1.2
    finally:
        backlog.close()


def test_server_that_never_answers(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    server = raw_server(silent())
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=1), "http://example.test/")
    assert error.code is Code.TIMEOUT
    assert "1 s" in error.detail
    assert time.monotonic() - started < 1.5
