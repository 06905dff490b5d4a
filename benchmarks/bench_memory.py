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
- ``compare OLD NEW`` of two 150 MB traces (one source in ten changed), with sources of 3.5 KB
  (43,000) and of 1.2 KB (120,000), beside one ``check --evidence OLD`` run in turns with it
  (goal: at most 1.5 times its peak, and 1.5 times its wall time); these rows also run on
  their own: ``python bench_memory.py --compare [--rounds N]``;
- bounds (:func:`bounds_rows`, also on their own: ``python bench_memory.py --bounds``):
  ``import inspect`` of a 1.6 MB ``.eval`` zip bomb whose sample decompresses to 1.6 GB (goal:
  at most the 256 MiB member bound), ``check --evidence --json`` of a trace whose 1,000,000
  claims all quote what their captures lack (goal: 1 GB), and of a trace whose 2,000,000
  sources sit on one line (goal: 300 MB), and ``merge --json`` of a 150 MB report and of its
  run's two 75 MB shard reports (goal: at most twice their size, and 15 s).

Before/after: run the same figure against another checkout's code with ``PYTHONPATH`` set to
it, from a directory outside both (the console script then imports that code).

Inputs come from ``gen_memory.py`` (the reports from ``gen_reports.py``) and are cached in
``benchmarks/out/memory/``, keyed by the generators' source, so a changed generator makes new
ones: made by this checkout's code, then measured against any.
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
BOMB_GOAL = 256 * MB  # the default --max-member-bytes
FINDINGS_GOAL = 1000 * MB
ONE_LINE_GOAL = 300 * MB
MERGE_GOAL = 2.0  # × the report's size
MERGE_SECONDS = 15.0


def cached(name: str, make: Callable[[list[str]], object], count: int = 1,
           log: Log = print, suffix: str | None = None,
           generators: tuple[str, ...] = ("gen_memory.py", "gen_trace.py")) -> list[Path]:
    """``count`` cached input files called ``name`` (made by ``make`` from their paths),
    keyed by the source of ``generators``."""
    source = b"".join((BENCH_DIR / f).read_bytes() for f in generators)
    key = hashlib.sha256(source).hexdigest()[:10]
    folder = OUT_DIR / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    suffix = suffix or (".jsonl" if "trace" in name else ".notes")
    paths = [folder / f"{name}-{n}-{key}{suffix}" for n in range(count)]
    if not all(p.exists() for p in paths):
        for old in folder.glob(f"{name}-*"):
            old.unlink()
        log(f"  generating {name} (cached for later runs) …")
        partial = [p.with_name(p.name + ".partial") for p in paths]
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
           claims: int = 1_000_000, line_sources: int = 2_000_000, bomb_mb: float = 1600,
           report_mb: float = 150, repeats: int = 1, log: Log = print) -> Table:
    """Measure the cases (and their baselines), ``repeats`` runs each; the bounded ones last
    (:func:`bounds_rows`)."""
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
    for chars in (3500, 1200):  # 43,000 and 120,000 sources in 150 MB
        old, new = cached(f"trace-pair-{trace_mb:g}mb" + ("" if chars == 3500 else f"-{chars}"),
                          lambda p, c=chars: gen_memory.pair(p[0], p[1], trace_mb, c), count=2,
                          log=log)
        _compare_rows(table, tc, old, new, repeats, log)
    table.note("peak RSS: the process's own high-water mark (VmHWM), the largest of the runs; "
               f"wall: the median of {repeats} run(s). verify-notes' parse workers are not "
               "counted (figure 3 measures them)")
    table.note("verify-notes --cache: every page and quote is new to the file, so the run "
               "learns a verdict for each distinct quote; they wait compactly, staged on disk "
               "past a chunk, until the one write at the end")
    table.note("goals (for the full sizes: 50 MB of notes, 1,000,000 sources, two 150 MB "
               "traces): notes ≤ 100 MB, sources ≤ 120 MB, compare ≤ 1.5 × one check --evidence, "
               "in peak RSS and in wall time (each round's ratio: the two run seconds apart)")
    bounds_rows(table, claims=claims, line_sources=line_sources, bomb_mb=bomb_mb,
                report_mb=report_mb, repeats=repeats, log=log)
    return table


def _compare_rows(table: Table, tc: list[str], old: Path, new: Path, repeats: int,
                  log: Log) -> None:
    """``compare OLD NEW`` beside one ``check --evidence OLD``, in turns (A B A B …): peak RSS
    and wall time over the check's, each wall ratio of one round, their median and spread."""
    size = old.stat().st_size
    sources = sum(line.count(b'"uri"') for line in old.open("rb"))
    log(f"  compare of two {megabytes(size)} traces ({sources:,} sources), and check "
        "--evidence of one, in turns …")
    one: list[Measured] = []
    runs: list[Measured] = []
    for _ in range(max(repeats, 3)):
        one += _runs([*tc, "check", str(old), "--evidence", "--json"], 1)
        runs += _runs([*tc, "compare", str(old), str(new), "--json"], 1)
    walls = sorted(c.wall / o.wall for c, o in zip(runs, one, strict=True))
    table.add(f"check --evidence OLD (baseline), {sources:,} sources", megabytes(size),
              megabytes(_peak(one)), seconds(_wall(one)), "", "", _problem(one, 0))
    # Over the process tree: the second trace is read in a worker when there are cores.
    peak = max(max(r.peak_rss, r.tree_rss) for r in runs)
    share = peak / _peak(one)
    # The proportional set size counts a page the worker shares with the run (copy on write
    # since the fork: the interpreter, its modules) once, as the machine holds it; the RSS sum
    # counts it in both processes. Both are shown, each against the check's own.
    pss = max(r.tree_pss for r in runs)
    pss_share = pss / max(max(r.tree_pss for r in one), 1)
    wall = median(walls)
    table.add(f"compare OLD NEW, {sources:,} sources", f"2 × {megabytes(size)}",
              f"{megabytes(peak)} (tree; PSS {megabytes(pss)})",
              f"{seconds(_wall(runs))}: {ratio(wall)} the check's ({ratio(walls[0])}–"
              f"{ratio(walls[-1])})", f"{megabytes(_peak(one))} (check --evidence OLD)",
              f"{ratio(share)} (PSS {ratio(pss_share)})", _problem(runs, 2) or
              f"RSS ≤ 1.5× {verdict(share <= COMPARE_GOAL)} (PSS "
              f"{verdict(pss_share <= COMPARE_GOAL)}), wall ≤ 1.5× "
              f"{verdict(wall <= COMPARE_GOAL)}")


def bounds_rows(table: Table, *, claims: int = 1_000_000, line_sources: int = 2_000_000,
                bomb_mb: float = 1600, report_mb: float = 150, repeats: int = 1,
                log: Log = print) -> None:
    """Add the bounded cases to ``table``: a zip bomb imported, a million findings
    reported, two million sources on one line, and a 150 MB report merged
    (:func:`merge_rows`)."""
    import gen_memory

    tc = [*tracecite_command()]
    (bomb,) = cached(f"bomb-{bomb_mb:g}mb", lambda p: gen_memory.zip_bomb(p[0], bomb_mb),
                     log=log, suffix=".eval")
    size = bomb.stat().st_size
    log(f"  import inspect of a {megabytes(size)} zip bomb ({bomb_mb:g} MiB decompressed) …")
    runs = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as out:
            runs += _runs([*tc, "import", "inspect", str(bomb), "-o", out, "--json"], 1)
    table.add(f"import inspect, zip bomb ({bomb_mb:g} MiB inside)", megabytes(size),
              megabytes(_peak(runs)), seconds(_wall(runs)), "256 MiB (member bound)",
              ratio(_peak(runs) / BOMB_GOAL),
              _problem(runs, 1) or f"≤ 256 MiB {verdict(_peak(runs) <= BOMB_GOAL)}")
    (failing,) = cached(f"trace-{claims}-failing-claims",
                        lambda p: gen_memory.failing_claims(p[0], claims), log=log)
    log(f"  check --evidence of {claims:,} claims whose quotes are not captured …")
    _evidence_row(table, failing, f"{claims:,} findings", exit_code=2,
                  goal=(FINDINGS_GOAL, "1 GB"), repeats=repeats)
    (line,) = cached(f"trace-{line_sources}-sources-one-line",
                     lambda p: gen_memory.many_on_one_line(p[0], line_sources), log=log)
    log(f"  check --evidence of {line_sources:,} sources on one line …")
    _evidence_row(table, line, f"{line_sources:,} sources on one line", exit_code=0,
                  goal=(ONE_LINE_GOAL, "300 MB"), repeats=repeats)
    table.note("bounds (full sizes: a 1.6 GB zip bomb, 1,000,000 findings, 2,000,000 sources "
               "on one line): the bomb ≤ the 256 MiB member bound (TC107, exit 1), the "
               "findings ≤ 1 GB, the line ≤ 300 MB")
    merge_rows(table, report_mb=report_mb, repeats=repeats, log=log)


def _evidence_row(table: Table, trace: Path, what: str, *, exit_code: int,
                  goal: tuple[float, str], repeats: int) -> None:
    """A row of ``check --evidence --json`` of ``trace``: its peak RSS beside the file's size
    and against ``goal`` (bytes, as written)."""
    tc = [*tracecite_command()]
    size = trace.stat().st_size
    runs = _runs([*tc, "check", str(trace), "--evidence", "--json"], repeats)
    table.add(f"check --evidence, {what}", megabytes(size), megabytes(_peak(runs)),
              seconds(_wall(runs)), f"{megabytes(size)} (file)", ratio(_peak(runs) / size),
              _problem(runs, exit_code) or f"≤ {goal[1]} {verdict(_peak(runs) <= goal[0])}")


def merge_rows(table: Table, *, report_mb: float = 150, repeats: int = 1,
               log: Log = print) -> None:
    """Add ``merge --json`` of a ``report_mb`` MB report, and of its run's two shard reports
    (half as large each), to ``table``: goal at most 2 × the reports' size and 15 s."""
    import gen_reports

    tc = [*tracecite_command()]
    for shards in (1, 2):
        paths = cached(f"report-{report_mb:g}mb-{shards}-shards",
                       lambda p: gen_reports.shard_reports(
                           p, gen_reports.size_for(report_mb) // len(p)), count=shards,
                       log=log, suffix=".json", generators=("gen_reports.py",))
        size = sum(p.stat().st_size for p in paths)
        what = ("one report" if shards == 1
                else f"{shards} shard reports of {megabytes(size / shards)}")
        log(f"  merge of {what} ({megabytes(size)}) …")
        runs = _runs([*tc, "merge", *map(str, paths), "--json"], repeats)
        share = _peak(runs) / size
        ok = share <= MERGE_GOAL and _wall(runs) <= MERGE_SECONDS
        table.add(f"merge --json, {what}", megabytes(size), megabytes(_peak(runs)),
                  seconds(_wall(runs)), f"{megabytes(size)} (reports)", ratio(share),
                  _problem(runs, 2) or f"≤ 2× and ≤ 15 s {verdict(ok)}")


def bounds_figure(*, claims: int = 1_000_000, line_sources: int = 2_000_000,
                  bomb_mb: float = 1600, report_mb: float = 150, repeats: int = 1,
                  log: Log = print) -> Table:
    """The bounded cases alone (``--bounds``), for a before/after against another checkout."""
    table = Table("Memory: bounded inputs, peak RSS of the whole process",
                  ["case", "input", "peak RSS", "wall", "baseline", "RSS ÷ baseline", "goal"])
    bounds_rows(table, claims=claims, line_sources=line_sources, bomb_mb=bomb_mb,
                report_mb=report_mb, repeats=repeats, log=log)
    table.note("peak RSS: the process's own high-water mark (VmHWM), the largest of the runs")
    return table


def compare_figure(*, trace_mb: float = 150, repeats: int = 3, log: Log = print) -> Table:
    """The compare rows alone (``--compare``): two pairs of ``trace_mb`` MB traces, each
    ``compare`` beside one ``check --evidence`` in turns, as figure 8 runs them."""
    import gen_memory

    table = Table("Memory: compare of two traces beside one check --evidence",
                  ["case", "input", "peak RSS", "wall", "baseline", "RSS ÷ baseline", "goal"])
    tc = [*tracecite_command()]
    for chars in (3500, 1200):
        old, new = cached(f"trace-pair-{trace_mb:g}mb" + ("" if chars == 3500 else f"-{chars}"),
                          lambda p, c=chars: gen_memory.pair(p[0], p[1], trace_mb, c), count=2,
                          log=log)
        _compare_rows(table, tc, old, new, repeats, log)
    table.note("peak RSS: the larger of the process's own high-water mark and the sampled sum "
               "over its process tree; wall ÷ the check's: each round's ratio, the median and "
               "the spread")
    return table


if __name__ == "__main__":
    import sys

    if "--compare" in sys.argv:  # figure 8's compare rows alone, at the full size
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
        print(compare_figure(repeats=rounds).text())
    elif "--bounds" in sys.argv:
        full = "--full" in sys.argv
        print(bounds_figure(claims=1_000_000 if full else 100_000,
                            line_sources=2_000_000 if full else 200_000,
                            bomb_mb=1600 if full else 300,
                            report_mb=150 if full else 30).text())
    else:
        print(figure(notes_mb=2, sources=20_000, trace_mb=2, claims=20_000,
                     line_sources=160_000, bomb_mb=300, report_mb=10).text())
