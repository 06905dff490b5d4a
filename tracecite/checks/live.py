"""Checking quotes against sources loaded now (web pages or local files), each loaded once.

The runner groups the quotes by source, loads every distinct source once on a bounded pool of
workers, and tests each source's quotes as soon as it arrives, so only the sources in flight
are held in memory.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol

from tracecite.checks.quotes import QuoteCheck
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.findings import Finding, Summary
from tracecite.matching import MatchText

Loader = Callable[[str], Sequence[MatchText]]
"""Loads one source by its target and returns the texts a quote may match (any of them)."""


class Progress(Protocol):
    """What the runner reports as sources are loaded (a progress bar, or nothing)."""

    def start(self, total: int) -> None:
        """``total`` sources are about to be loaded."""

    def advance(self) -> None:
        """One more source is done."""

    def stop(self) -> None:
        """Loading is over."""


class NoProgress:
    """Shows nothing."""

    def start(self, total: int) -> None:
        """Ignore."""

    def advance(self) -> None:
        """Ignore."""

    def stop(self) -> None:
        """Ignore."""


def run_live_checks(
    checks: Sequence[QuoteCheck],
    load: Loader,
    *,
    key: Callable[[str], str] = lambda target: target,
    concurrency: int,
    not_found: tuple[Code, str],
    progress: Progress | None = None,
) -> tuple[list[Finding], Summary]:
    """Load each distinct source once (``key`` says which targets are the same source) and
    report each quote that is not in it (``not_found``: code and what to call the source) or
    whose source could not be loaded (the loader's :class:`FetchError` code)."""
    groups: dict[str, list[QuoteCheck]] = defaultdict(list)
    for check in checks:
        groups[key(check.target)].append(check)
    progress = progress or NoProgress()
    findings: list[Finding] = []
    matched = unavailable = fetched = 0
    code, what = not_found

    def settle(group: list[QuoteCheck], future: Future[Sequence[MatchText]]) -> None:
        nonlocal matched, unavailable, fetched
        try:
            texts = future.result()
        except FetchError as error:
            unavailable += len(group)
            findings.extend(check.unavailable(error) for check in group)
            return
        fetched += 1
        for check in group:
            if any(text.contains(check.quote) for text in texts):
                matched += 1
            else:
                findings.append(check.not_found(code, what))

    progress.start(len(groups))
    try:
        with ThreadPoolExecutor(max_workers=max(1, concurrency),
                                thread_name_prefix="tracecite") as pool:
            # Submit lazily, keeping at most 2 × concurrency loads queued: a huge run does not
            # create a future (and later a page) for every source at once.
            pending: dict[Future[Sequence[MatchText]], str] = {}
            targets = iter(groups.items())
            limit = 2 * max(1, concurrency)
            for k, group in targets:
                pending[pool.submit(load, group[0].target)] = k
                if len(pending) >= limit:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        settle(groups[pending.pop(future)], future)
                        progress.advance()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    settle(groups[pending.pop(future)], future)
                    progress.advance()
    finally:
        progress.stop()
    summary = Summary(checked=len(checks), matched=matched, unavailable=unavailable,
                      mismatched=len(checks) - matched - unavailable, fetched=fetched)
    return findings, summary
