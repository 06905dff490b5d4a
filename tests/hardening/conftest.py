"""Fixtures for the hardening tests: a loopback-only network guard on every test, an injected
resolver for the CLI's fetcher, a test CA, and local servers.

No test here sends a packet beyond loopback or asks DNS anything: every name a fetch resolves is
answered by `Resolver` (the fetcher's ``resolver=``, injected under the CLI), and the audit-hook
guard fails the test on any other lookup or on a connection to a non-loopback address.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.hardening.guards import NetworkLog, network_guard
from tracecite.codes import Code
from tracecite.fetch import fetcher as fetcher_module
from tracecite.fetch.errors import FetchError

Answer = Sequence[str] | Callable[[str, int], Sequence[str]]


@dataclass
class Resolver:
    """Answers the CLI fetcher's name lookups from ``table``; records every lookup.

    A name missing from the table is a test bug: it is recorded in ``unexpected`` (checked at
    teardown) and answered with TC307.
    """

    table: dict[str, Answer] = field(default_factory=dict)
    default: Answer | None = None  # the answer for names missing from the table
    calls: list[tuple[str, int]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append((host, port))
        answer = self.table.get(host, self.default)
        if answer is None:
            self.unexpected.append(host)
            raise FetchError(Code.DNS_FAILURE, "name not in the test resolver's table")
        if callable(answer):
            return answer(host, port)
        return list(answer)


@pytest.fixture(autouse=True)
def loopback_only() -> Iterator[NetworkLog]:
    """Every hardening test: sockets may reach loopback only, and no name reaches DNS."""
    with network_guard(loopback_ok=True) as log:
        yield log
    assert log.violations == [], log.violations


@pytest.fixture(autouse=True)
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Resolver]:
    """The resolver of every fetcher the CLI builds during the test."""
    injected = Resolver()
    original = fetcher_module.PinnedFetcher

    class InjectedFetcher(original):  # type: ignore[valid-type,misc]
        def __init__(self, options: Any, resolver: Any = injected) -> None:
            super().__init__(options, resolver)

    # The commands import PinnedFetcher from this module when they run.
    monkeypatch.setattr(fetcher_module, "PinnedFetcher", InjectedFetcher)
    yield injected
    assert injected.unexpected == [], f"unexpected lookups: {injected.unexpected}"


@pytest.fixture
def single_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse HTML in the loader thread instead of starting worker processes (faster runs)."""
    monkeypatch.setattr("tracecite.workers.os.cpu_count", lambda: 1)


