"""A live run stopped by a signal (docs/reference/commands.md): it returns at once with what
finished, the rest ``interrupted``, waits for no load in flight and ends its parse workers; and the
signal handling it relies on (tracecite.stops)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest

from tests.checks.test_live import Loads, check
from tracecite.checks.kinds import MatchKind
from tracecite.checks.live.records import Loaded
from tracecite.checks.live.run import LiveRun
from tracecite.checks.parse_pool import ParsePool
from tracecite.findings import Counts, Report
from tracecite.stops import Stopped, StopSignals, signal_name, signal_of


class Hangs(Loads):
    """``Loads``, but a target starting with ``hang`` never loads (until ``release``)."""

    def __init__(self, pages: dict[str, str | Loaded]) -> None:
        super().__init__(dict(pages))
        self.release = threading.Event()

    def load(self, target: str, *, claimed: bool = False) -> Loaded:
        if target.startswith("hang"):
            self.release.wait(30)
        return super().load(target, claimed=claimed)


def test_a_stopped_run_returns_what_finished_without_waiting_for_loads() -> None:
    loader = Hangs({"a": "one two", "b": "three", "hang1": "x", "hang2": "x"})
    checks = [check("one", "a"), check("nope", "a"), check("three", "b"),
              check("x", "hang1"), check("x", "hang2"), check("x", "hang2")]
    # Ctrl-C, as the main thread sees it (Python's own handler: KeyboardInterrupt).
    threading.Timer(0.3, signal.pthread_kill,
                    (threading.main_thread().ident, signal.SIGINT)).start()
    started = time.monotonic()
    try:
        result = LiveRun(loader, concurrency=8, parse_budget=5).check(checks)
    finally:
        loader.release.set()
    assert time.monotonic() - started < 1
    assert result.stopped_by == signal.SIGINT
    assert result.counts == Counts(checked=3, matched=2, not_found=1, interrupted=3)
    assert [f.record for f in result.findings] == [1]


def test_a_finished_run_is_not_stopped() -> None:
    result = LiveRun(Loads({"a": "one"}), concurrency=2, parse_budget=5).check([check("one", "a")])
    assert result.stopped_by is None
    assert result.counts == Counts(checked=1, matched=1)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_terminate_ends_the_parse_workers_at_once() -> None:
    pool = ParsePool(workers=2)
    pool.start()
    workers = multiprocessing.active_children()
    assert len(workers) == 2
    started = time.monotonic()
    pool.terminate()
    assert time.monotonic() - started < 1.5
    # Dead already: gone, or a zombie (its exit status may be read by another thread first).
    assert [w.pid for w in workers if _running(w.pid)] == []
    with pytest.raises(RuntimeError, match="closed"):
        pool.submit(MatchKind.HTML, "<p>a</p>", ["a"])


def _running(pid: int | None) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_stopped_report_exits_128_plus_the_signal() -> None:
    assert Report("verify-notes", stopped_by=signal.SIGINT).exit_code == 130
    assert Report("verify-notes", stopped_by=signal.SIGTERM).exit_code == 143
    assert Report("verify-notes").exit_code == 0


def test_stop_signals_raise_once_then_only_record() -> None:
    with StopSignals() as stop:
        with pytest.raises(Stopped) as caught:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler runs here
        assert signal_of(caught.value) == signal.SIGTERM
        os.kill(os.getpid(), signal.SIGINT)  # while stopping: recorded, not raised
        time.sleep(0.05)
        assert stop.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored on exit


def test_after_hold_a_signal_is_only_recorded() -> None:
    with StopSignals() as stop:
        stop.hold()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        assert stop.signum == signal.SIGINT
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_signal_names() -> None:
    assert signal_of(KeyboardInterrupt()) == signal.SIGINT
    assert signal_name(signal.SIGTERM) == "SIGTERM"
    assert signal_name(999) == "signal 999"


class _SignalledInDel:
    """An object whose ``__del__`` takes a stop signal: Python ignores (prints) what a
    ``__del__`` raises, so the :class:`Stopped` its handler raises there is unraisable."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs in here
            pass


def test_a_stop_raised_where_python_ignores_it_is_raised_just_past_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The stop is sent again and raised at the next place that can take it, never inside
    the unraisable hook itself (that printed 'Exception ignored in sys.unraisablehook' and a
    traceback under a signal at a random moment)."""
    with StopSignals() as stop:
        with pytest.raises(Stopped) as caught:
            victim = _SignalledInDel()
            del victim
            for _ in range(100_000):
                pass
            time.sleep(0.5)
        assert signal_of(caught.value) == signal.SIGTERM
        assert stop.signum == signal.SIGTERM
    err = capsys.readouterr().err
    assert "Exception ignored" not in err and "Traceback" not in err, err
