"""Name lookups under the source's deadline (docs/web-over-time.md#politeness-under-pressure): names
that never answer hold no other source, and no lookup thread is ever waited for at exit."""

from __future__ import annotations

import threading
import time

import pytest

from tests.fetch.conftest import MakeFetcher, fetch_error
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.lookups import Lookups


class Hanging:
    """A resolver that never answers names under ``.hang.test`` (until released) and refuses
    every other name at once (TC307); counts the calls per name."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, host: str, port: int) -> list[str]:
        with self.lock:
            self.calls[host] = self.calls.get(host, 0) + 1
        if host.endswith(".hang.test"):
            self.release.wait(30)
            raise FetchError(Code.DNS_FAILURE, "released")
        raise FetchError(Code.DNS_FAILURE, "no such name")


def test_names_that_never_answer_do_not_fail_another_source(make_fetcher: MakeFetcher) -> None:
    resolver = Hanging()
    fetcher = make_fetcher(resolver=resolver, timeout=0.5)
    try:
        stuck = [threading.Thread(target=fetch_error, args=(fetcher, f"http://n{i}.hang.test/"))
                 for i in range(40)]
        for thread in stuck:
            thread.start()
        time.sleep(0.1)  # every stuck lookup is in flight
        started = time.monotonic()
        # Looked up at once, and answered: a TC307 of its own, never a false TC313.
        assert fetch_error(fetcher, "http://honest.test/").code is Code.DNS_FAILURE
        assert time.monotonic() - started < 0.3
        for thread in stuck:
            thread.join()
    finally:
        resolver.release.set()


def test_a_pending_name_is_not_looked_up_again() -> None:
    resolver = Hanging()
    lookups = Lookups(resolver)
    try:
        for _ in range(5):
            started = time.monotonic()
            try:
                lookups.lookup("n.hang.test", 80, 0.1, shown_timeout=0.1)
            except FetchError as error:
                assert error.code is Code.TIMEOUT
                assert error.detail == "no answer for n.hang.test within 0.1 s"
            assert time.monotonic() - started < 0.5
        assert resolver.calls == {"n.hang.test": 1}
        assert lookups.pending() == 1
        # The lookup threads are daemons: the interpreter never waits for them at exit.
        assert all(t.daemon for t in threading.enumerate()
                   if t.name.startswith("tracecite-lookup"))
    finally:
        resolver.release.set()
    deadline = time.monotonic() + 2
    while lookups.pending() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert lookups.pending() == 0  # a finished lookup is forgotten: the next one asks again


def test_callers_of_one_pending_name_share_its_answer() -> None:
    gate = threading.Event()
    calls: list[str] = []

    def slow(host: str, port: int) -> list[str]:
        calls.append(host)
        gate.wait(5)
        return ["192.0.2.1", "192.0.2.2"]

    lookups = Lookups(slow)
    answers: list[list[str]] = []
    waiting = [threading.Thread(target=lambda: answers.append(
        lookups.lookup("a.test", 443, 5, shown_timeout=5))) for _ in range(3)]
    for thread in waiting:
        thread.start()
    time.sleep(0.1)
    gate.set()
    for thread in waiting:
        thread.join()
    assert answers == [["192.0.2.1", "192.0.2.2"]] * 3
    assert calls == ["a.test"]
    assert lookups.lookup("a.test", 443, 5, shown_timeout=5) == ["192.0.2.1", "192.0.2.2"]
    assert calls == ["a.test", "a.test"]


def test_a_resolver_error_reaches_each_caller_as_its_own() -> None:
    lookups = Lookups(Hanging())
    errors = []
    for _ in range(2):
        try:
            lookups.lookup("gone.test", 80, 1, shown_timeout=1)
        except FetchError as error:
            errors.append(error)
    assert [e.code for e in errors] == [Code.DNS_FAILURE] * 2
    assert errors[0] is not errors[1]


def test_a_resolver_bug_is_raised_in_the_caller() -> None:
    def broken(host: str, port: int) -> list[str]:
        raise ZeroDivisionError

    try:
        Lookups(broken).lookup("x.test", 80, 1, shown_timeout=1)
    except ZeroDivisionError:
        pass
    else:
        raise AssertionError("the resolver's exception was lost")


def test_a_temporary_failure_reaches_each_caller_still_temporary() -> None:
    """Regression: callers got a plain FetchError copy, so EAI_AGAIN was no longer retried."""
    from tracecite.fetch.errors import TemporaryLookupError
    from tracecite.fetch.lookups import Lookups

    def resolver(host: str, port: int) -> list[str]:
        raise TemporaryLookupError("the resolver says try again")

    lookups = Lookups(resolver)
    errors = []
    for _ in range(2):
        with pytest.raises(TemporaryLookupError) as caught:
            lookups.lookup("a.test", 80, 5, shown_timeout=5)
        errors.append(caught.value)
    assert errors[0] is not errors[1]
    assert errors[0].detail == "the resolver says try again"
