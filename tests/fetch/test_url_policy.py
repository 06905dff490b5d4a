"""URL rules (docs/reference/fetching.md): the SSRF table, accepted forms, redirects, and parser
properties."""

from __future__ import annotations

import ipaddress
import re
import socket
import urllib.parse
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fetch.conftest import HTML, MakeFetcher, redirect
from tests.fetch.servers import HTTPTestServer, Reply
from tests.fetch.ssrf_urls import LITERAL_ADDRESSES, NAMES, REFUSED
from tracecite.codes import Code
from tracecite.fetch.address_policy import AddressPolicy
from tracecite.fetch.errors import FetchError
from tracecite.fetch.url_policy import MAX_URL_LENGTH, Target, follow_redirect, parse_target

URL_CODES = {
    Code.URL_INVALID,
    Code.URL_SCHEME,
    Code.URL_PORT,
    Code.URL_USERINFO,
    Code.URL_IPV6_LITERAL,
    Code.URL_NON_ASCII_HOST,
}
REDIRECT_CODES = URL_CODES | {Code.REDIRECT_DOWNGRADE, Code.REDIRECT_INVALID}
HOST = re.compile(r"[a-z0-9.\-]+")
REQUEST_TARGET = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]*")
FIXTURE_HEALTH = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def _refuse_network(*args: object, **kwargs: object) -> None:
    raise AssertionError("network access while checking URL rules")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any socket, connection or name lookup fails the test while this fixture is active."""
    monkeypatch.setattr(socket, "socket", _refuse_network)
    monkeypatch.setattr(socket, "create_connection", _refuse_network)
    monkeypatch.setattr(socket, "getaddrinfo", _refuse_network)
    yield


def _refused(url: str) -> FetchError:
    with pytest.raises(FetchError) as caught:
        parse_target(url)
    return caught.value


def _id(text: str) -> str:
    return ascii(text[:60])


# --- the SSRF table -------------------------------------------------------------------------


def test_guard_catches_network_access(no_network: None) -> None:
    with pytest.raises(AssertionError):
        socket.getaddrinfo("localhost", 80)
    with pytest.raises(AssertionError):
        socket.create_connection(("127.0.0.1", 80))
    with pytest.raises(AssertionError):
        socket.socket()


def test_table_is_large_and_has_no_duplicates() -> None:
    urls = [url for url, _ in REFUSED]
    assert len(urls) >= 170
    assert len(set(urls)) == len(urls)
    assert {code for _, code in REFUSED} == URL_CODES


@pytest.mark.parametrize(("url", "code"), REFUSED, ids=[_id(url) for url, _ in REFUSED])
def test_refused_without_network(no_network: None, url: str, code: Code) -> None:
    error = _refused(url)
    assert error.code is code, error.detail
    # Details are shown to users and in CI annotations: plain printable ASCII, bounded.
    assert error.detail.isascii() and error.detail.isprintable()
    assert len(error.detail) < 200


@pytest.mark.parametrize(
    ("url", "host"), LITERAL_ADDRESSES, ids=[_id(url) for url, _ in LITERAL_ADDRESSES],
)
def test_literal_addresses_pass_url_rules_and_fail_the_address_step(
    no_network: None, url: str, host: str,
) -> None:
    target = parse_target(url)
    assert target.host == host
    assert target.ip == ipaddress.IPv4Address(host)
    with pytest.raises(FetchError) as caught:
        AddressPolicy().pick(target, [host])
    assert caught.value.code is Code.ADDRESS_REFUSED


@pytest.mark.parametrize(("url", "host"), NAMES, ids=[_id(url) for url, _ in NAMES])
def test_names_pass_url_rules(no_network: None, url: str, host: str) -> None:
    target = parse_target(url)
    assert (target.host, target.ip) == (host, None)
    # Refused once they resolve somewhere special, e.g. a rebinding service answering loopback.
    with pytest.raises(FetchError) as caught:
        AddressPolicy().pick(target, ["93.184.215.14", "127.0.0.1"])
    assert caught.value.code is Code.ADDRESS_REFUSED


# --- accepted forms -------------------------------------------------------------------------

V4 = ipaddress.IPv4Address
ACCEPTED: tuple[tuple[str, Target], ...] = (
    ("https://example.com", Target("https", "example.com", 443, "/", None)),
    ("http://example.com", Target("http", "example.com", 80, "/", None)),
    ("http://example.com:80/", Target("http", "example.com", 80, "/", None)),
    ("https://example.com:443/", Target("https", "example.com", 443, "/", None)),
    (
        "HTTPS://Example.COM:443/A/b?C=D#frag",
        Target("https", "example.com", 443, "/A/b?C=D", None),
    ),
    (
        "https://www.iana.org/help/example-domains",
        Target("https", "www.iana.org", 443, "/help/example-domains", None),
    ),
    ("http://93.184.215.14/", Target("http", "93.184.215.14", 80, "/", V4("93.184.215.14"))),
    (
        "https://1.1.1.1/dns-query?name=example.com",
        Target("https", "1.1.1.1", 443, "/dns-query?name=example.com", V4("1.1.1.1")),
    ),
    ("http://0.0.0.0/", Target("http", "0.0.0.0", 80, "/", V4("0.0.0.0"))),
    ("https://xn--bcher-kva.example/", Target("https", "xn--bcher-kva.example", 443, "/", None)),
    ("https://XN--BCHER-KVA.example/", Target("https", "xn--bcher-kva.example", 443, "/", None)),
    (
        "https://example.com/\u00e4?q=\u00fc",
        Target("https", "example.com", 443, "/%C3%A4?q=%C3%BC", None),
    ),
    ("https://example.com/\u20ac", Target("https", "example.com", 443, "/%E2%82%AC", None)),
    ("https://example.com/%E2%82%AC", Target("https", "example.com", 443, "/%E2%82%AC", None)),
    ("https://example.com/\u3000", Target("https", "example.com", 443, "/%E3%80%80", None)),
    ("https://example.com/a%20b", Target("https", "example.com", 443, "/a%20b", None)),
    ("https://example.com/100%", Target("https", "example.com", 443, "/100%25", None)),
    ("https://example.com/%zz", Target("https", "example.com", 443, "/%25zz", None)),
    ("https://example.com/a%2", Target("https", "example.com", 443, "/a%252", None)),
    ("https://example.com/?q=%", Target("https", "example.com", 443, "/?q=%25", None)),
    ("https://example.com/%00", Target("https", "example.com", 443, "/%00", None)),
    ("https://example.com/%2e%2E/", Target("https", "example.com", 443, "/", None)),
    ("https://example.com/%c3%a4?%e2", Target("https", "example.com", 443, "/%C3%A4?%E2", None)),
    ("https://example.com/a/./b/../c", Target("https", "example.com", 443, "/a/c", None)),
    (
        "https://example.com/../../etc/passwd",
        Target("https", "example.com", 443, "/etc/passwd", None),
    ),
    ("https://example.com/a/..", Target("https", "example.com", 443, "/", None)),
    ("https://example.com/a//b", Target("https", "example.com", 443, "/a//b", None)),
    ("https://example.com?x", Target("https", "example.com", 443, "/?x", None)),
    ("https://example.com/?", Target("https", "example.com", 443, "/?", None)),
    ("https://example.com#x", Target("https", "example.com", 443, "/", None)),
    ("https://example.com/a#b#c", Target("https", "example.com", 443, "/a", None)),
    ("https://example.com/a?b#c?d", Target("https", "example.com", 443, "/a?b", None)),
    ("https://example.com/p?q=a/b?c", Target("https", "example.com", 443, "/p?q=a/b?c", None)),
    (
        'https://example.com/a"b<c>',
        Target("https", "example.com", 443, "/a%22b%3Cc%3E", None),
    ),
    (
        "https://example.com/{x}|^`",
        Target("https", "example.com", 443, "/%7Bx%7D%7C%5E%60", None),
    ),
    ("https://example.com/[x]", Target("https", "example.com", 443, "/%5Bx%5D", None)),
    (
        "https://example.com/@evil.example",
        Target("https", "example.com", 443, "/@evil.example", None),
    ),
    (
        "https://example.com/:x;y=z,w!$&'()*+~",
        Target("https", "example.com", 443, "/:x;y=z,w!$&'()*+~", None),
    ),
    ("http://example.com?@127.0.0.1", Target("http", "example.com", 80, "/?@127.0.0.1", None)),
    ("http://example.com#@127.0.0.1", Target("http", "example.com", 80, "/", None)),
    ("http://google.com:80#@127.0.0.1/", Target("http", "google.com", 80, "/", None)),
    ("https://a-b.c-d.example/", Target("https", "a-b.c-d.example", 443, "/", None)),
    ("https://1.2.3.4.example.com/", Target("https", "1.2.3.4.example.com", 443, "/", None)),
    ("https://0x7f.example.com/", Target("https", "0x7f.example.com", 443, "/", None)),
    ("https://123abc/", Target("https", "123abc", 443, "/", None)),
    ("https://a.b1/", Target("https", "a.b1", 443, "/", None)),
    ("https://" + "a" * 63 + ".example/", Target("https", "a" * 63 + ".example", 443, "/", None)),
)


@pytest.mark.parametrize(("url", "expected"), ACCEPTED, ids=[_id(url) for url, _ in ACCEPTED])
def test_accepted(no_network: None, url: str, expected: Target) -> None:
    target = parse_target(url)
    assert target == expected
    assert parse_target(target.url) == target
    # The canonical URL means the same host and request target to the standard library.
    split = urllib.parse.urlsplit(target.url)
    assert (split.hostname, split.port, split.username) == (target.host, None, None)
    _urllib3_agrees(url, target)


def test_url_property() -> None:
    assert parse_target("HTTPS://Example.com:443/a?b#c").url == "https://example.com/a?b"
    assert parse_target("http://example.com:80").url == "http://example.com/"


@pytest.mark.parametrize(
    "url",
    ["http://" + "1." * 5000 + "1/", "http://" + "a" * 9000 + "./", "http://" + "a" * 9000 + "/",
     "http://" + "0x" * 5000 + "/", "http://example.com:" + "9" * 9000 + "/"],
)
def test_details_stay_short(url: str) -> None:
    assert len(_refused(url).detail) < 200


def test_length_cap() -> None:
    path = "/" + "a" * (MAX_URL_LENGTH - len("https://example.com/"))
    assert len(parse_target("https://example.com" + path).url) == MAX_URL_LENGTH
    assert _refused("https://example.com" + path + "a").code is Code.URL_INVALID


# --- redirects ------------------------------------------------------------------------------

RFC_BASE = "http://a/b/c/d;p?q"
# RFC 3986 §5.4: normal and abnormal examples (the empty reference is an error here, see below).
RFC_EXAMPLES = (
    ("g", "http://a/b/c/g"),
    ("./g", "http://a/b/c/g"),
    ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"),
    ("//g", "http://g/"),
    ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"),
    ("#s", "http://a/b/c/d;p?q"),
    ("g#s", "http://a/b/c/g"),
    ("g?y#s", "http://a/b/c/g?y"),
    (";x", "http://a/b/c/;x"),
    ("g;x", "http://a/b/c/g;x"),
    ("g;x?y#s", "http://a/b/c/g;x?y"),
    (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"),
    ("..", "http://a/b/"),
    ("../", "http://a/b/"),
    ("../g", "http://a/b/g"),
    ("../..", "http://a/"),
    ("../../", "http://a/"),
    ("../../g", "http://a/g"),
    ("../../../g", "http://a/g"),
    ("../../../../g", "http://a/g"),
    ("/./g", "http://a/g"),
    ("/../g", "http://a/g"),
    ("g.", "http://a/b/c/g."),
    (".g", "http://a/b/c/.g"),
    ("g..", "http://a/b/c/g.."),
    ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"),
    ("./g/.", "http://a/b/c/g/"),
    ("g/./h", "http://a/b/c/g/h"),
    ("g/../h", "http://a/b/c/h"),
    ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("g;x=1/../y", "http://a/b/c/y"),
    ("g?y/./x", "http://a/b/c/g?y/./x"),
    ("g?y/../x", "http://a/b/c/g?y/../x"),
    ("g#s/./x", "http://a/b/c/g"),
    ("g#s/../x", "http://a/b/c/g"),
)


@pytest.mark.parametrize(("location", "expected"), RFC_EXAMPLES)
def test_redirect_rfc3986_examples(no_network: None, location: str, expected: str) -> None:
    assert follow_redirect(parse_target(RFC_BASE), location).url == expected


HTTPS_BASE = "https://example.com/a/b?q=1"


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("c", "https://example.com/a/c"),
        ("../c", "https://example.com/c"),
        ("/x/y?z", "https://example.com/x/y?z"),
        ("?z", "https://example.com/a/b?z"),
        ("#f", "https://example.com/a/b?q=1"),
        ("//evil.example/", "https://evil.example/"),
        ("//evil.example", "https://evil.example/"),
        ("//EVIL.example:443/p", "https://evil.example/p"),
        ("https://other.example/p#f", "https://other.example/p"),
        ("HTTPS://Other.Example", "https://other.example/"),
        ("https://127.0.0.1/", "https://127.0.0.1/"),
        ("/\u00e4", "https://example.com/%C3%A4"),
        ("  /padded\t", "https://example.com/padded"),
        ("/.//evil.example", "https://example.com//evil.example"),
        ("@evil.example", "https://example.com/a/@evil.example"),
        ("./a:b", "https://example.com/a/a:b"),
    ],
)
def test_redirect_resolves(no_network: None, location: str, expected: str) -> None:
    assert follow_redirect(parse_target(HTTPS_BASE), location).url == expected


def test_redirect_to_loopback_is_the_address_steps_job(no_network: None) -> None:
    target = follow_redirect(parse_target("http://example.com/"), "http://127.0.0.1/")
    assert (target.host, target.ip) == ("127.0.0.1", ipaddress.IPv4Address("127.0.0.1"))


def test_redirect_upgrade_is_fine(no_network: None) -> None:
    assert follow_redirect(parse_target("http://example.com/"), "https://example.com/").scheme == (
        "https"
    )


@pytest.mark.parametrize(
    ("base", "location", "code"),
    [
        (HTTPS_BASE, None, Code.REDIRECT_INVALID),
        (HTTPS_BASE, "", Code.REDIRECT_INVALID),
        (HTTPS_BASE, " \t ", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "http://example.com/", Code.REDIRECT_DOWNGRADE),
        (HTTPS_BASE, "HTTP://example.com/", Code.REDIRECT_DOWNGRADE),
        (HTTPS_BASE, "http://127.0.0.1:8080/", Code.REDIRECT_DOWNGRADE),
        (HTTPS_BASE, "http:evil.example", Code.REDIRECT_DOWNGRADE),
        # Garbage: not an RFC 3986 reference, or characters browsers rewrite.
        (HTTPS_BASE, "::::", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "127.0.0.1:80/", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "1http://evil.example/", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "/\\evil.example", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "\\\\evil.example", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "/a\tb", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "/a\r\nSet-Cookie: x", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "/a b", Code.REDIRECT_INVALID),
        (HTTPS_BASE, "/a\x00", Code.REDIRECT_INVALID),
        # Resolved fine, then refused by the URL rules.
        (HTTPS_BASE, "https:evil.example", Code.URL_INVALID),
        (HTTPS_BASE, "///evil.example/", Code.URL_INVALID),
        (HTTPS_BASE, "//", Code.URL_INVALID),
        (HTTPS_BASE, "//127.1/", Code.URL_INVALID),
        (HTTPS_BASE, "//0x7f.1/", Code.URL_INVALID),
        (HTTPS_BASE, "//%31%32%37.0.0.1/", Code.URL_INVALID),
        (HTTPS_BASE, "/\ud800", Code.URL_INVALID),
        ("http://example.com/", "http:evil.example", Code.URL_INVALID),
        (HTTPS_BASE, "ftp://example.com/", Code.URL_SCHEME),
        (HTTPS_BASE, "javascript:alert(1)", Code.URL_SCHEME),
        (HTTPS_BASE, "evil.example:80/", Code.URL_SCHEME),
        (HTTPS_BASE, "https://example.com:8443/", Code.URL_PORT),
        (HTTPS_BASE, "//example.com:80/", Code.URL_PORT),
        (HTTPS_BASE, "https://user@example.com/", Code.URL_USERINFO),
        (HTTPS_BASE, "//example.com@127.0.0.1/", Code.URL_USERINFO),
        (HTTPS_BASE, "//[::1]/", Code.URL_IPV6_LITERAL),
        (HTTPS_BASE, "https://[::ffff:127.0.0.1]/", Code.URL_IPV6_LITERAL),
        (HTTPS_BASE, "//\uff11\uff12\uff17.0.0.1/", Code.URL_NON_ASCII_HOST),
    ],
)
def test_redirect_refused(no_network: None, base: str, location: str | None, code: Code) -> None:
    with pytest.raises(FetchError) as caught:
        follow_redirect(parse_target(base), location)
    assert caught.value.code is code, caught.value.detail
    assert caught.value.detail.isascii() and caught.value.detail.isprintable()


# --- dot segments, plain and percent-encoded (docs/reference/fetching.md "Paths") -----------------

# WHATWG URL's single-dot and double-dot segments: "." and ".." with any dot written "%2e" in
# either case. Everything else (more dots, "%2F", a dot beside other characters) is a name.
DOT_SEGMENTS = (
    ("/a/b/%2e%2e/c", "/a/c"),
    ("/a/b/%2E%2E/c", "/a/c"),
    ("/a/b/.%2e/c", "/a/c"),
    ("/a/b/%2e./c", "/a/c"),
    ("/a/b/.%2E/c", "/a/c"),
    ("/a/b/%2E%2e/c", "/a/c"),
    ("/a/b/%2e/c", "/a/b/c"),
    ("/a/b/%2E/c", "/a/b/c"),
    ("/a/b/%2e", "/a/b/"),
    ("/a/b/%2e%2e", "/a/"),
    ("/a/b/%2e%2e?x=%2e%2e/y", "/a/?x=%2E%2E/y"),  # the query keeps its dots
    ("/%2e%2e/%2e%2e/x", "/x"),  # never above the root
    ("/a/%2e%2e%2e/c", "/a/%2E%2E%2E/c"),
    ("/a/%2e%2e%2fc", "/a/%2E%2E%2Fc"),  # %2F is not a separator: one segment
    ("/a/b/%2e%2e%2F..%2fc", "/a/b/%2E%2E%2F..%2Fc"),
    ("/a/x%2e%2e/c", "/a/x%2E%2E/c"),
    ("/a/%2ex/c", "/a/%2Ex/c"),
    ("/a/%252e%252e/c", "/a/%252e%252e/c"),  # an encoded "%" then "2e": no dot
    ("/a/%2/c", "/a/%252/c"),
)


@pytest.mark.parametrize(("path", "expected"), DOT_SEGMENTS)
def test_encoded_dot_segments_are_removed(no_network: None, path: str, expected: str) -> None:
    assert parse_target(f"https://example.com{path}").path == expected


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("%2e%2e/c", "https://example.com/c"),
        ("%2E./c", "https://example.com/c"),
        ("./%2e%2e/%2e%2e/c", "https://example.com/c"),
        ("%2e", "https://example.com/a/"),
        ("/x/%2e%2e/y", "https://example.com/y"),
        ("https://other.example/p/.%2E/q", "https://other.example/q"),
        ("//other.example/p/%2e%2e/q", "https://other.example/q"),
        ("%2e%2e%2fc", "https://example.com/a/%2E%2E%2Fc"),
    ],
)
def test_redirect_removes_encoded_dot_segments(
    no_network: None, location: str, expected: str,
) -> None:
    # A refresh target is resolved by the same function as a Location.
    assert follow_redirect(parse_target(HTTPS_BASE), location).url == expected


@pytest.mark.network
def test_fetcher_requests_the_path_without_encoded_dot_segments(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/a/c"] = Reply(200, HTML, b"<p>c</p>")
    http_server.routes["/a/b/moved"] = redirect(302, "%2e%2e/x/%2e%2E/c")
    http_server.routes["/a/x/refresh"] = Reply(
        200, (*HTML, ("Refresh", "0; url=%2E./b/.%2e/c")), b"wait")
    fetcher = make_fetcher(http=http_server.port)
    assert fetcher.fetch("http://example.test/a/b/%2e%2e/c").url == "http://example.test/a/c"
    assert fetcher.fetch("http://example.test/a/b/%2e/moved").url == "http://example.test/a/c"
    assert fetcher.fetch("http://example.test/a/x/%2e/refresh").url == "http://example.test/a/c"
    assert [r.path for r in http_server.requests] == [
        "/a/c", "/a/b/moved", "/a/c", "/a/x/refresh", "/a/c",
    ]


# --- properties -----------------------------------------------------------------------------

INTERESTING = "aAzZ09.-_%@:[]\\/?#~!$&'()*+,;= \t\n\x00\x7f\u00e4\uff0e\uff11\u212a\u3002\ud800"
hosts = st.one_of(
    st.text(alphabet="abcx0179.-", max_size=20),
    st.text(alphabet=INTERESTING, max_size=12),
    st.sampled_from(
        ["example.com", "127.0.0.1", "0x7f.1", "127.1", "[::1]", "a@b", "xn--bcher-kva.de", ""],
    ),
    st.builds(
        ".".join,
        st.lists(st.integers(0, 300).map(str) | st.sampled_from(["0x7f", "00", "0"]), max_size=5),
    ),
)
ports = st.one_of(st.none(), st.text(alphabet="0123456789-+ax", max_size=6), st.sampled_from(
    ["80", "443", "0443", "", "65536"],
))
tails = st.one_of(st.text(max_size=30), st.text(alphabet=INTERESTING, max_size=30))


@st.composite
def url_like(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "hTtPs", "ftp", "", "javascript"]))
    separator = draw(st.sampled_from(["://", "://", "://", ":/", ":", "//", ":///"]))
    port = draw(ports)
    return (
        scheme
        + separator
        + draw(hosts)
        + ("" if port is None else ":" + port)
        + draw(st.sampled_from(["", "/", "?", "#"]))
        + draw(tails)
    )


labels = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,8}[a-zA-Z0-9])?", fullmatch=True)
names = st.lists(labels, min_size=1, max_size=4).map(".".join)
path_text = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters=" \\"), max_size=40,
)


@st.composite
def plausible_url(draw: st.DrawFn) -> str:
    """Mostly valid URLs, so that the properties of accepted targets are exercised often."""
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    host = draw(names | st.ip_addresses(v=4).map(str))
    port = draw(st.sampled_from(["", "", ":80", ":443"]))
    tail = draw(st.sampled_from(["", "/", "?", "#", "/a/../", "/./"])) + draw(path_text)
    return f"{scheme}://{host}{port}{tail}"


def _check_accepted(url: str, target: Target) -> None:
    assert target.scheme in ("http", "https")
    assert target.port == {"http": 80, "https": 443}[target.scheme]
    assert HOST.fullmatch(target.host), target
    assert REQUEST_TARGET.fullmatch(target.path), target
    assert "#" not in target.path
    assert target.url.isascii() and target.url.isprintable() and " " not in target.url
    if target.ip is not None:
        assert str(target.ip) == target.host
    else:
        assert not re.fullmatch(r"[0-9.]+", target.host)
    assert parse_target(target.url) == target
    # The input and its canonical form mean the same host to urllib.parse as to us.
    for text in (url, target.url):
        split = urllib.parse.urlsplit(text)
        assert split.hostname == target.host
        assert split.username is None and split.password is None
        assert split.scheme.lower() == target.scheme
    _urllib3_agrees(url, target)


def _urllib3_agrees(url: str, target: Target) -> None:
    """urllib3 (the fetcher's library) reads the same host, no credentials, the same target."""
    parse_url = pytest.importorskip("urllib3.util").parse_url
    for text in (url, target.url):
        parsed = parse_url(text)
        assert (parsed.host, parsed.auth) == (target.host, None)
        assert parsed.port in (None, target.port)
    assert parse_url(target.url).request_uri == target.path


def _check(url: str) -> None:
    try:
        target = parse_target(url)
    except FetchError as error:
        assert error.code in URL_CODES
        assert error.detail.isascii() and error.detail.isprintable()
        assert len(error.detail) < 200
        return
    _check_accepted(url, target)


@FIXTURE_HEALTH
@given(st.text())
def test_any_text_is_accepted_or_refused_cleanly(no_network: None, text: str) -> None:
    _check(text)


@FIXTURE_HEALTH
@given(url_like())
def test_url_like_text_is_accepted_or_refused_cleanly(no_network: None, url: str) -> None:
    _check(url)


@FIXTURE_HEALTH
@given(plausible_url())
def test_plausible_urls_are_accepted_or_refused_cleanly(no_network: None, url: str) -> None:
    _check(url)


@FIXTURE_HEALTH
@given(
    st.sampled_from(["https://example.com/a/b?q", "http://a/b/c/d;p?q"]),
    url_like() | tails | plausible_url() | path_text,
)
def test_redirects_are_resolved_or_refused_cleanly(
    no_network: None, base: str, location: str,
) -> None:
    base_target = parse_target(base)
    try:
        target = follow_redirect(base_target, location)
    except FetchError as error:
        assert error.code in REDIRECT_CODES
        assert error.detail.isascii() and error.detail.isprintable()
        return
    assert not (base_target.scheme == "https" and target.scheme == "http")
    assert parse_target(target.url) == target
    assert HOST.fullmatch(target.host) and REQUEST_TARGET.fullmatch(target.path)
