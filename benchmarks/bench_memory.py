"""Figure 8, memory that does not grow with what need not be kept (docs/guides/scale.md): peak RSS
of the whole process for the three inputs that used to cost the most, each beside a baseline
measured in the same run.

- ``check NOTES`` and ``verify-notes NOTES`` on a 50 MB notes file of short records, beside
  the file's size (goal: at most 100 MB; verify-notes against a local server serving the 500
  pages the records quote), and ``verify-notes --shard 1/2`` of it (a shard keeps its records
  as indexes into the notes' columns: the same goal), and ``verify-notes --cache`` of it into
  a new cache file (a verdict learned for each distinct quote: the same goal);
- ``check --evidence`` on a trace with 1,000,000 small sources, beside the file's size (goal:
  at most 120 MB);
- ``compare OLD NEW`` of two 150 MB traces (one source in ten changed), beside one
  ``check --evidence OLD`` (goal: at most 1.5 times its peak).

Inputs come from ``gen_memory.py`` and are cached in ``benchmarks/out/memory/``, keyed by the
generators' source, so a changed generator makes new ones.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench_util import (
    BENCH_DIR,
    MB,
    OUT_DIR,
    Log,
    Measured,
    Table,
    measure,
    median,
    megabytes,
    ratio,
    seconds,
    tracecite_command,
    verdict,
)

NOTES_GOAL = 100 * MB
SOURCES_GOAL = 120 * MB
COMPARE_GOAL = 1.5


def cached(name: str, make: Callable[[list[str]], object], count: int = 1,
           log: Log = print) -> list[Path]:
    """``count`` cached input files called ``name`` (made by ``make`` from their paths)."""
    source = b"".join((BENCH_DIR / f).read_bytes() for f in ("gen_memory.py", "gen_trace.py"))
    key = hashlib.sha256(source).hexdigest()[:10]
    folder = OUT_DIR / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}-{n}-{key}{'.jsonl' if 'trace' in name else '.notes'}"
             for n in range(count)]
    if not all(p.exists() for p in paths):
        for old in folder.glob(f"{name}-*"):
            old.unlink()
        log(f"  generating {name} (cached for later runs) …")
        partial = [p.with_suffix(".partial") for p in paths]
        make([str(p) for p in partial])
        for p, final in zip(partial, paths, strict=True):
            p.rename(final)
    return paths


def _runs(cmd: list[str], repeats: int) -> list[Measured]:
    return [measure(cmd, timeout=900, tree=True) for _ in range(repeats)]


def _peak(runs: list[Measured]) -> int:
    return max(r.peak_rss for r in runs)


def _wall(runs: list[Measured]) -> float:
    return median([r.wall for r in runs])


def _problem(runs: list[Measured], expected: int) -> str:
    """"" if the last run exited ``expected`` with a JSON report, else what went wrong."""
    run = runs[-1]
    try:
        json.loads(run.stdout)
    except ValueError:
        return f"FAILED (exit {run.returncode}): {run.stderr.strip()[-80:]}"
    return "" if run.returncode == expected else f"WRONG: exit {run.returncode}"


def figure(*, notes_mb: float = 50, sources: int = 1_000_000, trace_mb: float = 150,
           repeats: int = 1, log: Log = print) -> Table:
    """Measure the three cases (and their baselines), ``repeats`` runs each."""
    import gen_memory
    from bench_web import connect_flags
    from web_server import BenchServer

    table = Table("Memory: peak RSS of the whole process beside a baseline of the same run",
                  ["case", "input", "peak RSS", "wall", "baseline", "RSS ÷ baseline", "goal"])
    tc = [*tracecite_command()]
    (notes,) = cached(f"notes-{notes_mb:g}mb",
                      lambda p: gen_memory.notes(p[0], notes_mb), log=log)
    size = notes.stat().st_size
    log(f"  check on {megabytes(size)} of notes …")
    runs = _runs([*tc, "check", str(notes), "--json"], repeats)
    table.add("check NOTES", megabytes(size), megabytes(_peak(runs)), seconds(_wall(runs)),
              f"{megabytes(size)} (file)", ratio(_peak(runs) / size),
              _problem(runs, 0) or f"≤ 100 MB {verdict(_peak(runs) <= NOTES_GOAL)}")
    log("  verify-notes on the same notes, against a local server …")
    with BenchServer(gen_memory.site()) as server, tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache.sqlite"
        for name, flags in (("verify-notes NOTES", []),
                            ("verify-notes --shard 1/2", ["--shard", "1/2"]),
                            ("verify-notes --cache (a new file)", ["--cache", str(cache)])):
            runs = []
            for _ in range(repeats):  # the cache case starts from no file every time
                cache.unlink(missing_ok=True)
                runs += _runs([*tc, "verify-notes", str(notes), "--json", "--no-progress",
                               *flags, *connect_flags(server.port)], 1)
            table.add(name, megabytes(size), megabytes(_peak(runs)), seconds(_wall(runs)),
                      f"{megabytes(size)} (file)", ratio(_peak(runs) / size),
                      _problem(runs, 0) or f"≤ 100 MB {verdict(_peak(runs) <= NOTES_GOAL)}")
    (many,) = cached(f"trace-{sources}-sources",
                     lambda p: gen_memory.many_sources(p[0], sources), log=log)
    size = many.stat().st_size
    log(f"  check --evidence on a trace of {sources:,} sources …")
    runs = _runs([*tc, "check", str(many), "--evidence", "--json"], repeats)
    table.add(f"check --evidence, {sources:,} sources", megabytes(size),
              megabytes(_peak(runs)), seconds(_wall(runs)), f"{megabytes(size)} (file)",
              ratio(_peak(runs) / size),
              _problem(runs, 0) or f"≤ 120 MB {verdict(_peak(runs) <= SOURCES_GOAL)}")
    old, new = cached(f"trace-pair-{trace_mb:g}mb",
                      lambda p: gen_memory.pair(p[0], p[1], trace_mb), count=2, log=log)
    size = old.stat().st_size
    log(f"  compare of two {megabytes(size)} traces, and check --evidence of one …")
    one = _runs([*tc, "check", str(old), "--evidence", "--json"], repeats)
    runs = _runs([*tc, "compare", str(old), str(new), "--json"], repeats)
    table.add("check --evidence OLD (baseline)", megabytes(size), megabytes(_peak(one)),
              seconds(_wall(one)), "", "", _problem(one, 0))
    share = _peak(runs) / _peak(one)
    table.add("compare OLD NEW", f"2 × {megabytes(size)}", megabytes(_peak(runs)),
              seconds(_wall(runs)), f"{megabytes(_peak(one))} (check --evidence OLD)",
              ratio(share), _problem(runs, 2) or f"≤ 1.5× {verdict(share <= COMPARE_GOAL)}")
    table.note("peak RSS: the process's own high-water mark (VmHWM), the largest of the runs; "
               f"wall: the median of {repeats} run(s). verify-notes' parse workers are not "
               "counted (figure 3 measures them)")
    table.note("verify-notes --cache: every page and quote is new to the file, so the run "
               "learns a verdict for each distinct quote; they wait compactly, staged on disk "
               "past a chunk, until the one write at the end")
    table.note("goals (for the full sizes: 50 MB of notes, 1,000,000 sources, two 150 MB "
               "traces): notes ≤ 100 MB, sources ≤ 120 MB, compare ≤ 1.5 × one check --evidence")
    return table


if __name__ == "__main__":
    print(figure(notes_mb=2, sources=20_000, trace_mb=2).text())
