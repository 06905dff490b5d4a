"""Stopping a ``tracecite`` run that is its own process (docs/reference/commands.md): the
environment it runs in, the processes left on the machine, one signal sent and its outcome
checked, and a script of a pool's that may hang run where its hang ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import OUTPUT_ENV, REPO_ROOT

STOP_GOAL = 2.0
"""Seconds a stopped run may take to exit with its report (docs/reference/commands.md)."""


def env() -> dict[str, str]:
    """The environment of a subprocess run: this tree first on the path, no CI variables."""
    out = {k: v for k, v in os.environ.items() if k not in OUTPUT_ENV}
    out["PYTHONPATH"] = str(REPO_ROOT)
    return out


def processes() -> dict[int, tuple[int, int]]:
    """Every live process: its parent's PID and its process group, by PID (from /proc)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if fields[0] != "Z":  # a zombie is already dead
            found[int(entry)] = (int(fields[1]), int(fields[2]))
    return found


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    return [child for child, (parent, _) in processes().items() if parent == pid]


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid``, to any depth (a worker's forks too)."""
    below: dict[int, list[int]] = {}
    for child, (parent, _) in processes().items():
        below.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = below.get(todo.pop(), [])
        found.extend(kids)
        todo.extend(kids)
    return found


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(run: subprocess.Popen[str], signum: signal.Signals, *, to_group: bool,
         ready: Callable[[], object]) -> dict[str, Any]:
    """Once ``ready()`` returns (it waits, and asserts, that ``run`` got where it is to be
    stopped), send ``signum`` to ``run`` (to its process group with ``to_group``, as Ctrl-C
    does; a ``kill PID`` otherwise) and check what every stopped run must do: exit within
    :data:`STOP_GOAL` with 128 + the signal, say so on stderr without a traceback, and write
    its JSON report, which is returned. ``run`` is killed, with its group, if it outlives
    this."""
    try:
        ready()
        sent = time.monotonic()
        if to_group:
            os.killpg(run.pid, signum)
        else:
            os.kill(run.pid, signum)
        out, err = run.communicate(timeout=10)
        stopped_in = time.monotonic() - sent
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert stopped_in < STOP_GOAL, stopped_in
    assert run.returncode == 128 + signum
    assert "Traceback" not in err
    assert err.endswith(f"tracecite: stopped by {signum.name}; the report covers the sources "
                        "that finished\n"), err
    report: dict[str, Any] = json.loads(out)
    assert report["exit_code"] == 128 + signum
    return report


def assert_none_left(run: subprocess.Popen[str], workers: list[int]) -> None:
    """No process of ``workers`` and none of ``run``'s process group is still alive."""
    time.sleep(0.2)  # let init reap whatever it inherited
    left = processes()
    assert [pid for pid in workers if pid in left] == []
    assert [pid for pid, (_, group) in left.items() if group == run.pid] == []


ENDS_WITHIN = 20.0
"""Seconds :func:`run_alone` gives a script; a pool that ends well takes well under one."""


def run_alone(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` (indented as in the test) in a fresh interpreter, so that a pool left hanging
    hangs that one and not the suite: failed, killed, after :data:`ENDS_WITHIN` seconds."""
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env(),
                              capture_output=True, text=True, timeout=ENDS_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the script did not end within {ENDS_WITHIN} s")
