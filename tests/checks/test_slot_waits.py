"""An attempt is a request sent (docs/web-over-time.md#retries): waiting for a request slot on a
host (at its limit, or in back-off after a 429 or 503) uses none of a source's retries and none
of its deadline, and ``attempts`` counts the requests the server saw. A host that rate-limits
some pages delays the pages queued behind it and fails none of them.

Local servers only; the backoff's random waits are drawn as zero, ``Retry-After`` waits are
real and short."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

import pytest

from tests.fetch.servers import Reply, Request, Servers
from tests.live_fixtures import text
from tracecite.checks.live.records import Loaded
from tracecite.checks.live.run import LiveRun
from tracecite.checks.quotes import LoadInfo, QuoteCheck
from tracecite.checks.web import WebLoader
from tracecite.fetch.address_policy import parse_allow_net
from tracecite.fetch.fetcher import ConnectTo, FetchOptions, PinnedFetcher
from tracecite.fetch.retry import RetryPolicy

pytestmark = pytest.mark.network

LOOPBACK = (parse_allow_net("127.0.0.1"),)
HOST = "busy.test"
PAGE = "the quick brown fox jumps over the lazy dog"


def fetcher(port: int, **options: float) -> PinnedFetcher:
    return PinnedFetcher(FetchOptions(connect_to=(ConnectTo(HOST, 80, "127.0.0.1", port),),
                                      allow_net=LOOPBACK, **options))  # type: ignore[arg-type]


def no_jitter(retries: int = 2) -> RetryPolicy:
    return RetryPolicy(retries, draw=lambda: 0.0)


class Counting:
    """A route that counts its requests, answering ``first`` to the first ``times`` of them
    (after ``delay`` seconds each), then the page."""

    def __init__(self, first: Reply | None = None, times: int = 0, delay: float = 0.0) -> None:
        self.first, self.times, self.delay = first, times, delay
        self.seen = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self.lock:
            self.seen += 1
            failing = self.first is not None and self.seen <= self.times
        if self.delay:
            time.sleep(self.delay)
        return self.first if failing and self.first is not None else text(PAGE)


class Recording(WebLoader):
    """A web loader that keeps each load's ``attempts`` (the findings say them only when a
    quote is missing or a page is unavailable)."""

    def __init__(self, fetcher: PinnedFetcher, retry: RetryPolicy) -> None:
        super().__init__(fetcher, retry)
        self.attempts: list[int] = []
        self.lock = threading.Lock()

    def load(self, url: str, *, claimed: bool = False,
             validators: Mapping[str, str] | None = None) -> Loaded:
        loaded = super().load(url, claimed=claimed, validators=validators)
        with self.lock:
            self.attempts.append(loaded.info.attempts)
        return loaded


def test_waiting_for_a_busy_slot_uses_no_deadline_and_no_retry(servers: Servers) -> None:
    # The host's one slot is taken for 1 s, three times the per-source timeout: the load waits
    # for it, then sends one request with its whole deadline. (Before: TC313 with no request
    # sent at all.)
    route = Counting()
    server = servers.http({"/a": route})
    with fetcher(server.port, timeout=0.3, per_host=1) as pinned:
        assert pinned.hosts.claim(HOST)
        threading.Timer(1.0, pinned.hosts.release, [HOST]).start()
        started = time.monotonic()
        loaded = WebLoader(pinned, no_jitter(retries=0)).load(f"http://{HOST}/a")
        waited = time.monotonic() - started
    assert (loaded.text, loaded.info) == (PAGE, LoadInfo(attempts=1))
    assert route.seen == 1
    assert waited >= 0.95


@pytest.mark.slow
def test_a_retry_that_waits_out_a_back_off_is_one_request_more(servers: Servers) -> None:
    # Failed twice (503 without Retry-After: the host backs off 1 s, the retry's own backoff
    # is drawn as 0), then the page: three requests and attempts 3, although each back-off
    # outlasts the 0.5 s deadline of an attempt. (Before: both retries ran out their deadline
    # waiting for the back-off, and the page was TC313 with attempts 3 and one request.)
    flaky = Counting(Reply(503, (), b"busy"), times=2)
    slow = Counting(delay=0.2)
    server = servers.http({"/flaky": flaky, **{f"/slow/{i}": slow for i in range(4)}})
    checks = [QuoteCheck("quick brown fox", f"http://{HOST}/flaky", "n.md", 1, record=1)]
    checks += [QuoteCheck("quick brown fox", f"http://{HOST}/slow/{i}", "n.md", i + 2,
                          record=i + 2) for i in range(4)]
    with fetcher(server.port, timeout=0.5, per_host=1) as pinned:
        loader = Recording(pinned, no_jitter())
        result = LiveRun(loader, concurrency=4, parse_budget=20, parse_workers=1).check(checks)
    assert result.findings == ()
    assert (result.counts.matched, result.counts.unavailable) == (5, 0)
    assert flaky.seen == 3 and slow.seen == 4
    assert sorted(loader.attempts) == [1] * 4 + [3]


@pytest.mark.slow
def test_a_host_in_back_off_delays_its_queued_pages_and_fails_none(servers: Servers) -> None:
    # Three pages answer 429 (Retry-After: 1), three 503 (Retry-After: 1) and two a plain 503
    # once before the page; ten others, each 0.3 s to answer, queue behind them on the same
    # host. Every attempt has 0.6 s: far less than the waits for a slot. None fails, and the
    # server saw exactly as many requests as the loads' attempts add up to.
    refusing = [Counting(Reply(429, (("Retry-After", "1"),), b"slow down"), times=1)
                for _ in range(3)]
    unavailable = [Counting(Reply(503, (("Retry-After", "1"),), b"busy"), times=1)
                   for _ in range(3)]
    unavailable += [Counting(Reply(503, (), b"busy"), times=1) for _ in range(2)]
    slow = [Counting(delay=0.3) for _ in range(10)]
    routes: dict[str, Counting] = {}
    for i, route in enumerate([*refusing, *unavailable, *slow]):
        routes[f"/p/{i}"] = route
    server = servers.http(routes)
    checks = [QuoteCheck("quick brown fox", f"http://{HOST}{path}", "n.md", i + 1,
                         record=i + 1) for i, path in enumerate(routes)]
    with fetcher(server.port, timeout=0.6, per_host=2) as pinned:
        loader = Recording(pinned, no_jitter())
        result = LiveRun(loader, concurrency=8, parse_budget=20, parse_workers=1).check(checks)
    assert result.findings == ()
    assert (result.counts.matched, result.counts.unavailable) == (len(checks), 0)
    assert sum(route.seen for route in routes.values()) == sum(loader.attempts)
    assert len(server.requests) == sum(loader.attempts)
