"""Figure 4, start-up: a small ``check --evidence`` run next to ``python -c pass``.

The median of many short runs (interleaved with the baseline, so a busy moment hits both), and
what ``python -X importtime`` says: which of rich, html5lib and urllib3 a command imports (and
which module pulls each in), and the slowest imports when the goal is missed.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from bench_util import REPO, Log, Table, measure, median, ratio, seconds, tracecite_command, verdict

GOAL = 0.150
EXAMPLE = REPO / "examples" / "passing.trace.jsonl"
HEAVY = ("rich", "html5lib", "urllib3")
_LINE = re.compile(r"import time:\s*(\d+) \|\s*(\d+) \|( *)(\S+)")


@dataclass
class Imported:
    """One line of ``-X importtime``: self and cumulative microseconds, depth, module."""

    self_us: int
    cumulative_us: int
    depth: int
    name: str


def import_times(args: list[str]) -> list[Imported]:
    """The imports of ``python -X importtime -m tracecite ARGS``, in the order reported."""
    run = measure([sys.executable, "-X", "importtime", "-m", "tracecite", *args], timeout=120)
    out = []
    for line in run.stderr.splitlines():
        match = _LINE.match(line)
        if match:
            out.append(Imported(int(match[1]), int(match[2]), (len(match[3]) - 1) // 2,
                                match[4]))
    return out


def pulled_by(imports: list[Imported], package: str) -> str | None:
    """Which tracecite module first imports ``package`` (the nearest tracecite ancestor)."""
    for i, item in enumerate(imports):
        if item.name == package or item.name.startswith(package + "."):
            depth = item.depth
            # importtime prints a module after its children: its parent is the next line
            # with a smaller depth.
            for later in imports[i + 1:]:
                if later.depth < depth:
                    depth = later.depth
                    if later.name.startswith("tracecite"):
                        return later.name
            return "the command line (__main__)"
    return None


def figure(runs: int, log: Log = print) -> Table:
    """Figure 4."""
    table = Table(
        f"Start-up: check {EXAMPLE.relative_to(REPO)} --evidence (median of {runs} runs)",
        ["command", "median wall", "÷ python -c pass", "over python", "goal"],
    )
    base = [*tracecite_command(), "check", str(EXAMPLE), "--evidence"]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "tracecite check --evidence": base,
        "tracecite check --evidence --json": [*base, "--json"],
        "tracecite --version": [*tracecite_command(), "--version"],
    }
    walls: dict[str, list[float]] = {name: [] for name in commands}
    problems: dict[str, str] = {}
    log(f"  {runs} interleaved runs of {len(commands)} commands …")
    for _ in range(runs):
        for name, cmd in commands.items():
            run = measure(cmd, timeout=60)
            walls[name].append(run.wall)
            if run.returncode != 0:
                problems[name] = f"FAILED (exit {run.returncode})"
    python = median(walls["python -c pass"])
    for name, values in walls.items():
        wall = median(values)
        goal = f"≤ 150 ms {verdict(wall <= GOAL)}" if name.startswith("tracecite check") else ""
        table.add(name, seconds(wall), ratio(wall / python),
                  "–" if name.startswith("python") else seconds(wall - python),
                  problems.get(name, goal))

    log("  python -X importtime …")
    for label, args in (("check --evidence --json", ["check", str(EXAMPLE), "--evidence",
                                                     "--json"]),
                        ("check --evidence (console)", ["check", str(EXAMPLE), "--evidence"])):
        imports = import_times(args)
        found = []
        for package in HEAVY:
            who = pulled_by(imports, package)
            if who is not None:
                found.append(f"{package} (pulled in by {who})")
        what = ", ".join(found) if found else "none of " + "/".join(HEAVY)
        table.note(f"{label} imports: {what}")
    if median(walls["tracecite check --evidence"]) > GOAL:
        imports = import_times(["check", str(EXAMPLE), "--evidence"])
        top = sorted((i for i in imports if i.depth == 0), key=lambda i: -i.cumulative_us)[:6]
        table.note("slowest top-level imports (cumulative): " + ", ".join(
            f"{i.name} {i.cumulative_us / 1000:.0f} ms" for i in top))
        mine = sorted((i for i in imports if i.name.startswith("tracecite")),
                      key=lambda i: -i.self_us)[:5]
        table.note("slowest tracecite modules (self): " + ", ".join(
            f"{i.name} {i.self_us / 1000:.0f} ms" for i in mine))
    return table
