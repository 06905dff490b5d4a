"""No process outlives its run (docs/design/concurrency.md#how-a-stop-reaches-each): the workers of
both pools, the parse pool of a live check and the ``--jobs`` pool, end within 2 s of their
parent's death, ``kill -9`` included, seen from /proc.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.stopping import children, env, processes
from tests.test_subprocess_early_stops import traces  # noqa: F401 - a fixture
from tests.test_subprocess_stops import half_hanging_site

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
              pytest.mark.slow]

ORPHAN_GOAL = 2.0
"""Seconds a worker may outlive its parent."""


def workers_of(run: subprocess.Popen[str], wanted: int, within: float = 30) -> list[int]:
    """The children of ``run`` from /proc, once there are ``wanted`` of them."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = children(run.pid)
        if len(found) >= wanted:
            time.sleep(0.2)  # each has started its watch of the parent
            return children(run.pid)
        if run.poll() is not None:
            raise AssertionError(f"the run ended before its workers were seen: "
                                 f"{run.communicate()}")
        time.sleep(0.01)
    raise AssertionError(f"fewer than {wanted} workers within {within} s")


def assert_outlived_by_none(run: subprocess.Popen[str], workers: list[int],
                            signum: signal.Signals) -> None:
    """Send ``signum`` to ``run`` alone; every process of ``workers`` is gone within
    :data:`ORPHAN_GOAL` seconds."""
    run.send_signal(signum)
    run.wait(10)
    deadline = time.monotonic() + ORPHAN_GOAL
    while time.monotonic() < deadline and set(workers) & set(processes()):
        time.sleep(0.02)
    left = sorted(set(workers) & set(processes()))
    for pid in left:  # never leave them to the machine
        subprocess.run(["kill", "-9", str(pid)], check=False)
    assert left == [], f"{len(left)} of {len(workers)} workers outlived their parent"


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_parse_workers_end_with_their_parent(tmp_path: Path, signum: signal.Signals) -> None:
    requests: list[str] = []
    with half_hanging_site(requests) as (port, _release):
        notes = tmp_path / "n.notes"
        notes.write_text("claim: c\nquote: q\nurl: http://h.test/hang\n")
        run = subprocess.Popen(
            [sys.executable, "-m", "tracecite", "verify-notes", str(notes), "--json",
             "--allow-net", "127.0.0.0/8", "--timeout", "20", "--connect-to",
             f"h.test:80:127.0.0.1:{port}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
        try:
            workers = workers_of(run, 2)  # a parse worker per core; two or more assumed
            assert_outlived_by_none(run, workers, signum)
        finally:
            if run.poll() is None:
                run.kill()
            run.communicate()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_jobs_workers_end_with_their_parent(traces: list[str],  # noqa: F811
                                            signum: signal.Signals) -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "tracecite", "check", "--evidence", "--jobs", "3", "--json",
         *traces, *traces], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    try:
        workers = workers_of(run, 2)
        assert_outlived_by_none(run, workers, signum)
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()
