"""The findings and counts of one live run, settled source by source on the run's thread, and
the verdict cache it consults and feeds (docs/web-over-time.md#the-cache)."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from tracecite.checks.kinds import SourceKind
from tracecite.checks.live.records import Fetched, LiveResult
from tracecite.checks.parse_pool import Verdict
from tracecite.checks.quotes import LoadInfo, QuoteChecks
from tracecite.fetch.errors import FetchError
from tracecite.findings import Counts, Finding


@dataclass(frozen=True)
class Remembered:
    """What the cache knows of a source: a verdict for each quote asked about (in order), how
    the source was loaded, and the request headers to revalidate it with (None: still fresh,
    used without a request)."""

    verdicts: tuple[Verdict, ...]
    info: LoadInfo
    validators: Mapping[str, str] | None


class VerdictCache(Protocol):
    """Verdicts kept between runs (docs/web-over-time.md#the-cache) and the failure history of
    sources (docs/web-over-time.md#flaky-sources); the live run calls it from its own thread
    only. A cache answers only with verdicts decided under the run's options (its options
    digest, docs/web-over-time.md#the-options-rule): any other is a miss."""

    def recall(self, key: str, quotes: Sequence[str]) -> Remembered | None:
        """The stored verdicts of all ``quotes`` on source ``key`` (None: some has none)."""

    def remember(self, key: str, fetched: Fetched, quotes: Sequence[str],
                 verdicts: Sequence[Verdict]) -> None:
        """Keep the verdicts of a source loaded and matched now (a miss with its diagnosis)."""

    def revalidated(self, key: str, fetched: Fetched) -> None:
        """The source answered 304 to the validators: its stored verdicts stand."""

    def failed(self, key: str, error: FetchError) -> tuple[int, int] | None:
        """Count a failure: ``(failures, fail_after)`` for one that is deferred until the
        source has failed ``fail_after`` runs in a row, None for one that is never deferred."""


class Tally:
    """The findings and counts of one run, settled source by source; a group is the indexes
    of a source's checks among ``checks``. Used on the run's thread only, but for
    :meth:`validators` and :attr:`caching`, which loader threads read (they never change once
    the loaders start)."""

    def __init__(self, kind: SourceKind, checks: QuoteChecks, *,
                 cache: VerdictCache | None = None) -> None:
        self._kind = kind
        self._checks = checks
        self._checked = len(checks)
        self._cache = cache
        self._remembered: dict[str, Remembered] = {}
        self._findings: list[Finding] = []
        self._failed: list[int] = []  # the check of each finding
        self._matched = self._not_found = self._unavailable = self._retried = 0
        self._cached = 0

    @property
    def caching(self) -> bool:
        """Whether loads are kept in a cache (their text's digest is then taken)."""
        return self._cache is not None

    def recall(self, groups: dict[str, array[int]]) -> dict[str, array[int]]:
        """Settle the sources whose verdicts are all fresh in the cache; the groups left to
        load (those with old verdicts are loaded with :meth:`validators`)."""
        if self._cache is None:
            return groups
        left: dict[str, array[int]] = {}
        for k, group in groups.items():
            remembered = self._cache.recall(k, self._checks.quotes(group))
            if remembered is None:
                left[k] = group
            elif remembered.validators is None:
                self._from_cache(group, remembered)
            else:
                self._remembered[k] = remembered
                left[k] = group
        return left

    def validators(self, k: str) -> Mapping[str, str] | None:
        """The headers to revalidate source ``k`` with (None: load it unconditionally)."""
        remembered = self._remembered.get(k)
        return remembered.validators if remembered is not None else None

    def settle(self, k: str, group: Sequence[int],
               outcome: list[Verdict] | FetchError | Fetched, info: LoadInfo) -> None:
        """Record the outcome of source ``k``: each quote's match, or why it is unavailable;
        a :class:`Fetched` outcome alone is a 304 (the stored verdicts stand)."""
        if isinstance(outcome, FetchError):
            info = LoadInfo(outcome.final_url, outcome.attempts)
        if info.attempts > 1:
            self._retried += 1
        if isinstance(outcome, Fetched):
            if self._cache is not None:
                self._cache.revalidated(k, outcome)
            self._from_cache(group, self._remembered.pop(k), info)
            return
        self._remembered.pop(k, None)
        if isinstance(outcome, FetchError):
            flaky = self._cache.failed(k, outcome) if self._cache is not None else None
            self._unavailable += len(group)
            for i in group:
                finding = self._checks.check(i).unavailable(outcome, self._kind)
                self._findings.append(_deferred(finding, flaky))
            self._failed.extend(group)
            return
        self._matches(group, outcome, info)

    def remember(self, k: str, quotes: Sequence[str], fetched: Fetched,
                 verdicts: list[Verdict]) -> None:
        """Keep a source's verdicts of its ``quotes`` in the cache (if there is one)."""
        if self._cache is not None:
            self._cache.remember(k, fetched, quotes, verdicts)

    def _from_cache(self, group: Sequence[int], remembered: Remembered,
                    info: LoadInfo | None = None) -> None:
        self._cached += len(group)
        self._matches(group, remembered.verdicts, info or remembered.info, cached=True)

    def _matches(self, group: Sequence[int], verdicts: Sequence[Verdict], info: LoadInfo,
                 *, cached: bool = False) -> None:
        for i, verdict in zip(group, verdicts, strict=True):
            if verdict is True:
                self._matched += 1
            else:
                self._not_found += 1
                finding = self._checks.check(i).not_found(self._kind, info,
                                                          diagnosis=verdict or None)
                self._findings.append(replace(finding, cached=True) if cached else finding)
                self._failed.append(i)

    def result(self, *, stopped_by: int | None = None) -> LiveResult:
        """Everything settled so far; with ``stopped_by`` (the run was stopped), the quotes
        not settled yet count as ``interrupted``, not ``checked``."""
        checked = self._checked
        if stopped_by is not None:
            checked = self._matched + self._not_found + self._unavailable
        return LiveResult(tuple(self._findings), Counts(
            checked=checked, matched=self._matched, not_found=self._not_found,
            unavailable=self._unavailable, cached=self._cached, retried=self._retried,
            interrupted=self._checked - checked), stopped_by, tuple(self._failed))


def _deferred(finding: Finding, flaky: tuple[int, int] | None) -> Finding:
    """An unavailable-source finding with its failure history: a warning until the source has
    failed in ``fail_after`` consecutive runs (docs/web-over-time.md#flaky-sources)."""
    if flaky is None:
        return finding
    failures, fail_after = flaky
    return replace(finding, failures=failures, fail_after=fail_after,
                   warned=finding.warned or failures < fail_after)
