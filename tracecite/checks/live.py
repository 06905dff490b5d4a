"""Checking quotes against sources loaded now (web pages or local files), each loaded once.

The runner groups the quotes by source and loads every distinct source once on a bounded pool
of threads (fetching waits on the network, so threads overlap it). Turning HTML into visible
text is CPU-bound pure Python, so when there is more than one core it runs in a pool of worker
processes: parsing overlaps fetching and uses every core. A loader thread hands its page to the
workers and goes on to its next source without waiting for the parse; when the workers fall
behind, at most ``concurrency`` pages wait for them and the loaders pause, so at most
``2 × concurrency`` pages are in memory at once, however many sources there are.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from tracecite.checks.quotes import QuoteCheck
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.limits import MAX_TIMEOUT
from tracecite.findings import Counts, Finding
from tracecite.matching import MatchText

if TYPE_CHECKING:  # concurrent.futures is imported when sources are loaded: `check` needs none
    from concurrent.futures import Executor, Future
    from multiprocessing.context import BaseContext

HTML = "html"
JSON = "json"
TEXT = "text"


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


def match_quotes(kind: str, text: str, quotes: Sequence[str], *,
                 budget: float = MAX_TIMEOUT) -> list[bool]:
    """For each normalised quote, whether it is in the source: HTML on its visible text, JSON
    in its raw text or in one of its decoded string values, anything else as it is.

    HTML gets ``budget`` seconds to parse; past it, or past the parser's other limits, this
    raises :class:`~tracecite.visible.ParseLimitError`. A plain function of plain
    values, so a worker process can run it.
    """
    if kind == HTML:
        from tracecite.visible import visible_text

        texts = [MatchText(visible_text(text, budget=budget))]
    elif kind == JSON:
        # Each string value on its own: joined, normalisation would turn the line breaks
        # between values into spaces and let a quote match across two of them.
        texts = [MatchText(text), *(MatchText(value) for value in _json_strings(text))]
    else:
        texts = [MatchText(text)]
    return [any(t.contains(q) for t in texts) for q in quotes]


def _json_strings(text: str) -> list[str]:
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []  # a JSON type whose body is not JSON: the raw text only
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return out


def _return_freed_buffers() -> None:
    """Have glibc give large freed buffers (pages, their pickled copies) back to the system.

    glibc raises its mmap threshold each time a large mmap-ed buffer is freed, so later
    page-sized buffers come from its per-thread heaps, where freed memory mostly stays: peak
    memory then grows with the number of pages (measured on the corpus pages served locally:
    the main process peaked at 84 MB for 125 pages and 163 MB for 750). Setting the threshold,
    even to its default of 128 KiB, turns the adjustment off: 55 MB whatever the number of
    pages. Called after the parse workers are forked, so they keep glibc's default: their
    memory levels off after the largest pages, and a fresh mapping for every page would cost
    them about a tenth more CPU. A no-op on other C libraries.
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


Loader = Callable[[str], tuple[str, str]]
"""Loads one source by its target: ``(kind, text)``; raises :class:`FetchError`.

A loader whose sources are mostly HTML (web pages) may set ``expects_html = True``: the parse
workers then start while its first sources are still loading, instead of after.

A loader that keeps to a limit per host sets ``per_host`` (an int) and ``host_of(target)`` (the
host a target is loaded from, or None): the runner then starts at most ``per_host`` loads of one
host at once and meanwhile goes on with other hosts' sources, instead of leaving its threads
waiting on a busy host.
"""


def _match_in_worker(kind: str, text: str, quotes: Sequence[str], budget: float) -> list[bool]:
    """``match_quotes`` in a parse worker, with the cyclic garbage collector paused.

    html5lib's tree is full of reference cycles, and collections during a parse keep scanning
    the growing tree: pausing them saves about 8% of the parse. A worker runs nothing else
    meanwhile, and the first collection after the parse frees the whole tree.
    """
    import gc

    gc.disable()
    try:
        return match_quotes(kind, text, quotes, budget=budget)
    finally:
        gc.enable()


def _prepare_worker() -> None:
    """Import the HTML parser in a new worker, before its first page arrives."""
    import tracecite.visible  # noqa: F401


class ParsePool:
    """Worker processes for HTML parsing, one per core, started by ``start`` or on first use.

    Workers started by ``start`` while no other thread runs are forked: that takes milliseconds.
    Otherwise ``forkserver`` (where available) starts them from a clean process, which is safe
    while loader threads hold locks but costs a new interpreter (a few tenths of a second). A
    single-core machine parses in the loader thread instead.
    """

    def __init__(self, workers: int | None = None) -> None:
        self._workers = workers if workers is not None else (os.cpu_count() or 1)
        self._executor: Executor | None = None
        self._lock = threading.Lock()  # loader threads ask for the executor at the same time
        self._closed = False

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers now, if parsing would use them; each imports the HTML parser
        while the caller goes on (to load its first pages)."""
        if self._workers < 2:
            return
        executor = self._get_executor()
        for _ in range(self._workers):  # a worker per job while none is idle
            executor.submit(_prepare_worker)

    def _get_executor(self) -> Executor:
        with self._lock:
            if self._closed:
                raise RuntimeError("the parse pool is closed")
            if self._executor is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                methods = multiprocessing.get_all_start_methods()
                context: BaseContext
                if sys.platform == "linux" and threading.active_count() == 1:
                    # Safe: no other thread can hold a lock the child would inherit. (With
                    # "fork", ProcessPoolExecutor forks every worker before its own threads.)
                    context = multiprocessing.get_context("fork")
                elif "forkserver" in methods:
                    context = multiprocessing.get_context("forkserver")
                    # Imported once in the forkserver rather than by every worker.
                    context.set_forkserver_preload(["tracecite.checks.live",
                                                    "tracecite.visible"])
                else:
                    context = multiprocessing.get_context()
                self._executor = ProcessPoolExecutor(self._workers, mp_context=context)
            return self._executor

    def submit(self, kind: str, text: str, quotes: Sequence[str], *,
               budget: float = MAX_TIMEOUT) -> Future[list[bool]]:
        """``match_quotes`` in a worker process when it pays (HTML with 2+ cores); otherwise
        it runs here and the future is already done."""
        from concurrent.futures import Future

        if kind == HTML and self._workers >= 2:
            return self._get_executor().submit(_match_in_worker, kind, text, list(quotes),
                                               budget)
        future: Future[list[bool]] = Future()
        try:
            future.set_result(match_quotes(kind, text, quotes, budget=budget))
        except Exception as error:  # handed to whoever reads the future
            future.set_exception(error)
        return future

    def close(self) -> None:
        """Stop the workers."""
        with self._lock:
            executor, self._executor = self._executor, None
            self._closed = True
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


def run_live_checks(
    checks: Sequence[QuoteCheck],
    load: Loader,
    *,
    key: Callable[[str], str] = lambda target: target,
    concurrency: int,
    not_found: tuple[Code, str],
    progress: Progress | None = None,
    parse_workers: int | None = None,
    parse_budget: float = MAX_TIMEOUT,
) -> tuple[list[Finding], Counts]:
    """Load each distinct source once (``key`` says which targets are the same source) and
    report each quote that is not in it (``not_found``: code and what to call the source) or
    whose source could not be loaded (the loader's :class:`FetchError` code) or parsed within
    ``parse_budget`` seconds and the parser's limits (TC318)."""
    groups: dict[str, list[QuoteCheck]] = defaultdict(list)
    for check in checks:
        groups[key(check.target)].append(check)
    progress = progress or NoProgress()
    findings: list[Finding] = []
    matched = unavailable = fetched = 0
    code, what = not_found

    def settle(group: list[QuoteCheck], outcome: list[bool] | FetchError) -> None:
        nonlocal matched, unavailable, fetched
        if isinstance(outcome, FetchError):
            unavailable += len(group)
            findings.extend(check.unavailable(outcome) for check in group)
            return
        fetched += 1
        for check, found in zip(group, outcome, strict=True):
            if found:
                matched += 1
            else:
                findings.append(check.not_found(code, what))

    with ParsePool(parse_workers) as parser:
        if getattr(load, "expects_html", False):
            parser.start()  # before any thread of ours runs (see ParsePool)
        _return_freed_buffers()  # here, where the pages are fetched (not in the parse workers)
        progress.start(len(groups))
        try:
            _load_and_match(groups, load, parser, concurrency, settle, progress, parse_budget)
        finally:
            progress.stop()
    counts = Counts(checked=len(checks), matched=matched, unavailable=unavailable,
                    not_found=len(checks) - matched - unavailable)
    return findings, counts


def _matched(parsed: Future[list[bool]]) -> list[bool] | FetchError:
    """What a parsed source settles with: its matches, or a TC318 error when its page went past
    a parse limit (the error's message is the parser's own, never page text)."""
    try:
        return parsed.result()
    except Exception as error:
        # Imported here: by the time a parse-limit error is read (raised in this process or
        # unpickled from a worker), its module is loaded; a run without one never needs it.
        from tracecite.visible import ParseLimitError

        if isinstance(error, ParseLimitError):
            return FetchError(Code.PARSE_LIMIT, str(error))
        raise


def _load_and_match(
    groups: dict[str, list[QuoteCheck]],
    load: Loader,
    parser: ParsePool,
    concurrency: int,
    settle: Callable[[list[QuoteCheck], list[bool] | FetchError], None],
    progress: Progress,
    parse_budget: float,
) -> None:
    """Load every group's source on at most ``concurrency`` threads and settle it once matched.

    The loader threads hand each page to the parser and go on to their next source; what they
    finish (a parse to wait for, or an error) comes back to this thread on one queue.
    """
    import queue

    per_host: int | None = getattr(load, "per_host", None)
    host_of: Callable[[str], str | None] = getattr(load, "host_of", lambda target: None)
    sources = _Sources([(k, host_of(group[0].target)) for k, group in groups.items()],
                       per_host)
    done: queue.SimpleQueue[tuple[str, Future[list[bool]] | BaseException]] = (
        queue.SimpleQueue())
    loaders = min(max(1, concurrency), sources.useful_threads())
    # A page handed to the parser holds a slot until it is parsed; when the workers fall
    # behind, loaders wait for one instead of piling up pages: at most one page per loader
    # waits for a parse and each loader holds at most one more, 2 × concurrency in all.
    parse_slots = threading.BoundedSemaphore(max(1, loaders))

    def load_one(k: str) -> None:
        group = groups[k]
        try:
            try:
                kind, text = load(group[0].target)
            finally:
                sources.finished(k)
            parse_slots.acquire()
            try:
                parsed = parser.submit(kind, text, [c.quote for c in group],
                                       budget=parse_budget)
            except BaseException:
                parse_slots.release()
                raise
        except BaseException as error:  # settled (FetchError) or raised (a bug) by the runner
            done.put((k, error))
            return

        def parse_done(future: Future[list[bool]]) -> None:
            parse_slots.release()
            done.put((k, future))

        parsed.add_done_callback(parse_done)

    def loader() -> None:
        # Each load runs in its own call, so no page outlives it here while the next loads.
        while (k := sources.take()) is not None:
            load_one(k)

    threads = [threading.Thread(target=loader, name=f"tracecite-load-{n}", daemon=True)
               for n in range(loaders)]
    for thread in threads:
        thread.start()  # each goes to work at once: the first requests are out meanwhile
    try:
        for _ in range(len(groups)):
            k, outcome = done.get()
            if isinstance(outcome, FetchError):
                settle(groups[k], outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                settle(groups[k], _matched(outcome))
            progress.advance()
    finally:
        sources.close()  # loads not yet started need not run once the run has failed
        for thread in threads:
            thread.join()


class _Sources:
    """Hands sources to loader threads in order, keeping at most ``per_host`` loads of one host
    at once: a thread whose next source's host is busy takes the first one whose host is not.
    Sources without a host (or every source, when ``per_host`` is None) are not limited."""

    def __init__(self, sources: Sequence[tuple[str, str | None]], per_host: int | None) -> None:
        self._limit = per_host or 0  # only ever compared for hosts that are not None
        # Hosts in the order first cited (None: not limited), each with its sources in order.
        self._waiting: dict[str | None, deque[str]] = {}
        for k, host in sources:
            self._waiting.setdefault(host if per_host else None, deque()).append(k)
        self._busy: Counter[str] = Counter()
        self._host: dict[str, str] = {}
        self._changed = threading.Condition()
        self._closed = False

    def useful_threads(self) -> int:
        """How many loads can ever run at once: beyond that, a thread would only wait."""
        return sum(len(keys) if host is None else min(len(keys), self._limit)
                   for host, keys in self._waiting.items())

    def close(self) -> None:
        """Hand nothing more out; every ``take`` returns None."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def take(self) -> str | None:
        """The next source to load (waiting while every host left is busy), or None."""
        with self._changed:
            while not self._closed and self._waiting:
                for host, keys in self._waiting.items():
                    if host is None or self._busy[host] < self._limit:
                        k = keys.popleft()
                        if not keys:
                            del self._waiting[host]
                        if host is not None:
                            self._busy[host] += 1
                            self._host[k] = host
                        return k
                self._changed.wait()
            return None

    def finished(self, k: str) -> None:
        """Source ``k`` is loaded (or failed): its host has room for one more."""
        with self._changed:
            host = self._host.pop(k, None)
            if host is not None:
                self._busy[host] -= 1
                # One slot freed: one waiting thread can use it.
                self._changed.notify()
