"""The loader threads of one live run: each takes sources from the scheduler
(:mod:`tracecite.checks.live.scheduler`), loads them and hands the pages to the parse workers;
what they finish comes back to the run's thread on one queue, as typed messages
(:data:`Message`). docs/design/concurrency.md#how-a-stop-reaches-each says how they start and stop.
"""

from __future__ import annotations

import sys
import threading
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.checks.live.records import Fetched, Loader, Progress
from tracecite.checks.live.scheduler import _Sources
from tracecite.checks.live.tally import Tally
from tracecite.checks.parse_pool import HandedOver, ParsePool, Settled, Verdict
from tracecite.checks.quotes import LoadInfo, QuoteChecks
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.matching import digest
from tracecite.stops import StopToken

if TYPE_CHECKING:  # concurrent.futures is imported when sources are loaded: `check` needs none
    import queue
    from concurrent.futures import Future


@dataclass(frozen=True)
class Parsing:
    """A source loaded and handed to the parser: ``parsed`` is done (the parse callback sends
    this); how it was loaded; for the cache, what it keeps of the load and the quotes matched
    (both None without a cache)."""

    key: str
    parsed: Future[list[Verdict]] | Settled[list[Verdict]]
    info: LoadInfo
    fetched: Fetched | None
    quotes: list[str] | None


@dataclass(frozen=True)
class NotModified:
    """A source that answered 304 to the cache's validators: its stored verdicts stand."""

    key: str
    info: LoadInfo
    fetched: Fetched


@dataclass(frozen=True)
class LoadFailed:
    """A source whose load raised: a :class:`FetchError` is settled as unavailable, anything
    else is a bug the run raises."""

    key: str
    error: BaseException


@dataclass(frozen=True)
class ThreadCrashed:
    """A loader thread failed outside a load (a bug): the run raises ``error`` rather than
    wait for sources that thread would have taken."""

    error: BaseException


Message = Parsing | NotModified | LoadFailed | ThreadCrashed
"""What a loader thread (or a parse callback) sends back to the run's thread."""

_WATCH = 1.0
"""Seconds between two looks at whether any loader thread is still alive."""

_RESTARTS = 3
"""How many times loader threads that all died are replaced (see ``LoaderThreads._next``)."""


LARGE_PAGE = 32 * 1024
"""Characters of a page from which its buffers (the body, the text, its pickled copy for a
parse worker: up to four bytes a character) pass glibc's default mmap threshold of 128 KiB."""


@dataclass(frozen=True)
class LoadLimits:
    """How much a live run does at once: ``concurrency`` sources loading (and as many waiting
    for a parse), each parse within ``parse_budget`` seconds."""

    concurrency: int
    parse_budget: float


class LoaderThreads:
    """One run's loader threads: each takes sources (:class:`_Sources`), loads them and hands
    the pages to the parser; what they finish comes back to the run's thread on one queue.
    ``stop``: the run's stop token, polled by every thread before it takes a source."""

    def __init__(self, loader: Loader, checks: QuoteChecks, groups: dict[str, array[int]],
                 parser: ParsePool, limits: LoadLimits, stop: StopToken) -> None:
        import queue

        self._loader = loader
        self._checks = checks
        self._groups = groups
        self._parser = parser
        self._parse_budget = limits.parse_budget
        self._sources = _Sources([(k, loader.host(checks.target(group[0])))
                                  for k, group in groups.items()], loader.hosts, stop)
        self._done: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self._tally: Tally | None = None
        self._restarts = 0  # loader threads replaced after all of them died (see _next)
        self._threads = min(max(1, limits.concurrency), self._sources.useful_threads())
        # A page handed to the parser holds a slot until it is parsed; when the workers fall
        # behind, loaders wait for one instead of piling up pages: at most ``concurrency``
        # pages wait for a parse and each loader holds at most one more, 2 × concurrency in
        # all. As many slots as the run's concurrency, not its threads: where a host's limit
        # allows fewer threads, the loaders still go on while the workers are starting.
        self._parse_slots = threading.BoundedSemaphore(max(1, limits.concurrency))
        self._buffers_lock = threading.Lock()
        self._buffers_returned = False

    def _large_page(self) -> None:
        """A page of :data:`LARGE_PAGE` characters or more is loaded: the first one has glibc
        give large freed buffers back (:func:`_return_freed_buffers`), here in the process
        that loads the pages, after the parse workers were forked. Not before: a run of small
        pages never needs it, nor its import (ctypes), which would take the GIL from the
        loaders while the first responses come in."""
        with self._buffers_lock:
            if self._buffers_returned:
                return
            self._buffers_returned = True
        _return_freed_buffers()

    def run(self, tally: Tally, progress: Progress) -> None:
        """Load every source, settling each in ``tally`` as it finishes; re-raises a loader's
        or the parser's unexpected exception, once the loader threads have ended (none
        outlives a failed run). On a stop (:class:`KeyboardInterrupt`, which the run turns into
        its result) they are not waited for: they see the stop token and take no other
        source."""
        self._tally = tally  # before the threads start: they read its validators
        threads = self._start_loaders()
        try:
            self._parser.prepare()  # the first requests are out: the workers import the parser
            for _ in range(len(self._groups)):
                self._settle(self._next(threads), tally)
                progress.advance()
        finally:
            self._sources.close()  # the stop token: no load starts once the run is over
            # Loads in flight on a stop are abandoned (daemon threads), never waited for.
            if not isinstance(sys.exc_info()[1], KeyboardInterrupt):
                for thread in threads:
                    thread.join()

    def _settle(self, message: Message, tally: Tally) -> None:
        """Settle one source in ``tally`` from what its loader sent; raise a bug."""
        if isinstance(message, ThreadCrashed):
            raise message.error
        group = self._groups.pop(message.key)  # its load is over: nothing else reads it
        if isinstance(message, LoadFailed):
            if not isinstance(message.error, FetchError):
                raise message.error
            tally.settle(message.key, group, message.error, LoadInfo())
        elif isinstance(message, NotModified):
            tally.settle(message.key, group, message.fetched, message.info)
        else:
            matched = _matched(message.parsed, message.info)
            tally.settle(message.key, group, matched, message.info)
            if (message.quotes is not None and message.fetched is not None
                    and not isinstance(matched, FetchError)):
                tally.remember(message.key, message.quotes, message.fetched, matched)

    def _start_loaders(self) -> list[threading.Thread]:
        """Start the loader threads; each goes to work at once, so the first requests are out
        while the next ones start."""
        threads = [threading.Thread(target=self._load_sources, name=f"tracecite-load-{n}",
                                    daemon=True) for n in range(self._threads)]
        for thread in threads:
            thread.start()
        return threads

    def _next(self, threads: list[threading.Thread]) -> Message:
        """What a loader thread finished next.

        A thread can die before its first line runs (Python's thread start-up itself can
        fail: a tracer such as coverage's can refuse to be installed), and so never take a
        source nor report. When every loader thread is gone, nothing is left to read and
        sources are still waiting to be taken, new threads take them (``threads`` then lists
        them), up to :data:`_RESTARTS` times in a run; after that it is a bug, raised, never a
        wait without end. With every source taken, what is not back yet is in the parser,
        whose future ends, however long the parse takes: it is waited for, unless a parse
        worker is gone and its parse with it (raised by :meth:`ParsePool.check_workers`)."""
        import queue

        while True:
            try:
                return self._done.get(timeout=_WATCH)
            except queue.Empty:
                self._parser.check_workers()
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
            self._done.put(ThreadCrashed(error))

    def _load_one(self, k: str, claimed: bool) -> None:
        group = self._groups[k]
        tally = self._tally
        validators = tally.validators(k) if tally is not None else None
        fetched: Fetched | None = None
        held = None  # a PDF's share of the budget of PDFs loading (tracecite.fetch.body)
        try:
            target = self._checks.target(group[0])
            loaded = (self._loader.load(target, claimed=claimed) if validators is None else
                      self._loader.load(target, claimed=claimed, validators=validators))
            held = loaded.held
            if len(loaded.text) >= LARGE_PAGE and not self._buffers_returned:
                self._large_page()
            if tally is not None and tally.caching:
                fetched = Fetched(loaded.status, loaded.info.final_url, loaded.etag,
                                  loaded.last_modified,
                                  "" if loaded.status == 304 else _digest(loaded.text))
            if validators is not None and fetched is not None and loaded.status == 304:
                self._done.put(NotModified(k, loaded.info, fetched))
                return
            quotes = self._checks.quotes(group)
            kind, info = loaded.kind, loaded.info
            # The page is the parser's from here: this frame keeps no reference to it (a PDF
            # that waits for a worker may wait on disk, docs/guides/pdf.md#limits).
            text = HandedOver(loaded.text, held) if isinstance(loaded.text, bytes) else loaded.text
            del loaded
            self._parse_slots.acquire()
            try:
                parsed = self._parser.submit(kind, text, quotes, budget=self._parse_budget)
            except BaseException:
                self._parse_slots.release()
                raise
            del text
        except BaseException as error:  # settled (FetchError) or raised (a bug) by the run
            if held is not None:  # now, not when the error's traceback is collected
                held.release()
            self._done.put(LoadFailed(k, error))
            return
        kept = quotes if fetched is not None else None  # the cache stores their verdicts

        def parse_done(future: Future[list[Verdict]] | Settled[list[Verdict]]) -> None:
            self._parse_slots.release()
            self._done.put(Parsing(k, future, info, fetched, kept))

        parsed.add_done_callback(parse_done)


def _digest(text: str | bytes) -> str:
    """What the cache keeps of a loaded source: its normalised text's digest, or a PDF's
    bytes' (its text is read in a worker, after the load)."""
    if isinstance(text, bytes):
        import hashlib

        return hashlib.sha256(text).hexdigest()
    return digest(text)


def _matched(parsed: Future[list[Verdict]] | Settled[list[Verdict]], info: LoadInfo
             ) -> list[Verdict] | FetchError:
    """What a parsed source settles with: its matches, or a TC318 error when its page went past
    a parse limit, TC323/TC324 for a PDF that cannot be read (the error's message is the
    parser's or the PDF reader's own, never page text)."""
    from tracecite.pdf.reader import PdfError

    try:
        return parsed.result()
    except PdfError as error:
        return FetchError(error.code, error.reason, final_url=info.final_url,
                          attempts=info.attempts)
    except Exception as error:
        # Imported here: by the time a parse-limit error is read (raised in this process or
        # unpickled from a worker), its module is loaded; a run without one never needs it.
        from tracecite.visible import ParseLimitError

        if isinstance(error, ParseLimitError):
            return FetchError(Code.PARSE_LIMIT, str(error), final_url=info.final_url,
                              attempts=info.attempts)
        raise


KEPT_FREE = 4 * 1024 * 1024
"""Bytes each of glibc's heaps keeps of what it freed, once :func:`_return_freed_buffers` has
run, instead of returning them at once."""


def _return_freed_buffers() -> None:
    """Have glibc give large freed buffers (pages, their pickled copies) back to the system
    (:meth:`LoaderThreads._large_page` calls it once a run, at its first large page).

    glibc raises its mmap threshold each time a large mmap-ed buffer is freed, so later
    page-sized buffers come from its per-thread heaps, where freed memory mostly stays: peak
    memory would then grow with the number of pages. Setting the threshold, even to its
    default of 128 KiB, turns the adjustment off, and peak memory stays flat. Called after the
    parse workers are forked, so they keep glibc's default: their memory levels off after the
    largest pages, and a fresh mapping for every page would cost them CPU. A no-op on other C
    libraries.

    Fixing the threshold fixes the trim threshold too, at 128 KiB: each heap then gave back
    what it freed at once, and the next body's 64 KiB pieces were read into fresh pages, whose
    faults cost more than reading. Each heap now keeps up to :data:`KEPT_FREE` (figure 12's
    ``verify-notes`` of 2 MiB PDFs: 0.63 s against 0.74 s, with the same peak memory in
    figure 3).
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's <malloc.h>
    mallopt(m_mmap_threshold, 128 * 1024)
    mallopt(m_trim_threshold, KEPT_FREE)
