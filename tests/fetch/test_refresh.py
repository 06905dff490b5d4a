"""Tests of refreshes: the content syntax and the bounded meta scan (pure), then the fetcher
following ``Refresh`` headers and meta elements like redirects (loopback only, see conftest.py).
"""

from __future__ import annotations

import pytest

from tests.fetch.conftest import HTML, MakeFetcher, fetch_error, redirect
from tests.fetch.servers import HTTPTestServer, Reply
from tracecite.codes import Code
from tracecite.fetch import refresh
from tracecite.fetch.refresh import HEAD_SCAN, meta_refresh, refresh_target

# --------------------------------------------------------------------------------------------
# The content of a refresh (the HTML standard's declarative refresh steps)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("0", (0, None)),
        ("  3  ", (3, None)),
        ("5.9", (5, None)),
        (".5; url=/a", (0, "/a")),
        ("0;url=/a", (0, "/a")),
        ("0; URL=/a", (0, "/a")),
        ("0, url = /a", (0, "/a")),
        ("0 /a", (0, "/a")),
        ("0; /a b", (0, "/a b")),
        ("1; url='/a'junk", (1, "/a")),
        ('1; url="/a', (1, "/a")),
        ("1; '/quoted' x", (1, "/quoted")),
        ("0; uRl=https://example.test/x", (0, "https://example.test/x")),
        ("0; urn:x", (0, "urn:x")),
        ("0; u", (0, "u")),
        ("0; url", (0, "url")),
        ("0; url /a", (0, "url /a")),
        ("0;", (0, None)),
        ("000000000000000000000000001; url=/a", (1, "/a")),
        ("9" * 5000, (9_999_999_999, None)),
    ],
)
def test_refresh_content(content: str, expected: tuple[int, str | None]) -> None:
    assert refresh_target(content) == expected


@pytest.mark.parametrize("content", ["", "   ", "url=/a", "; url=/a", "0x; url=/a", "-1", "a"])
def test_refresh_content_a_browser_ignores(content: str) -> None:
    assert refresh_target(content) is None


# --------------------------------------------------------------------------------------------
# Finding the meta element


@pytest.mark.parametrize(
    "document",
    [
        '<meta http-equiv="refresh" content="0; url=/next">',
        "<META HTTP-EQUIV=REFRESH CONTENT='0; url=/next'>",
        '<meta content="0; url=/next" http-equiv="Refresh" />',
        '<meta\nhttp-equiv=refresh\tcontent="0; url=/next">',
        '<meta/http-equiv="refresh"/content="0; url=/next">',
        '<html><head><title>x</title><meta http-equiv="refresh" content="0;url=/next"></head>',
        '<noscript><meta http-equiv="refresh" content="0; url=/next"></noscript>',  # scripts off
        '<body><p>late</p><meta http-equiv="refresh" content="0; url=/next"></body>',
        '<meta title="a > b" http-equiv="refresh" content="0; url=/next">',
        '<meta http-equiv="refresh" content="bad"><meta http-equiv=refresh content="0;url=/next">',
        '<meta http-equiv="refresh" content=""><meta http-equiv=refresh content="0;url=/next">',
        '<!----><meta http-equiv="refresh" content="0; url=/next">',
        '<!--><meta http-equiv="refresh" content="0; url=/next">',
        '<!-- x --!><meta http-equiv="refresh" content="0; url=/next">',
        '<!DOCTYPE html><?xml x?><meta http-equiv="refresh" content="0; url=/next">',
        '<script>a</script ><meta http-equiv="refresh" content="0; url=/next">',
        '1 < 2 <meta http-equiv="refresh" content="0; url=/next">',
    ],
)
def test_meta_refresh_is_found(document: str) -> None:
    assert meta_refresh(document) == (0, "/next")


@pytest.mark.parametrize(
    "document",
    [
        "",
        "<p>no refresh</p>",
        '<meta name="refresh" content="0; url=/next">',
        '<meta http-equiv="refresh ">',
        '<meta http-equiv="refresh" content="0; url=/next"',  # the document ends in the tag
        '<meta http-equiv="refresh" content="0; url=/next>',  # ... in a quoted value
        '<meta http-equiv="content-type" http-equiv="refresh" content="0; url=/next">',
        '<meta http-equiv=refresh/content="0; url=/next">',  # "/" is in an unquoted value
        '<metax http-equiv="refresh" content="0; url=/next">',
        '<!-- <meta http-equiv="refresh" content="0; url=/next"> -->',
        '<script>"<meta http-equiv=refresh content=\'0;url=/next\'>"</script>',
        '<style>/*<meta http-equiv="refresh" content="0; url=/next">*/</style>',
        '<title><meta http-equiv="refresh" content="0; url=/next"></title>',
        '<textarea><meta http-equiv="refresh" content="0; url=/next"></textarea>',
        '<template><template></template><meta http-equiv="refresh" content="0;url=/n"></template>',
        '<plaintext><meta http-equiv="refresh" content="0; url=/next">',
        '<p title="<meta http-equiv=refresh content=0;url=/next>">x</p>',
        '<meta http-equiv="refresh" content="10; url=/slow"><meta http-equiv=refresh content=0>',
    ],
)
def test_meta_refresh_is_not_found(document: str) -> None:
    refresh = meta_refresh(document)
    assert refresh is None or refresh == (10, "/slow")


def test_meta_refresh_scan_is_bounded() -> None:
    late = '<meta http-equiv="refresh" content="0; url=/next">'
    assert meta_refresh(" " * (HEAD_SCAN - len(late)) + late) == (0, "/next")
    assert meta_refresh(" " * (HEAD_SCAN - len(late) + 1) + late) is None


def test_a_head_without_a_refresh_attribute_is_not_walked(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    # The tag-by-tag walk costs the loader thread on every page: only a head that holds an
    # http-equiv attribute with the refresh keyword (in any ASCII case) can have a meta
    # refresh, so only such a head is walked; a script's "refresh" is no reason to.
    walked: list[str] = []

    def walk(text: str) -> list[str]:
        walked.append(text)
        return []

    monkeypatch.setattr(refresh, "_meta_refresh_contents", walk)
    assert meta_refresh("<html><head><title>x</title></head><p>" + "words " * 5000) is None
    assert meta_refresh('<meta http-equiv="content-type" content="text/html"><script>'
                        'function refresh() { location.reload() }</script><p>Refresh</p>'
                        '<meta name="refresh" content="0"><meta http-equiv="refreshing">'
                        "<meta http-equiv=refresh/>") is None
    assert walked == []
    for document in ('<meta http-equiv="ReFrEsH" content="0; url=/next">',
                     "<META HTTP-EQUIV = 'REFRESH' content=0>",
                     "<meta content=0 http-equiv=\nrefresh>", "<meta http-equiv=refresh"):
        assert meta_refresh(document) is None
    assert len(walked) == 4


def test_first_of_duplicate_attributes_counts() -> None:
    assert meta_refresh('<meta http-equiv=refresh content="0;url=/a" content="0;url=/b">') == (
        0, "/a")


# --------------------------------------------------------------------------------------------
# Through the fetcher


def _meta(content: str) -> bytes:
    return f'<html><head><meta http-equiv="refresh" content="{content}"></head>'.encode()


def test_refresh_header_is_followed(http_server: HTTPTestServer, make_fetcher: MakeFetcher,
                                    ) -> None:
    http_server.routes["/old"] = Reply(200, (*HTML, ("Refresh", "0; url=/new")), b"moving")
    http_server.routes["/new"] = Reply(200, HTML, b"arrived")
    page = make_fetcher(http=http_server.port).fetch("http://example.test/old")
    assert (page.url, page.final_url, page.text) == (
        "http://example.test/new", "http://example.test/new", "arrived")


def test_refresh_header_on_a_body_that_is_not_text(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    # The header decides before the body is read: its type does not matter.
    http_server.routes["/old"] = Reply(200, (("Content-Type", "image/png"),
                                             ("Refresh", "1;url=/new")), b"\x89PNG")
    http_server.routes["/new"] = Reply(200, HTML, b"arrived")
    assert make_fetcher(http=http_server.port).fetch("http://example.test/old").text == "arrived"


@pytest.mark.parametrize("delay", ["0", "3", "3.9"])
def test_meta_refresh_is_followed(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, delay: str,
) -> None:
    http_server.routes["/old"] = Reply(200, HTML, _meta(f"{delay}; url=/new"))
    http_server.routes["/new"] = Reply(200, HTML, b"arrived")
    page = make_fetcher(http=http_server.port).fetch("http://example.test/old")
    assert (page.final_url, page.text) == ("http://example.test/new", "arrived")


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        (HTML, _meta("4; url=/new")),  # too slow: the page stands
        (HTML, _meta("0")),  # the same page: not reloaded
        (HTML, _meta("0; url=/old#top")),  # the same page, fragments aside
        ((*HTML, ("Refresh", "0")), b"<p>stay</p>"),
        ((*HTML, ("Refresh", "5; url=/new")), b"<p>stay</p>"),
        ((*HTML, ("Refresh", "soon")), b"<p>stay</p>"),
        ((("Content-Type", "text/plain"),), _meta("0; url=/new")),  # not HTML
    ],
)
def test_refreshes_that_are_not_followed(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
    headers: tuple[tuple[str, str], ...], body: bytes,
) -> None:
    http_server.routes["/old"] = Reply(200, headers, body)
    http_server.routes["/new"] = Reply(200, HTML, b"arrived")
    page = make_fetcher(http=http_server.port).fetch("http://example.test/old")
    assert (page.url, page.final_url, page.text) == ("http://example.test/old", None,
                                                     body.decode())
    assert [r.path for r in http_server.requests] == ["/old"]


def test_refresh_on_an_error_page_is_not_followed(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/old"] = Reply(404, (*HTML, ("Refresh", "0; url=/new")),
                                       _meta("0;url=/new"))
    http_server.routes["/new"] = Reply(200, HTML, b"arrived")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/old")
    assert (error.code, error.status, error.final_url) == (Code.HTTP_STATUS, 404, None)


def test_refresh_header_decides_over_the_meta_element(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/old"] = Reply(200, (*HTML, ("Refresh", "0; url=/header")),
                                       _meta("0; url=/meta"))
    http_server.routes["/header"] = Reply(200, HTML, b"header")
    assert make_fetcher(http=http_server.port).fetch("http://example.test/old").text == "header"


def test_refreshes_count_among_the_five_redirects(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    for hop in range(6):
        reply = (redirect(302, f"/r{hop + 1}") if hop % 2
                 else Reply(200, HTML, _meta(f"0; url=/r{hop + 1}")))
        http_server.routes[f"/r{hop}"] = reply
    http_server.routes["/r6"] = Reply(200, HTML, b"too far")
    fetcher = make_fetcher(http=http_server.port)
    error = fetch_error(fetcher, "http://example.test/r0")
    assert (error.code, error.final_url) == (Code.REDIRECT_LIMIT, "http://example.test/r5")
    assert len(http_server.requests) == 6
    page = fetcher.fetch("http://example.test/r1")  # five hops from here
    assert (page.text, page.final_url) == ("too far", "http://example.test/r6")


def test_refresh_loop_is_cut_by_the_limit(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/a"] = Reply(200, HTML, _meta("0; url=/b"))
    http_server.routes["/b"] = Reply(200, (*HTML, ("Refresh", "0; url=/a")), b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/a")
    assert error.code is Code.REDIRECT_LIMIT


def test_refresh_follows_the_redirect_rules(
    http_server: HTTPTestServer, https_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    https_server.routes["/down"] = Reply(200, HTML, _meta("0; url=http://example.test/plain"))
    https_server.routes["/port"] = Reply(200, HTML, _meta("0; url=https://example.test:8443/"))
    https_server.routes["/scheme"] = Reply(200, (*HTML, ("Refresh", "0; url=file:///etc/passwd")),
                                           b"")
    https_server.routes["/space"] = Reply(200, HTML, _meta("0; url=/a\\b"))
    fetcher = make_fetcher(http=http_server.port, https=https_server.port)
    assert fetch_error(fetcher, "https://example.test/down").code is Code.REDIRECT_DOWNGRADE
    assert fetch_error(fetcher, "https://example.test/port").code is Code.URL_PORT
    assert fetch_error(fetcher, "https://example.test/scheme").code is Code.URL_SCHEME
    assert fetch_error(fetcher, "https://example.test/space").code is Code.REDIRECT_INVALID
    assert http_server.requests == []


def test_refresh_to_a_refused_address(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, HTML, _meta("0; url=http://inside.test/admin"))
    lookups: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["10.0.0.1"]  # private: refused

    error = fetch_error(make_fetcher(http=http_server.port, resolver=resolver),
                        "http://example.test/")
    assert (error.code, error.final_url) == (Code.ADDRESS_REFUSED, "http://inside.test/admin")
    assert lookups == ["inside.test"]


def test_several_different_refresh_headers(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    headers = (*HTML, ("Refresh", "0; url=/a"), ("Refresh", "0; url=/b"))
    http_server.routes["/"] = Reply(200, headers, b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.REDIRECT_INVALID
