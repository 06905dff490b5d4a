"""Tests of bot and challenge walls (docs/web-over-time.md#bot-walls): every mark of the table on
its own (pure), then the fetcher turning a final 401, 403 or 503 with a mark into TC319 (loopback
only, see conftest.py)."""

from __future__ import annotations

import gzip

import pytest
from urllib3 import HTTPHeaderDict

from tests.fetch.conftest import HTML, MakeFetcher, fetch_error, redirect
from tests.fetch.servers import HTTPTestServer, Reply
from tracecite.codes import Code
from tracecite.fetch.walls import BODY_LOOK, MARKS, WALL_STATUSES, WallMark, find_wall

CHALLENGE_PAGE = b"<html><head><title>Just a moment...</title></head><body>...</body></html>"

# One example per mark, in the order of MARKS: (headers, status, body).
EXAMPLES: list[tuple[dict[str, str], int, bytes]] = [
    ({"cf-mitigated": "challenge", "server": "cloudflare"}, 403, b""),
    ({"server": "cloudflare", "cf-ray": "8a1b2c3d4e5f6a7b-FRA"}, 503, CHALLENGE_PAGE),
    ({"x-amzn-waf-action": "captcha"}, 401, b""),
    ({"server": "AkamaiGHost"}, 403, b"<H1>Access Denied</H1>"),
    ({"x-datadome": "protected", "server": "nginx"}, 403, b""),
    ({"server": "DataDome"}, 403, b""),
    ({"x-sucuri-block": "BLOCKED"}, 503, b""),
    ({"x-sucuri-id": "11005", "server": "Sucuri/Cloudproxy"}, 403, b""),
]


def _headers(values: dict[str, str]) -> HTTPHeaderDict:
    return HTTPHeaderDict(values)


def test_every_mark_has_an_example() -> None:
    assert len(EXAMPLES) == len(MARKS)


@pytest.mark.parametrize(("mark", "example"), list(zip(MARKS, EXAMPLES, strict=True)),
                         ids=[f"{m.service}-{m.header}" for m in MARKS])
def test_each_mark(mark: WallMark, example: tuple[dict[str, str], int, bytes]) -> None:
    headers, status, body = example
    assert find_wall(status, _headers(headers), lambda: body) is mark
    # Header names and values are matched case-insensitively, values trimmed.
    shouted = {name.upper(): f" {value.upper()} " for name, value in headers.items()}
    assert find_wall(status, _headers(shouted), lambda: body.upper()) is not None
    # Not on a 200, a 404 or a 429; and never with the header gone.
    for other in (200, 404, 429):
        assert find_wall(other, _headers(headers), lambda: body) is None
    without = {name: value for name, value in headers.items() if name != mark.header}
    found = find_wall(status, _headers(without), lambda: body)
    assert found is None or found.header != mark.header


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"server": "cloudflare", "cf-ray": "8a1b2c3d4e5f6a7b-FRA"}, 503),  # an origin outage
        ({"server": "cloudflare", "cf-ray": "8a1b2c3d4e5f6a7b-FRA"}, 403),  # the origin's 403
        ({"cf-mitigated": "managed"}, 403),
        ({"server": "AkamaiGHost"}, 503),  # Akamai's own errors are not walls
        ({"server": "AkamaiGHost"}, 401),
        ({"server": "not-AkamaiGHost"}, 403),
        ({"x-sucuri-id": "11005"}, 503),  # every Sucuri response has the id
        ({"server": "nginx", "x-powered-by": "cloudflare"}, 403),
    ],
)
def test_what_is_not_a_wall(headers: dict[str, str], status: int) -> None:
    assert find_wall(status, _headers(headers), lambda: b"<h1>Service unavailable</h1>") is None


@pytest.mark.parametrize(
    "marker",
    [b"/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1", b"window._cf_chl_opt={",
     b'<div id="cf-browser-verification">', b'name="cf_chl_captcha_tk__"',
     b"<title>Attention Required! | Cloudflare</title>", b"<TITLE>Just a moment...</TITLE>"],
)
def test_cloudflare_challenge_page_markers(marker: bytes) -> None:
    body = b"<html>" + marker + b"</html>"
    assert find_wall(403, _headers({"server": "cloudflare"}), lambda: body) is MARKS[1]


def test_the_body_is_looked_at_only_when_a_mark_needs_it() -> None:
    looks: list[int] = []

    def body() -> bytes:
        looks.append(1)
        return CHALLENGE_PAGE

    assert find_wall(403, _headers({"x-datadome": "1"}), body) is not None
    assert find_wall(403, _headers({"server": "nginx"}), body) is None
    assert looks == []
    assert find_wall(403, _headers({"server": "cloudflare"}), body) is MARKS[1]
    assert looks == [1]


def test_the_body_look_is_bounded() -> None:
    late = b" " * BODY_LOOK + CHALLENGE_PAGE
    assert find_wall(503, _headers({"server": "cloudflare"}), lambda: late) is None


def test_wall_statuses() -> None:
    assert frozenset({401, 403, 503}) == WALL_STATUSES
    assert all(mark.statuses <= WALL_STATUSES for mark in MARKS if mark.service != "AWS WAF")


@pytest.mark.parametrize(("status", "action"), [(202, "challenge"), (405, "captcha")])
def test_aws_waf_challenge_and_captcha_statuses(status: int, action: str) -> None:
    # AWS WAF's documented answers; without the header these statuses are no wall.
    found = find_wall(status, _headers({"x-amzn-waf-action": action}), lambda: b"")
    assert found is not None and found.service == "AWS WAF"
    assert find_wall(status, _headers({"server": "cloudflare"}), lambda: CHALLENGE_PAGE) is None


# --------------------------------------------------------------------------------------------
# Through the fetcher


@pytest.mark.parametrize(("headers", "status", "body"), EXAMPLES,
                         ids=[f"{m.service}-{m.header}" for m in MARKS])
def test_walls_are_source_blocked(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
    headers: dict[str, str], status: int, body: bytes,
) -> None:
    http_server.routes["/"] = Reply(status, (*HTML, *headers.items()), body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert (error.code, error.status) == (Code.SOURCE_BLOCKED, status)
    assert "refused an automated client" in error.detail
    for remedy in ("--user-agent", "skip_urls", "--warn TC319"):
        assert remedy in error.detail


def test_header_values_are_matched_never_echoed(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    hostile = "\x1b]0;pwned\x07 ::error::x"
    http_server.routes["/"] = Reply(403, (*HTML, ("x-amzn-waf-action", hostile),
                                          ("x-datadome", "secret-token-4711")), b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.SOURCE_BLOCKED
    assert "\x1b" not in error.detail and "::error" not in error.detail
    assert "secret-token" not in error.detail


def test_a_gzipped_challenge_page_is_recognised(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    headers = (*HTML, ("Server", "cloudflare"), ("Content-Encoding", "gzip"))
    http_server.routes["/"] = Reply(503, headers, gzip.compress(CHALLENGE_PAGE))
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.SOURCE_BLOCKED


def test_an_ordinary_error_behind_cloudflare_is_http_status(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    headers = (*HTML, ("Server", "cloudflare"), ("CF-RAY", "8a1b2c3d4e5f6a7b-FRA"))
    http_server.routes["/"] = Reply(503, headers, b"<h1>down for maintenance</h1>" * 100)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert (error.code, error.status) == (Code.HTTP_STATUS, 503)


def test_an_aws_waf_challenge_is_not_a_page(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(202, (*HTML, ("x-amzn-waf-action", "challenge")),
                                    b"<script>challenge()</script>")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert (error.code, error.status) == (Code.SOURCE_BLOCKED, 202)


def test_a_wall_after_a_redirect_says_where(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = redirect(302, "/wall")
    http_server.routes["/wall"] = Reply(403, (*HTML, ("cf-mitigated", "challenge")), b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert (error.code, error.final_url) == (Code.SOURCE_BLOCKED, "http://example.test/wall")
