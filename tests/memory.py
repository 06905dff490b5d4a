"""The peak memory of one ``tracecite`` run: the command line run in a fresh interpreter, which
reports its own high-water mark (VmHWM) when the run ends."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO_ROOT

_SCRIPT = """\
import sys
from tracecite.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
with open("/proc/self/status", encoding="ascii") as status:
    peak = next(line for line in status if line.startswith("VmHWM:"))
print("\\npeak-kib", peak.split()[1], file=sys.stderr)
sys.exit(code)
"""


@dataclass(frozen=True)
class PeakRun:
    """What the run gave and its peak resident memory."""

    exit: int
    out: str
    err: str
    peak_bytes: int


def peak_run(*argv: str | Path, cwd: Path | None = None, timeout: float = 300) -> PeakRun:
    """Run ``tracecite ARGV…`` in a subprocess (this checkout's package) and measure it."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=timeout,
                          check=False)
    lines = done.stderr.splitlines()
    assert lines and lines[-1].startswith("peak-kib "), done.stderr[-500:]
    return PeakRun(done.returncode, done.stdout, "\n".join(lines[:-1]),
                   int(lines[-1].split()[1]) * 1024)
