"""Tests of host back-off (docs/web-over-time.md#politeness-under-pressure): a host that answers 429
or 503 gets no new request before its ``Retry-After`` has passed, one request at a time afterwards,
doubled with each 2xx. First `HostSlots` alone (a fake clock where no thread waits), then the
fetcher telling it what each host answered (local servers, see conftest.py)."""

from __future__ import annotations

import threading
import time

import pytest

from tests.fetch.conftest import HOST, MakeFetcher, fetch_error
from tests.fetch.servers import HTTPTestServer, Reply
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.hosts import DEFAULT_BACK_OFF, HostSlots


class Clock:
    """A ``time.monotonic`` that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_no_claim_before_the_back_off_ends_and_one_at_a_time_after() -> None:
    clock = Clock()
    slots = HostSlots(8, clock=clock)
    slots.back_off("a.test", 5)
    assert slots.backing_off("a.test") and slots.limit_of("a.test") == 1
    assert not slots.claim("a.test")
    assert slots.claim("b.test")  # other hosts go on meanwhile
    clock.now += 4.9
    assert not slots.claim("a.test")
    clock.now += 0.1
    assert not slots.backing_off("a.test")
    assert slots.claim("a.test")
    assert not slots.claim("a.test")  # limit 1 now
    slots.release("a.test")


def test_each_2xx_doubles_the_limit_up_to_the_runs() -> None:
    slots = HostSlots(6, clock=Clock())
    slots.back_off("a.test", 0)
    limits = [slots.limit_of("a.test")]
    for _ in range(4):
        slots.succeeded("a.test")
        limits.append(slots.limit_of("a.test"))
    assert limits == [1, 2, 4, 6, 6]
    slots.succeeded("b.test")  # a host that never backed off keeps the run's limit
    assert slots.limit_of("b.test") == 6


def test_a_new_back_off_drops_the_limit_again_and_never_shortens_one() -> None:
    clock = Clock()
    slots = HostSlots(8, clock=clock)
    slots.back_off("a.test", 10)
    slots.succeeded("a.test")
    slots.succeeded("a.test")
    assert slots.limit_of("a.test") == 4
    slots.back_off("a.test", 1)
    assert slots.limit_of("a.test") == 1
    clock.now += 5
    assert slots.backing_off("a.test")  # the first, longer back-off still holds


@pytest.mark.parametrize("retry_after", [None, 31.0, 3600.0])
def test_no_retry_after_or_one_beyond_the_wait_backs_off_briefly(
    retry_after: float | None,
) -> None:
    clock = Clock()
    slots = HostSlots(8, max_back_off=30, clock=clock)
    slots.back_off("a.test", retry_after)
    clock.now += DEFAULT_BACK_OFF - 0.01
    assert slots.backing_off("a.test")
    clock.now += 0.01
    assert not slots.backing_off("a.test")


def test_the_schedulers_wait_wakes_when_a_back_off_ends() -> None:
    slots = HostSlots(2)
    slots.back_off("a.test", 0.2)
    seen = slots.changes
    assert not slots.claim("a.test")
    started = time.monotonic()
    slots.wait(seen)  # no timeout given: the back-off's end is one
    waited = time.monotonic() - started
    assert 0.15 < waited < 1
    assert slots.claim("a.test")
    slots.release("a.test")


def test_a_back_off_that_ended_unseen_is_a_change() -> None:
    clock = Clock()
    slots = HostSlots(2, clock=clock)
    slots.back_off("a.test", 1)
    seen = slots.changes
    assert not slots.claim("a.test")
    clock.now += 2  # ended between the claim and the wait: the wait returns at once
    slots.wait(seen, timeout=5)
    assert slots.changes != seen


def test_hold_waits_for_the_back_off_within_the_deadline() -> None:
    slots = HostSlots(4)
    slots.back_off("a.test", 0.2)
    started = time.monotonic()
    with slots.hold("a.test", time.monotonic() + 5, 5):
        waited = time.monotonic() - started
        assert slots.in_flight("a.test") == 1
    assert 0.15 < waited < 1


def test_a_back_off_that_outlasts_the_deadline_is_tc313() -> None:
    slots = HostSlots(4)
    slots.back_off("a.test", 10)
    started = time.monotonic()
    with pytest.raises(FetchError) as caught, slots.hold("a.test", time.monotonic() + 0.2, 0.2):
        pass
    assert caught.value.code is Code.TIMEOUT
    assert "asked to slow down" in caught.value.detail
    assert time.monotonic() - started < 1


def test_a_lowered_limit_holds_across_threads() -> None:
    slots = HostSlots(8)
    slots.back_off("a.test", 0)
    lock = threading.Lock()
    now = peak = 0

    def request() -> None:
        nonlocal now, peak
        with slots.hold("a.test", time.monotonic() + 5, 5):
            with lock:
                now += 1
                peak = max(peak, now)
            time.sleep(0.02)
            with lock:
                now -= 1

    threads = [threading.Thread(target=request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak == 1


# ---- through the fetcher --------------------------------------------------------------------

def test_a_429_puts_its_host_in_back_off_and_a_2xx_raises_its_limit(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/busy"] = Reply(429, (("Retry-After", "1"),), b"slow down")
    http_server.routes["/ok"] = Reply(200, (("Content-Type", "text/plain"),), b"fine")
    fetcher = make_fetcher(http=http_server.port, per_host=4)
    error = fetch_error(fetcher, f"http://{HOST}/busy")
    assert (error.code, error.status, error.retry_after) == (Code.HTTP_STATUS, 429, 1.0)
    assert fetcher.hosts.backing_off(HOST) and fetcher.hosts.limit_of(HOST) == 1
    started = time.monotonic()
    assert fetcher.fetch(f"http://{HOST}/ok").text == "fine"  # waits for the back-off
    assert 0.8 < time.monotonic() - started < 2
    assert fetcher.hosts.limit_of(HOST) == 2
    fetcher.fetch(f"http://{HOST}/ok")
    assert fetcher.hosts.limit_of(HOST) == 4


def test_a_503_with_an_http_date_sets_the_wait(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    when = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 60))
    http_server.routes["/down"] = Reply(503, (("Retry-After", when),), b"down")
    fetcher = make_fetcher(http=http_server.port)
    error = fetch_error(fetcher, f"http://{HOST}/down")
    assert error.status == 503
    assert error.retry_after is not None and 58 <= error.retry_after <= 60
    # More than the run waits for (30 s by default): the host backs off briefly instead.
    assert fetcher.hosts.backing_off(HOST)


@pytest.mark.parametrize("code", [500, 404, 408])
def test_other_statuses_put_no_host_in_back_off(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, code: int,
) -> None:
    http_server.routes["/x"] = Reply(code, (("Retry-After", "5"),), b"no")
    fetcher = make_fetcher(http=http_server.port)
    error = fetch_error(fetcher, f"http://{HOST}/x")
    assert (error.status, error.retry_after) == (code, None)
    assert not fetcher.hosts.backing_off(HOST)
    assert fetcher.hosts.limit_of(HOST) == fetcher.per_host
