"""Tests of how network failures become codes: refused and broken connections, malformed
replies, TLS errors after the handshake; nothing the server sent is echoed (loopback only)."""

from __future__ import annotations

import socket

import pytest
import trustme

from tests.fetch.conftest import HOST, MakeFetcher, StartRaw, fetch_error
from tests.fetch.servers import head, reset_after, send_bytes, send_outside_tls, server_tls_context
from tracecite.codes import Code

pytestmark = pytest.mark.network


# --------------------------------------------------------------------------------------------
# Broken connections and malformed replies


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_connection_refused(make_fetcher: MakeFetcher) -> None:
    error = fetch_error(make_fetcher(http=free_port()), "http://example.test/")
    assert error.code is Code.CONNECT_FAILED
    assert "ECONNREFUSED" in error.detail


def test_reset_mid_body(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "100000")])
    server = raw_server(reset_after(first + b"partial body"))
    error = fetch_error(make_fetcher(http=server.port), "http://example.test/")
    assert error.code is Code.CONNECT_FAILED


def test_body_shorter_than_content_length(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    reply = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "100")]) + b"short"
    server = raw_server(send_bytes(reply))
    error = fetch_error(make_fetcher(http=server.port), "http://example.test/")
    assert error.code is Code.CONNECT_FAILED


@pytest.mark.parametrize(
    "reply",
    [
        b"SECRET page text with no status line\n",  # an HTTP/0.9-style reply
        b"HTTP/2 200\r\n\r\nSECRET",
        b"ICY 200 OK\r\n\r\nSECRET",
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"S" * 70_000 + b"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n" + b"X-Many: SECRET\r\n" * 150 + b"\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nSECRET",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nSECRET\r\n",
        b"",  # closed without a reply
    ],
)
def test_malformed_replies(
    raw_server: StartRaw, make_fetcher: MakeFetcher, reply: bytes,
) -> None:
    server = raw_server(send_bytes(reply))
    error = fetch_error(make_fetcher(http=server.port), "http://example.test/")
    assert error.code is Code.CONNECT_FAILED
    # nothing the server sent is echoed (docs/reference/reports.md)
    assert "SECRET" not in str(error)


def test_tls_errors_after_the_handshake_are_connection_failures(
    ca: trustme.CA, raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    tls = server_tls_context(ca, HOST)
    garbage = raw_server(send_outside_tls(b"SECRET not a TLS record\r\n\r\n"), tls=tls)
    hangup = raw_server(send_bytes(b""), tls=tls)
    fetcher = make_fetcher(https=garbage.port)
    error = fetch_error(fetcher, "https://example.test/")
    assert error.code is Code.CONNECT_FAILED
    assert "SECRET" not in str(error)
    error = fetch_error(make_fetcher(https=hangup.port), "https://example.test/")
    assert error.code is Code.CONNECT_FAILED
