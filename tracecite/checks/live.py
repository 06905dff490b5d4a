"""Checking quotes against sources loaded now (web pages or local files), each loaded once.

A :class:`LiveRun` groups the quotes by source and loads every distinct source once on a
bounded pool of threads (fetching waits on the network, so threads overlap it); HTML is parsed
in worker processes (:class:`~tracecite.checks.parse_pool.ParsePool`). A loader thread hands its
page to the workers and goes on to its next source without waiting for the parse; when the
workers fall behind, at most ``concurrency`` pages wait for them and the loaders pause, so at
most ``2 × concurrency`` pages are in memory at once, however many sources there are.

Memory follows the sources, not the quotes: the checks are read by index from their inputs
(:class:`~tracecite.checks.quotes.QuoteChecks`), a source's group is an array of indexes, its
quotes are read when its page is matched, and what a run keeps of a source (its group, its
stored verdicts) goes once the source is settled. A :class:`QuoteCheck` is made only for a
quote that gets a finding.

An optional :class:`VerdictCache` (docs/web-over-time.md#the-cache) is consulted on the run's thread
before any source is loaded and fed as sources settle: the loader threads only read the validators
it gave and take the digest of what they loaded.

A loader whose sources live on hosts (the web) shares its request slots per host with the run:
a loader thread is handed a source together with the slot of its first request, so no thread
waits on a busy host while another host's source waits.
"""

from __future__ import annotations

import sys
import threading
from array import array
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.parse_pool import ParsePool, Verdict
from tracecite.checks.quotes import LoadInfo, QuoteCheck, QuoteChecks, as_checks
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.hosts import HostSlots
from tracecite.findings import Counts, Finding
from tracecite.matching import digest

if TYPE_CHECKING:  # concurrent.futures is imported when sources are loaded: `check` needs none
    import queue
    from concurrent.futures import Future


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


@dataclass(frozen=True)
class Loaded:
    """A loaded source: how it is matched, its text, and how it was loaded; for the cache,
    its status (304: not modified since the validators) and validators (web pages only)."""

    kind: MatchKind
    text: str
    info: LoadInfo = field(default_factory=LoadInfo)
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True)
class Fetched:
    """What the cache keeps of a successful load: never its text, only the text's digest."""

    status: int
    final_url: str | None
    etag: str | None
    last_modified: str | None
    text_sha256: str


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
    only."""

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


class Loader(Protocol):
    """Loads the sources of one kind for a :class:`LiveRun`."""

    @property
    def kind(self) -> SourceKind:
        """What the loader reads: what the run's findings say about a quote not found."""

    @property
    def expects_html(self) -> bool:
        """Whether its sources are mostly HTML: the parse workers then start while the first
        sources are still loading, instead of after."""

    @property
    def hosts(self) -> HostSlots | None:
        """The request slots per host its loads count on (None: no limit per host)."""

    def key(self, target: str) -> str:
        """Which source ``target`` is: targets with the same key are loaded once."""

    def host(self, target: str) -> str | None:
        """The host ``target``'s first request goes to (None: not limited per host)."""

    def load(self, target: str, *, claimed: bool = False,
             validators: Mapping[str, str] | None = None) -> Loaded:
        """The source at ``target``; raises :class:`FetchError` when it cannot be loaded.

        ``claimed``: the caller has claimed a slot of :attr:`hosts` for :meth:`host`'s answer;
        the load uses it for its first request and frees it, whatever happens. ``validators``:
        conditional request headers (from the cache); an answer of 304 has status 304.
        """


@dataclass(frozen=True)
class LiveResult:
    """What a live run found, in the order the sources finished, and its counts;
    ``stopped_by``: the signal that stopped it before every source finished; ``failed``: for
    each finding, the index of its check among the run's checks (the archive looks up those,
    docs/web-over-time.md#archived-copies)."""

    findings: tuple[Finding, ...]
    counts: Counts
    stopped_by: int | None = None
    failed: tuple[int, ...] = ()


class LiveRun:
    """Checks quotes against sources of one kind as they are now, each source loaded once.

    At most ``concurrency`` sources load at once. A quote not in its source is a finding of the
    loader's kind (TC210 or TC211); a source that cannot be loaded makes each of its quotes a
    finding with the loader's :class:`FetchError` code, and one whose HTML cannot be parsed
    within ``parse_budget`` seconds and the parser's limits, TC318. ``progress`` advances once
    per source; ``parse_workers`` (default: one per core) is for tests.

    With a :class:`VerdictCache`, a source whose every quote has a fresh verdict is not loaded (its
    findings are marked ``cached``), one with old verdicts is revalidated, and what is loaded and
    matched is kept; an unavailable source may be deferred as a warning
    (docs/web-over-time.md#flaky-sources).
    """

    def __init__(self, loader: Loader, *, concurrency: int, parse_budget: float,
                 progress: Progress | None = None, parse_workers: int | None = None) -> None:
        self._loader = loader
        self._concurrency = concurrency
        self._parse_budget = parse_budget
        self._progress = progress or NoProgress()
        self._parse_workers = parse_workers

    def check(self, checks: Sequence[QuoteCheck], cache: VerdictCache | None = None
              ) -> LiveResult:
        """Load each distinct source of ``checks`` once and match its quotes. A failure of one
        source never fails another; an unexpected exception (a bug) propagates. A stop
        (:class:`KeyboardInterrupt`, see :mod:`tracecite.stops`) ends the parse workers,
        abandons the loads in flight and returns what finished, the rest ``interrupted``."""
        columns = as_checks(checks)
        groups = _grouped(columns, self._loader.key)
        tally = _Tally(self._loader.kind, columns, cache=cache)
        groups = tally.recall(groups)
        if cache is not None and not groups:
            return tally.result()  # every verdict came from the cache: no request, no parse
        try:
            with ParsePool(self._parse_workers) as parser:
                if self._loader.expects_html:
                    parser.start()  # before any thread of ours runs (see ParsePool)
                self._progress.start(len(groups))
                try:
                    _Loading(self._loader, columns, groups, parser, self._concurrency,
                             self._parse_budget).run(tally, self._progress)
                finally:
                    self._progress.stop()
        except KeyboardInterrupt as stop:  # SIGINT or SIGTERM: what finished is the result
            from tracecite.stops import signal_of

            return tally.result(stopped_by=signal_of(stop))
        return tally.result()


def _grouped(checks: QuoteChecks, key: Callable[[str], str]) -> dict[str, array[int]]:
    """The indexes of ``checks`` by the key of their source, the sources in the order first
    cited; each distinct target's key is worked out once."""
    keys: dict[str, str] = {}
    groups: dict[str, array[int]] = {}
    for i in range(len(checks)):
        target = checks.target(i)
        k = keys.get(target)
        if k is None:
            k = keys[target] = key(target)
        group = groups.get(k)
        if group is None:
            group = groups[k] = array("I")
        group.append(i)
    return groups


class _Tally:
    """The findings and counts of one run, settled source by source; a group is the indexes
    of a source's checks among ``checks``."""

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
                self._findings.append(_deferred(self._checks.check(i).unavailable(outcome),
                                                flaky))
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


def _return_freed_buffers() -> None:
    """Have glibc give large freed buffers (pages, their pickled copies) back to the system.

    glibc raises its mmap threshold each time a large mmap-ed buffer is freed, so later
    page-sized buffers come from its per-thread heaps, where freed memory mostly stays: peak
    memory would then grow with the number of pages. Setting the threshold, even to its
    default of 128 KiB, turns the adjustment off, and peak memory stays flat. Called after the
    parse workers are forked, so they keep glibc's default: their memory levels off after the
    largest pages, and a fresh mapping for every page would cost them CPU. A no-op on other C
    libraries.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_mmap_threshold = -3  # from glibc's <malloc.h>
    mallopt(m_mmap_threshold, 128 * 1024)


def _matched(parsed: Future[list[Verdict]], info: LoadInfo) -> list[Verdict] | FetchError:
    """What a parsed source settles with: its matches, or a TC318 error when its page went past
    a parse limit (the error's message is the parser's own, never page text)."""
    try:
        return parsed.result()
    except Exception as error:
        # Imported here: by the time a parse-limit error is read (raised in this process or
        # unpickled from a worker), its module is loaded; a run without one never needs it.
        from tracecite.visible import ParseLimitError

        if isinstance(error, ParseLimitError):
            return FetchError(Code.PARSE_LIMIT, str(error), final_url=info.final_url,
                              attempts=info.attempts)
        raise


_WATCH = 1.0
"""Seconds between two looks at whether any loader thread is still alive."""

_RESTARTS = 3
"""How many times loader threads that all died are replaced (see ``_Loading._next_done``)."""

_THREAD_FAILED = "\x00loader thread failed"
"""Put on the done queue, with the exception, by a loader thread that failed outside a load."""


class _Loading:
    """One run's loader threads: each takes sources (:class:`_Sources`), loads them and hands
    the pages to the parser; what they finish comes back to the run's thread on one queue."""

    def __init__(self, loader: Loader, checks: QuoteChecks, groups: dict[str, array[int]],
                 parser: ParsePool, concurrency: int, parse_budget: float) -> None:
        import queue

        self._loader = loader
        self._checks = checks
        self._groups = groups
        self._parser = parser
        self._parse_budget = parse_budget
        self._sources = _Sources([(k, loader.host(checks.target(group[0])))
                                  for k, group in groups.items()], loader.hosts)
        # What the loader threads hand back for a source: its parse (with how it was loaded),
        # why it failed, or (a 304) what the cache keeps; what the cache keeps of it, and the
        # quotes matched (kept for the cache only: None without one).
        self._done: queue.SimpleQueue[
            tuple[str, Future[list[Verdict]] | BaseException | None, LoadInfo, Fetched | None,
                  list[str] | None]
        ] = queue.SimpleQueue()
        self._tally: _Tally | None = None
        self._restarts = 0  # loader threads replaced after all of them died (see _next_done)
        self._threads = min(max(1, concurrency), self._sources.useful_threads())
        # A page handed to the parser holds a slot until it is parsed; when the workers fall
        # behind, loaders wait for one instead of piling up pages: at most ``concurrency``
        # pages wait for a parse and each loader holds at most one more, 2 × concurrency in
        # all. As many slots as the run's concurrency, not its threads: where a host's limit
        # allows fewer threads, the loaders still go on while the workers are starting.
        self._parse_slots = threading.BoundedSemaphore(max(1, concurrency))

    def run(self, tally: _Tally, progress: Progress) -> None:
        """Load every source, settling each in ``tally`` as it finishes; re-raises a loader's
        or the parser's unexpected exception. On a stop (:class:`KeyboardInterrupt`) the
        loader threads are not waited for."""
        self._tally = tally  # before the threads start: they read its validators
        threads = self._start_loaders()
        stopped = False
        try:
            # Here, where the pages are loaded (not in the workers, forked before), and once the
            # first requests are out: its import (ctypes) then costs the run nothing.
            _return_freed_buffers()
            for _ in range(len(self._groups)):
                k, outcome, info, fetched, quotes = self._next_done(threads)
                if k == _THREAD_FAILED:
                    raise outcome if isinstance(outcome, BaseException) else RuntimeError(k)
                group = self._groups.pop(k)  # its load is over: nothing else reads it
                if isinstance(outcome, FetchError):
                    tally.settle(k, group, outcome, info)
                elif isinstance(outcome, BaseException):
                    raise outcome
                elif outcome is None and fetched is not None:  # 304: not modified
                    tally.settle(k, group, fetched, info)
                elif outcome is not None:
                    matched = _matched(outcome, info)
                    tally.settle(k, group, matched, info)
                    if quotes is not None and fetched is not None and not isinstance(
                            matched, FetchError):
                        tally.remember(k, quotes, fetched, matched)
                progress.advance()
        except KeyboardInterrupt:
            stopped = True  # loads in flight are abandoned (daemon threads), never waited for
            raise
        finally:
            self._sources.close()  # loads not yet started need not run once the run has failed
            if not stopped:
                for thread in threads:
                    thread.join()

    def _start_loaders(self) -> list[threading.Thread]:
        """Start the loader threads; each goes to work at once, so the first requests are out
        while the next ones start."""
        threads = [threading.Thread(target=self._load_sources, name=f"tracecite-load-{n}",
                                    daemon=True) for n in range(self._threads)]
        for thread in threads:
            thread.start()
        return threads

    def _next_done(self, threads: list[threading.Thread]
                   ) -> tuple[str, Future[list[Verdict]] | BaseException | None, LoadInfo,
                              Fetched | None, list[str] | None]:
        """What a loader thread finished next.

        A thread can die before its first line runs (Python's thread start-up itself can
        fail: a tracer such as coverage's can refuse to be installed), and so never take a
        source nor report. When every loader thread is gone, nothing is left to read and
        sources are still waiting to be taken, new threads take them (``threads`` then lists
        them), up to :data:`_RESTARTS` times in a run; after that it is a bug, raised, never a
        wait without end. With every source taken, what is not back yet is in the parser,
        whose future always ends: it is waited for, however long the parse takes."""
        import queue

        while True:
            try:
                return self._done.get(timeout=_WATCH)
            except queue.Empty:
                if any(thread.is_alive() for thread in threads) or not self._sources.waiting():
                    continue
            try:  # what the last of them put before it ended
                return self._done.get_nowait()
            except queue.Empty:
                pass
            if self._restarts == _RESTARTS:
                raise RuntimeError("the loader threads ended with sources still to load")
            self._restarts += 1
            threads[:] = self._start_loaders()

    def _load_sources(self) -> None:
        # Each load runs in its own call, so no page outlives it here while the next loads.
        try:
            while (taken := self._sources.take()) is not None:
                self._load_one(*taken)
        except BaseException as error:  # a bug here must end the run, never leave it waiting
            self._done.put((_THREAD_FAILED, error, LoadInfo(), None, None))

    def _load_one(self, k: str, claimed: bool) -> None:
        group = self._groups[k]
        tally = self._tally
        validators = tally.validators(k) if tally is not None else None
        fetched: Fetched | None = None
        try:
            target = self._checks.target(group[0])
            loaded = (self._loader.load(target, claimed=claimed) if validators is None else
                      self._loader.load(target, claimed=claimed, validators=validators))
            if tally is not None and tally.caching:
                fetched = Fetched(loaded.status, loaded.info.final_url, loaded.etag,
                                  loaded.last_modified,
                                  "" if loaded.status == 304 else digest(loaded.text))
            if validators is not None and loaded.status == 304:
                self._done.put((k, None, loaded.info, fetched, None))
                return
            quotes = self._checks.quotes(group)
            self._parse_slots.acquire()
            try:
                parsed = self._parser.submit(loaded.kind, loaded.text, quotes,
                                             budget=self._parse_budget)
            except BaseException:
                self._parse_slots.release()
                raise
        except BaseException as error:  # settled (FetchError) or raised (a bug) by the run
            self._done.put((k, error, LoadInfo(), None, None))
            return
        info = loaded.info
        del loaded  # the page is the parser's now: this frame need not keep it
        kept = quotes if fetched is not None else None  # the cache stores their verdicts

        def parse_done(future: Future[list[Verdict]]) -> None:
            self._parse_slots.release()
            self._done.put((k, future, info, fetched, kept))

        parsed.add_done_callback(parse_done)


class _Sources:
    """Hands sources to loader threads in order, preferring those whose host has room: a
    thread whose next source's host is busy takes the first one whose host is not, and waits
    only while every host left is busy.

    The slots are the loader's (``None``: nothing is limited per host, and neither are sources
    without a host): a source is handed out with its first request's slot claimed, and the load
    frees it. Nothing is counted here.
    """

    def __init__(self, sources: Sequence[tuple[str, str | None]], slots: HostSlots | None):
        self._slots = slots
        # Hosts in the order first cited (None: not limited), each with its sources in order.
        self._waiting: dict[str | None, deque[str]] = {}
        for k, host in sources:
            self._waiting.setdefault(host if slots is not None else None, deque()).append(k)
        self._lock = threading.Lock()
        self._closed = False

    def useful_threads(self) -> int:
        """How many loads can ever run at once: beyond that, a thread would only wait."""
        limit = self._slots.limit if self._slots is not None else 0  # read for hosts only
        return sum(len(keys) if host is None else min(len(keys), limit)
                   for host, keys in self._waiting.items())

    def waiting(self) -> bool:
        """Whether sources are left to hand out."""
        with self._lock:
            return bool(self._waiting) and not self._closed

    def close(self) -> None:
        """Hand nothing more out; every ``take`` returns None."""
        with self._lock:
            self._closed = True
        if self._slots is not None:
            self._slots.wake()

    def take(self) -> tuple[str, bool] | None:
        """The next source to load and whether its first request's slot is claimed (waiting
        while every host left is busy), or None when there is none."""
        while True:
            with self._lock:
                if self._closed or not self._waiting:
                    return None
                slots = self._slots
                seen = slots.changes if slots is not None else 0  # before any claim: none missed
                for host, keys in self._waiting.items():
                    if host is None or (slots is not None and slots.claim(host)):
                        k = keys.popleft()
                        if not keys:
                            del self._waiting[host]
                        return k, host is not None
            if slots is not None:  # else every source was handed out above
                slots.wait(seen)
