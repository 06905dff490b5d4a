"""The live run: one load per source, findings and counts, progress, parse limits, the loader
threads' limits (threads, hosts, pages waiting for a parse); and the progress bar that only a
terminal gets. The loaders here are test doubles of the Loader protocol."""

from __future__ import annotations

import gc
import io
import os
import queue
import select
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TextIO

import pytest

from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.live import loaders as live
from tracecite.checks.live.records import LiveResult, Loaded, Loader, NoProgress
from tracecite.checks.live.run import LiveRun
from tracecite.checks.parse_pool import ParsePool
from tracecite.checks.quotes import QuoteCheck, QuoteChecks
from tracecite.checks.web import WebLoader
from tracecite.codes import Code
from tracecite.fetch.body import ByteBudget
from tracecite.fetch.errors import FetchError
from tracecite.fetch.hosts import HostSlots
from tracecite.findings import Counts
from tracecite.pdf.reader import PdfReader
from tracecite.progress import BarProgress, progress_for
from tracecite.visible import MAX_FORMATTING

HTML, TEXT = MatchKind.HTML, MatchKind.TEXT


def check(quote: str, target: str, *, record: int = 1, line: int = 3) -> QuoteCheck:
    return QuoteCheck(quote, target, "n.md", line, record=record)


class Loads:
    """A loader serving ``pages`` (target → text, ``Loaded`` or FetchError) with no limit per
    host; targets that differ only in case are one source. Counts loads and their overlap."""

    hosts = None

    def __init__(self, pages: dict[str, str | Loaded | FetchError], delay: float = 0.0, *,
                 kind: SourceKind = SourceKind.WEB, expects_html: bool = False) -> None:
        self.pages = pages
        self.delay = delay
        self.kind = kind
        self.expects_html = expects_html
        self.calls: list[str] = []
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def key(self, target: str) -> str:
        return target.lower()

    def cites_html(self, targets: Iterable[str]) -> bool:
        return True

    def host(self, target: str) -> str | None:
        return None

    def load(self, target: str, *, claimed: bool = False) -> Loaded:
        assert not claimed  # no slots, so nothing is ever claimed
        with self.lock:
            self.calls.append(target)
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.delay)
            page = self.pages[target]
            if isinstance(page, FetchError):
                raise page
            return page if isinstance(page, Loaded) else Loaded(TEXT, page)
        finally:
            with self.lock:
                self.now -= 1


class Recorder:
    """A progress that records what it was told."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def start(self, total: int) -> None:
        self.events.append(("start", total))

    def advance(self) -> None:
        self.events.append("advance")

    def stop(self) -> None:
        self.events.append("stop")


def run(loader: Loader, checks: list[QuoteCheck], *, concurrency: int = 2,
        **options: Any) -> LiveResult:
    options.setdefault("parse_budget", 20.0)
    return LiveRun(loader, concurrency=concurrency, **options).check(checks)


# ---- one load per source: findings and counts -----------------------------------------------

def test_each_source_loaded_once_and_every_quote_checked() -> None:
    load = Loads({"a": "alpha beta", "b": "gamma"})
    checks = [check("alpha", "a", record=1), check("zeta", "A", record=2),
              check("gamma", "b", record=3), check("beta", "a", record=4),
              check("delta", "b", record=5)]
    progress = Recorder()
    result = run(load, checks, concurrency=4, progress=progress)
    assert sorted(load.calls) == ["a", "b"]
    # Findings come in the order loads finish; reports sort them.
    assert sorted((f.record or 0, f.code, f.uri, f.file, f.line) for f in result.findings) == [
        (2, Code.QUOTE_NOT_ON_PAGE, "A", "n.md", 3),
        (5, Code.QUOTE_NOT_ON_PAGE, "b", "n.md", 3),
    ]
    assert all(f.message.startswith("quote is not in the page's visible text; ")
               for f in result.findings)
    assert result.counts == Counts(checked=5, matched=3, not_found=2)
    assert progress.events == [("start", 2), "advance", "advance", "stop"]


def test_a_quote_not_found_is_a_finding_of_the_loaders_kind() -> None:
    load = Loads({"file:a.txt": "alpha"}, kind=SourceKind.FILE)
    result = run(load, [check("alpha", "file:a.txt"), check("beta", "file:a.txt", record=2)])
    ((finding),) = result.findings
    assert (finding.code, finding.message, finding.record) == (
        Code.QUOTE_NOT_IN_FILE, "quote is not in the file; nothing close is in the file (no run "
                                "of half the quote's 4 characters)", 2)


def test_a_failed_load_makes_every_quote_of_it_unavailable() -> None:
    gone = FetchError(Code.HTTP_STATUS, "HTTP status 404", status=404)
    load = Loads({"a": gone, "b": "text"})
    checks = [check("x", "a", record=1), check("y", "a", record=2), check("text", "b", record=3)]
    result = run(load, checks)
    assert sorted((f.record or 0, f.code, f.status, f.uri) for f in result.findings) == [
        (1, Code.HTTP_STATUS, 404, "a"), (2, Code.HTTP_STATUS, 404, "a"),
    ]
    assert all(f.message == "HTTP status 404" for f in result.findings)
    assert result.counts == Counts(checked=3, matched=1, unavailable=2)
    assert sorted(load.calls) == ["a", "b"]  # the failure of one source did not stop another


def test_citation_locations_are_kept() -> None:
    quote = QuoteCheck("absent", "u", "t.jsonl", 9, claim=2, citation=3, source_id="s7")
    (finding,) = run(Loads({"u": "text"}), [quote], concurrency=1).findings
    assert (finding.file, finding.line, finding.claim, finding.citation, finding.source_id,
            finding.uri, finding.record) == ("t.jsonl", 9, 2, 3, "s7", "u", None)


class Counted(QuoteChecks):
    """Checks read by index that count how many are made into objects."""

    def __init__(self, checks: list[QuoteCheck]) -> None:
        self.checks = checks
        self.made: list[int] = []

    def __len__(self) -> int:
        return len(self.checks)

    def check(self, index: int) -> QuoteCheck:
        self.made.append(index)
        return self.checks[index]

    def target(self, index: int) -> str:
        return self.checks[index].target

    def quote(self, index: int) -> str:
        return self.checks[index].quote


def test_only_the_quotes_with_a_finding_are_made_into_checks() -> None:
    """docs/guides/scale.md: a run reads its checks' targets and quotes by index and makes a check
    only for a finding; ``failed`` names the check of each finding, for the archive."""
    gone = FetchError(Code.HTTP_STATUS, "HTTP status 404", status=404)
    checks = Counted([check("alpha", "a", record=1), check("gone", "b", record=2),
                      check("zeta", "a", record=3), check("beta", "a", record=4),
                      check("also gone", "b", record=5)])
    result = run(Loads({"a": "alpha beta", "b": gone}), checks, concurrency=1)
    assert sorted(checks.made) == [1, 2, 4]
    assert len(result.failed) == len(result.findings) == 3
    assert [checks.checks[i].record for i in result.failed] == [f.record
                                                                for f in result.findings]
    assert result.counts == Counts(checked=5, matched=2, not_found=1, unavailable=2)


def test_memory_per_quote_is_a_few_bytes_beyond_its_record() -> None:
    """docs/guides/scale.md: checking 20,000 notes records on 200 pages keeps an index per record,
    the quotes of a page only while it is matched, and no object per quote that matched."""
    import tracemalloc

    from tracecite.checks.quotes import NoteChecks
    from tracecite.inputs.notes import parse_notes

    records = 20_000
    text = "".join(f"claim: c\nquote: word{i} end\nurl: https://example.com/{i % 200}\n\n"
                   for i in range(records))
    checks = NoteChecks(parse_notes(text, "n.md").records)
    pages = {f"https://example.com/{n}": " ".join(f"word{i} end" for i in range(n, records, 200))
             for n in range(200)}
    loader = Loads(dict(pages))
    del text
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = run(loader, checks, concurrency=2, parse_workers=1)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert result.counts == Counts(checked=records, matched=records)
    assert peak / records < 40, f"{peak / records:.0f} bytes a record"


@pytest.mark.parametrize("concurrency", [1, 3])
def test_loads_in_flight_never_exceed_concurrency(concurrency: int) -> None:
    load = Loads({str(i): "text" for i in range(9)}, delay=0.03)
    run(load, [check("text", str(i)) for i in range(9)], concurrency=concurrency)
    assert load.peak == concurrency
    assert sorted(load.calls) == [str(i) for i in range(9)]


def test_nothing_to_check() -> None:
    progress = Recorder()
    result = run(Loads({}), [], progress=progress)
    assert result == LiveResult((), Counts())
    assert progress.events == [("start", 0), "stop"]


class Broken(Loads):
    """A loader with a bug: every load raises RuntimeError."""

    def load(self, target: str, *, claimed: bool = False) -> Loaded:
        raise RuntimeError("bug")


def test_unexpected_loader_errors_propagate_and_progress_stops() -> None:
    progress = Recorder()
    with pytest.raises(RuntimeError):
        run(Broken({}), [check("x", "a")], concurrency=1, progress=progress)
    assert progress.events[-1] == "stop"


@pytest.mark.parametrize("expects_html", [True, False])
def test_a_loader_that_expects_html_starts_the_parse_workers_first(
    monkeypatch: pytest.MonkeyPatch, expects_html: bool,
) -> None:
    loading: list[bool] = []  # for each start: whether a loader thread was running then

    def start(self: ParsePool) -> None:
        loading.append(any(t.name.startswith("tracecite-load") for t in threading.enumerate()))

    monkeypatch.setattr(ParsePool, "start", start)
    run(Loads({"a": "text"}, expects_html=expects_html), [check("text", "a")])
    assert loading == ([False] if expects_html else [])


class NamedLoads(Loads):
    """Loads whose sources are HTML unless named ``.pdf``, deciding as the web loader does
    whether a run cites HTML."""

    def cites_html(self, targets: Iterable[str]) -> bool:
        return WebLoader.cites_html(targets)


def test_a_web_run_whose_links_all_name_pdfs_forks_no_html_workers_yet_parses_html_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[str] = []
    monkeypatch.setattr(ParsePool, "start", lambda self: started.append("start"))
    monkeypatch.setattr(ParsePool, "fork_now", lambda self: started.append("fork"))
    monkeypatch.setattr(ParsePool, "forks", property(lambda self: True))

    def no_pool(self: ParsePool) -> None:
        raise AssertionError("a worker pool was made with the run's threads running")

    monkeypatch.setattr(ParsePool, "_get_pool", no_pool)
    # A link named .pdf that answers with an HTML page (a landing page, an error page).
    page = Loaded(MatchKind.HTML, "<p>alpha <b>beta</b></p>")
    result = run(NamedLoads({"r/a.pdf": page}, expects_html=True),
                 [check("alpha beta", "r/a.pdf"), check("gamma", "r/a.pdf", record=2)],
                 parse_workers=2)
    assert started == []  # no HTML parse worker: none of the links is expected to be HTML
    assert [(f.record, f.code) for f in result.findings] == [(2, Code.QUOTE_NOT_ON_PAGE)]


def test_a_pdf_gives_its_loading_budget_back_before_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The loader's reservation (tracecite.fetch.body) goes to the parse pool with the body,
    # which gives it back once it counts the body itself, before any worker reads it.
    budgets = [ByteBudget(100) for _ in range(3)]  # one each, to tell whose is held
    pages = {f"r/{n}.pdf": Loaded(MatchKind.PDF, b"%PDF-1.7 " + bytes([n]),
                                  held=budget.reserve(10))
             for n, budget in enumerate(budgets)}
    held_when_read: dict[int, int] = {}

    def read(reader: PdfReader, body: Callable[[], bytes], quotes: Any) -> tuple[str, ...]:
        n = body()[-1]
        held_when_read[n] = budgets[n].used
        return ("alpha beta",)

    monkeypatch.setattr(PdfReader, "find_quotes_of", read)
    monkeypatch.setattr(PdfReader, "start", lambda self: None)
    result = run(NamedLoads(dict(pages)), [check("alpha beta", t, record=n)
                                           for n, t in enumerate(pages, 1)])
    assert result.findings == ()
    assert held_when_read == {0: 0, 1: 0, 2: 0}  # the pages dict still has every Loaded


def test_a_pdf_that_cannot_be_handed_over_gives_its_loading_budget_back_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A bug after the load (here the hand-over) ends the run; the body's reservation must not
    # wait for the error's traceback to be collected, or loads waiting for room would hang.
    budget = ByteBudget(100)
    page = Loaded(MatchKind.PDF, b"%PDF-1.7", held=budget.reserve(10))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("broken hand-over")

    monkeypatch.setattr(ParsePool, "submit", broken)
    gc.disable()
    try:
        with pytest.raises(RuntimeError, match="broken hand-over"):
            run(NamedLoads({"r/a.pdf": page}), [check("x", "r/a.pdf")])
        assert budget.used == 0
    finally:
        gc.enable()


def test_a_web_run_with_any_link_not_named_pdf_starts_the_html_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[str] = []
    monkeypatch.setattr(ParsePool, "start", lambda self: started.append("start"))
    run(NamedLoads({"r/a.pdf": "x", "r/b": "y"}, expects_html=True),
        [check("x", "r/a.pdf"), check("y", "r/b", record=2)])
    assert started == ["start"]


def test_freed_buffers_are_returned_once_the_first_large_page_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its import (ctypes) must not delay the first requests: it runs in a loader thread, once a
    # run, when a page large enough for glibc's mmap threshold comes; small pages never need it.
    loading: list[bool] = []

    def returned() -> None:
        loading.append(any(t.name.startswith("tracecite-load") for t in threading.enumerate()))

    monkeypatch.setattr(live, "_return_freed_buffers", returned)
    run(Loads({"a": "text", "b": "text b"}, delay=0.2), [check("text", "a"), check("b", "b")])
    assert loading == []
    large = "text " * (live.LARGE_PAGE // 5 + 1)
    run(Loads({"a": large, "b": large, "c": "text"}, delay=0.2),
        [check("text", "a"), check("text", "b"), check("text", "c")])
    assert loading == [True]


# ---- parse limits ---------------------------------------------------------------------------

# A page that parses only within a generous budget, and one past the formatting-element limit.
SLOW_PAGE = "<p>SECRET quick brown fox</p>" * 50
TOO_MANY_FORMATTING = "<p>" + "".join(f"<b id={i}>" for i in range(MAX_FORMATTING + 1)) + "SECRET"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_buffers_go_back_at_once_but_each_heap_keeps_a_few_mib(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ctypes

    calls: list[tuple[int, int]] = []

    class Libc:
        def mallopt(self, option: int, value: int) -> int:
            calls.append((option, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Libc())
    live._return_freed_buffers()
    # M_MMAP_THRESHOLD at its default (fixed), M_TRIM_THRESHOLD above the pieces of a body
    assert calls == [(-3, 128 * 1024), (-1, live.KEPT_FREE)]


@pytest.mark.parametrize("workers", [1, 2], ids=["in-thread", "worker-processes"])
def test_a_page_past_its_parse_budget_makes_its_quotes_tc318(workers: int) -> None:
    load = Loads({"slow": Loaded(HTML, SLOW_PAGE), "text": Loaded(TEXT, SLOW_PAGE)})
    checks = [check("quick brown fox", "slow", record=1), check("absent", "slow", record=2),
              check("quick brown fox", "text", record=3)]
    result = run(load, checks, parse_workers=workers, parse_budget=0.0)
    assert sorted((f.record or 0, f.code, f.uri) for f in result.findings) == [
        (1, Code.PARSE_LIMIT, "slow"), (2, Code.PARSE_LIMIT, "slow"),
    ]
    assert all(f.message == "the page's markup takes more than 0 s to parse"
               for f in result.findings)
    assert all(f.exit == 2 for f in result.findings)
    assert result.counts == Counts(checked=3, matched=1, unavailable=2)


@pytest.mark.parametrize("workers", [1, 2], ids=["in-thread", "worker-processes"])
def test_a_page_past_a_structural_limit_makes_its_quotes_tc318(workers: int) -> None:
    load = Loads({"soup": Loaded(HTML, TOO_MANY_FORMATTING), "fine": Loaded(HTML, SLOW_PAGE)})
    checks = [check("SECRET", "soup", record=1), check("quick brown fox", "fine", record=2)]
    result = run(load, checks, concurrency=1, parse_workers=workers)
    (finding,) = result.findings
    assert (finding.code, finding.record, finding.uri) == (Code.PARSE_LIMIT, 1, "soup")
    assert finding.message == (
        f"the page keeps more than {MAX_FORMATTING} formatting elements open at once")
    assert "SECRET" not in finding.message
    assert (result.counts.matched, result.counts.unavailable) == (1, 1)


def test_other_parse_failures_are_bugs_not_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(html: str, *, budget: float) -> str:
        raise RuntimeError("bug")

    monkeypatch.setattr("tracecite.visible.parse_visible", broken)
    with pytest.raises(RuntimeError, match="bug"):
        run(Loads({"a": Loaded(HTML, "<p>x</p>")}), [check("x", "a")], concurrency=1,
            parse_workers=1)


# ---- the loader threads: hosts and pages waiting for a parse --------------------------------

class HostLoads:
    """A loader whose targets' first letter is their host (none for targets starting with
    "-"), with ``per_host`` request slots that its loads count on as the fetcher's do; records
    the loads in flight and whether each came with its slot claimed. With ``wait_for``, each
    load of another host waits (up to 5 s) until the ``wait_for`` load has started, and records
    whether it did; with ``leak``, that target's load raises (a bug) without freeing its slot."""

    kind = SourceKind.WEB
    expects_html = False

    def __init__(self, per_host: int, wait_for: str = "", leak: str = "") -> None:
        self.hosts = HostSlots(per_host)
        self.wait_for = wait_for
        self.leak = leak
        self.started = threading.Event()
        self.lock = threading.Lock()
        self.now: Counter[str | None] = Counter()
        self.peak: Counter[str | None] = Counter()
        self.total_peak = 0
        self.overlapped: list[bool] = []
        self.claimed: dict[str, bool] = {}

    def key(self, target: str) -> str:
        return target

    def host(self, target: str) -> str | None:
        return None if target.startswith("-") else target[0]

    def cites_html(self, targets: Iterable[str]) -> bool:
        return True

    def load(self, target: str, *, claimed: bool = False) -> Loaded:
        host = self.host(target)
        self.claimed[target] = claimed
        if target == self.leak:
            raise RuntimeError("bug")
        slot: AbstractContextManager[None] = nullcontext()
        if host is not None:
            slot = (self.hosts.claimed(host) if claimed
                    else self.hosts.hold(host, time.monotonic() + 5, 5))
        with slot:
            return self._load(target, host)

    def _load(self, target: str, host: str | None) -> Loaded:
        with self.lock:
            self.now[host] += 1
            self.peak[host] = max(self.peak[host], self.now[host])
            self.total_peak = max(self.total_peak, sum(self.now.values()))
        try:
            if target == self.wait_for:
                self.started.set()
            elif self.wait_for:
                self.overlapped.append(self.started.wait(5))
            else:
                time.sleep(0.02)
            return Loaded(TEXT, "page")
        finally:
            with self.lock:
                self.now[host] -= 1


def quotes_for(*targets: str) -> list[QuoteCheck]:
    return [QuoteCheck("page", target, "n.md", 3, record=i) for i, target in enumerate(targets)]


def test_the_runner_goes_on_to_other_hosts_while_one_is_busy() -> None:
    # a1 waits for b1 to start: with one slot per host, the second thread must skip a2 and a3.
    load = HostLoads(per_host=1, wait_for="b1")
    result = run(load, quotes_for("a1", "a2", "a3", "b1"), concurrency=2)
    assert result.counts.matched == 4
    assert load.overlapped[0] is True
    assert load.peak == {"a": 1, "b": 1}
    assert load.claimed == {"a1": True, "a2": True, "a3": True, "b1": True}
    assert load.hosts.in_flight("a") == load.hosts.in_flight("b") == 0


def test_sources_without_a_host_are_not_limited_per_host() -> None:
    load = HostLoads(per_host=1)
    run(load, quotes_for("-1", "-2", "-3", "a1", "a2"), concurrency=3)
    assert load.peak[None] >= 2
    assert load.peak["a"] == 1
    assert load.total_peak <= 3
    assert load.claimed == {"-1": False, "-2": False, "-3": False, "a1": True, "a2": True}


def test_no_more_threads_than_the_hosts_can_use() -> None:
    names: set[str] = set()

    class Named(HostLoads):
        def _load(self, target: str, host: str | None) -> Loaded:
            names.add(threading.current_thread().name)
            return super()._load(target, host)

    run(Named(per_host=2), quotes_for(*(f"a{i}" for i in range(8))), concurrency=6)
    assert len(names) == 2  # one host, two slots: a third thread could only wait


def test_a_bug_while_threads_wait_for_a_host_ends_the_run() -> None:
    # a1's load fails without freeing its slot: the thread waiting for host a must still be
    # woken when the run fails, not wait for a slot that never frees.
    load = HostLoads(per_host=1, leak="a1")
    errors: queue.SimpleQueue[BaseException] = queue.SimpleQueue()

    def target() -> None:
        try:
            run(load, quotes_for("a1", "a2", "-1"), concurrency=2)
        except BaseException as error:
            errors.put(error)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "the run hung on a host slot"
    assert isinstance(errors.get_nowait(), RuntimeError)


def _most_pages_waiting_for_a_parse(monkeypatch: pytest.MonkeyPatch, *, concurrency: int,
                                    sources: int, parse_seconds: float, host: str,
                                    must_claim: bool) -> int:
    """Run ``sources`` instant loads on one host allowing one thread, each page parsed in
    ``parse_seconds`` by one slow stand-in worker; the most pages loaded and not yet parsed
    at once. ``must_claim``: the loads must come with the host's slot already taken."""
    lock = threading.Lock()
    unparsed: list[int] = [0]  # pages loaded and not yet parsed
    peak: list[int] = [0]
    pending: queue.SimpleQueue[Future[list[bool]]] = queue.SimpleQueue()

    class Instant(HostLoads):
        def load(self, target: str, *, claimed: bool = False) -> Loaded:
            assert claimed or not must_claim
            with self.hosts.claimed(host) if must_claim else nullcontext(), lock:
                unparsed[0] += 1
                peak[0] = max(peak[0], unparsed[0])
            return Loaded(HTML, "<p>page</p>")

    def slow_submit(self: ParsePool, kind: MatchKind, text: str, quotes: list[str],
                    **options: object) -> Future[list[bool]]:
        future: Future[list[bool]] = Future()
        pending.put(future)
        return future

    def parser() -> None:
        for _ in range(sources):
            future = pending.get(timeout=10)
            time.sleep(parse_seconds)
            with lock:
                unparsed[0] -= 1
            future.set_result([True])

    monkeypatch.setattr(ParsePool, "submit", slow_submit)
    worker = threading.Thread(target=parser, daemon=True)
    worker.start()
    result = run(Instant(per_host=1), quotes_for(*(f"{host}{i}" for i in range(sources))),
                 concurrency=concurrency, parse_workers=1)
    worker.join(10)
    assert result.counts.matched == sources
    return peak[0]


def test_pages_waiting_for_a_slow_parse_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Loads are instant and parses slow: loaders fill every parse slot (one per loader), then
    # each holds one more page, and there they wait: 2 × concurrency pages at most.
    peak = _most_pages_waiting_for_a_parse(monkeypatch, concurrency=2, sources=12,
                                           parse_seconds=0.01, host="-", must_claim=False)
    assert peak == 2 * 2


def test_pages_may_wait_for_the_parse_workers_as_many_as_the_concurrency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One host allows one thread, the run four sources at once: while the workers are slow
    # (starting, say), the thread goes on loading until four pages wait for them, not one.
    peak = _most_pages_waiting_for_a_parse(monkeypatch, concurrency=4, sources=12,
                                           parse_seconds=0.02, host="a", must_claim=True)
    assert peak == 4 + 1  # four waiting for a parse, one more in the thread's hand


class LostWorker(ParsePool):
    """A parse pool whose worker died in the middle of its answer: the parse's future never
    ends, and a look at the workers says one is gone."""

    def __init__(self) -> None:
        super().__init__(1)
        self.looks = 0

    def submit(self, kind: MatchKind, text: Any, quotes: Any, *, budget: float = 0.0
               ) -> Future[Any]:
        return Future()

    def check_workers(self) -> None:
        from concurrent.futures.process import BrokenProcessPool

        self.looks += 1
        raise BrokenProcessPool("a worker process ended in the middle of sending a result")


def test_a_parse_lost_with_its_worker_fails_the_run_instead_of_waiting_for_it() -> None:
    from concurrent.futures.process import BrokenProcessPool

    from tests.live_fixtures import run_guarded

    pool = LostWorker()
    live = LiveRun(Loads({"a": "alpha"}, kind=SourceKind.WEB), concurrency=2, parse_budget=20.0)
    with pytest.raises(BrokenProcessPool):
        run_guarded(lambda: len(live.check([check("alpha", "a")], parser=pool).findings),
                    seconds=10)
    assert pool.looks == 1


# ---- the progress bar -----------------------------------------------------------------------

def test_progress_bar_on_a_pty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    master, slave = os.openpty()
    stream: TextIO = open(slave, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        progress = progress_for(stream, label="fetching pages")
        assert isinstance(progress, BarProgress)
        progress.start(2)
        progress.advance()
        progress.advance()
        progress.stop()
        stream.flush()
        shown = _read_all(master)
    finally:
        stream.close()
        os.close(master)
    assert "fetching pages" in shown
    assert "2/2" in shown


def _read_all(fd: int) -> str:
    out = b""
    while select.select([fd], [], [], 0.2)[0]:
        try:
            piece = os.read(fd, 65536)
        except OSError:
            break
        if not piece:
            break
        out += piece
    return out.decode("utf-8", "replace")


def test_no_progress_bar_off_a_terminal_or_when_disabled() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(progress_for(io.StringIO()), NoProgress)
    assert isinstance(progress_for(Tty(), enabled=False), NoProgress)
    assert isinstance(progress_for(Tty()), BarProgress)


def test_no_progress_bar_without_a_usable_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    closed = io.StringIO()
    closed.close()
    assert isinstance(progress_for(closed), NoProgress)
    monkeypatch.setattr("sys.stderr", None)  # python started with stderr closed (2>&-)
    assert isinstance(progress_for(), NoProgress)


def test_a_loader_thread_that_fails_outside_a_load_ends_the_run_instead_of_hanging(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a loader thread (here, in the scheduler) is raised by the run: the run's thread
    must never wait for a result that no thread will deliver."""
    from tracecite.checks.live import scheduler as live

    def broken_take(self: object) -> None:
        raise RuntimeError("the scheduler broke")

    monkeypatch.setattr(live._Sources, "take", broken_take)
    loader = Loads({"a": "text"})
    done: list[BaseException] = []

    def run() -> None:
        try:
            LiveRun(loader, concurrency=2, parse_budget=5).check([check("text", "a")])
        except BaseException as error:
            done.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the run hung"
    assert [str(e) for e in done] == ["the scheduler broke"]


def _run_with_stillborn_loaders(monkeypatch: pytest.MonkeyPatch, stillborn: int
                                ) -> tuple[list[LiveResult], list[BaseException], int]:
    """A run in which the first ``stillborn`` loader threads die in Python's own start-up,
    before their target runs (as under a tracer that cannot be installed): what it returned
    or raised, and how many loader threads were started in all."""
    real = threading.Thread
    started: list[int] = []

    class Loader(real):
        def run(self) -> None:
            started.append(1)
            if len(started) > stillborn:
                super().run()  # the target never runs in the stillborn ones

    results: list[LiveResult] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(LiveRun(Loads({"a": "text", "b": "more text"}), concurrency=2,
                                   parse_budget=5).check([check("text", "a"),
                                                          check("gone", "b")]))
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)  # made before the patch: a real one
    monkeypatch.setattr(live.threading, "Thread", Loader)
    monkeypatch.setattr(live, "_WATCH", 0.05)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the run hung"
    return results, errors, len(started)


def test_loader_threads_that_die_before_they_start_are_replaced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every loader thread died before its first line: new ones load the sources, and the
    run's result is what it would have been."""
    results, errors, started = _run_with_stillborn_loaders(monkeypatch, stillborn=2)
    assert errors == []
    assert [(r.counts.checked, r.counts.matched, r.counts.not_found) for r in results] == [
        (2, 1, 1)]
    assert [f.code for f in results[0].findings] == [Code.QUOTE_NOT_ON_PAGE]
    assert started == 4


def test_loader_threads_that_always_die_end_the_run_instead_of_hanging(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Replaced a few times and dying still, they are a bug: raised, never waited for."""
    results, errors, started = _run_with_stillborn_loaders(monkeypatch, stillborn=10**6)
    assert results == []
    assert [str(e) for e in errors] == ["the loader threads ended with sources still to load"]
    assert started == 2 * (1 + live._RESTARTS)


def test_a_last_parse_slower_than_the_watch_is_waited_for(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every source handed out and every loader thread done, a page still in the parser is
    not a loader that died: its verdicts are waited for, however long the parse takes."""
    pending: queue.SimpleQueue[Future[list[bool]]] = queue.SimpleQueue()

    def slow_submit(self: ParsePool, kind: MatchKind, text: str, quotes: list[str],
                    **options: object) -> Future[list[bool]]:
        future: Future[list[bool]] = Future()
        pending.put(future)
        return future

    def parser() -> None:
        future = pending.get(timeout=10)
        time.sleep(0.05 * (live._RESTARTS + 3))  # longer than every replacement's watch
        future.set_result([True])

    monkeypatch.setattr(ParsePool, "submit", slow_submit)
    monkeypatch.setattr(live, "_WATCH", 0.05)
    worker = threading.Thread(target=parser, daemon=True)
    worker.start()
    result = run(Loads({"a": Loaded(HTML, "<p>text</p>")}), [check("text", "a")],
                 parse_workers=1)
    worker.join(10)
    assert (result.counts.checked, result.counts.matched) == (1, 1)
