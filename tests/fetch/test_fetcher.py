"""Tests of the pinned fetcher against local servers: requests and statuses, redirects,
address policy and pinning, one deadline per source, connection reuse and pools (loopback
only, see conftest.py)."""

from __future__ import annotations

import concurrent.futures
import ipaddress
import socket
import threading
import time

import pytest
import trustme

from tests.fetch.conftest import (
    HOST,
    HTML,
    MakeFetcher,
    StartRaw,
    StartServer,
    fetch_error,
    redirect,
)
from tests.fetch.servers import (
    HTTPTestServer,
    RawConnection,
    Reply,
    head,
    keepalive_then_drop,
    send_bytes,
    server_tls_context,
)
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import Page, PinnedFetcher
from tracecite.fetch.options import ConnectTo, FetchOptions

pytestmark = pytest.mark.network


# --------------------------------------------------------------------------------------------
# Requests and statuses


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
    http_server.routes["/accepted"] = Reply(202, (), b"")
    fetcher = make_fetcher(http=http_server.port)
    assert fetcher.fetch("http://example.test/created").status == 201
    assert fetcher.fetch("http://example.test/accepted") == Page(
        "http://example.test/accepted", 202, "", "")


@pytest.mark.parametrize("status", [204, 205, 206])
def test_2xx_without_a_page_to_check(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, status: int,
) -> None:
    # 204 and 205 have no body; TraceCite never asks for a range, so a 206 is a fragment.
    body = b"part of it" if status == 206 else b""
    headers = (*HTML, ("Content-Range", "bytes 0-9/100")) if status == 206 else ()
    http_server.routes["/"] = Reply(status, headers, body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert (error.code, error.status) == (Code.HTTP_STATUS, status)
    assert str(status) in error.detail


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
    assert page.final_url == "http://example.test/r5"
    assert [r.path for r in http_server.requests] == [f"/r{i}" for i in range(6)]
    assert http_server.connections == 1  # short redirect bodies are read, the connection reused


def test_sixth_redirect_is_refused(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    for hop in range(6):
        http_server.routes[f"/r{hop}"] = redirect(302, f"/r{hop + 1}")
    http_server.routes["/r6"] = Reply(200, HTML, b"too far")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/r0")
    assert error.code is Code.REDIRECT_LIMIT
    assert error.final_url == "http://example.test/r5"  # the last page requested
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
    assert error.final_url is None  # never redirected: the first hop was refused
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
    assert error.final_url == "http://inside.test/admin"  # where the redirect led
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
# One deadline per source


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
# Connections: reuse, threads, pools


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
