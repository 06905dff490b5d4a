"""The live-check runner: matching by kind, one load per source, findings, progress, and the
HTML parse pool; and the progress bar that only a terminal gets."""

from __future__ import annotations

import concurrent.futures
import io
import os
import select
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TextIO

import pytest

from tracecite.checks.live import (
    HTML,
    JSON,
    TEXT,
    NoProgress,
    ParsePool,
    match_quotes,
    run_live_checks,
)
from tracecite.checks.quotes import QuoteCheck
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.progress import BarProgress, progress_for
from tracecite.visible import MAX_FORMATTING, ParseLimitError

NOT_FOUND = (Code.QUOTE_NOT_ON_PAGE, "the page")


# ---- match_quotes ---------------------------------------------------------------------------

def test_text_is_matched_as_is_after_normalising() -> None:
    text = "line one\n\n  <b>Quick</b>\tbrown\u00a0fox"
    assert match_quotes(TEXT, text, ["<b>Quick</b> brown fox", "Quick brown", "quick"]) == [
        True, False, False,
    ]


def test_html_is_matched_on_visible_text() -> None:
    page = "<title>head only</title><p>quick <b>brown</b> fox</p><script>in script</script>"
    assert match_quotes(HTML, page, ["quick brown fox", "head only", "in script"]) == [
        True, False, False,
    ]


def test_json_raw_text_and_each_decoded_string() -> None:
    body = ('{"a": "caf\\u00e9 \\"x\\"", "b": ["quick brown", "fox jumps"],'
            ' "c": {"d": "lazy\\ndog"}}')
    quotes = ['café "x"', '"b": [', "quick brown", "lazy dog", "brown fox", "jumps lazy"]
    assert match_quotes(JSON, body, quotes) == [True, True, True, True, False, False]


def test_json_type_with_a_body_that_is_not_json_matches_raw_text_only() -> None:
    assert match_quotes(JSON, "not {json", ["not {json", "json"]) == [True, True]
    assert match_quotes(JSON, '["caf\\u00e9"', ["café"]) == [False]


def test_html_past_its_parse_budget_raises_a_parse_limit_error() -> None:
    page = "<p>quick brown fox</p>" * 50
    assert match_quotes(HTML, page, ["quick brown fox"]) == [True]
    with pytest.raises(ParseLimitError, match="more than 0 s to parse"):
        match_quotes(HTML, page, ["quick brown fox"], budget=0)
    assert match_quotes(TEXT, page, ["fox"], budget=0) == [True]  # only HTML is parsed


def test_json_nesting_too_deep_for_the_decoder_falls_back_to_raw_text() -> None:
    deep = "[" * 100_000 + '"x"' + "]" * 100_000
    assert match_quotes(JSON, deep, ['"x"', "x"]) == [True, True]


# ---- run_live_checks ------------------------------------------------------------------------

def check(quote: str, target: str, *, record: int = 1, line: int = 3) -> QuoteCheck:
    return QuoteCheck(quote, target, "n.md", line, record=record)


class Loads:
    """A loader serving ``pages`` (target → text or FetchError), counting loads and overlap."""

    def __init__(self, pages: dict[str, str | FetchError], delay: float = 0.0) -> None:
        self.pages = pages
        self.delay = delay
        self.calls: list[str] = []
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def __call__(self, target: str) -> tuple[str, str]:
        with self.lock:
            self.calls.append(target)
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.delay)
            page = self.pages[target]
            if isinstance(page, FetchError):
                raise page
            return TEXT, page
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


def test_each_source_loaded_once_and_every_quote_checked() -> None:
    load = Loads({"a": "alpha beta", "b": "gamma"})
    checks = [check("alpha", "a", record=1), check("zeta", "A", record=2),
              check("gamma", "b", record=3), check("beta", "a", record=4),
              check("delta", "b", record=5)]
    progress = Recorder()
    findings, summary = run_live_checks(checks, load, key=str.lower, concurrency=4,
                                        not_found=NOT_FOUND, progress=progress)
    assert sorted(load.calls) == ["a", "b"]
    # Findings come in the order loads finish; reports sort them.
    assert sorted((f.record or 0, f.code, f.uri, f.file, f.line) for f in findings) == [
        (2, Code.QUOTE_NOT_ON_PAGE, "A", "n.md", 3),
        (5, Code.QUOTE_NOT_ON_PAGE, "b", "n.md", 3),
    ]
    assert all(f.message == "quote is not in the page" for f in findings)
    assert (summary.checked, summary.matched, summary.not_found,
            summary.unavailable) == (5, 3, 2, 0)
    assert progress.events == [("start", 2), "advance", "advance", "stop"]


def test_a_failed_load_makes_every_quote_of_it_unavailable() -> None:
    gone = FetchError(Code.HTTP_STATUS, "HTTP status 404", status=404)
    load = Loads({"a": gone, "b": "text"})
    checks = [check("x", "a", record=1), check("y", "a", record=2), check("text", "b", record=3)]
    findings, summary = run_live_checks(checks, load, concurrency=2, not_found=NOT_FOUND)
    assert sorted((f.record or 0, f.code, f.status, f.uri) for f in findings) == [
        (1, Code.HTTP_STATUS, 404, "a"), (2, Code.HTTP_STATUS, 404, "a"),
    ]
    assert all(f.message == "HTTP status 404" for f in findings)
    assert (summary.checked, summary.matched, summary.unavailable,
            summary.not_found) == (3, 1, 2, 0)


def test_citation_locations_are_kept() -> None:
    quote = QuoteCheck("absent", "u", "t.jsonl", 9, claim=2, citation=3, source_id="s7")
    findings, _ = run_live_checks([quote], Loads({"u": "text"}), concurrency=1,
                                  not_found=NOT_FOUND)
    (finding,) = findings
    assert (finding.file, finding.line, finding.claim, finding.citation, finding.source_id,
            finding.uri, finding.record) == ("t.jsonl", 9, 2, 3, "s7", "u", None)


@pytest.mark.parametrize("concurrency", [1, 3])
def test_loads_in_flight_never_exceed_concurrency(concurrency: int) -> None:
    load = Loads({str(i): "text" for i in range(9)}, delay=0.03)
    run_live_checks([check("text", str(i)) for i in range(9)], load,
                    concurrency=concurrency, not_found=NOT_FOUND)
    assert load.peak == concurrency
    assert sorted(load.calls) == [str(i) for i in range(9)]


def test_nothing_to_check() -> None:
    progress = Recorder()
    findings, summary = run_live_checks([], Loads({}), concurrency=2, not_found=NOT_FOUND,
                                        progress=progress)
    assert findings == [] and summary.checked == 0
    assert progress.events == [("start", 0), "stop"]


def test_unexpected_loader_errors_propagate_and_progress_stops() -> None:
    def broken(target: str) -> tuple[str, str]:
        raise RuntimeError("bug")

    progress = Recorder()
    with pytest.raises(RuntimeError):
        run_live_checks([check("x", "a")], broken, concurrency=1, not_found=NOT_FOUND,
                        progress=progress)
    assert progress.events[-1] == "stop"


# A page that parses only within a generous budget, and one past the formatting-element limit.
SLOW_PAGE = "<p>SECRET quick brown fox</p>" * 50
TOO_MANY_FORMATTING = "<p>" + "".join(f"<b id={i}>" for i in range(MAX_FORMATTING + 1)) + "SECRET"


class KindLoads:
    """A loader serving ``pages``: target → (kind, text)."""

    def __init__(self, pages: dict[str, tuple[str, str]]) -> None:
        self.pages = pages

    def __call__(self, target: str) -> tuple[str, str]:
        return self.pages[target]


@pytest.mark.parametrize("workers", [1, 2], ids=["in-thread", "worker-processes"])
def test_a_page_past_its_parse_budget_makes_its_quotes_tc318(workers: int) -> None:
    load = KindLoads({"slow": (HTML, SLOW_PAGE), "text": (TEXT, SLOW_PAGE)})
    checks = [check("quick brown fox", "slow", record=1), check("absent", "slow", record=2),
              check("quick brown fox", "text", record=3)]
    findings, summary = run_live_checks(checks, load, concurrency=2, not_found=NOT_FOUND,
                                        parse_workers=workers, parse_budget=0.0)
    assert sorted((f.record or 0, f.code, f.uri) for f in findings) == [
        (1, Code.PARSE_LIMIT, "slow"), (2, Code.PARSE_LIMIT, "slow"),
    ]
    assert all(f.message == "the page's markup takes more than 0 s to parse" for f in findings)
    assert all(f.exit == 2 for f in findings)
    assert (summary.checked, summary.matched, summary.unavailable,
            summary.not_found) == (3, 1, 2, 0)


@pytest.mark.parametrize("workers", [1, 2], ids=["in-thread", "worker-processes"])
def test_a_page_past_a_structural_limit_makes_its_quotes_tc318(workers: int) -> None:
    load = KindLoads({"soup": (HTML, TOO_MANY_FORMATTING), "fine": (HTML, SLOW_PAGE)})
    checks = [check("SECRET", "soup", record=1), check("quick brown fox", "fine", record=2)]
    findings, summary = run_live_checks(checks, load, concurrency=1, not_found=NOT_FOUND,
                                        parse_workers=workers)
    (finding,) = findings
    assert (finding.code, finding.record, finding.uri) == (Code.PARSE_LIMIT, 1, "soup")
    assert finding.message == (
        f"the page keeps more than {MAX_FORMATTING} formatting elements open at once")
    assert "SECRET" not in finding.message
    assert (summary.matched, summary.unavailable) == (1, 1)


def test_other_parse_failures_are_bugs_not_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(html: str, *, budget: float) -> str:
        raise RuntimeError("bug")

    monkeypatch.setattr("tracecite.visible.visible_text", broken)
    with pytest.raises(RuntimeError, match="bug"):
        run_live_checks([check("x", "a")], KindLoads({"a": (HTML, "<p>x</p>")}), concurrency=1,
                        not_found=NOT_FOUND, parse_workers=1)


# ---- ParsePool ------------------------------------------------------------------------------

def test_parse_pool_parses_in_the_thread_without_several_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_processes(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no process pool expected")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_processes)
    with ParsePool(workers=1) as pool:
        assert pool.submit(HTML, "<p>a <i>b</i></p>", ["a b"]).result() == [True]
    with ParsePool(workers=4) as pool:
        assert pool.submit(TEXT, "a b", ["a b"]).result() == [True]  # only HTML to workers


def test_parse_pool_uses_worker_processes_for_html() -> None:
    with ParsePool(workers=2) as pool:
        assert pool.submit(HTML, "<p>quick <b>brown</b></p><style>x</style>",
                           ["quick brown", "x"]).result() == [True, False]


class FakeExecutor:
    """Stands in for ProcessPoolExecutor: slow to start, runs jobs inline, records shutdowns."""

    created: list[FakeExecutor] = []  # noqa: RUF012 - reset by each test

    def __init__(self, workers: int, mp_context: Any = None) -> None:
        time.sleep(0.05)  # starting processes takes a while: a window for a race
        self.shut_down = False
        FakeExecutor.created.append(self)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.shut_down = True


def test_parse_pool_starts_one_executor_however_many_threads_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    FakeExecutor.created = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", FakeExecutor)
    pool = ParsePool(workers=2)
    barrier = threading.Barrier(4)
    results: list[list[bool]] = []

    def parse() -> None:
        barrier.wait()
        results.append(pool.submit(HTML, "<p>a</p>", ["a"]).result())

    threads = [threading.Thread(target=parse) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pool.close()
    assert results == [[True]] * 4
    assert len(FakeExecutor.created) == 1
    assert all(executor.shut_down for executor in FakeExecutor.created)


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
