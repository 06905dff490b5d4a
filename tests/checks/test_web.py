"""Live web checks: how a response is matched (kind_of), which URLs share a fetch (url_key),
the loader that fetches a page through the pinned fetcher from a local site, and a live run
over local servers: each page fetched once, and the limit per host kept by the run and the
fetcher together."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from tests.fetch.servers import Reply, Request, Servers
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    JSON,
    Site,
    html,
    no_dns_fixture,
    redirect,
    site_fixture,
    text,
)
from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.live.records import Loaded
from tracecite.checks.live.run import LiveRun
from tracecite.checks.quotes import LoadInfo, QuoteCheck
from tracecite.checks.web import WebLoader, kind_of, url_key
from tracecite.codes import Code
from tracecite.fetch.address_policy import parse_allow_net
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import ConnectTo, FetchOptions, PinnedFetcher
from tracecite.findings import Counts

HTML, JSON_KIND, TEXT = MatchKind.HTML, MatchKind.JSON, MatchKind.TEXT


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
def test_kind_of(media_type: str, kind: MatchKind) -> None:
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
    load = WebLoader(fetcher).load
    assert load(site.route("/h", html("<p>hi</p>"))) == Loaded(HTML, "<p>hi</p>")
    assert load(site.route("/j", text('{"a": 1}', headers=JSON))) == Loaded(JSON_KIND,
                                                                           '{"a": 1}')
    assert load(site.route("/t", text("plain"))) == Loaded(TEXT, "plain")
    assert load(site.route("/n", text("bare", headers=()))) == Loaded(TEXT, "bare")
    assert load(f"http://{HOST}/t") == Loaded(TEXT, "plain")


def test_web_loader_raises_fetch_errors(site: Site, fetcher: PinnedFetcher) -> None:
    loader = WebLoader(fetcher)
    with pytest.raises(FetchError) as caught:
        loader.load(site.route("/gone", text("no", status=404)))
    assert (caught.value.code, caught.value.status) == (Code.HTTP_STATUS, 404)
    with pytest.raises(FetchError) as caught:
        loader.load("https://user@example.test/")
    assert caught.value.code == Code.URL_USERINFO


def test_web_loader_tells_the_run_its_kind_keys_and_hosts(fetcher: PinnedFetcher) -> None:
    loader = WebLoader(fetcher)
    assert (loader.kind, loader.expects_html) == (SourceKind.WEB, True)
    assert loader.hosts is fetcher.hosts
    assert loader.hosts.limit == fetcher.per_host
    assert loader.key("HTTPS://Example.TEST:443/a#x") == "https://example.test/a"
    assert loader.host("HTTPS://Example.TEST:443/a") == "example.test"
    assert loader.host("http://93.184.216.34/") == "93.184.216.34"
    for refused in ("not a url", "https://user@example.test/", "ftp://example.test/"):
        assert loader.host(refused) is None
        assert loader.key(refused) == refused


@pytest.mark.parametrize("reply", [text("page"), text("no", status=404),
                                   redirect(f"https://{HOST}/landed")],
                         ids=["page", "error", "redirect"])
def test_a_claimed_slot_is_freed_once_the_first_request_is_done(
    site: Site, fetcher: PinnedFetcher, reply: Reply,
) -> None:
    site.route("/landed", text("page"))
    url = site.route("/claimed", reply)
    loader = WebLoader(fetcher)
    for claimed in (True, False):  # claimed by the caller, or taken by the fetcher itself
        if claimed:
            assert loader.hosts.claim(HOST)
        try:
            loaded = loader.load(url, claimed=claimed)
            assert (loaded.kind, loaded.text) == (TEXT, "page")
        except FetchError as error:
            assert error.code == Code.HTTP_STATUS
        assert loader.hosts.in_flight(HOST) == 0


def test_a_redirected_source_says_where_it_ended(site: Site, fetcher: PinnedFetcher) -> None:
    site.route("/landed", text("page"))
    loader = WebLoader(fetcher)
    direct = loader.load(site.route("/direct", text("page")))
    assert direct == Loaded(TEXT, "page", LoadInfo(final_url=None))
    moved = loader.load(site.route("/moved", redirect(f"https://{HOST}/landed")))
    assert moved == Loaded(TEXT, "page", LoadInfo(final_url=f"https://{HOST}/landed"))
    site.route("/gone", text("no", status=404))
    with pytest.raises(FetchError) as caught:
        loader.load(site.route("/moved-away", redirect(f"https://{HOST}/gone")))
    assert (caught.value.code, caught.value.final_url) == (Code.HTTP_STATUS, f"https://{HOST}/gone")


# ---- a live run over local servers ----------------------------------------------------------

def test_each_page_is_fetched_once(site: Site, fetcher: PinnedFetcher) -> None:
    url = site.route("/a", html("<p>The quick brown fox.</p>"))
    other = site.route("/b", text("Something else."))
    same = [url, "https://EXAMPLE.test/a", f"https://{HOST}:443/a#part", url]
    checks = [QuoteCheck(quote, target, "n.md", 3, record=i) for i, (quote, target) in
              enumerate([("quick brown", same[0]), ("absent", same[1]), ("fox", same[2]),
                         ("quick", same[3]), ("Something else", other), ("absent", other)])]
    result = LiveRun(WebLoader(fetcher), concurrency=4, parse_budget=20,
                     parse_workers=1).check(checks)
    assert sorted(site.paths) == ["/a", "/b"]
    assert result.counts == Counts(checked=6, matched=4, not_found=2)
    assert sorted((f.record, f.code) for f in result.findings) == [
        (1, Code.QUOTE_NOT_ON_PAGE), (5, Code.QUOTE_NOT_ON_PAGE)]


class HostsInFlight:
    """A route that holds each request for ``delay`` seconds when its ``Host`` is ``slow``,
    recording per host the most requests in flight at once and when each request ended."""

    def __init__(self, slow: str, delay: float) -> None:
        self.slow = slow
        self.delay = delay
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.ended: dict[str, list[float]] = {}

    def __call__(self, request: Request) -> Reply:
        host = request.headers["host"]
        with self.lock:
            self.now[host] = self.now.get(host, 0) + 1
            self.peak[host] = max(self.peak.get(host, 0), self.now[host])
        try:
            if host == self.slow:
                time.sleep(self.delay)
            return text("page")
        finally:
            with self.lock:
                self.now[host] -= 1
                self.ended.setdefault(host, []).append(time.monotonic())


def test_the_limit_per_host_is_kept_by_the_run_and_the_fetcher_together(
    servers: Servers,
) -> None:
    # slow.test holds each request 0.4 s; fast.test answers at once, and two of its pages
    # redirect to slow.test (a redirected hop counts on the host it goes to).
    route = HostsInFlight("slow.test", 0.4)
    server = servers.http({f"/{i}": route for i in range(8)})
    server.routes.update({f"/moved/{i}": redirect(f"http://slow.test/{6 + i}")
                          for i in range(2)})
    options = FetchOptions(connect_to=tuple(ConnectTo(name, 80, "127.0.0.1", server.port)
                                            for name in ("slow.test", "fast.test")),
                           allow_net=(parse_allow_net("127.0.0.1"),), per_host=2)
    urls = ([f"http://slow.test/{i}" for i in range(6)]
            + [f"http://fast.test/{i}" for i in range(6)]
            + [f"http://fast.test/moved/{i}" for i in range(2)])
    checks = [QuoteCheck("page", url, "n.md", 3, record=i) for i, url in enumerate(urls)]
    with PinnedFetcher(options) as fetcher:
        result = LiveRun(WebLoader(fetcher), concurrency=6, parse_budget=20,
                         parse_workers=1).check(checks)
        assert fetcher.hosts.in_flight("slow.test") == fetcher.hosts.in_flight("fast.test") == 0
    assert result.counts == Counts(checked=14, matched=14)
    assert route.peak["slow.test"] == 2  # direct and redirected requests, never more
    # The slow host's sources come first, yet the fast host's pages were all served before
    # the first slow request ended: no thread waited on the busy host meanwhile.
    assert len(route.ended["fast.test"]) == 6
    assert max(route.ended["fast.test"]) < min(route.ended["slow.test"])
    hosts = sorted(r.headers["host"] for r in server.requests)
    assert hosts == ["fast.test"] * 8 + ["slow.test"] * 8


def test_the_web_loader_cites_html_unless_every_link_names_a_pdf() -> None:
    assert not WebLoader.cites_html(["https://a.test/r.pdf", "https://b.test/R.PDF?x=1#page=2"])
    assert WebLoader.cites_html(["https://a.test/r.pdf", "https://a.test/page"])
    assert WebLoader.cites_html(["https://a.test/r.pdf.html"])
