"""Request slots per host name: the limit, waiting for a slot within a deadline, claiming one
without waiting, and waiting for one to free."""

from __future__ import annotations

import threading
import time

import pytest

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.hosts import HostSlots


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
