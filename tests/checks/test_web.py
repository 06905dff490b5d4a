"""Live web checks: how a response is matched (kind_of), which URLs share a fetch (url_key),
the loader that fetches a page through the pinned fetcher from a local site, and how the
runner's loader threads use its limit per host and keep the pages waiting for a parse bounded."""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future

import pytest

from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    JSON,
    Site,
    html,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.checks.live import HTML, TEXT, ParsePool, run_live_checks
from tracecite.checks.live import JSON as JSON_KIND
from tracecite.checks.quotes import QuoteCheck
from tracecite.checks.web import WebLoader, kind_of, url_key
from tracecite.codes import Code
from tracecite.fetch.address_policy import parse_allow_net
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.limits import DEFAULT_PER_HOST
from tracecite.fetch.options import ConnectTo, FetchOptions

NOT_FOUND = (Code.QUOTE_NOT_ON_PAGE, "the page")


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


def test_web_loader_tells_the_runner_its_hosts(fetcher: PinnedFetcher) -> None:
    load = WebLoader(fetcher)
    assert load.per_host == fetcher.per_host == DEFAULT_PER_HOST
    assert load.host_of("HTTPS://Example.TEST:443/a") == "example.test"
    assert load.host_of("http://93.184.216.34/") == "93.184.216.34"
    for refused in ("not a url", "https://user@example.test/", "ftp://example.test/"):
        assert load.host_of(refused) is None


# ---- the runner's loader threads: hosts and pages waiting for a parse ----------------------

class HostLoads:
    """A loader with a limit per host (a target's first letter; none for targets starting with
    "-") that records the loads in flight. With ``wait_for``, each load of another host waits
    (up to 5 s) until the ``wait_for`` load has started, and records whether it did."""

    def __init__(self, per_host: int, wait_for: str = "") -> None:
        self.per_host = per_host
        self.wait_for = wait_for
        self.started = threading.Event()
        self.lock = threading.Lock()
        self.now: Counter[str | None] = Counter()
        self.peak: Counter[str | None] = Counter()
        self.total_peak = 0
        self.overlapped: list[bool] = []

    @staticmethod
    def host_of(target: str) -> str | None:
        return None if target.startswith("-") else target[0]

    def __call__(self, target: str) -> tuple[str, str]:
        host = self.host_of(target)
        with self.lock:
            self.now[host] += 1
            self.peak[host] = max(self.peak[host], self.now[host])
            self.total_peak = max(self.total_peak, sum(self.now.values()))
        try:
            if target == self.wait_for:
                self.started.set()
            elif self.wait_for:
                self.overlapped.append(self.started.wait(5))
            else:
                time.sleep(0.02)
            return TEXT, "page"
        finally:
            with self.lock:
                self.now[host] -= 1


def quotes_for(*targets: str) -> list[QuoteCheck]:
    return [QuoteCheck("page", target, "n.md", 3, record=i) for i, target in enumerate(targets)]


def test_the_runner_goes_on_to_other_hosts_while_one_is_busy() -> None:
    # a1 waits for b1 to start: with one slot per host, the second thread must skip a2 and a3.
    load = HostLoads(per_host=1, wait_for="b1")
    _, summary = run_live_checks(quotes_for("a1", "a2", "a3", "b1"), load, concurrency=2,
                                 not_found=NOT_FOUND)
    assert summary.matched == 4
    assert load.overlapped[0] is True
    assert load.peak == {"a": 1, "b": 1}


def test_sources_without_a_host_are_not_limited_per_host() -> None:
    load = HostLoads(per_host=1)
    run_live_checks(quotes_for("-1", "-2", "-3", "a1", "a2"), load, concurrency=3,
                    not_found=NOT_FOUND)
    assert load.peak[None] >= 2
    assert load.peak["a"] == 1
    assert load.total_peak <= 3


def test_pages_waiting_for_a_slow_parse_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Loads are instant and parses slow: loaders fill every parse slot (one per loader), then
    # each holds one more page, and there they wait: 2 × concurrency pages at most.
    concurrency, sources = 2, 12
    lock = threading.Lock()
    unparsed: list[int] = [0]  # pages loaded and not yet parsed
    peak: list[int] = [0]
    pending: queue.SimpleQueue[Future[list[bool]]] = queue.SimpleQueue()

    def load(target: str) -> tuple[str, str]:
        with lock:
            unparsed[0] += 1
            peak[0] = max(peak[0], unparsed[0])
        return HTML, "<p>page</p>"

    def slow_submit(self: ParsePool, kind: str, text: str, quotes: list[str],
                    **options: object) -> Future[list[bool]]:
        future: Future[list[bool]] = Future()
        pending.put(future)
        return future

    def parser() -> None:
        for _ in range(sources):
            future = pending.get(timeout=10)
            time.sleep(0.01)
            with lock:
                unparsed[0] -= 1
            future.set_result([True])

    monkeypatch.setattr(ParsePool, "submit", slow_submit)
    worker = threading.Thread(target=parser, daemon=True)
    worker.start()
    _, summary = run_live_checks(quotes_for(*(f"-{i}" for i in range(sources))), load,
                                 concurrency=concurrency, not_found=NOT_FOUND, parse_workers=1)
    worker.join(10)
    assert summary.matched == sources
    assert peak[0] == 2 * concurrency
