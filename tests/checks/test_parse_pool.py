"""Matching a loaded source by its kind, and the pool of worker processes that parses HTML."""

from __future__ import annotations

import concurrent.futures
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import answer, call, cite, claim, result, source, write_trace
from tests.stopping import run_alone
from tracecite import workers
from tracecite.checks.kinds import MatchKind
from tracecite.checks.parse_pool import ParsePool, Verdict, match_quotes
from tracecite.findings import Diagnosis
from tracecite.visible import ParseLimitError

HTML, JSON, TEXT = MatchKind.HTML, MatchKind.JSON, MatchKind.TEXT


# ---- match_quotes ---------------------------------------------------------------------------

def found(verdicts: list[Verdict]) -> list[bool]:
    """Which quotes were found (a quote not found has its diagnosis instead)."""
    return [v is True for v in verdicts]


def test_text_is_matched_as_is_after_normalising() -> None:
    text = "line one\n\n  <b>Quick</b>\tbrown\u00a0fox"
    assert found(match_quotes(TEXT, text, ["<b>Quick</b> brown fox", "Quick brown", "quick"])
                 ) == [True, False, False]


def test_html_is_matched_on_visible_text() -> None:
    page = "<title>head only</title><p>quick <b>brown</b> fox</p><script>in script</script>"
    assert found(match_quotes(HTML, page, ["quick brown fox", "head only", "in script"])) == [
        True, False, False,
    ]


def test_json_raw_text_and_each_decoded_string() -> None:
    body = ('{"a": "caf\\u00e9 \\"x\\"", "b": ["quick brown", "fox jumps"],'
            ' "c": {"d": "lazy\\ndog"}}')
    quotes = ['café "x"', '"b": [', "quick brown", "lazy dog", "brown fox", "jumps lazy"]
    assert found(match_quotes(JSON, body, quotes)) == [True, True, True, True, False, False]


def test_json_type_with_a_body_that_is_not_json_matches_raw_text_only() -> None:
    assert match_quotes(JSON, "not {json", ["not {json", "json"]) == [True, True]
    assert found(match_quotes(JSON, '["caf\\u00e9"', ["café"])) == [False]


def test_a_quote_not_found_comes_back_with_its_diagnosis_by_kind_of_source() -> None:
    page = "<head><title>Head Only</title></head><p>Quick brown fox</p><script>in script</script>"
    assert match_quotes(HTML, page, ["quick brown fox", "in script", "Quick brown fox"]) == [
        Diagnosis(("case",), quote_chars=15), Diagnosis(("hidden",), quote_chars=9,
                                                        where="script"), True]
    # Text and JSON sources get the text kinds; markup in them is text, never "hidden".
    assert match_quotes(TEXT, "<script>in script</script>", ["In script"]) == [
        Diagnosis(("case",), quote_chars=9)]
    assert match_quotes(JSON, '{"a": ["don\u2019t stop"]}', ["don't stop"]) == [
        Diagnosis(("typography",), quote_chars=10,
                  characters=("U+2019 RIGHT SINGLE QUOTATION MARK",))]


def test_json_string_values_are_diagnosed_apart() -> None:
    # Joined, "quick brown" would run on into "fox"; each string on its own, it is partial.
    verdicts = match_quotes(JSON, '["quick brown", "fox jumps"]', ["quick brown fox"])
    assert verdicts == [Diagnosis(("partial",), quote_chars=15, matched_chars=11,
                                  first_difference=11)]


def test_html_past_its_parse_budget_raises_a_parse_limit_error() -> None:
    page = "<p>quick brown fox</p>" * 50
    assert match_quotes(HTML, page, ["quick brown fox"]) == [True]
    with pytest.raises(ParseLimitError, match="more than 0 s to parse"):
        match_quotes(HTML, page, ["quick brown fox"], budget=0)
    assert match_quotes(TEXT, page, ["fox"], budget=0) == [True]  # only HTML is parsed


def test_json_nesting_too_deep_for_the_decoder_falls_back_to_raw_text() -> None:
    deep = "[" * 100_000 + '"x"' + "]" * 100_000
    assert match_quotes(JSON, deep, ['"x"', "x"]) == [True, True]


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
        assert pool.submit(JSON, '["a b"]', ["a b"]).result() == [True]


def test_work_done_in_the_calling_thread_is_handed_back_settled() -> None:
    seen: list[object] = []
    with ParsePool(workers=1) as pool:
        done = pool.submit(TEXT, "a b", ["a b", "c"])
        done.add_done_callback(seen.append)  # called at once: the work is over
        assert seen == [done] and found(done.result()) == [True, False]
        limited = pool.submit(HTML, "<p>" * 10 + "x", ["x"], budget=0.0)
        with pytest.raises(ParseLimitError):
            limited.result()


def test_a_run_that_parses_no_html_in_workers_never_imports_concurrent_futures(
        tmp_path: Path) -> None:
    """concurrent.futures brings logging: ~11 ms of imports before the first source is sent."""
    import subprocess
    import sys

    trace = write_trace(tmp_path / "t.jsonl", [call(), result(sources=[
        source("s1", "file:a.txt", "a b")]), answer([claim(citations=[cite("s1", "a b")])])])
    (tmp_path / "a.txt").write_text("a b c", encoding="utf-8")
    probe = ("import sys; from tracecite.cli import main; code = main(['verify-files', "
             f"{str(trace)!r}, '--root', {str(tmp_path)!r}, '--no-progress']); "
             "print(code, 'concurrent.futures' in sys.modules, 'logging' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    assert out[-3:] == ["0", "False", "False"]


def test_parse_pool_uses_worker_processes_for_html() -> None:
    with ParsePool(workers=2) as pool:
        assert pool.submit(HTML, "<p>quick <b>brown</b></p><style>x</style>",
                           ["quick brown", "x"]).result() == [
            True, Diagnosis(("hidden",), quote_chars=1, where="style")]


def test_a_parse_limit_in_a_worker_comes_back_as_its_error() -> None:
    with ParsePool(workers=2) as pool:
        parsed = pool.submit(HTML, "<p>quick brown fox</p>" * 50, ["fox"], budget=0)
        with pytest.raises(ParseLimitError, match="more than 0 s to parse"):
            parsed.result()


class FakeExecutor:
    """Stands in for ProcessPoolExecutor: slow to start, runs jobs inline, records shutdowns."""

    created: list[FakeExecutor] = []  # noqa: RUF012 - reset by each test

    def __init__(self, workers: int, mp_context: Any = None, initializer: Any = None) -> None:
        time.sleep(0.05)  # starting processes takes a while: a window for a race
        self.shut_down = False
        self.submitted: list[str] = []  # the names of the jobs, in order
        FakeExecutor.created.append(self)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        self.submitted.append(fn.__name__)
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
    # Made on first use only where workers are not forked (forked ones are started first).
    monkeypatch.setattr("tracecite.workers.start_method", lambda: "forkserver")
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


def test_forked_workers_import_the_parser_only_once_the_run_says_its_requests_are_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two imports of the HTML parser right after the fork would take the cores from the run
    while it sends its first requests: start() forks, prepare() has them import it."""
    FakeExecutor.created = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", FakeExecutor)
    monkeypatch.setattr(workers, "start_method", lambda: "fork")
    with ParsePool(workers=2) as pool:
        pool.start()
        (executor,) = FakeExecutor.created
        assert executor.submitted == ["_nothing"]  # forked, nothing imported yet
        pool.prepare()
        assert executor.submitted == ["_nothing", "_prepare_worker", "_prepare_worker"]
        pool.prepare()  # once only
        assert len(executor.submitted) == 3


def test_a_forkserver_pool_and_a_pool_forked_for_other_sources_prepare_nothing_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    FakeExecutor.created = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", FakeExecutor)
    monkeypatch.setattr(workers, "start_method", lambda: "forkserver")
    with ParsePool(workers=2) as pool:
        pool.start()  # a forkserver's workers import it at once: no fork to wait for
        pool.prepare()
    monkeypatch.setattr(workers, "start_method", lambda: "fork")
    with ParsePool(workers=2) as pool:
        pool.fork_now()
        pool.prepare()
    assert [e.submitted for e in FakeExecutor.created] == [
        ["_prepare_worker", "_prepare_worker"], ["_nothing"]]


def test_a_pool_forked_before_the_inputs_are_read_is_not_forked_again_and_still_prepares(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run forks its parse workers before it reads documents (fork_now); each live check
    then calls start() or fork_now() on that pool: nothing is forked again, and the workers
    still import the parser once the first requests are out, once."""
    FakeExecutor.created = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", FakeExecutor)
    monkeypatch.setattr(workers, "start_method", lambda: "fork")
    with ParsePool(workers=2) as pool:
        assert not pool.launched
        pool.fork_now()
        assert pool.launched
        pool.start()  # the web check
        pool.prepare()
        pool.fork_now()  # the local files' check
        pool.start()
        pool.prepare()
    assert [e.submitted for e in FakeExecutor.created] == [
        ["_nothing", "_prepare_worker", "_prepare_worker"]]


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_closed_parse_pool_takes_no_more_html(monkeypatch: pytest.MonkeyPatch,
                                                method: str) -> None:
    monkeypatch.setattr("tracecite.workers.start_method", lambda: method)
    pool = ParsePool(workers=2)
    pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        pool.submit(HTML, "<p>a</p>", ["a"])


def test_a_pool_whose_workers_would_be_forked_parses_html_here_unless_they_were_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Forking once the run's threads run is never safe: a run that started no workers (it
    cited no HTML) parses an HTML answer in the calling thread, with the same verdicts."""
    FakeExecutor.created = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", FakeExecutor)
    monkeypatch.setattr("tracecite.workers.start_method", lambda: "fork")
    with ParsePool(workers=2) as pool:
        found, missed = pool.submit(HTML, "<p>a <i>b</i></p>", ["a b", "c"]).result()
        assert found is True and missed is not True
        assert FakeExecutor.created == []
        pool.fork_now()
        pool.submit(HTML, "<p>a</p>", ["a"]).result()
    assert [e.submitted for e in FakeExecutor.created] == [["_nothing", "_match_in_worker"]]


_ORPHAN_PROBE = """
import multiprocessing, sys, time
from tracecite.checks.parse_pool import ParsePool
pool = ParsePool(workers=2)
pool.start()
time.sleep(0.5)
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/stat"), reason="reads /proc")
def test_workers_end_when_their_parent_is_killed() -> None:
    """kill -9 of the run gives it no chance to end its workers: they watch their parent."""
    import os
    import signal
    import subprocess
    import sys

    from tests.stopping import env

    run = subprocess.Popen([sys.executable, "-c", _ORPHAN_PROBE], stdout=subprocess.PIPE,
                           text=True, env=env())
    assert run.stdout is not None
    pids = [int(p) for p in run.stdout.readline().split()]
    assert pids
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    from tests.stopping import processes

    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and set(pids) & set(processes()):
        time.sleep(0.05)
    left = sorted(set(pids) & set(processes()))  # a zombie is already dead
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert left == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the workers fork on Linux")
def test_a_parse_worker_that_died_in_the_middle_of_its_answer_fails_the_run() -> None:
    """A parse worker killed while it wrote its answer (the out-of-memory killer, by hand)
    leaves the executor's thread waiting for the rest of the message, and the parse's future
    never ends. The run's wait looks at the workers (``check_workers``, raised after the
    grace), and the pool is then ended, not waited for: the run fails, as a dead worker's
    does, instead of waiting for ever. The worker here writes half an answer and dies."""
    result = run_alone("""
        import time
        from concurrent.futures.process import BrokenProcessPool
        from tracecite.checks import parse_pool
        from tracecite.checks.kinds import MatchKind

        def half_an_answer(*args):
            import os, struct, sys
            answers = sys._getframe(1).f_locals["result_queue"]  # concurrent.futures' worker
            os.write(answers._writer.fileno(), struct.pack("!i", 1000) + b"x")
            os._exit(9)

        parse_pool._match_in_worker = half_an_answer  # the forked workers inherit it
        started = time.monotonic()
        try:
            with parse_pool.ParsePool(2) as pool:
                pool.start()
                parse = pool.submit(MatchKind.HTML, "<p>a page</p>", ["a page"])
                while not parse.done():
                    pool.check_workers()
                    time.sleep(0.1)
        except BrokenProcessPool as error:
            print(f"{error}; the pool ended after {time.monotonic() - started:.1f} s")
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("a worker process ended in the middle of sending a result;")
    assert "Traceback" not in result.stderr
