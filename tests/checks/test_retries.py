"""Retries through the web loader and a live run (docs/web-over-time.md#retries,
docs/web-over-time.md#politeness-under-pressure), against local servers: each class of transient
failure is tried again and each other failure is not; a 503 that recovers passes with ``attempts`` 2
and counts as ``retried``; a long ``Retry-After`` is not waited for; and a host that allows 5
requests a second fails none of ~30 sources at the defaults.

The backoff's random waits are made zero (a fake ``draw``) or recorded (a fake ``sleep``);
only ``Retry-After`` and host back-off waits are real, and short."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.fetch.servers import Reply, Request, Servers, head, reset_after, silent
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    Site,
    closed_port,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.checks.live.run import LiveRun
from tracecite.checks.quotes import LoadInfo, QuoteCheck
from tracecite.checks.web import WebLoader
from tracecite.codes import Code
from tracecite.fetch import address_policy
from tracecite.fetch.address_policy import parse_allow_net, system_resolver
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import ConnectTo, FetchOptions, PinnedFetcher
from tracecite.fetch.retry import RetryPolicy
from tracecite.findings import Counts

LOOPBACK = (parse_allow_net("127.0.0.1"),)


class Sleeps(list[float]):
    """A fake ``sleep``: records each wait and returns at once."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def policy(retries: int = 2, **kwargs: float) -> tuple[RetryPolicy, Sleeps]:
    sleeps = Sleeps()
    return RetryPolicy(retries, sleep=sleeps, draw=lambda: 0.5, **kwargs), sleeps


@pytest.fixture
def fetcher(site: Site) -> Iterator[PinnedFetcher]:
    options = FetchOptions(
        connect_to=(ConnectTo(HOST, 443, "127.0.0.1", site.https.port),
                    ConnectTo(HOST, 80, "127.0.0.1", site.http.port)),
        allow_net=LOOPBACK, ca_cert=site.ca_path,
    )
    with PinnedFetcher(options) as pinned:
        yield pinned


def raw_fetcher(port: int, **options: float) -> PinnedFetcher:
    return PinnedFetcher(FetchOptions(connect_to=(ConnectTo(HOST, 80, "127.0.0.1", port),),
                                      allow_net=LOOPBACK, **options))  # type: ignore[arg-type]


def failure(loader: WebLoader, url: str) -> FetchError:
    with pytest.raises(FetchError) as caught:
        loader.load(url)
    return caught.value


class Flaky:
    """A route that answers ``first`` to its first ``times`` requests, then a page."""

    def __init__(self, first: Reply, times: int = 1) -> None:
        self.first = first
        self.times = times
        self.seen = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self.lock:
            self.seen += 1
            failing = self.seen <= self.times
        return self.first if failing else text("the page is back")


# ---- retried, one test per class ------------------------------------------------------------

def test_a_503_that_recovers_on_the_next_request_passes_with_attempts_2(
    site: Site, fetcher: PinnedFetcher,
) -> None:
    url = site.route("/flaky", Flaky(text("down", status=503)))
    retry, sleeps = policy()
    loaded = WebLoader(fetcher, retry).load(url)
    assert (loaded.text, loaded.info) == ("the page is back", LoadInfo(attempts=2))
    assert sleeps == [1.0]  # the backoff before attempt 2, drawn at 0.5 of 2 s
    assert site.paths == ["/flaky", "/flaky"]


def test_a_run_counts_retried_sources(site: Site, fetcher: PinnedFetcher) -> None:
    flaky = site.route("/flaky", Flaky(text("down", status=502)))
    steady = site.route("/steady", text("the page is back"))
    gone = site.route("/gone", text("oops", status=500))
    checks = [QuoteCheck("the page is back", url, "n.md", i + 1, record=i + 1)
              for i, url in enumerate([flaky, steady, gone])]
    retry, _ = policy(retries=1)
    result = LiveRun(WebLoader(fetcher, retry), concurrency=4, parse_budget=20,
                     parse_workers=1).check(checks)
    assert result.counts == Counts(checked=3, matched=2, unavailable=1, retried=2)
    [finding] = result.findings
    assert (finding.code, finding.status, finding.attempts) == (Code.HTTP_STATUS, 500, 2)


@pytest.mark.parametrize("status", [408, 500, 502, 504])
def test_transient_statuses_are_retried(site: Site, fetcher: PinnedFetcher, status: int) -> None:
    url = site.route("/s", text("no", status=status))
    retry, sleeps = policy(retries=2)
    error = failure(WebLoader(fetcher, retry), url)
    assert (error.code, error.status, error.attempts) == (Code.HTTP_STATUS, status, 3)
    assert site.paths == ["/s"] * 3
    assert sleeps == [1.0, 2.0]


def test_a_refused_connection_is_retried(site: Site) -> None:
    with raw_fetcher(closed_port()) as pinned:
        retry, sleeps = policy(retries=2)
        error = failure(WebLoader(pinned, retry), f"http://{HOST}/a")
    assert (error.code, error.attempts) == (Code.CONNECT_FAILED, 3)
    assert len(sleeps) == 2


def test_a_reset_mid_body_is_retried(servers: Servers) -> None:
    first = head("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "100")])
    server = servers.raw(reset_after(first + b"partial"))
    with raw_fetcher(server.port) as pinned:
        retry, _ = policy(retries=1)
        error = failure(WebLoader(pinned, retry), f"http://{HOST}/a")
    assert (error.code, error.attempts) == (Code.CONNECT_FAILED, 2)
    assert server.connections == 2


def test_a_timeout_of_one_attempt_is_retried_with_a_whole_deadline_each(
    servers: Servers,
) -> None:
    server = servers.raw(silent(5))
    with raw_fetcher(server.port, timeout=0.3) as pinned:
        retry, _ = policy(retries=1)
        started = time.monotonic()
        error = failure(WebLoader(pinned, retry), f"http://{HOST}/a")
        elapsed = time.monotonic() - started
    assert (error.code, error.attempts) == (Code.TIMEOUT, 2)
    assert 0.55 < elapsed < 1.5  # (retries + 1) × timeout, the fake backoff aside


def _lookup_failing(monkeypatch: pytest.MonkeyPatch, *errors: int) -> list[str]:
    """Make the system resolver fail with these EAI codes, one per call; return the calls."""
    calls: list[str] = []
    codes = iter(errors)

    def getaddrinfo(host: bytes, *args: object) -> list[object]:
        calls.append(host.decode())
        raise socket.gaierror(next(codes), "lookup failed")

    monkeypatch.setattr(address_policy.socket, "getaddrinfo", getaddrinfo)
    return calls


def test_a_temporary_dns_failure_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _lookup_failing(monkeypatch, socket.EAI_AGAIN, socket.EAI_AGAIN, socket.EAI_NONAME)
    with PinnedFetcher(FetchOptions(), resolver=system_resolver) as pinned:
        retry, sleeps = policy(retries=5)
        error = failure(WebLoader(pinned, retry), "https://flaky-dns.test/")
    # Tried while the resolver said "try again"; the name not existing ends it.
    assert (error.code, error.attempts) == (Code.DNS_FAILURE, 3)
    assert calls == ["flaky-dns.test"] * 3
    assert len(sleeps) == 2


def test_a_name_that_does_not_exist_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _lookup_failing(monkeypatch, socket.EAI_NONAME)
    with PinnedFetcher(FetchOptions(), resolver=system_resolver) as pinned:
        retry, sleeps = policy(retries=5)
        error = failure(WebLoader(pinned, retry), "https://nowhere.test/")
    assert (error.code, error.attempts, len(calls), sleeps) == (Code.DNS_FAILURE, 1, 1, [])


# ---- not retried, one test per class --------------------------------------------------------

@pytest.mark.parametrize("status", [400, 403, 404, 410, 501])
def test_other_statuses_are_not_retried(site: Site, fetcher: PinnedFetcher, status: int) -> None:
    url = site.route("/s", text("no", status=status))
    retry, sleeps = policy()
    error = failure(WebLoader(fetcher, retry), url)
    assert (error.status, error.attempts, sleeps, site.paths) == (status, 1, [], ["/s"])


def test_a_policy_refusal_is_not_retried(fetcher: PinnedFetcher) -> None:
    retry, sleeps = policy()
    error = failure(WebLoader(fetcher, retry), "http://127.0.0.2/")  # outside --allow-net
    assert (error.code, error.attempts, sleeps) == (Code.ADDRESS_REFUSED, 1, [])


def test_a_tls_failure_is_not_retried(site: Site) -> None:
    options = FetchOptions(connect_to=(ConnectTo(HOST, 443, "127.0.0.1", site.https.port),),
                           allow_net=LOOPBACK)  # the test CA is not trusted
    with PinnedFetcher(options) as pinned:
        retry, sleeps = policy()
        error = failure(WebLoader(pinned, retry), site.route("/a", text("page")))
    assert (error.code, error.attempts, sleeps) == (Code.TLS_FAILED, 1, [])
    assert site.https.connections == 1  # counted before the server's half of the handshake


@pytest.mark.parametrize(("reply", "code"), [
    (text("x" * 5000), Code.TOO_LARGE),
    (text(b"\x89PNG", headers=(("Content-Type", "image/png"),)), Code.CONTENT_TYPE_UNSUPPORTED),
    (text(b"caf\xe9", headers=(("Content-Type", "text/plain; charset=latin-1"),)),
     Code.NOT_UTF8),
], ids=["too-large", "content-type", "charset"])
def test_limits_and_content_are_not_retried(site: Site, reply: Reply, code: Code) -> None:
    options = FetchOptions(connect_to=(ConnectTo(HOST, 443, "127.0.0.1", site.https.port),),
                           allow_net=LOOPBACK, ca_cert=site.ca_path, max_bytes=1000)
    with PinnedFetcher(options) as pinned:
        retry, sleeps = policy()
        error = failure(WebLoader(pinned, retry), site.route("/a", reply))
    assert (error.code, error.attempts, sleeps, site.paths) == (code, 1, [], ["/a"])


# ---- rate limits ----------------------------------------------------------------------------

def test_a_429_uses_no_retry_and_waits_its_retry_after(
    site: Site, fetcher: PinnedFetcher,
) -> None:
    url = site.route("/busy", Flaky(Reply(429, (("Retry-After", "0"),), b"slow down"), times=3))
    retry, sleeps = policy(retries=0)
    loaded = WebLoader(fetcher, retry).load(url)
    assert loaded.info.attempts == 4
    assert sleeps == [0, 0, 0]


def test_a_long_retry_after_is_not_waited_for_and_the_finding_says_how_long(
    site: Site, fetcher: PinnedFetcher,
) -> None:
    url = site.route("/busy", Reply(429, (("Retry-After", "3600"),), b"slow down"))
    retry, sleeps = policy()
    error = failure(WebLoader(fetcher, retry), url)
    assert (error.status, error.attempts, sleeps, site.paths) == (429, 1, [], ["/busy"])
    finding = QuoteCheck("q", url, "n.md", 3).unavailable(error)
    assert "asked to wait 3600 s" in finding.message
    assert finding.attempts == 1  # one request, and said


class FivePerSecond:
    """A route that serves 5 requests per second and answers 429 (``Retry-After: 1``) beyond;
    it records when each request came and when each was refused."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.served: list[float] = []
        self.arrived: list[float] = []
        self.refused: list[float] = []

    def __call__(self, request: Request) -> Reply:
        with self.lock:
            now = time.monotonic()
            self.arrived.append(now)
            if sum(1 for t in self.served if now - t < 1.0) >= 5:
                self.refused.append(now)
                return Reply(429, (("Retry-After", "1"),), b"slow down")
            self.served.append(now)
        return text("the quick brown fox")


@pytest.mark.slow
def test_a_host_that_allows_five_requests_a_second_fails_no_source(servers: Servers) -> None:
    route = FivePerSecond()
    server = servers.http({f"/{i}": route for i in range(30)})
    options = FetchOptions(connect_to=(ConnectTo("limited.test", 80, "127.0.0.1", server.port),),
                           allow_net=LOOPBACK)
    checks = [QuoteCheck("quick brown fox", f"http://limited.test/{i}", "n.md", i + 1,
                         record=i + 1) for i in range(30)]
    started = time.monotonic()
    with PinnedFetcher(options) as pinned:  # the defaults: 8 per host, 2 retries, 30 s wait
        result = LiveRun(WebLoader(pinned, RetryPolicy()), concurrency=48, parse_budget=20,
                         parse_workers=1).check(checks)
    elapsed = time.monotonic() - started
    print(f"{len(route.refused)} refusals in {elapsed:.1f} s")  # shown with -s
    assert result.findings == ()
    assert (result.counts.matched, result.counts.unavailable) == (30, 0)
    assert result.counts.retried > 0
    assert len(route.served) == 30
    assert elapsed < 10, f"{elapsed:.1f} s"  # 30 pages at 5 a second: 5 s at the least
    # The host was in back-off after each refusal: no request started until its Retry-After
    # had passed (requests already on their way when it refused may still arrive).
    for refused in route.refused:
        early = [t - refused for t in route.arrived if 0.25 < t - refused < 0.9]
        assert early == [], early
