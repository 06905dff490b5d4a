"""Tests of `HostSlots`, the per-host limit: directly, then through the fetcher against local
servers (loopback only, see conftest.py)."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any

import pytest

from tests.fetch.conftest import HTML, MakeFetcher, fetch_error, redirect
from tests.fetch.servers import HTTPTestServer, Reply
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.hosts import HostSlots
from tracecite.fetch.options import ConnectTo

# --------------------------------------------------------------------------------------------
# HostSlots


def later(seconds: float) -> float:
    """A deadline ``seconds`` from now."""
    return time.monotonic() + seconds


def test_limit_holds_across_threads() -> None:
    slots = HostSlots(2)
    lock = threading.Lock()
    now = peak = 0

    def request(host: str) -> None:
        nonlocal now, peak
        with slots.hold(host, later(5), 5):
            with lock:
                now += 1
                peak = max(peak, now)
            time.sleep(0.05)
            with lock:
                now -= 1

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(request, ["a.test"] * 8))
    assert peak == 2


def test_hosts_are_counted_apart() -> None:
    slots = HostSlots(1)
    with slots.hold("a.test", later(5), 5):
        started = time.monotonic()
        with slots.hold("b.test", later(5), 5):
            pass
        assert time.monotonic() - started < 0.1  # a.test's slot does not hold b.test up


def test_a_waiting_request_gets_the_slot_when_it_frees() -> None:
    slots = HostSlots(1)
    held = threading.Event()

    def holder() -> None:
        with slots.hold("a.test", later(5), 5):
            held.set()
            time.sleep(0.2)

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(holder)
        assert held.wait(5)
        started = time.monotonic()
        with slots.hold("a.test", later(5), 5):
            waited = time.monotonic() - started
    assert 0.1 < waited < 1


def test_no_slot_before_the_deadline_is_tc313() -> None:
    slots = HostSlots(1)
    with slots.hold("a.test", later(5), 5):
        started = time.monotonic()
        with pytest.raises(FetchError) as caught, slots.hold("a.test", later(0.3), 0.3):
            pass
        elapsed = time.monotonic() - started
        with pytest.raises(FetchError), slots.hold("a.test", later(-1), 2):
            pass  # a deadline already gone: no wait at all
    assert caught.value.code is Code.TIMEOUT
    assert caught.value.detail == (
        "no request slot for the host came free within 0.3 s (at most 1 at once)")
    assert 0.3 <= elapsed < 1
    with slots.hold("a.test", later(0.1), 0.1):  # the refused waits took no slot
        pass


def test_counts_are_dropped_when_a_host_is_idle() -> None:
    slots = HostSlots(2)
    with slots.hold("a.test", later(5), 5), slots.hold("a.test", later(5), 5):
        with slots.hold("b.test", later(5), 5):
            assert (slots.in_flight("a.test"), slots.in_flight("b.test")) == (2, 1)
        assert (slots.in_flight("a.test"), slots.in_flight("b.test")) == (2, 0)
    with pytest.raises(RuntimeError), slots.hold("c.test", later(5), 5):
        raise RuntimeError("the request failed")
    assert slots._busy == {}  # nothing kept for hosts with no request in flight





def test_claims_are_limited_per_host_name_and_counts_are_dropped_when_idle() -> None:
    slots = HostSlots(2)
    assert slots.limit == 2
    assert slots.claim("a.test") and slots.claim("a.test")
    assert not slots.claim("a.test")
    assert slots.claim("b.test")  # another host has its own slots
    assert (slots.in_flight("a.test"), slots.in_flight("b.test")) == (2, 1)
    slots.release("a.test")
    assert slots.claim("a.test")
    for host in ("a.test", "a.test", "b.test"):
        slots.release(host)
    assert slots._busy == {}  # nothing kept for hosts with nothing in flight


def test_hold_takes_a_slot_for_its_block_and_frees_it_whatever_happens() -> None:
    slots = HostSlots(1)
    with slots.hold("a.test", time.monotonic() + 1, 1):
        assert slots.in_flight("a.test") == 1
        assert not slots.claim("a.test")
    assert slots.in_flight("a.test") == 0
    with pytest.raises(RuntimeError), slots.hold("a.test", time.monotonic() + 1, 1):
        raise RuntimeError("inside")
    assert slots.in_flight("a.test") == 0


def test_hold_waits_for_a_slot_to_free() -> None:
    slots = HostSlots(1)
    assert slots.claim("a.test")
    threading.Timer(0.1, slots.release, ["a.test"]).start()
    started = time.monotonic()
    with slots.hold("a.test", started + 5, 5):
        assert time.monotonic() - started >= 0.09
    assert slots.in_flight("a.test") == 0


def test_hold_gives_up_at_the_deadline() -> None:
    slots = HostSlots(1)
    assert slots.claim("a.test")
    with pytest.raises(FetchError) as caught, slots.hold("a.test", time.monotonic() + 0.05, 2):
        pass
    assert caught.value.code is Code.TIMEOUT
    assert caught.value.detail == ("no request slot for the host came free within 2 s "
                                   "(at most 1 at once)")
    assert slots.in_flight("a.test") == 1  # the claim is still there, nothing else


def test_a_claimed_slot_is_freed_on_leaving() -> None:
    slots = HostSlots(1)
    assert slots.claim("a.test")
    with pytest.raises(RuntimeError), slots.claimed("a.test"):
        raise RuntimeError("inside")
    assert slots.in_flight("a.test") == 0


def test_wait_returns_once_a_slot_frees_or_at_once_if_one_has() -> None:
    slots = HostSlots(1)
    assert slots.claim("a.test")
    seen = slots.changes
    threading.Timer(0.1, slots.release, ["a.test"]).start()
    started = time.monotonic()
    slots.wait(seen, timeout=5)
    assert 0.09 <= time.monotonic() - started < 4
    assert slots.claim("a.test")
    started = time.monotonic()
    slots.wait(seen, timeout=5)  # a slot freed since `seen` was read: no wait at all
    assert time.monotonic() - started < 1


def test_wait_returns_on_wake_or_timeout() -> None:
    slots = HostSlots(1)
    seen = slots.changes
    started = time.monotonic()
    slots.wait(seen, timeout=0.05)
    assert time.monotonic() - started >= 0.04
    threading.Timer(0.05, slots.wake).start()
    slots.wait(seen, timeout=5)
    assert time.monotonic() - started < 4
    assert slots.changes != seen


# --------------------------------------------------------------------------------------------
# Per-host limits through the fetcher


class HostsInFlight:
    """A route that holds each request for ``delay`` seconds (or until ``release`` is set) and
    records the most requests in flight at once, per ``Host`` header and overall."""

    def __init__(self, reply: Reply, delay: float = 0.1) -> None:
        self.reply = reply
        self.delay = delay
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.total = self.total_peak = 0

    def __call__(self, request: Any) -> Reply:
        host = request.headers["host"]
        with self.lock:
            self.now[host] = self.now.get(host, 0) + 1
            self.peak[host] = max(self.peak.get(host, 0), self.now[host])
            self.total += 1
            self.total_peak = max(self.total_peak, self.total)
        try:
            self.release.wait(self.delay)
        finally:
            with self.lock:
                self.now[host] -= 1
                self.total -= 1
        return self.reply


def fetch_all(fetcher: PinnedFetcher, urls: list[str]) -> list[str]:
    """Fetch every URL at once, a thread each; the pages' texts in order."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(urls)) as pool:
        return [page.text for page in pool.map(fetcher.fetch, urls)]


@pytest.mark.network
def test_per_host_limit_counts_each_host_name_apart(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    slow = HostsInFlight(Reply(200, HTML, b"slow"))
    http_server.routes.update({f"/{i}": slow for i in range(6)})
    # Two names for the same server: the limit is per host name, not per address.
    fetcher = make_fetcher(routes=[ConnectTo(name, 80, "127.0.0.1", http_server.port)
                                   for name in ("a.test", "b.test")], per_host=2)
    urls = [f"http://{name}/{i}" for i in range(6) for name in ("a.test", "B.TEST")]
    assert fetch_all(fetcher, urls) == ["slow"] * 12
    assert slow.peak == {"a.test": 2, "b.test": 2}
    assert slow.total_peak == 4
    assert http_server.connections == 4  # the pools keep no more than can be in use


@pytest.mark.network
def test_per_host_limit_counts_redirect_hops_on_their_own_host(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    slow = HostsInFlight(Reply(200, HTML, b"landed"))
    for i in range(4):
        http_server.routes[f"/from/{i}"] = redirect(302, f"http://b.test/to/{i}")
        http_server.routes[f"/to/{i}"] = slow
    fetcher = make_fetcher(routes=[ConnectTo(name, 80, "127.0.0.1", http_server.port)
                                   for name in ("a.test", "b.test")], per_host=1)
    urls = [f"http://a.test/from/{i}" for i in range(4)] + [f"http://b.test/to/{i}"
                                                            for i in range(4)]
    assert fetch_all(fetcher, urls) == ["landed"] * 8
    assert slow.peak == {"b.test": 1}  # direct requests and redirected ones share b.test's slot
    hosts = [r.headers["host"] for r in http_server.requests]
    assert sorted(hosts) == ["a.test"] * 4 + ["b.test"] * 8


@pytest.mark.network
@pytest.mark.slow
def test_waiting_for_a_host_slot_is_no_part_of_the_deadline(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    # A redirect (after 1 s) into b.test, whose one slot another fetch (started 0.5 s later)
    # holds until its own deadline cuts it, 2 s on: the redirect's hop waits for the slot past
    # its source's 2 s, and its request still goes out, with the time it had left
    # (docs/web-over-time.md#retries: an attempt's deadline runs while its requests do).
    def late_redirect(request: Any) -> Reply:
        time.sleep(1)
        return redirect(302, "http://b.test/end")

    held = HostsInFlight(Reply(200, HTML, b"held"), delay=10)
    http_server.routes.update({"/start": late_redirect, "/held": held,
                               "/end": Reply(200, HTML, b"end")})
    fetcher = make_fetcher(routes=[ConnectTo(name, 80, "127.0.0.1", http_server.port)
                                   for name in ("a.test", "b.test")], per_host=1, timeout=2)

    def seen(path: str) -> None:
        for _ in range(500):
            if any(r.path == path for r in http_server.requests):
                return
            time.sleep(0.01)

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        started = time.monotonic()
        redirected = pool.submit(fetcher.fetch, "http://a.test/start")
        seen("/start")
        time.sleep(0.5)
        holder = pool.submit(fetch_error, fetcher, "http://b.test/held")
        seen("/held")
        page = redirected.result(timeout=10)
        elapsed = time.monotonic() - started
        held.release.set()
        error = holder.result(timeout=10)
    assert page.text == "end" and page.final_url == "http://b.test/end"
    assert elapsed > 2.2, elapsed  # it waited for the slot beyond its own 2 s
    assert error.code is Code.TIMEOUT  # the holder's own request was cut at its deadline
    assert [r.path for r in http_server.requests] == ["/start", "/held", "/end"]
