"""Conditional requests for the cache (docs/web-over-time.md#the-cache): validators sent with each
hop, a 304 read as "not modified" only when they were sent, and a page's validators handed back."""

from __future__ import annotations

import pytest

from tests.fetch.conftest import HTML, MakeFetcher, fetch_error, redirect
from tests.fetch.servers import HTTPTestServer, Reply, Request
from tracecite.codes import Code
from tracecite.fetch.fetcher import Page

pytestmark = pytest.mark.network

VALIDATORS = {"If-None-Match": '"v1"', "If-Modified-Since": "Mon, 30 Nov 2026 10:00:00 GMT"}
TAGGED = (*HTML, ("ETag", '"v1"'), ("Last-Modified", "Mon, 30 Nov 2026 10:00:00 GMT"))


def _conditional(request: Request) -> Reply:
    if request.headers.get("if-none-match") == '"v1"':
        return Reply(304, (("ETag", '"v1"'),), b"")
    return Reply(200, TAGGED, b"<p>page</p>")


def test_a_page_carries_its_validators(http_server: HTTPTestServer,
                                       make_fetcher: MakeFetcher) -> None:
    http_server.routes["/a"] = _conditional
    page = make_fetcher(http=http_server.port).fetch("http://example.test/a")
    assert (page.status, page.etag, page.last_modified) == (
        200, '"v1"', "Mon, 30 Nov 2026 10:00:00 GMT")
    assert "if-none-match" not in http_server.requests[0].headers


def test_validators_are_sent_and_a_304_is_not_modified(http_server: HTTPTestServer,
                                                       make_fetcher: MakeFetcher) -> None:
    http_server.routes["/old"] = redirect(301, "/a")
    http_server.routes["/a"] = _conditional
    page = make_fetcher(http=http_server.port).fetch("http://example.test/old",
                                                     validators=VALIDATORS)
    assert page == Page("http://example.test/a", 304, "", "", final_url="http://example.test/a",
                        etag='"v1"')
    for request in http_server.requests:  # every hop
        assert request.headers["if-none-match"] == '"v1"'
        assert request.headers["if-modified-since"] == VALIDATORS["If-Modified-Since"]


def test_a_304_that_was_not_asked_for_is_tc315(http_server: HTTPTestServer,
                                                make_fetcher: MakeFetcher) -> None:
    http_server.routes["/a"] = Reply(304, (), b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/a")
    assert (error.code, error.status) == (Code.HTTP_STATUS, 304)
