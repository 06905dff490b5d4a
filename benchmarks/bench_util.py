"""Shared pieces of the benchmarks: running a command while measuring it, and result tables.

A command's wall time runs from just before it is started to the moment it exits. When asked
(``tree=True``), a thread reads ``/proc`` every 5 ms for the command's own high-water mark
(``VmHWM``) and for the summed resident sets of its whole process tree (worker processes
included; pages that forked workers share with their parent are counted in each, so the sum is
an upper bound). The tree itself is listed every 20 ms, and its proportional set sizes are
read then at a new peak of that sum, and every 50 ms: reading everything at every sample took
about 16 % of a core from the command it measured, a wall 10 % longer for a run bound by the
CPU. CPU time is user + system time of the command and the children it reaped; with
``tree=True`` also of the children it left running (a forkserver, which reaps the workers it
started, and the resource tracker), read from ``/proc`` as the command exits.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out"
MB = 1024 * 1024
_PAGE = os.sysconf("SC_PAGE_SIZE")

Log = Callable[[str], None]


def tracecite_command() -> list[str]:
    """How users run TraceCite from this virtual environment: its console script if present."""
    script = Path(sys.executable).with_name("tracecite")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "tracecite"]


@dataclass
class Measured:
    """One finished command."""

    wall: float  # seconds
    cpu: float  # seconds of user + system time, the command and the children it reaped (and,
    # sampled, those it left running)
    peak_rss: int  # bytes: the command's own process (its high-water mark, VmHWM)
    returncode: int
    stdout: str
    stderr: str
    tree_rss: int = 0  # bytes: sampled peak of the sum over its process tree (if sampled)
    tree_procs: int = 0  # most processes seen in the tree at once
    tree_pss: int = 0  # bytes: sampled peak of the summed proportional set size over the tree:
    # a page shared by several of its processes (a forked worker's copy-on-write interpreter)
    # counts once in all, where the RSS sum counts it in each
    started: float = 0.0  # time.perf_counter() just before the process was started


PSS_EVERY = 10
"""Samples between two reads of the proportional set sizes, besides those at a new peak."""

TREE_EVERY = 4
"""Samples between two listings of the process tree."""


class _TreeSampler(threading.Thread):
    """Samples the summed resident set of a process and all its descendants."""

    def __init__(self, pid: int, interval: float = 0.005) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self._pid = pid
        self._interval = interval
        self._done = threading.Event()
        self.peak = 0
        self.procs = 0
        self.pss_peak = 0
        self.own_peak = 0  # the process's own high-water mark, as last read
        self.children: dict[int, str] = {}  # the command's own children seen: pid -> start time

    def run(self) -> None:
        sample = 0
        pids: list[int] = []
        while not self._done.is_set():
            # The tree is listed by every thread's children (a run has dozens of threads):
            # every TREE_EVERY samples, and the processes found then are sampled in between.
            if sample % TREE_EVERY == 0:
                pids = _tree(self._pid)
                for child in _children(self._pid):
                    if child not in self.children:
                        fields = _stat(child)  # read once: the child may end between reads
                        self.children[child] = fields[19] if len(fields) > 19 else ""
            total = sum(_rss(pid) for pid in pids)
            # The proportional set size costs the kernel a walk of every mapping: read with the
            # tree at a new peak of the resident sets, and every PSS_EVERY samples, not at
            # each, so that the sampler does not take a core's time from what it measures.
            if (total > self.peak and sample % TREE_EVERY == 0) or sample % PSS_EVERY == 0:
                self.pss_peak = max(self.pss_peak, sum(_pss(pid) for pid in pids))
            self.peak = max(self.peak, total)
            self.procs = max(self.procs, len(pids))
            self.own_peak = max(self.own_peak, _high_water_mark(self._pid))
            sample += 1
            self._done.wait(self._interval)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def left_running_cpu(self) -> float:
        """Seconds of user + system time, theirs and that of the children they reaped, of the
        command's children still running now that it has exited: the command never reaped
        them, so its own usage leaves them out."""
        total = 0
        for pid, started in self.children.items():
            fields = _stat(pid)
            if fields and fields[19] == started:
                total += sum(int(f) for f in fields[11:15])
        return total / os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state first); [] if gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                out.extend(int(child) for child in handle.read().split())
        except OSError:
            pass
    return out


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (children of every thread, via /proc/PID/task/*/children)."""
    out = []
    todo = [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(_children(current))
    return out


def _proc_kib(path: str, key: str) -> int:
    """The bytes of the ``key`` line (given in kB) of a file under /proc, 0 when unreadable
    (the process may have ended)."""
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _high_water_mark(pid: int) -> int:
    """The process's peak resident set (VmHWM)."""
    return _proc_kib(f"/proc/{pid}/status", "VmHWM:")


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    """The process's proportional set size (Linux's smaps_rollup)."""
    return _proc_kib(f"/proc/{pid}/smaps_rollup", "Pss:")


def measure(cmd: Sequence[str], *, timeout: float = 600.0, tree: bool = False,
            cwd: str | Path | None = None, env: dict[str, str] | None = None) -> Measured:
    """Run ``cmd`` to completion; its output goes to temporary files, not pipes, so that
    reading it costs the command nothing. Killed (its whole process group) after ``timeout``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                   cwd=cwd, env=env, start_new_session=True)
        sampler = _TreeSampler(process.pid) if tree else None
        if sampler is not None:
            sampler.start()
        watchdog = threading.Timer(timeout, _kill_group, (process.pid,))
        watchdog.start()
        try:
            # Wait for the exit without reaping, so that the process group cannot be reused
            # before workers left behind (if any) are stopped; then reap it for its usage.
            os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
            wall = time.perf_counter() - start
            left_cpu = sampler.left_running_cpu() if sampler is not None else 0.0
            _kill_group(process.pid)
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            watchdog.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        if sampler is not None:
            sampler.stop()
        out.seek(0)
        err.seek(0)
        return Measured(
            wall=wall, cpu=usage.ru_utime + usage.ru_stime + left_cpu,
            # ru_maxrss may count the pages the child shared with this process when it was
            # forked, before it ran the command: the sampled VmHWM does not.
            peak_rss=sampler.own_peak if sampler else usage.ru_maxrss * 1024,
            returncode=process.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            tree_rss=sampler.peak if sampler else 0, tree_procs=sampler.procs if sampler else 0,
            tree_pss=sampler.pss_peak if sampler else 0,
            started=start,
        )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the group this command leads (start_new_session)


def median(values: Sequence[float]) -> float:
    """The median (the middle of an odd count)."""
    return statistics.median(values)


def which(name: str) -> str | None:
    """The full path of a program, or None."""
    return shutil.which(name)


# -- tables --------------------------------------------------------------------------------


@dataclass
class Table:
    """One figure: a title, a header row, rows of cells, and notes printed under it."""

    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        """Append a row; cells are shown with ``str``."""
        self.rows.append([str(c) for c in cells])

    def note(self, text: str) -> None:
        """Append a line shown under the table."""
        self.notes.append(text)

    def _numeric(self) -> list[bool]:
        """Which columns hold figures (right-aligned): every cell a number, a dash or empty."""
        return [all(not row[i] or row[i][0].isdigit() or row[i] == "–" for row in self.rows)
                for i in range(len(self.header))]

    def text(self) -> str:
        """A plain-text table for the terminal."""
        numeric = self._numeric()
        widths = [max(len(row[i]) for row in [self.header, *self.rows])
                  for i in range(len(self.header))]

        def line(cells: list[str]) -> str:
            return "  ".join(c.rjust(w) if numeric[i] else c.ljust(w)
                             for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

        out = [self.title, "=" * len(self.title), line(self.header),
               line(["-" * w for w in widths])]
        out += [line(r) for r in self.rows]
        out += [f"  {n}" for n in self.notes]
        return "\n".join(out) + "\n"

    def markdown(self) -> str:
        """The same table in Markdown (GitHub flavour)."""
        def line(cells: list[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        numeric = self._numeric()
        align = ["---:" if n else "---" for n in numeric]
        out = [f"#### {self.title}", "", line(self.header), line(align)]
        out += [line(r) for r in self.rows]
        if self.notes:
            out.append("")
            out += [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


def seconds(value: float) -> str:
    """A wall time for a table."""
    return f"{value:.2f} s" if value >= 0.995 else f"{value * 1000:.0f} ms"


def megabytes(value: float) -> str:
    """A size in MiB for a table."""
    return f"{value / MB:.0f} MB" if value >= 10 * MB else f"{value / MB:.1f} MB"


def ratio(value: float) -> str:
    """A ratio for a table."""
    return f"{value:.2f}×"


def verdict(ok: bool) -> str:
    """A goal's verdict for a table."""
    return "met" if ok else "NOT met"
