"""``--jobs N`` (docs/guides/scale.md): offline checks of many files in N processes (this one and N
- 1 workers), their report the same as a serial run's, in input order; few or small files read here;
a bug or a dead worker is TC900, never a hang."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import (
    Cli,
    answer,
    call,
    cite,
    claim,
    note,
    result,
    source,
    write_notes,
    write_trace,
)
from tracecite import jobs
from tracecite.run import inputs as commands
from tracecite.run.assemble import run_checks
from tracecite.run.inputs import read_input, read_inputs
from tracecite.run.plan import Plan
from tracecite.settings import resolve
from tracecite.stops import Stopped


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Any inputs, however small, are read in worker processes when jobs > 1; the numbers of
    workers asked for are listed."""
    monkeypatch.setattr(jobs, "MIN_PARALLEL_BYTES", 0)
    asked: list[int] = []
    parallel = jobs._parallel

    def spy(read: Any, items: Any, sizes: Any, workers: int, method: str | None = None) -> Any:
        asked.append(workers)
        return parallel(read, items, sizes, workers, method)

    monkeypatch.setattr(jobs, "_parallel", spy)
    return asked


def mixed_inputs(root: Path) -> list[str]:
    """Good and bad notes and traces, of varied sizes: format errors, evidence misses with
    diagnoses, a missing file, and a folder of traces."""
    long = "The quick brown fox jumps over the lazy dog. " * 2000
    write_notes(root / "good.notes", note() + "\n" + note(quote="lazy dog"))
    write_notes(root / "bad.notes", "claim: c\nquote: q\nurl: https://example.com/\ncolour: x\n")
    write_trace(root / "good.jsonl", [call(), result(), answer()])
    write_trace(root / "big.jsonl", [call(), result(sources=[source(content=long)]),
                                     answer(claims=[claim(citations=[cite(quote="lazy dog")])])])
    write_trace(root / "miss.jsonl", [call(), result(), answer(claims=[
        claim(citations=[cite(quote="QUICK BROWN FOX"), cite(quote="quick brown cat")]),
        claim(citations=[])])])
    write_trace(root / "broken.jsonl", [call(), "{not json", answer()])
    write_trace(root / "unknown.jsonl", [call(), result(), answer(claims=[
        claim(citations=[cite(source_id="nowhere")])])])
    folder = root / "runs"
    folder.mkdir()
    for n in range(12):
        quote = "quick brown fox" if n % 3 else "slow green turtle"
        write_trace(folder / f"run-{n:02d}.trace.jsonl", [
            call(), result(sources=[source(content=long[: 100 * (n + 1) ** 2])]),
            answer(claims=[claim(citations=[cite(quote=quote)])])])
    return [str(root / name) for name in ("good.notes", "big.jsonl", "bad.notes", "miss.jsonl",
                                          "missing.jsonl", "broken.jsonl", "good.jsonl",
                                          "unknown.jsonl")] + [str(folder)]


def test_a_parallel_report_is_the_serial_one_byte_for_byte(
        tmp_path: Path, cli: Cli, pooled: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = mixed_inputs(tmp_path)
    serial = cli("check", "--evidence", "--json", "--jobs", "1", *paths)
    assert pooled == []  # --jobs 1 reads here, whatever the size
    parallel = cli("check", "--evidence", "--json", "--jobs", "4", *paths)
    assert pooled == [4]
    assert parallel.out == serial.out
    assert (parallel.exit, parallel.err) == (serial.exit, serial.err) == (1, "")
    codes = set(serial.codes())
    assert {"TC101", "TC111", "TC120", "TC131"} <= codes
    files = [f["file"] for f in serial.json()["findings"]]
    assert files.index(str(tmp_path / "bad.notes")) < files.index(str(tmp_path / "miss.jsonl"))


def test_evidence_misses_and_their_diagnoses_come_back_in_order(
        tmp_path: Path, cli: Cli, pooled: list[int]) -> None:
    paths = [p for p in mixed_inputs(tmp_path)
             if not p.endswith(("missing.jsonl", "broken.jsonl", "unknown.jsonl", ".notes"))]
    serial = cli("check", "--evidence", "--json", "--jobs", "1", *paths)
    parallel = cli("check", "--evidence", "--json", "--jobs", "3", *paths)
    assert pooled == [3]
    assert parallel.out == serial.out
    findings = serial.json()["findings"]
    assert serial.exit == 2
    assert [f["code"] for f in findings].count("TC202") == 6  # 2 in miss.jsonl, 4 in runs/
    assert any(f.get("diagnosis") for f in findings)
    assert serial.json()["summary"]["captured"]["checked"] == 2 + 1 + 1 + 12


def test_citations_of_sources_not_captured_come_back_from_the_workers(
        tmp_path: Path, cli: Cli, pooled: list[int]) -> None:
    paths = [str(write_trace(tmp_path / f"t{n}.jsonl", [
        call(), result(sources=[source(content=None if n % 2 else "quick brown fox",
                                       uri=f"https://example.com/{n}")]),
        answer()])) for n in range(6)]
    serial = cli("check", "--evidence", "--json", "--jobs", "1", *paths)
    parallel = cli("check", "--evidence", "--json", "--jobs", "3", *paths)
    assert pooled == [3]
    assert parallel.out == serial.out
    assert serial.exit == 0
    assert serial.codes() == ["TC203"] * 3
    assert serial.json()["summary"]["captured"]["skipped"] == 3
    inputs = read_inputs((), paths, evidence=True, keep_uris=True, jobs=2)
    assert [uri for _, uri, _ in inputs.cited()] == [f"https://example.com/{n}" for n in range(6)]


def test_a_verify_command_gets_the_uris_it_checks_from_the_workers(
        tmp_path: Path, pooled: list[int]) -> None:
    paths = [str(write_trace(tmp_path / f"t{n}.jsonl", [
        call(), result(sources=[source(uri=f"file:doc{n}.txt")]), answer()])) for n in range(5)]
    inputs = read_inputs((), paths, evidence=True, keep_uris=True, jobs=2)
    assert pooled == [2]
    assert [uri for _, uri, _ in inputs.cited()] == [f"file:doc{n}.txt" for n in range(5)]


def test_a_worker_sends_back_no_source_index(tmp_path: Path) -> None:
    """Where each source is in the file is for reading it: a result the parent keeps (or a
    worker sends back) holds none of it."""
    path = write_trace(tmp_path / "t.jsonl", [call(), result(sources=[
        source(f"s{n}", content="quick brown fox") for n in range(1, 50)]), answer()])
    for evidence in (True, False):
        checked = read_input((str(path), "trace"), evidence=evidence, keep_uris=True)
        assert len(checked.scan.sources) == 0  # type: ignore[union-attr]
        sent = pickle.loads(pickle.dumps(checked))
        assert (sent.findings, list(sent.scan.citations)) == (checked.findings,
                                                           list(checked.scan.citations))


def test_without_live_checks_a_result_keeps_only_the_number_of_its_citations(
        tmp_path: Path) -> None:
    """Only the live checks read a trace's citations (their quotes are most of a result's
    bytes): an offline run's results keep their number, which the summary counts."""
    path = write_trace(tmp_path / "t.jsonl", [call(), result(sources=[source()]), answer(
        claims=[claim(citations=[cite(), cite()]), claim(citations=[cite()])])])
    kept = read_input((str(path), "trace"), evidence=True, keep_uris=True)
    offline = read_input((str(path), "trace"), evidence=True, keep_uris=False)
    assert len(kept.scan.citations) == 3  # type: ignore[union-attr]
    assert list(offline.scan.citations) == []  # type: ignore[union-attr]
    assert offline.scan.citation_count == 3  # type: ignore[union-attr]
    assert len(pickle.dumps(offline)) < len(pickle.dumps(kept))
    report = run_checks(Plan("check", evidence=True), (), [str(path)], resolve("check", {}))
    assert report.summary.citations == 3


def test_few_or_small_files_are_read_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    parallel: list[int] = []
    monkeypatch.setattr(jobs, "_parallel", lambda *args: parallel.append(1) or jobs.ReadResult({}))
    paths = [str(write_trace(tmp_path / f"t{n}.jsonl", [call(), result(), answer()]))
             for n in range(20)]
    inputs = read_inputs((), paths, evidence=True, keep_uris=False, jobs=None)
    assert parallel == []
    assert len(inputs.traces) == 20
    monkeypatch.setattr(jobs, "MIN_PARALLEL_BYTES", 0)
    read_inputs((), paths[:1], evidence=True, keep_uris=False, jobs=8)  # one file
    assert parallel == []
    read_inputs((), paths, evidence=True, keep_uris=False, jobs=8)
    assert parallel == [1]
    read_inputs((), paths, evidence=True, keep_uris=False, jobs=1)
    assert parallel == [1]


def test_called_from_a_thread_the_workers_start_from_a_clean_process(
        tmp_path: Path, pooled: list[int]) -> None:
    """Forking while another thread may hold a lock is unsafe: from a thread the workers come
    from a forkserver, and read the same."""
    import threading

    from tracecite.workers import pool_context

    paths = [p for p in mixed_inputs(tmp_path) if p.endswith(".jsonl")]
    serial = read_inputs((), paths, evidence=True, keep_uris=True, jobs=1)
    found: list[Any] = []
    methods: list[str] = []

    def in_a_thread() -> None:
        methods.append(pool_context([]).get_start_method())
        found.append(read_inputs((), paths, evidence=True, keep_uris=True, jobs=2))

    thread = threading.Thread(target=in_a_thread)
    thread.start()
    thread.join(60)
    assert methods == ["forkserver"]
    assert pooled == [2]
    assert found[0].format_findings() == serial.format_findings()
    assert found[0].evidence_findings() == serial.evidence_findings()
    assert list(found[0].cited()) == list(serial.cited())


def parent_of_reader(item: int) -> tuple[int, int]:
    time.sleep(0.01)  # long enough for the worker to take some
    return item, os.getppid()


def test_a_caller_whose_threads_run_has_the_workers_start_from_a_clean_process() -> None:
    """A run whose parse workers were forked before it read its inputs has their pool's thread
    running: its ``--jobs`` workers are started the way it asks, from a forkserver, never
    forked from it, and the results are the same."""
    items = list(range(40))
    forked = jobs.read_in_order(parent_of_reader, items, jobs=2, size=lambda _: 1 << 20)
    served = jobs.read_in_order(parent_of_reader, items, jobs=2, size=lambda _: 1 << 20,
                                method="forkserver")
    assert [item for item, _ in served.results()] == items
    parents = {parent for _, parent in served.results()}
    # This process's parent, for what it read itself, and the forkserver's pid for the worker's.
    assert os.getppid() in parents and len(parents) == 2 and HERE not in parents
    assert HERE in {parent for _, parent in forked.results()}


def read_in_a_daemon(paths: list[str], out: Any) -> None:
    jobs.MIN_PARALLEL_BYTES = 0
    inputs = read_inputs((), paths, evidence=True, keep_uris=False, jobs=2)
    out.put(len(inputs.traces))


def test_a_daemonic_process_reads_here(tmp_path: Path) -> None:
    """A worker of a multiprocessing pool (or of Dask) is daemonic: it may not start worker
    processes of its own, so the library reads there as with ``jobs=1``."""
    import multiprocessing

    paths = [str(write_trace(tmp_path / f"t{n}.jsonl", [call(), result(), answer()]))
             for n in range(4)]
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    process = context.Process(target=read_in_a_daemon, args=(paths, out), daemon=True)
    process.start()
    process.join(30)
    assert process.exitcode == 0
    assert out.get(timeout=5) == 4


# ---- the pool itself ---------------------------------------------------------------------------

HERE = os.getpid()
"""This process: the one that starts the pools (a forked worker inherits the value, not the
pid)."""


def where_read(item: int) -> tuple[int, int]:
    time.sleep(0.01)  # long enough for each process to take some
    return item, os.getpid()


def fail_on_seven(item: int) -> int:
    if item == 7:
        raise ValueError("a bug")
    return item


def die_in_a_worker(item: int) -> int:
    """Kills the worker that reads it, as the OOM killer would; read here, it is slow."""
    if os.getpid() != HERE:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.01)
    return item


def fail_here(item: int) -> int:
    if os.getpid() == HERE:
        raise ValueError("a bug here")
    time.sleep(0.01)
    return item


def read_at_once(item: int) -> tuple[int, int]:
    return item, os.getpid()


def run_pool(read: Callable[[int], Any], count: int = 40, workers: int = 2) -> list[Any]:
    items = list(range(count))
    return jobs._parallel(read, items, [(count - i) * 1000 for i in items], workers).results()


@pytest.mark.parametrize("workers", [2, 3])
def test_results_come_back_in_input_order_from_this_process_and_its_workers(
        workers: int) -> None:
    read = run_pool(where_read, workers=workers)
    assert [item for item, _ in read] == list(range(40))
    pids = {pid for _, pid in read}
    assert HERE in pids  # this process reads too, instead of waiting
    assert len(pids) == workers


@pytest.mark.parametrize("workers", [2, 3])
def test_two_large_files_are_read_one_here_and_one_in_a_worker(workers: int) -> None:
    """Two items, each a run of its own (compare's two traces): this process reads one of
    them while a worker reads the other, instead of waiting while one worker reads both."""
    read = jobs._parallel(where_read, [0, 1], [2 << 20, 1 << 20], workers).results()
    assert [item for item, _ in read] == [0, 1]
    assert read[1][1] == HERE  # the lighter one, here; the heavier one in a worker
    assert read[0][1] != HERE


def test_the_heaviest_run_is_left_to_a_worker() -> None:
    """However fast this process is, a worker reads something: the heaviest run, which is
    queued first."""
    sizes = [(40 - i) * 1000 for i in range(40)]
    heaviest = max(jobs.runs_of(sizes, 2), key=lambda run: sum(sizes[i] for i in run))
    read = run_pool(read_at_once, workers=2)
    assert HERE not in {pid for item, pid in read if item in heaviest}


@pytest.fixture(params=[False, True], ids=["alone", "beside-a-thread"])
def stray_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """None, or a thread running as one an earlier test of the suite may leave (a name lookup
    that never returns is waited for by a thread of its own, for ever)."""
    stop = threading.Event()
    if request.param:
        threading.Thread(target=stop.wait, daemon=True, name="left-by-an-earlier-test").start()
    yield
    stop.set()


@pytest.mark.parametrize("read", [fail_on_seven, die_in_a_worker, fail_here],
                         ids=["raises", "killed", "raises-here"])
def test_a_read_that_fails_ends_the_pool_with_an_error(read: Callable[[int], int],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       stray_thread: None) -> None:
    from concurrent.futures.process import BrokenProcessPool

    from tests.stopping import children

    # Forked beside whatever thread an earlier test left: each read tells the workers apart
    # by HERE, which only a fork inherits.
    monkeypatch.setattr("tracecite.workers.start_method", lambda: "fork")
    before = set(children(HERE))  # a forkserver of an earlier test may stay
    with pytest.raises((ValueError, BrokenProcessPool)):
        run_pool(read)
    deadline = time.monotonic() + 5
    while set(children(HERE)) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(children(HERE)) - before, "a worker outlived its pool"


FAILING = {"how": ""}
"""How :func:`failing_read` fails on ``good.jsonl`` (set before the workers fork)."""


def failing_read(given: tuple[str, bool], **options: bool) -> Any:
    if given[0].endswith("big.jsonl"):  # the heaviest: a worker reads it
        if FAILING["how"] == "raises":
            raise RuntimeError("a bug")
        if os.getpid() != HERE:
            os.kill(os.getpid(), signal.SIGKILL)
    return read_input(given, **options)


@pytest.mark.parametrize("how", ["raises", "killed"])
def test_a_failed_worker_is_an_internal_error(tmp_path: Path, cli: Cli, pooled: list[int],
                                              monkeypatch: pytest.MonkeyPatch, how: str,
                                              stray_thread: None) -> None:
    paths = mixed_inputs(tmp_path)
    monkeypatch.setitem(FAILING, "how", how)
    monkeypatch.setattr(commands, "read_input", failing_read)  # the forked workers inherit it
    # Forked beside whatever thread an earlier test left: from the forkserver the workers
    # would read without this test's failing_read.
    monkeypatch.setattr("tracecite.workers.start_method", lambda: "fork")
    run = cli("check", "--evidence", "--json", "--jobs", "2", *paths)
    assert pooled == [2]
    assert (run.exit, run.codes()) == (3, ["TC900"])
    name = "RuntimeError" if how == "raises" else "BrokenProcessPool"
    assert run.json()["findings"][0]["message"].startswith(name)


def test_runs_are_neighbours_that_shrink_as_they_go() -> None:
    sizes = [10_000] * 1000 + [40_000_000] + [1_000] * 9000
    runs = jobs.runs_of(sizes, 2)
    assert [i for run in runs for i in run] == list(range(len(sizes)))  # every item, in order
    assert range(1000, 1001) in runs  # the big one alone

    def weight(run: range) -> int:
        return sum(sizes[i] + jobs.FILE_WEIGHT for i in run)

    total = sum(map(weight, runs))
    smallest = total // (2 * jobs.SMALLEST_RUN)
    left = total
    for run in runs[:-1]:
        share = max(smallest, left // (2 * jobs.RUN_SHARE))
        if len(run) > 1:  # at most its share of what is left, and the next item would pass it
            assert weight(run) <= share < weight(run) + weight(range(run.stop, run.stop + 1))
        left -= weight(run)
    assert weight(runs[0]) > 4 * weight(runs[-2])
    assert 2 * jobs.RUN_SHARE < len(runs) < 2 * jobs.SMALLEST_RUN + 32


# ---- stops ----------------------------------------------------------------------------------

def stop_on(stop_at: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def read(given: tuple[str, bool], **options: bool) -> Any:
        if given[0].endswith(stop_at):
            raise Stopped(signal.SIGTERM)
        return real(given, **options)
    return read


READ_HERE: list[int] = []
"""The items :func:`stop_here_at_the_third` read in this process."""


def stop_here_at_the_third(item: int) -> int:
    if os.getpid() == HERE:
        READ_HERE.append(item)
        if len(READ_HERE) == 3:
            raise Stopped(signal.SIGTERM)
    time.sleep(0.01)
    return item


def test_a_stop_while_this_process_reads_keeps_what_every_process_read() -> None:
    from tests.stopping import children

    READ_HERE.clear()
    before = set(children(HERE))
    items = list(range(40))
    stopped = jobs._parallel(stop_here_at_the_third, items, [(40 - i) * 1000 for i in items], 2)
    done = stopped.done
    assert stopped.stopped_by == signal.SIGTERM
    assert set(READ_HERE[:2]) <= set(done)  # what this process read before the stop
    assert READ_HERE[2] not in done
    assert all(key == value for key, value in done.items())  # and what the worker sent back
    deadline = time.monotonic() + 5
    while set(children(HERE)) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not set(children(HERE)) - before, "a worker outlived its pool"


def test_a_stop_while_reading_reports_what_was_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = mixed_inputs(tmp_path)[:4]  # good.notes, big.jsonl, bad.notes, miss.jsonl
    monkeypatch.setattr(commands, "read_input", stop_on("bad.notes", commands.read_input))
    stopped = read_inputs(paths[::2], paths[1::2], evidence=True, keep_uris=False, jobs=1)
    assert stopped.stopped_by == signal.SIGTERM
    assert [n.path for n in stopped.notes] == [paths[0]]
    assert stopped.traces == ()  # traces are read after notes
    report = run_checks(Plan("check", evidence=True), paths[::2], paths[1::2],
                        resolve("check", {"jobs": 1}))
    assert (report.stopped_by, report.exit_code) == (signal.SIGTERM, 143)
    assert report.summary.inputs == 1
    assert report.summary.records == 2


@pytest.mark.parametrize("command", ["check", "verify-notes", "verify-urls", "verify-files",
                                     "hook", "compare"])
def test_jobs_is_an_option_everywhere_inputs_are_read(tmp_path: Path, cli: Cli, command: str
                                                      ) -> None:
    path = write_trace(tmp_path / "t.jsonl", [call(), result(), answer()])
    paths = [str(path)] * (2 if command == "compare" else 1)
    bad = cli(command, *paths, "--jobs", "0", "--json")
    assert bad.exit == 1
    assert bad.json()["findings"][0]["message"].startswith("argument --jobs: must be from 1 to")


def test_compare_reads_its_two_traces_with_jobs(tmp_path: Path, cli: Cli) -> None:
    # --jobs 1 reads them one after the other: it acts on compare, so no notice.
    path = write_trace(tmp_path / "t.jsonl", [call(), result(), answer()])
    run = cli("compare", str(path), str(path), "--jobs", "1", "--json")
    assert run.exit == 0 and "notices" not in run.json()


def test_jobs_from_the_configuration_and_the_action(
        tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite import action
    from tracecite.settings import action_values

    asked: list[int | None] = []
    real = jobs.read_in_order

    def spy(read: Any, items: Any, *, jobs: int | None, size: Any,
            method: str | None = None) -> Any:
        asked.append(jobs)
        return real(read, items, jobs=jobs, size=size, method=method)

    monkeypatch.setattr(jobs, "read_in_order", spy)
    monkeypatch.chdir(tmp_path)
    write_trace(tmp_path / "run.trace.jsonl", [call(), result(), answer()])
    (tmp_path / ".tracecite.toml").write_text("jobs = 3\n")
    assert cli("hook", "run.trace.jsonl", "--json").exit == 0
    assert cli("check", "run.trace.jsonl", "--json").exit == 0  # check reads no configuration
    assert cli("hook", "run.trace.jsonl", "--jobs", "2", "--json").exit == 0
    assert asked == [3, None, 2]
    (tmp_path / ".tracecite.toml").write_text("jobs = 0\n")
    assert cli("hook", "run.trace.jsonl", "--json").codes() == ["TC104"]
    assert action_values(action.read_inputs({action.INPUT_ENV["jobs"]: " 4 "}))["jobs"] == 4


# ---- stops of a run, as its own process -----------------------------------------------------

SLOW_READER = """
import os, sys, time
from tracecite import jobs
from tracecite.run import inputs as commands
jobs.MIN_PARALLEL_BYTES = 0  # these few small files are read in workers all the same
real = commands.read_input
def read_input(given, **options):
    if os.path.basename(given[0]).startswith("hang"):
        open(given[0] + ".started", "w").close()
        time.sleep(60)
    return real(given, **options)
commands.read_input = read_input
from tracecite.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("signum", "to_group"), [
    (signal.SIGINT, True),    # Ctrl-C: the workers get it too, and ignore it
    (signal.SIGTERM, False),  # kill PID: the workers get nothing, the parent must end them
    (signal.SIGTERM, True),
])
def test_a_signal_ends_the_workers_and_reports_what_was_read(
        tmp_path: Path, signum: signal.Signals, to_group: bool) -> None:
    from tests.stopping import assert_none_left, children, env, stop

    padding = "The quick brown fox jumps over the lazy dog. " * 200
    for n in range(6):  # larger than the hanging ones: dealt out first
        quote = "lazy dog" if n != 4 else "lazy cat"
        write_trace(tmp_path / f"ok{n}.jsonl", [call(), result(sources=[source(
            content=padding)]), answer(claims=[claim(citations=[cite(quote=quote)])])])
    for n in range(2):
        write_trace(tmp_path / f"hang{n}.jsonl", [call(), result(), answer()])
    paths = sorted(str(p) for p in tmp_path.glob("*.jsonl"))
    run = subprocess.Popen(
        [sys.executable, "-c", SLOW_READER, "check", "--evidence", "--json", "--jobs", "2",
         *paths], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
        start_new_session=True)
    workers: list[int] = []

    def ready() -> None:
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob("*.started")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp_path.glob("*.started")), "the reading never got there"
        time.sleep(0.3)  # the other files are read, and sent back, meanwhile
        workers.extend(children(run.pid))
        assert len(workers) == 1  # --jobs 2: this process and one worker

    report = stop(run, signum, to_group=to_group, ready=ready)
    assert report["summary"]["inputs"] == 6  # the hanging two never finished
    assert report["summary"]["captured"]["not_found"] == 1
    assert [(f["code"], Path(f["file"]).name) for f in report["findings"]] == [
        ("TC202", "ok4.jsonl")]
    assert_none_left(run, workers)


_IMPORTS_PROBE = """
import sys
from tracecite import jobs
jobs.MIN_PARALLEL_BYTES = 0  # these small traces are read in the workers too
from tracecite.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers")
def test_forked_workers_import_no_trace_reader_of_their_own(tmp_path: Path) -> None:
    """The trace readers are imported once, before the workers fork: each worker importing
    them again would pay for it in every run."""
    from tests.stopping import env

    paths = [write_trace(tmp_path / f"t{n}.jsonl", [call(), result(sources=[source()]),
                                                     answer()]) for n in range(4)]
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", _IMPORTS_PROBE, "check",
                          "--evidence", "--jobs", "2", *map(str, paths)],
                         capture_output=True, text=True, env=env(), timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    imported = [line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines()
                if line.startswith("import time:") and "|" in line]
    assert imported.count("tracecite.checks.evidence") == 1
    assert imported.count("tracecite.inputs.validator") == 1


def test_a_stop_is_never_raised_inside_a_wait_for_a_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # concurrent.futures.wait takes each future's lock in an __enter__ of its own: a stop
    # raised there left the lock held, and the executor's thread then hung settling the future
    # (an early stop of `check --jobs 2`, about one in 700). The stop comes once a wait is over.
    import concurrent.futures
    from concurrent.futures import Future

    from tracecite.stops import StopSignals

    future: Future[list[int]] = Future()
    waits: list[str] = []

    def wait(fs: Any, timeout: float | None = None) -> None:
        waits.append("began")
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline:  # the handler would run here, inside the wait
            pass
        future.set_result([1])
        waits.append("ended")

    monkeypatch.setattr(concurrent.futures, "wait", wait)
    workers = SimpleNamespace(check_workers=lambda: None)  # all of them alive
    with StopSignals(), pytest.raises(Stopped):
        jobs._result(future, workers)  # type: ignore[arg-type]
    assert waits == ["began", "ended"]
