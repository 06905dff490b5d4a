"""Run TraceCite's benchmarks and print every figure of issue 5 with its peer or baseline.

    .venv/bin/python benchmarks/run.py            # all figures, a few minutes
    .venv/bin/python benchmarks/run.py --quick    # small sizes, under a minute
    .venv/bin/python benchmarks/run.py --only 2,3 # some figures

Each figure is a table of ratios measured in this one run (tools interleaved), printed as it is
done and written, in Markdown, to ``benchmarks/out/latest.md``. The benchmarks make their own
data (cached in ``benchmarks/out/``), start their own local servers on 127.0.0.1 and stop them.
linkinator is installed from npm into ``benchmarks/node_modules`` on first use.

1. evidence at scale (15, 150 and 600 MB traces) vs jq and the stdlib json
2. latency-bound verify-notes vs the floor, linkinator and a urllib3 loop (8 and 32 in flight)
3. parse-bound verify-notes vs the single-process parse time ÷ cores
4. start-up vs ``python -c pass``
5. the web over time (transient faults, a rate limit, the cache) vs ``--retries 0``
6. the near-miss diagnosis: the cost per missed quote on a 2 MiB page vs its goal of 50 ms
7. many traces at once: ``check --evidence`` of 2,000 traces at ``--jobs 1`` vs ``--jobs 2``, and
   two ``--jobs 1`` runs over the halves side by side
8. memory: 50 MB of notes, 1M sources, compare of two 150 MB traces (43,000 and 120,000 sources,
   in memory and wall time) vs the inputs' sizes and one ``check --evidence``; a 1.6 MB zip bomb
   imported, 1M findings, 2M sources on one line vs their bounds
9. the fast extra: corpus visible text with lexbor vs html5lib (goal ≥ 5×), and verify-notes of
   the corpus vs a default install made in ``benchmarks/out/venv-default``
10. import at scale: ``import anthropic`` of a JSONL of 200,000 exchanges, a trace each, vs
    decoding its lines
11. documents: ``check`` and ``verify-docs`` of 10,000 Markdown files vs ``check`` and
    ``verify-notes`` of a notes file with the same citations (goals ≤ 2× and ≤ 1.1×, ≤ 150 MB)
12. PDF sources: verify-files of 40 PDFs (1,000 pages) vs pdftotext (goal ≤ 1.5×),
    verify-notes of 100 PDFs of 2 MiB: cores busy, main process RSS (goal ≤ 150 MB), and of 48
    PDFs of 24 MiB requested at once: main process RSS (goal ≤ 256 MB)
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_diagnosis
import bench_docs
import bench_evidence
import bench_fast
import bench_faults
import bench_import
import bench_jobs
import bench_memory
import bench_pdf
import bench_startup
import bench_web
from bench_util import OUT_DIR, REPO, Table, which


def _version(cmd: list[str]) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else "?"


def machine() -> str:
    """One line about where the figures were measured."""
    node = _version(["node", "--version"]) if which("node") else "not installed"
    jq = _version(["jq", "--version"]) if which("jq") else "not installed"
    load = os.getloadavg()[0]
    return (f"{os.cpu_count()} cores, Python {platform.python_version()}, node {node}, {jq}, "
            f"load average {load:.1f} at the start")


def main(argv: list[str] | None = None) -> int:
    """Run the chosen figures; return 1 if a figure could not run at all."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer repeats")
    parser.add_argument("--only", default="1,2,3,4,5,6,7,8,9,10,11,12",
                        help="figures to run (1 to 12), e.g. 2,3")
    args = parser.parse_args(argv)
    chosen = {int(x) for x in args.only.split(",") if x.strip()}
    quick = args.quick

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    # Measure TraceCite as an installed package runs: from bytecode. (Without this, a shell
    # with PYTHONDONTWRITEBYTECODE set compiles every module on every run.)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "tracecite")],
                   check=False)
    header = (f"TraceCite benchmarks ({'quick' if quick else 'full'} run, "
              f"{datetime.date.today().isoformat()}): {machine()}")
    print(header + "\n", flush=True)
    tables: list[Table] = []
    runners: dict[int, tuple[str, Callable[[], Table]]] = {
        1: ("evidence at scale", lambda: bench_evidence.figure(
            [2, 15] if quick else [15, 150, 600], repeats=1 if quick else 3, log=log)),
        2: ("latency-bound web checks", lambda: bench_web.latency_figure(
            concurrencies=() if quick else (8, 64), repeats=1 if quick else 3, log=log)),
        3: ("parse-bound web checks", lambda: bench_web.parse_figure(
            limit=30 if quick else None, repeats=1 if quick else 3, log=log)),
        4: ("start-up", lambda: bench_startup.figure(7 if quick else 21, log=log)),
        5: ("the web over time", lambda: bench_faults.figure(
            urls=300 if quick else 2000, hosts=6 if quick else 20,
            records=600 if quick else 5000, timeout=40 if quick else 120, log=log)),
        6: ("near-miss diagnosis", lambda: bench_diagnosis.figure(
            n=40 if quick else 200, repeats=1 if quick else 3, log=log)),
        7: ("many traces at once", lambda: bench_jobs.figure(
            400 if quick else 2000, 48 if quick else 243, repeats=1 if quick else 9, log=log)),
        8: ("memory", lambda: bench_memory.figure(
            notes_mb=5 if quick else 50, sources=100_000 if quick else 1_000_000,
            trace_mb=15 if quick else 150, claims=100_000 if quick else 1_000_000,
            line_sources=200_000 if quick else 2_000_000, bomb_mb=300 if quick else 1600,
            report_mb=30 if quick else 150, repeats=1 if quick else 3, log=log)),
        9: ("the fast extra", lambda: bench_fast.figure(
            repeats=1 if quick else 3, limit=30 if quick else None, log=log)),
        10: ("import at scale", lambda: bench_import.figure(
            exchanges=10_000 if quick else 200_000, repeats=1, log=log)),
        11: ("documents", lambda: bench_docs.figure(
            1000 if quick else 10_000, repeats=1 if quick else 3, log=log)),
        12: ("PDF sources", lambda: bench_pdf.figure(
            repeats=1 if quick else 3, count=30 if quick else 100,
            large=12 if quick else 48, files_repeats=1 if quick else 11, log=log)),
    }
    failed = False
    for number in sorted(chosen):
        name, run = runners[number]
        log(f"[{number}] {name} …")
        load_before = os.getloadavg()[0]
        try:
            table = run()
        except Exception as error:  # one broken figure must not hide the others
            failed = True
            table = Table(f"{name}: could not run", ["error"])
            table.add(f"{type(error).__name__}: {error}")
        table.note(f"load average (1 min) {load_before:.1f} before this figure, "
                   f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
        tables.append(table)
        print(table.text(), flush=True)
    OUT_DIR.mkdir(exist_ok=True)
    latest = OUT_DIR / "latest.md"
    latest.write_text(f"_{header}_\n\n" + "\n".join(t.markdown() for t in tables),
                      encoding="utf-8")
    log(f"done in {time.perf_counter() - started:.0f} s; Markdown tables in {latest}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
