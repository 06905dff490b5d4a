"""Live web checks: how a response is matched (kind_of), which URLs share a fetch (url_key),
and the loader that fetches a page through the pinned fetcher from a local site."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    JSON,
    Site,
    html,
    live_ca_fixture,
    live_ca_path_fixture,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.checks.live import HTML, TEXT
from tracecite.checks.live import JSON as JSON_KIND
from tracecite.checks.web import WebLoader, kind_of, url_key
from tracecite.codes import Code
from tracecite.fetch.address_policy import parse_allow_net
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import ConnectTo, FetchOptions, PinnedFetcher


@pytest.mark.parametrize(("media_type", "kind"), [
    ("text/html", HTML),
    ("application/xhtml+xml", HTML),
    ("application/json", JSON_KIND),
    ("application/ld+json", JSON_KIND),
    ("application/problem+json", JSON_KIND),
    ("text/plain", TEXT),
    ("text/markdown", TEXT),
    ("text/xml", TEXT),
    ("text/csv", TEXT),
    ("", TEXT),  # no Content-Type and a UTF-8 body
])
def test_kind_of(media_type: str, kind: str) -> None:
    assert kind_of(media_type) == kind


def test_url_key_treats_the_same_request_as_one() -> None:
    same = ["https://example.test/a?b=1", "HTTPS://Example.TEST/a?b=1",
            "https://example.test:443/a?b=1", "https://example.test/a?b=1#part",
            "https://example.test/./x/../a?b=1"]
    assert {url_key(u) for u in same} == {"https://example.test/a?b=1"}
    assert url_key("http://example.test/a") != url_key("https://example.test/a")
    assert url_key("https://example.test/a?b=2") != url_key("https://example.test/a?b=1")


@pytest.mark.parametrize("url", ["ftp://example.test/", "https://[::1]/", "not a url", ""])
def test_url_key_of_an_invalid_url_is_the_url(url: str) -> None:
    assert url_key(url) == url


@pytest.fixture
def fetcher(site: Site) -> Iterator[PinnedFetcher]:
    options = FetchOptions(
        connect_to=(ConnectTo(HOST, 443, "127.0.0.1", site.https.port),
                    ConnectTo(HOST, 80, "127.0.0.1", site.http.port)),
        allow_net=(parse_allow_net("127.0.0.1"),), ca_cert=site.ca_path,
    )
    with PinnedFetcher(options) as pinned:
        yield pinned


def test_web_loader_kinds(site: Site, fetcher: PinnedFetcher) -> None:
    load = WebLoader(fetcher)
    assert load(site.route("/h", html("<p>hi</p>"))) == (HTML, "<p>hi</p>")
    assert load(site.route("/j", text('{"a": 1}', headers=JSON))) == (JSON_KIND, '{"a": 1}')
    assert load(site.route("/t", text("plain"))) == (TEXT, "plain")
    assert load(site.route("/n", text("bare", headers=()))) == (TEXT, "bare")
    assert load(f"http://{HOST}/t") == (TEXT, "plain")


def test_web_loader_raises_fetch_errors(site: Site, fetcher: PinnedFetcher) -> None:
    load = WebLoader(fetcher)
    with pytest.raises(FetchError) as caught:
        load(site.route("/gone", text("no", status=404)))
    assert (caught.value.code, caught.value.status) == (Code.HTTP_STATUS, 404)
    with pytest.raises(FetchError) as caught:
        load("https://user@example.test/")
    assert caught.value.code == Code.URL_USERINFO
