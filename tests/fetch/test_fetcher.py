"""Tests of the pinned fetcher against local servers (loopback only, see conftest.py)."""

from __future__ import annotations

import concurrent.futures
import gzip
import ipaddress
import itertools
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable
from typing import Any

import pytest
import trustme

from tests.fetch.conftest import HOST, MakeFetcher
from tests.fetch.servers import (
    FullBacklog,
    HTTPTestServer,
    RawConnection,
    RawServer,
    Reply,
    chunked,
    head,
    keepalive_then_drop,
    reset_after,
    send_bytes,
    send_outside_tls,
    server_tls_context,
    silent,
    stream,
    trickle,
    zeros_gzip,
)
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import Page, PinnedFetcher
from tracecite.fetch.limits import DEFAULT_PER_HOST, MAX_BYTES, MAX_CONCURRENCY, MAX_TIMEOUT
from tracecite.fetch.options import ConnectTo, FetchOptions, parse_connect_to

pytestmark = pytest.mark.network

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
    return Reply(status, (("Location", location),), b"moved")


# --------------------------------------------------------------------------------------------
# parse_connect_to and FetchOptions


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("example.test:443:127.0.0.1:8443", ConnectTo("example.test", 443, "127.0.0.1", 8443)),
        ("Example.TEST:80:[::1]:8080", ConnectTo("example.test", 80, "::1", 8080)),
        ("93.184.216.34:443:10.1.2.3:443", ConnectTo("93.184.216.34", 443, "10.1.2.3", 443)),
        ("a.test:80:[2001:DB8:0::1]:1", ConnectTo("a.test", 80, "2001:db8::1", 1)),
        ("a.test:80:127.0.0.1:65535", ConnectTo("a.test", 80, "127.0.0.1", 65535)),
    ],
)
def test_parse_connect_to_accepts(spec: str, expected: ConnectTo) -> None:
    assert parse_connect_to(spec) == expected


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "example.test",
        "example.test:443:127.0.0.1",
        "example.test:443:localhost:443",  # ADDR must be an IP literal
        "example.test:443:::1:443",  # IPv6 without brackets
        "example.test:443:[127.0.0.1]:443",  # brackets are for IPv6 only
        "example.test:443:[::1]443",
        "example.test:443:[::1:443",
        "example.test:443:[fe80::1%eth0]:443",  # zone id
        "example.test:443:0177.0.0.1:443",  # non-canonical IPv4
        "example.test:443:127.1:443",
        "example.test:0:127.0.0.1:443",
        "example.test:65536:127.0.0.1:443",
        "example.test:+443:127.0.0.1:443",
        "example.test: 443:127.0.0.1:443",
        "example.test:443:127.0.0.1:",
        "example.test::127.0.0.1:443",
        ":443:127.0.0.1:443",  # curl's empty-HOST wildcard is not supported
        "exa mple.test:443:127.0.0.1:443",
        "[::1]:443:127.0.0.1:443",
        "example.test:443:127.0.0.1:4430000",
    ],
)
def test_parse_connect_to_refuses(spec: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT:ADDR:PORT2"):
        parse_connect_to(spec)


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": 0},
        {"timeout": -1},
        {"timeout": MAX_TIMEOUT + 0.001},
        {"timeout": float("nan")},
        {"max_bytes": 0},
        {"max_bytes": MAX_BYTES + 1},
        {"per_host": 0},
        {"per_host": MAX_CONCURRENCY + 1},
        {"user_agent": ""},
        {"user_agent": "evil\r\nX-Injected: 1"},
        {"user_agent": "caf\u00e9"},
    ],
)
def test_fetch_options_refuse_out_of_range_values(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        FetchOptions(**options)


def test_fetch_options_defaults() -> None:
    options = FetchOptions()
    assert options.timeout == MAX_TIMEOUT == 20.0
    assert options.max_bytes == MAX_BYTES == 2 * MiB
    assert options.per_host == DEFAULT_PER_HOST == 8
    assert options.user_agent.startswith("tracecite/")
    assert options.connect_to == options.allow_net == ()
    assert options.ca_cert is None


def test_unreadable_ca_bundle_is_a_value_error(tmp_path: Any) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n")
    with pytest.raises(ValueError, match="CA certificates"):
        PinnedFetcher(FetchOptions(ca_cert=str(bogus)))
    with pytest.raises(ValueError, match="CA certificates"):
        PinnedFetcher(FetchOptions(ca_cert=str(tmp_path / "missing.pem")))


# --------------------------------------------------------------------------------------------
# Pages


def test_plain_http_page(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/doc?x=1"] = Reply(200, HTML, "<p>héllo</p>".encode())
    fetcher = make_fetcher(http=http_server.port, user_agent="tracecite-test/1")
    page = fetcher.fetch("http://example.test/doc?x=1#frag")
    assert page == Page("http://example.test/doc?x=1", 200, "text/html", "<p>héllo</p>")
    (request,) = http_server.requests
    assert request.path == "/doc?x=1"
    assert request.headers["host"] == HOST
    assert request.headers["user-agent"] == "tracecite-test/1"
    assert request.headers["accept-encoding"] == "gzip, deflate"
    assert "text/html" in request.headers["accept"]
    assert not {"cookie", "authorization", "proxy-authorization"} & request.headers.keys()


def test_request_head_on_the_wire(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    reply = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "2")]) + b"ok"
    server = raw_server(send_bytes(reply))
    make_fetcher(http=server.port).fetch("http://example.test/a%20b?c=d")
    (request,) = server.requests
    lines = request.decode("latin-1").split("\r\n")
    assert lines[0] == "GET /a%20b?c=d HTTP/1.1"
    names = [line.partition(":")[0].lower() for line in lines[1:] if line]
    assert names.count("host") == 1
    assert "host: example.test" in (line.lower() for line in lines)
    assert not {"cookie", "authorization", "proxy-authorization", "content-length"} & set(names)


def test_https_page_uses_host_name_for_host_and_sni(
    https_server: HTTPTestServer, sni_log: list[str | None], make_fetcher: MakeFetcher,
) -> None:
    https_server.routes["/"] = Reply(200, (("Content-Type", "TEXT/Plain"),), b"secure")
    page = make_fetcher(https=https_server.port).fetch("https://example.test/")
    assert page == Page("https://example.test/", 200, "text/plain", "secure")
    assert sni_log == [HOST]
    assert https_server.requests[0].headers["host"] == HOST


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/ld+json; charset=UTF-8",
        "application/xhtml+xml",
        "text/markdown",
        'text/plain; charset="utf-8"',
        "text/plain; format=flowed; charset=US-ASCII",
        "text/plain;charset=utf8",
    ],
)
def test_accepted_content_types(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), b'{"a": "b"}')
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert page.text == '{"a": "b"}'
    assert page.media_type == content_type.partition(";")[0].lower()


def test_missing_content_type_is_fine_when_utf8(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (), "plain ünïcode".encode())
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert (page.media_type, page.text) == ("", "plain ünïcode")


def test_missing_content_type_with_binary_body_is_not_utf8(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (), b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8


def test_bom_is_stripped(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/"] = Reply(200, HTML, b"\xef\xbb\xbfhello \xef\xbb\xbf")
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert page.text == "hello \ufeff"


@pytest.mark.parametrize(
    "content_type",
    [
        "text/html; charset=latin-1",
        'text/html; charset="ISO-8859-1"',
        "text/plain; charset=utf-16",
        "application/json; charset=windows-1252",
    ],
)
def test_other_declared_charsets_are_not_utf8(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), b"ascii only")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8


@pytest.mark.parametrize("body", [b"caf\xe9", b"\xc3", b"\xed\xa0\x80", b"ok \xff\xfe"])
def test_invalid_utf8_bytes(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, body: bytes,
) -> None:
    http_server.routes["/"] = Reply(200, HTML, body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8


@pytest.mark.parametrize(
    "content_type",
    ["image/png", "application/pdf", "application/octet-stream", "application/xml", "html",
     "text/", "/html"],
)
def test_unsupported_content_types(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), b"data")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED
    if content_type == "image/png":
        assert "image/png" in error.detail


def test_header_text_is_not_echoed(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/type"] = Reply(200, (("Content-Type", "text/\x1b[31mred"),), b"")
    http_server.routes["/charset"] = Reply(
        200, (("Content-Type", "text/html; charset=\x1b]0;title\x07"),), b"")
    fetcher = make_fetcher(http=http_server.port)
    for path in ("/type", "/charset"):
        assert "\x1b" not in fetch_error(fetcher, f"http://example.test{path}").detail


def test_unsupported_type_is_refused_before_the_body(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    # The body never comes: reading it would run into the 5 s deadline.
    server = raw_server(trickle(
        b"x" * 100, 1.0,
        first=head(headers=[("Content-Type", "image/png"), ("Content-Length", "100000000")]),
    ))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("status", [404, 500, 204 + 100, 300, 304, 999])
def test_final_non_2xx_status(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, status: int,
) -> None:
    http_server.routes["/"] = Reply(status, HTML, b"" if status == 304 else b"oops")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert (error.code, error.status) == (Code.HTTP_STATUS, status)
    assert str(status) in error.detail


def test_other_2xx_statuses_are_pages(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/created"] = Reply(201, HTML, b"made")
    http_server.routes["/empty"] = Reply(204, (), b"")
    fetcher = make_fetcher(http=http_server.port)
    assert fetcher.fetch("http://example.test/created").status == 201
    assert fetcher.fetch("http://example.test/empty") == Page(
        "http://example.test/empty", 204, "", "")


# --------------------------------------------------------------------------------------------
# Redirects


def test_five_redirects_are_followed(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    statuses = [301, 302, 303, 307, 308]
    for hop, status in enumerate(statuses):
        http_server.routes[f"/r{hop}"] = redirect(status, f"/r{hop + 1}")
    http_server.routes["/r5"] = Reply(200, HTML, b"arrived")
    page = make_fetcher(http=http_server.port).fetch("http://example.test/r0")
    assert (page.url, page.text) == ("http://example.test/r5", "arrived")
    assert [r.path for r in http_server.requests] == [f"/r{i}" for i in range(6)]
    assert http_server.connections == 1  # short redirect bodies are read, the connection reused


def test_redirect_with_a_long_or_unframed_body(
    raw_server: StartRaw, http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/long"] = Reply(302, (("Location", "/end"),), b"x" * 200_000)
    http_server.routes["/end"] = Reply(200, HTML, b"end")
    endless = raw_server(stream(
        head("302 Found", [("Location", "http://example.test/end"),
                           ("Transfer-Encoding", "chunked")]),
        chunked(itertools.repeat(b"z" * 1000)),
    ))
    fetcher = make_fetcher(
        http=http_server.port, routes=[ConnectTo("endless.test", 80, "127.0.0.1", endless.port)],
    )
    assert fetcher.fetch("http://example.test/long").text == "end"
    assert fetcher.fetch("http://endless.test/").text == "end"


def test_sixth_redirect_is_refused(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    for hop in range(6):
        http_server.routes[f"/r{hop}"] = redirect(302, f"/r{hop + 1}")
    http_server.routes["/r6"] = Reply(200, HTML, b"too far")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/r0")
    assert error.code is Code.REDIRECT_LIMIT
    assert len(http_server.requests) == 6  # the sixth Location is never requested


def test_redirect_loop(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/a"] = redirect(301, "http://example.test/b")
    http_server.routes["/b"] = redirect(301, "/a")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/a")
    assert error.code is Code.REDIRECT_LIMIT


@pytest.mark.parametrize(
    ("location", "final"),
    [
        ("next", "/dir/next"),
        ("../up", "/up"),
        ("./same?q=1", "/dir/same?q=1"),
        ("//example.test/abs", "/abs"),
        ("?only=query", "/dir/page?only=query"),
        ("/caf%C3%A9", "/caf%C3%A9"),
    ],
)
def test_relative_locations(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, location: str, final: str,
) -> None:
    http_server.routes["/dir/page"] = redirect(302, location)
    http_server.routes[final] = Reply(200, HTML, b"found")
    page = make_fetcher(http=http_server.port).fetch("http://example.test/dir/page")
    assert page.url == f"http://example.test{final}"


def test_utf8_location_bytes_are_read_as_utf8(
    raw_server: StartRaw, http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    # http.client hands header bytes over as Latin-1; the fetcher reads them back as UTF-8.
    server = raw_server(send_bytes(
        b"HTTP/1.1 302 Found\r\nLocation: http://example.test/caf\xc3\xa9\r\n"
        b"Content-Length: 0\r\n\r\n"))
    http_server.routes["/caf%C3%A9"] = Reply(200, HTML, b"ok")
    fetcher = make_fetcher(routes=[ConnectTo("start.test", 80, "127.0.0.1", server.port)],
                           http=http_server.port)
    assert fetcher.fetch("http://start.test/").url == "http://example.test/caf%C3%A9"


def test_latin1_location_bytes(
    raw_server: StartRaw, http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    server = raw_server(send_bytes(
        b"HTTP/1.1 302 Found\r\nLocation: http://example.test/caf\xe9\r\n"
        b"Content-Length: 0\r\n\r\n"))
    http_server.routes["/caf%C3%A9"] = Reply(200, HTML, b"ok")
    fetcher = make_fetcher(routes=[ConnectTo("start.test", 80, "127.0.0.1", server.port)],
                           http=http_server.port)
    assert fetcher.fetch("http://start.test/").text == "ok"


def test_redirect_whose_short_body_breaks_off(
    raw_server: StartRaw, http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    server = raw_server(send_bytes(
        head("301 Moved", [("Location", "http://example.test/end"), ("Content-Length", "100")])
        + b"abc"))
    http_server.routes["/end"] = Reply(200, HTML, b"end")
    fetcher = make_fetcher(routes=[ConnectTo("start.test", 80, "127.0.0.1", server.port)],
                           http=http_server.port)
    assert fetcher.fetch("http://start.test/").text == "end"


def test_missing_location(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/"] = Reply(302, HTML, b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.REDIRECT_INVALID


def test_conflicting_location_headers(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(302, (("Location", "/a"), ("Location", "/b")), b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.REDIRECT_INVALID


def test_http_to_https_redirect_is_followed(
    http_server: HTTPTestServer, https_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = redirect(301, "https://example.test/secure")
    https_server.routes["/secure"] = Reply(200, HTML, b"upgraded")
    fetcher = make_fetcher(http=http_server.port, https=https_server.port)
    page = fetcher.fetch("http://example.test/")
    assert (page.url, page.text) == ("https://example.test/secure", "upgraded")


def test_https_to_http_redirect_is_refused(
    http_server: HTTPTestServer, https_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    https_server.routes["/"] = redirect(302, "http://example.test/plain")
    http_server.routes["/plain"] = Reply(200, HTML, b"downgraded")
    fetcher = make_fetcher(http=http_server.port, https=https_server.port)
    error = fetch_error(fetcher, "https://example.test/")
    assert error.code is Code.REDIRECT_DOWNGRADE
    assert http_server.requests == []


def test_redirect_to_refused_address(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = redirect(302, "http://inside.test/admin")
    lookups: list[tuple[str, int]] = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append((host, port))
        return ["127.88.0.1"]  # loopback, but outside allow_net: refused, and never left here

    fetcher = make_fetcher(http=http_server.port, resolver=resolver)
    error = fetch_error(fetcher, "http://example.test/")
    assert error.code is Code.ADDRESS_REFUSED
    assert lookups == [("inside.test", 80)]


def test_redirect_to_bad_url_is_checked_by_url_rules(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/userinfo"] = redirect(302, "http://user:pw@example.test/")
    http_server.routes["/port"] = redirect(302, "http://example.test:8080/")
    http_server.routes["/scheme"] = redirect(302, "file:///etc/passwd")
    fetcher = make_fetcher(http=http_server.port)
    assert fetch_error(fetcher, "http://example.test/userinfo").code is Code.URL_USERINFO
    assert fetch_error(fetcher, "http://example.test/port").code is Code.URL_PORT
    assert fetch_error(fetcher, "http://example.test/scheme").code is Code.URL_SCHEME


# --------------------------------------------------------------------------------------------
# Address policy and pinning


def test_url_rules_apply_before_any_network_access(make_fetcher: MakeFetcher) -> None:
    fetcher = make_fetcher()  # its resolver fails the test if it is ever asked
    assert fetch_error(fetcher, "http://user@example.test/").code is Code.URL_USERINFO
    assert fetch_error(fetcher, "ftp://example.test/").code is Code.URL_SCHEME
    assert fetch_error(fetcher, "http://127.1/").code is Code.URL_INVALID
    assert fetch_error(fetcher, "http://[::1]/").code is Code.URL_IPV6_LITERAL


def test_default_policy_refuses_loopback_without_connecting(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, HTML, b"private")
    error = fetch_error(make_fetcher(http=http_server.port, allow=()), "http://example.test/")
    assert error.code is Code.ADDRESS_REFUSED
    assert http_server.connections == 0


def test_ip_literal_url_is_checked_by_policy(make_fetcher: MakeFetcher) -> None:
    error = fetch_error(make_fetcher(allow=()), "http://127.0.0.1/")
    assert error.code is Code.ADDRESS_REFUSED


def test_connect_to_ip_literal_host(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, HTML, b"literal")
    fetcher = make_fetcher(routes=[ConnectTo("93.184.216.34", 80, "127.0.0.1", http_server.port)])
    assert fetcher.fetch("http://93.184.216.34/").text == "literal"
    assert http_server.requests[0].headers["host"] == "93.184.216.34"


def test_connect_to_ipv6_address(start_server: StartServer, make_fetcher: MakeFetcher) -> None:
    try:
        server = start_server({"/": Reply(200, HTML, b"over v6")}, host="::1")
    except OSError:
        pytest.skip("no IPv6 loopback here")
    fetcher = make_fetcher(
        routes=[ConnectTo(HOST, 80, "::1", server.port)],
        allow=[ipaddress.ip_network("::1/128")],
    )
    assert fetcher.fetch("http://example.test/").text == "over v6"
    assert server.requests[0].headers["host"] == HOST
    refusing = make_fetcher(routes=[ConnectTo(HOST, 80, "::1", server.port)])
    assert fetch_error(refusing, "http://example.test/").code is Code.ADDRESS_REFUSED


def test_ipv4_mapped_address_connects_over_ipv4(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, HTML, b"mapped")
    fetcher = make_fetcher(routes=[ConnectTo(HOST, 80, "::ffff:127.0.0.1", http_server.port)])
    assert fetcher.fetch("http://example.test/").text == "mapped"


def test_environment_proxies_are_ignored(
    http_server: HTTPTestServer, raw_server: StartRaw, make_fetcher: MakeFetcher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = raw_server(send_bytes(head(headers=[("Content-Length", "5")]) + b"proxy"))
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                 "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    http_server.routes["/"] = Reply(200, HTML, b"direct")
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == "direct"
    assert proxy.connections == 0


def test_any_refused_answer_refuses_the_host(make_fetcher: MakeFetcher) -> None:
    # The first answer is allowed; a fetcher checking only one would connect there (loopback).
    fetcher = make_fetcher(resolver=lambda host, port: ["127.0.0.1", "10.0.0.1"])
    assert fetch_error(fetcher, "http://mixed.test/").code is Code.ADDRESS_REFUSED


def test_resolver_failure_and_empty_answer(make_fetcher: MakeFetcher) -> None:
    def failing(host: str, port: int) -> list[str]:
        raise FetchError(Code.DNS_FAILURE, "no such name")

    assert fetch_error(make_fetcher(resolver=failing), "http://x.test/").code is Code.DNS_FAILURE
    empty = make_fetcher(resolver=lambda host, port: [])
    assert fetch_error(empty, "http://x.test/").code is Code.DNS_FAILURE


def test_slow_name_lookup_is_cut_at_the_deadline(make_fetcher: MakeFetcher) -> None:
    release = threading.Event()

    def slow(host: str, port: int) -> list[str]:
        release.wait(5)
        return ["127.0.0.1"]

    fetcher = make_fetcher(resolver=slow, timeout=0.5)
    started = time.monotonic()
    try:
        assert fetch_error(fetcher, "http://slow.test/").code is Code.TIMEOUT
    finally:
        release.set()
    assert time.monotonic() - started < 1.5


PINNED_A = "127.83.47.1"  # two loopback addresses on the real https port: the resolver's answers
PINNED_B = "127.83.47.2"


@pytest.fixture
def port_443_servers(
    ca: trustme.CA, start_server: StartServer,
) -> tuple[HTTPTestServer, HTTPTestServer, list[str | None]]:
    """HTTPS servers on PINNED_A:443 and PINNED_B:443 (the URL's own port, so no connect-to)."""
    sni: list[str | None] = []
    names = ("pinned.test", "first.test", "second.test")
    try:
        first = start_server(tls=server_tls_context(ca, *names, sni_log=sni), host=PINNED_A,
                             port=443)
        second = start_server(tls=server_tls_context(ca, *names), host=PINNED_B, port=443)
    except OSError as exc:
        pytest.skip(f"cannot listen on port 443 of a loopback address: {exc}")
    return first, second, sni


def test_connection_is_pinned_to_the_validated_address(
    port_443_servers: tuple[HTTPTestServer, HTTPTestServer, list[str | None]],
    make_fetcher: MakeFetcher,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second, sni = port_443_servers
    first.routes["/"] = Reply(200, HTML, b"validated server")
    second.routes["/"] = Reply(200, HTML, b"rebinding target")
    answers = iter([[PINNED_A], [PINNED_B], [PINNED_B]])
    lookups: list[tuple[str, int]] = []

    def rebinding(host: str, port: int) -> list[str]:
        lookups.append((host, port))
        return next(answers)

    def no_getaddrinfo(*args: object, **kwargs: object) -> object:
        raise AssertionError("a second name lookup happened")

    monkeypatch.setattr(socket, "getaddrinfo", no_getaddrinfo)
    fetcher = make_fetcher(resolver=rebinding, allow=[ipaddress.ip_network("127.83.47.0/24")])
    page = fetcher.fetch("https://pinned.test/")
    assert page.text == "validated server"
    assert lookups == [("pinned.test", 443)]
    assert (first.connections, second.connections) == (1, 0)
    assert first.requests[0].headers["host"] == "pinned.test"
    assert sni == ["pinned.test"]


def test_every_redirect_hop_is_resolved_and_checked_once(
    port_443_servers: tuple[HTTPTestServer, HTTPTestServer, list[str | None]],
    make_fetcher: MakeFetcher,
) -> None:
    first, _, sni = port_443_servers
    first.routes["/start"] = redirect(302, "https://second.test/end")
    first.routes["/end"] = Reply(200, HTML, b"end")
    lookups: list[tuple[str, int]] = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append((host, port))
        return [PINNED_A]

    fetcher = make_fetcher(resolver=resolver, allow=[ipaddress.ip_network(f"{PINNED_A}/32")])
    assert fetcher.fetch("https://first.test/start").url == "https://second.test/end"
    assert lookups == [("first.test", 443), ("second.test", 443)]
    assert sni == ["first.test", "second.test"]
    assert [r.headers["host"] for r in first.requests] == ["first.test", "second.test"]


# --------------------------------------------------------------------------------------------
# TLS


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


def test_tls_handshake_that_never_completes(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    server = raw_server(silent(), read_first=False)
    started = time.monotonic()
    error = fetch_error(make_fetcher(https=server.port, timeout=1), "https://example.test/")
    assert error.code is Code.TIMEOUT
    assert time.monotonic() - started < 1.5


# --------------------------------------------------------------------------------------------
# Deadline


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


def test_deadline_covers_all_redirects(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    # Every hop answers in 0.4 s, under any per-operation timeout, but five of them are too slow.
    hop = head("302 Found", [("Location", "/next"), ("Content-Length", "0")])

    def slow_redirect(connection: RawConnection) -> None:
        for _ in range(10):
            if not connection.wait(0.4) or not connection.send(hop):
                return
            if not connection.read_request():
                return

    slow = raw_server(slow_redirect)
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=slow.port, timeout=1.5), "http://example.test/")
    assert error.code is Code.TIMEOUT
    assert time.monotonic() - started < 2


# --------------------------------------------------------------------------------------------
# Size limits and content codings


def test_content_length_over_the_cap_is_refused_before_reading(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Content-Length", str(10**12))])
    server = raw_server(trickle(b"x" * 100, 1.0, first=first))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.TOO_LARGE
    assert time.monotonic() - started < 1


def test_cap_is_exact(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/fits"] = Reply(200, HTML, b"x" * 1000)
    http_server.routes["/over"] = Reply(200, HTML, b"x" * 1001)
    fetcher = make_fetcher(http=http_server.port, max_bytes=1000)
    assert len(fetcher.fetch("http://example.test/fits").text) == 1000
    assert fetch_error(fetcher, "http://example.test/over").code is Code.TOO_LARGE


def test_chunked_body(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked([b"hello ", b"", b"chunked ", b"world"])))
    page = make_fetcher(http=server.port).fetch("http://example.test/")
    assert page.text == "hello chunked world"


def test_endless_chunked_body(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked(itertools.repeat(b"x" * 65536))))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.TOO_LARGE
    assert time.monotonic() - started < 2


def test_endless_body_without_length(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Connection", "close")])
    server = raw_server(stream(first, itertools.repeat(b"y" * 65536, 1000)))
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.TOO_LARGE


def compressed(data: bytes, coding: str) -> bytes:
    if coding in ("gzip", "x-gzip"):
        return gzip.compress(data)
    if coding == "deflate":
        return zlib.compress(data)
    if coding == "raw-deflate":
        compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(data) + compressor.flush()
    raise AssertionError(coding)


TEXT = ("Quoted words, word for word. " * 2000).encode()


@pytest.mark.parametrize(
    ("header", "codings"),
    [
        ("gzip", ["gzip"]),
        ("X-GZIP", ["x-gzip"]),
        ("deflate", ["deflate"]),
        ("deflate", ["raw-deflate"]),
        ("identity", []),
        ("gzip, deflate", ["gzip", "deflate"]),
        ("deflate, gzip", ["raw-deflate", "gzip"]),
        ("gzip,identity,gzip", ["gzip", "gzip"]),
    ],
)
def test_content_codings(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str, codings: list[str],
) -> None:
    body = TEXT
    for coding in codings:  # applied in the order the header lists them
        body = compressed(body, coding)
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), body)
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == TEXT.decode()


@pytest.mark.parametrize(
    ("header", "body", "text"),
    [
        ("gzip", gzip.compress(b"first ") + gzip.compress(b"second"), "first second"),
        ("gzip", gzip.compress(b"padded") + bytes(100), "padded"),
        ("gzip", gzip.compress(b"junk after") + b"junk" * 100, "junk after"),
        ("deflate", zlib.compress(b"deflate then junk") + b"junk", "deflate then junk"),
        ("gzip", b"", ""),
    ],
)
def test_gzip_members_and_trailing_bytes(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str, body: bytes, text: str,
) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), body)
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == text


def test_content_coding_split_across_tiny_chunks(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    body = zlib.compress(TEXT)  # zlib or raw is told apart from the first two bytes
    first = head(headers=[*HTML, ("Content-Encoding", "deflate"),
                          ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked(body[i:i + 1] for i in range(len(body)))))
    assert make_fetcher(http=server.port).fetch("http://example.test/").text == TEXT.decode()


@pytest.mark.parametrize(
    ("header", "body"),
    [
        ("gzip", b"this is not gzip at all"),
        ("gzip", gzip.compress(TEXT)[:-200]),  # truncated
        ("deflate", b"\xff\xff\xff\xff\xff"),
        ("deflate", zlib.compress(TEXT)[:50]),
        ("deflate", b"x"),
    ],
)
def test_corrupt_compressed_body(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str, body: bytes,
) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8


@pytest.mark.parametrize("header", ["br", "zstd", "compress", "gzip, br", "x-unknown"])
def test_unsupported_content_codings(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str,
) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), b"\x00\x01")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED


def test_too_many_stacked_codings(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", ", ".join(["gzip"] * 5))),
                                    b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED


def peak_memory(action: Callable[[], object]) -> int:
    """Peak bytes traced by tracemalloc (all threads) while ``action`` runs."""
    tracemalloc.start()
    try:
        action()
    except FetchError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


GZIP_BOMB = b"".join(zeros_gzip(50 * MiB))  # about 50 KiB on the wire


@pytest.mark.parametrize("nested", [False, True])
def test_gzip_bomb_stops_at_the_cap(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, nested: bool,
) -> None:
    body = gzip.compress(GZIP_BOMB) if nested else GZIP_BOMB
    coding = "gzip, gzip" if nested else "gzip"
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", coding)), body)
    fetcher = make_fetcher(http=http_server.port)
    started = time.monotonic()
    errors: list[FetchError] = []

    def attempt() -> None:
        errors.append(fetch_error(fetcher, "http://example.test/"))

    peak = peak_memory(attempt)
    assert errors[0].code is Code.TOO_LARGE
    assert time.monotonic() - started < 3
    assert peak < MAX_BYTES + 2 * MiB, f"peak {peak / MiB:.1f} MiB"


def test_streamed_gzip_bomb_stops_early(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    # 10 GiB of zeros, compressed on the fly: the server only makes what the client reads.
    first = head(headers=[*HTML, ("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked(zeros_gzip(10 * 1024 * MiB))))
    fetcher = make_fetcher(http=server.port, timeout=10)
    errors: list[FetchError] = []
    started = time.monotonic()
    peak = peak_memory(lambda: errors.append(fetch_error(fetcher, "http://example.test/")))
    assert errors[0].code is Code.TOO_LARGE
    assert time.monotonic() - started < 3
    assert peak < MAX_BYTES + 2 * MiB, f"peak {peak / MiB:.1f} MiB"


def test_deflate_bomb_under_a_small_cap(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(
        200, (*HTML, ("Content-Encoding", "deflate")), zlib.compress(bytes(20 * MiB), 9),
    )
    fetcher = make_fetcher(http=http_server.port, max_bytes=100_000)
    assert fetch_error(fetcher, "http://example.test/").code is Code.TOO_LARGE


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


def test_body_longer_than_content_length_ends_at_the_length(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    reply = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "5")])
    server = raw_server(send_bytes(reply + b"12345 and then some smuggled bytes"))
    assert make_fetcher(http=server.port).fetch("http://example.test/").text == "12345"


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
    assert "SECRET" not in str(error)  # nothing the server sent is echoed (SPEC §5)


# --------------------------------------------------------------------------------------------
# Connections: reuse, threads, lifetime


def test_connections_are_reused(https_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    https_server.routes["/"] = Reply(200, HTML, b"again")
    fetcher = make_fetcher(https=https_server.port)
    for _ in range(3):
        assert fetcher.fetch("https://example.test/").text == "again"
    assert https_server.connections == 1
    assert len({r.client_port for r in https_server.requests}) == 1


def test_unread_bodies_do_not_poison_reused_connections(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/png"] = Reply(200, (("Content-Type", "image/png"),), b"\x89PNG" * 100)
    http_server.routes["/moved"] = redirect(302, "/page")
    http_server.routes["/page"] = Reply(200, HTML, b"page")
    fetcher = make_fetcher(http=http_server.port)
    for _ in range(2):
        assert fetch_error(fetcher, "http://example.test/png").code is (
            Code.CONTENT_TYPE_UNSUPPORTED)
        assert fetcher.fetch("http://example.test/moved").text == "page"


def test_stale_kept_alive_connection_is_retried_once(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    reply = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "2")]) + b"ok"
    server = raw_server(keepalive_then_drop(reply))
    fetcher = make_fetcher(http=server.port)
    assert fetcher.fetch("http://example.test/").text == "ok"
    assert fetcher.fetch("http://example.test/").text == "ok"
    assert server.connections == 2


def test_fresh_connection_closed_without_reply_is_not_retried(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    server = raw_server(send_bytes(b""))
    assert fetch_error(make_fetcher(http=server.port), "http://example.test/").code is (
        Code.CONNECT_FAILED)
    assert server.connections == 1


def test_concurrent_fetches(
    https_server: HTTPTestServer, http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    https_server.routes.update({f"/{i}": Reply(200, HTML, f"page {i}".encode()) for i in range(40)})
    http_server.routes["/"] = redirect(301, "https://example.test/7")
    fetcher = make_fetcher(http=http_server.port, https=https_server.port)
    urls = [f"https://example.test/{i}" for i in range(40)] + ["http://example.test/"] * 10
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        pages = list(pool.map(fetcher.fetch, urls))
    assert [p.text for p in pages] == [f"page {i}" for i in range(40)] + ["page 7"] * 10
    assert https_server.connections <= 8 + 1


class HostsInFlight:
    """A route that holds each request for ``delay`` seconds (or until ``release`` is set) and
    records the most requests in flight at once, per ``Host`` header and overall."""

    def __init__(self, reply: Reply, delay: float = 0.1) -> None:
        self.reply = reply
        self.delay = delay
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.total = self.total_peak = 0

    def __call__(self, request: Any) -> Reply:
        host = request.headers["host"]
        with self.lock:
            self.now[host] = self.now.get(host, 0) + 1
            self.peak[host] = max(self.peak.get(host, 0), self.now[host])
            self.total += 1
            self.total_peak = max(self.total_peak, self.total)
        try:
            self.release.wait(self.delay)
        finally:
            with self.lock:
                self.now[host] -= 1
                self.total -= 1
        return self.reply


def fetch_all(fetcher: PinnedFetcher, urls: list[str]) -> list[str]:
    """Fetch every URL at once, a thread each; the pages' texts in order."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(urls)) as pool:
        return [page.text for page in pool.map(fetcher.fetch, urls)]


def test_per_host_limit_counts_each_host_name_apart(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    slow = HostsInFlight(Reply(200, HTML, b"slow"))
    http_server.routes.update({f"/{i}": slow for i in range(6)})
    # Two names for the same server: the limit is per host name, not per address.
    fetcher = make_fetcher(routes=[ConnectTo(name, 80, "127.0.0.1", http_server.port)
                                   for name in ("a.test", "b.test")], per_host=2)
    urls = [f"http://{name}/{i}" for i in range(6) for name in ("a.test", "B.TEST")]
    assert fetch_all(fetcher, urls) == ["slow"] * 12
    assert slow.peak == {"a.test": 2, "b.test": 2}
    assert slow.total_peak == 4
    assert http_server.connections == 4  # the pools keep no more than can be in use


def test_per_host_limit_counts_redirect_hops_on_their_own_host(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    slow = HostsInFlight(Reply(200, HTML, b"landed"))
    for i in range(4):
        http_server.routes[f"/from/{i}"] = redirect(302, f"http://b.test/to/{i}")
        http_server.routes[f"/to/{i}"] = slow
    fetcher = make_fetcher(routes=[ConnectTo(name, 80, "127.0.0.1", http_server.port)
                                   for name in ("a.test", "b.test")], per_host=1)
    urls = [f"http://a.test/from/{i}" for i in range(4)] + [f"http://b.test/to/{i}"
                                                            for i in range(4)]
    assert fetch_all(fetcher, urls) == ["landed"] * 8
    assert slow.peak == {"b.test": 1}  # direct requests and redirected ones share b.test's slot
    hosts = [r.headers["host"] for r in http_server.requests]
    assert sorted(hosts) == ["a.test"] * 4 + ["b.test"] * 8


def test_waiting_for_a_host_slot_is_cut_at_the_deadline(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    # A redirect (after 1 s) into b.test, whose one slot another fetch (started 0.5 s later,
    # so its deadline is later too) holds: the redirect's hop waits until its own deadline.
    def late_redirect(request: Any) -> Reply:
        time.sleep(1)
        return redirect(302, "http://b.test/end")

    held = HostsInFlight(Reply(200, HTML, b"held"), delay=10)
    http_server.routes.update({"/start": late_redirect, "/held": held,
                               "/end": Reply(200, HTML, b"end")})
    fetcher = make_fetcher(routes=[ConnectTo(name, 80, "127.0.0.1", http_server.port)
                                   for name in ("a.test", "b.test")], per_host=1, timeout=2)

    def seen(path: str) -> None:
        for _ in range(500):
            if any(r.path == path for r in http_server.requests):
                return
            time.sleep(0.01)

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        redirected = pool.submit(fetch_error, fetcher, "http://a.test/start")
        seen("/start")
        time.sleep(0.5)
        holder = pool.submit(fetcher.fetch, "http://b.test/held")
        seen("/held")
        error = redirected.result()
        held.release.set()
        concurrent.futures.wait([holder])
    assert error.code is Code.TIMEOUT
    assert error.detail == "no request slot for the host came free within 2 s (at most 1 at once)"
    assert [r.path for r in http_server.requests] == ["/start", "/held"]  # /end never sent


def test_pools_are_bounded(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/"] = Reply(200, HTML, b"hi")
    names = [f"host{i}.test" for i in range(70)]
    fetcher = make_fetcher(routes=[ConnectTo(n, 80, "127.0.0.1", http_server.port) for n in names])
    for name in names:
        fetcher.fetch(f"http://{name}/")
    assert http_server.connections == 70
    fetcher.fetch("http://host69.test/")  # recently used: its pool and connection are kept
    assert http_server.connections == 70
    fetcher.fetch("http://host0.test/")  # least recently used: its pool was closed
    assert http_server.connections == 71


def test_close_and_context_manager(http_server: HTTPTestServer, ca_path: str) -> None:
    http_server.routes["/"] = Reply(200, HTML, b"hi")
    options = FetchOptions(
        connect_to=(ConnectTo(HOST, 80, "127.0.0.1", http_server.port),),
        allow_net=(ipaddress.ip_network("127.0.0.1/32"),),
    )
    with PinnedFetcher(options) as fetcher:
        assert fetcher.fetch("http://example.test/").text == "hi"
    with pytest.raises(RuntimeError):
        fetcher.fetch("http://example.test/")
