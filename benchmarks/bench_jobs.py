"""Figure 7, many traces at once: ``tracecite check FILE… --evidence`` at ``--jobs 1``,
``--jobs 2`` and the default (one process per core) on 2,000 traces of mixed sizes, 243 MB in
all.

The traces come from ``gen_trace.generate`` (sizes drawn from a log-normal from a seed, so a few
are ten times the median) and are cached in ``benchmarks/out/jobs-…/``, keyed by their number,
total size and the generator's source. Every run's JSON report must be the same as the serial
one's, byte for byte. Beside them, the peers: the same reading (and hashing, for the report's
digest of its inputs) split by a bare fork (the floor of any two-process split), and the split a
user makes by hand, two ``--jobs 1`` runs over halves of the files started side by side
(``--jobs 2``: at most 0.9× its time).

``python bench_jobs.py threshold`` measures where a pool starts to pay: the same traces read in
this process alone and as ``--jobs 2`` reads them, on sets of growing total size
(``tracecite.jobs`` reads below ``MIN_PARALLEL_BYTES`` serially).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_util import (
    BENCH_DIR,
    MB,
    OUT_DIR,
    REPO,
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

HALVES = "two forked halves"
"""The peer row: the reading split by a bare fork (:func:`halves`)."""

SIDE_BY_SIDE = "two --jobs 1 runs side by side"
"""The split by hand: two ``check --jobs 1`` commands at once, each over half of the bytes."""

SPLIT_GOAL = 0.9
"""``--jobs 2`` at most this share of the time of the split by hand (one run of all cores must
clearly beat two runs started side by side)."""

GOAL = 1.7
"""``--jobs 2`` at least this many times faster than ``--jobs 1`` (on 2 cores or more)."""


OVERSHOOT_MB = 0.0085
"""How far past its target size ``gen_trace.generate`` writes, on average: the rest of the
result it is in, and the answer."""


def trace_sizes(count: int, total_mb: float, seed: int = 7) -> list[float]:
    """``count`` target sizes in MB from a log-normal (σ 0.9), ``total_mb`` in all once
    written."""
    rng = random.Random(seed)
    raw = [math.exp(rng.gauss(0.0, 0.9)) for _ in range(count)]
    scale = (total_mb - count * OVERSHOOT_MB) / sum(raw)
    return [r * scale for r in raw]


def trace_folder(count: int, total_mb: float, log: Log = print) -> tuple[Path, int]:
    """A cached folder of ``count`` traces, ``total_mb`` in all, and their citations."""
    from gen_trace import generate

    key = hashlib.sha256((BENCH_DIR / "gen_trace.py").read_bytes()).hexdigest()[:10]
    folder = OUT_DIR / f"jobs-{count}x-{total_mb:g}mb-{key}"
    done = folder / "citations"
    if not done.exists():
        log(f"  generating {count} traces, {total_mb:g} MB in all (cached for later runs) …")
        folder.mkdir(parents=True, exist_ok=True)
        citations = 0
        for n, size in enumerate(trace_sizes(count, total_mb)):
            citations += generate(str(folder / f"run-{n:05d}.trace.jsonl"), size, seed=n)
        done.write_text(str(citations))
    return folder, int(done.read_text())


def figure(count: int, total_mb: float, repeats: int, log: Log = print) -> Table:
    """``check --evidence`` of one folder of traces at ``--jobs 1``, ``--jobs 2`` and the
    default, ``repeats`` interleaved runs each."""
    import os

    folder, citations = trace_folder(count, total_mb, log)
    actual = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    table = Table(f"Many traces at once: check --evidence on {count:,} traces "
                  f"({megabytes(actual)})",
                  ["run", "wall", "CPU", "peak RSS", "speed-up", "rounds", "goal"])
    # The files themselves, as a hook or xargs gives them: a folder would add the selection by
    # the globs (about 0.1 s for 2,000 files, the same in every run).
    files = sorted(str(p) for p in folder.glob("*.jsonl"))
    base = [*tracecite_command(), "check", *files, "--evidence", "--json"]
    listing = OUT_DIR / "jobs-files.txt"
    listing.write_text("\n".join(files))
    tools = [("--jobs 1", [*base, "--jobs", "1"]), ("--jobs 2", [*base, "--jobs", "2"]),
             (f"default ({os.cpu_count()} cores)", base),
             (HALVES, [sys.executable, str(Path(__file__).resolve()), "halves", str(listing)]),
             (SIDE_BY_SIDE, [sys.executable, "-S", str(Path(__file__).resolve()),
                             "side-by-side", str(listing)])]
    load = os.getloadavg()[0]
    runs: dict[str, list[Measured]] = {name: [] for name, _ in tools}
    log(f"  {count} traces, {megabytes(actual)}, {citations} citations: {repeats} round(s) "
        "of each …")
    for n in range(repeats):  # rounds of one run each, in turn reversed: a round takes
        for name, cmd in tools if n % 2 == 0 else tools[::-1]:  # seconds, so its runs meet
            runs[name].append(measure(cmd, tree=True))  # the same machine, however busy
    serial = runs["--jobs 1"][-1].stdout
    walls = {name: median([r.wall for r in rs]) for name, rs in runs.items()}
    by_hand = [two.wall / side.wall for two, side in
               zip(runs["--jobs 2"], runs[SIDE_BY_SIDE], strict=True)]
    for name, rs in runs.items():
        problem = (_problem(rs[-1], serial, citations) if name not in (HALVES, SIDE_BY_SIDE)
                   else "" if rs[-1].returncode == 0 else f"FAILED: {rs[-1].stderr[-80:]}")
        rounds = [one.wall / r.wall for one, r in zip(runs["--jobs 1"], rs, strict=True)]
        speedup = median(rounds)
        goal = ""
        if name == "--jobs 2":
            goal = (f"≥ {GOAL}× {verdict(speedup >= GOAL)}; {ratio(median(by_hand))} the "
                    f"time of {SIDE_BY_SIDE} ({min(by_hand):.2f}–{max(by_hand):.2f}×): "
                    f"≤ {SPLIT_GOAL}× {verdict(median(by_hand) <= SPLIT_GOAL)}"
                    if (os.cpu_count() or 1) >= 2 else "one core: no goal")
        spread = f"{min(rounds):.2f}–{max(rounds):.2f}×" if name != "--jobs 1" else ""
        table.add(name, seconds(walls[name]), seconds(median([r.cpu for r in rs])),
                  megabytes(max(max(r.peak_rss, r.tree_rss) for r in rs)),
                  ratio(speedup) if name != "--jobs 1" else "", spread, problem or goal)
    table.note(f"speed-up: --jobs 1's wall ÷ the run's in the same round, the median over "
               f"{repeats} rounds (the rounds' spread beside it); goal: --jobs 2 at least "
               f"{GOAL}× faster than --jobs 1; every report the same as the serial one's, byte "
               "for byte")
    table.note(f"{HALVES}: the same files read and hashed (the report's digest of its "
               "inputs) by two processes, a fork of this one and itself, each taking half of "
               "the bytes, with no pool, no results sent and no report: the floor of any split "
               "into two processes on this host at this time, whose CPU shows what two busy "
               "cores cost the reading itself")
    table.note(f"{SIDE_BY_SIDE}: the files cut in two halves of equal bytes, as a user would "
               "split them by hand, each checked by its own `check --evidence --jobs 1`, both "
               "started at once by a small Python process (`bench_jobs.py side-by-side`, its "
               "start-up of about 20 ms counted), the wall until both ended; --jobs 2's share "
               "of it is each round's ratio, the median with the rounds' spread")
    table.note(f"wall and CPU: median of {repeats} runs; peak RSS over the process tree "
               "(workers included); the host's speed drifts by up to 3× from minute to minute "
               "here, so each speed-up compares runs seconds apart, not medians minutes apart")
    split = json.loads(subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "split", str(count), str(total_mb)],
        capture_output=True, text=True, check=True).stdout)
    # Start-up and report: the same command on the smallest trace alone, at its best of five.
    smallest = min(files, key=lambda f: Path(f).stat().st_size)
    startup = min(measure([*tracecite_command(), "check", smallest, "--evidence", "--json"]).wall
                  for _ in range(5))
    busier = max(split["here_cpu"], split["worker_cpu"])
    # Each process hashes what it reads: on two idle cores, half of the digests each.
    idle = ((startup + split["serial_cpu"] + split["digests"])
            / (startup + busier + split["digests"] / 2))
    table.note(f"the work split ({split['runs']} runs, in-process, CPU time): serial "
               f"{split['serial_cpu']:.2f} s, and {split['digests']:.2f} s more to hash every "
               "input for the report's digest (a thread beside each reader from 4 MB, in "
               f"{SIDE_BY_SIDE} and {HALVES} too); --jobs 2 reads "
               f"{split['here_cpu']:.2f} s in the main process and {split['worker_cpu']:.2f} s "
               f"in its worker, their last files ending {split['ends_apart'] * 1000:.0f} ms "
               f"apart, the worker's results pickled in {split['pickling'] * 1000:.0f} ms; on "
               "two idle cores --jobs 2 would take the start-up, the busier process's CPU and "
               f"half the hashing: ≈ {idle:.2f}× (the start-up and report: check of the "
               f"smallest trace alone, {startup * 1000:.0f} ms)")
    if load > 1:
        table.note(f"the machine was busy (load {load:.1f}): where the scheduler groups "
                   "processes by session (Linux autogroup), a run's workers share its one slice "
                   "of a busy CPU, so extra workers only pay on idle cores; rerun when idle")
    return table


def _timed_read(read: Any, item: Any) -> tuple[Any, int, float, float]:
    """``read(item)``, with the pid that read it, its CPU seconds and when it ended."""
    import os

    cpu = time.process_time()
    out = read(item)
    return out, os.getpid(), time.process_time() - cpu, time.perf_counter()


def work_split(count: int, total_mb: float) -> dict[str, float]:
    """How ``tracecite.jobs`` splits the reading of the figure's traces between this process
    and one worker, in this process: the serial reading's CPU, each process's CPU, when the
    last item of each ended, and the pickling of the worker's results; CPU time is what a busy
    machine disturbs least."""
    import os
    import pickle
    from functools import partial

    sys.path.insert(0, str(REPO))
    from tracecite import jobs
    from tracecite.inputs.files import file_digest
    from tracecite.run.inputs import read_input

    folder, _ = trace_folder(count, total_mb)
    items = [(str(p), True) for p in sorted(folder.glob("*.jsonl"))]
    sizes = [os.path.getsize(path) for path, _ in items]
    read = partial(read_input, evidence=True, keep_uris=False)
    cpu = time.process_time()
    jobs._serial(read, items, {})
    serial = time.process_time() - cpu
    cpu = time.process_time()
    for path, _ in items:  # the report's digest of its inputs, which the split leaves out
        file_digest(path)
    digests = time.process_time() - cpu
    started = time.perf_counter()
    timed = jobs._parallel(partial(_timed_read, read), items, sizes, 2).results()
    per: dict[int, list[float]] = {}
    for _, pid, used, end in timed:
        entry = per.setdefault(pid, [0.0, 0.0])
        entry[0] += used
        entry[1] = max(entry[1], end - started)
    sent = [out for out, pid, _, _ in timed if pid != os.getpid()]
    pickling = time.perf_counter()
    pickle.dumps(sent)
    pickling = time.perf_counter() - pickling
    here = per.pop(os.getpid(), [0.0, 0.0])
    worker = max(per.values(), default=[0.0, 0.0], key=lambda e: e[0])
    return {"serial_cpu": serial, "here_cpu": here[0], "worker_cpu": worker[0],
            "ends_apart": abs(here[1] - worker[1]), "pickling": pickling, "digests": digests,
            "runs": len(jobs.runs_of(sizes, 2))}


def two_halves(paths: list[str]) -> tuple[list[str], list[str]]:
    """The paths in two halves of about equal bytes, the largest first to the lighter half."""
    import os

    halves_: tuple[list[str], list[str]] = ([], [])
    held = [0, 0]
    for path in sorted(paths, key=lambda p: -os.path.getsize(p)):
        side = 0 if held[0] <= held[1] else 1
        halves_[side].append(path)
        held[side] += os.path.getsize(path)
    return halves_


def side_by_side(listing: str) -> None:
    """Check the traces listed in ``listing`` as a user splitting them by hand would: two
    ``check --evidence --jobs 1`` commands at once, over halves of equal bytes."""
    paths = Path(listing).read_text().splitlines()
    runs = [subprocess.Popen([*tracecite_command(), "check", *half, "--evidence", "--json",
                              "--jobs", "1"], stdout=subprocess.DEVNULL)
            for half in two_halves(paths)]
    codes = [run.wait() for run in runs]
    raise SystemExit(0 if all(code == 0 for code in codes) else 1)


def halves(listing: str) -> None:
    """Read the traces listed in ``listing`` as ``check --evidence`` reads each (and hash
    each, as it does for the report's digest of its inputs), in two processes: a fork of this
    one reads one half of the bytes, this one the other."""
    import os
    from functools import partial

    sys.path.insert(0, str(REPO))
    import tracecite.checks.evidence  # noqa: F401  (before the fork, as tracecite does)
    from tracecite.inputs.files import file_digest
    from tracecite.run.inputs import read_input

    paths = Path(listing).read_text().splitlines()
    read = partial(read_input, evidence=True, keep_uris=False)
    mine, theirs = two_halves(paths)
    child = os.fork()
    for path in theirs if child == 0 else mine:
        read((path, True))
        file_digest(path)  # the report's digest of its inputs: every run of check hashes them
    if child == 0:
        os._exit(0)
    _, status = os.waitpid(child, 0)
    raise SystemExit(os.waitstatus_to_exitcode(status))


def _problem(run: Measured, serial: str, citations: int) -> str:
    """What went wrong with a run, or ``""``."""
    try:
        summary = json.loads(run.stdout)["summary"]
    except (ValueError, KeyError):
        return f"FAILED (exit {run.returncode}): {run.stderr.strip()[:80]}"
    matched = summary["captured"]["matched"]
    if run.returncode != 0 or matched != citations:
        return f"WRONG: exit {run.returncode}, {matched}/{citations} matched"
    if run.stdout != serial:
        return "WRONG: the report differs from the serial one"
    return ""


def threshold(repeats: int = 5) -> None:
    """Print, for sets of growing total size, reading them here alone and as ``--jobs 2``
    does (here and in one worker)."""
    sys.path.insert(0, str(REPO))
    from functools import partial

    from tracecite import jobs
    from tracecite.run.inputs import read_input

    folder, _ = trace_folder(2000, 243)
    paths = sorted(folder.glob("*.jsonl"))
    read = partial(read_input, evidence=True, keep_uris=False)
    print("files  MB     serial  --jobs 2  ratio  (best of each)")
    for files in (5, 10, 20, 40, 80, 160, 320):
        items = [(str(p), True) for p in paths[:files]]
        sizes = [p.stat().st_size for p in paths[:files]]
        serial, parallel = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            jobs._serial(read, items, {})
            serial.append(time.perf_counter() - started)
            started = time.perf_counter()
            jobs._parallel(read, items, sizes, 2)
            parallel.append(time.perf_counter() - started)
        s, p = min(serial), min(parallel)  # the least disturbed run of each
        print(f"{files:5d}  {sum(sizes) / MB:5.1f}  {s * 1000:5.0f} ms  {p * 1000:5.0f} ms "
              f"  {s / p:.2f}")


if __name__ == "__main__":
    if sys.argv[1:] == ["threshold"]:
        threshold()
    elif sys.argv[1:2] == ["halves"]:
        halves(sys.argv[2])
    elif sys.argv[1:2] == ["side-by-side"]:
        side_by_side(sys.argv[2])
    elif sys.argv[1:2] == ["split"]:
        print(json.dumps(work_split(int(sys.argv[2]), float(sys.argv[3]))))
    else:
        raise SystemExit("usage: python bench_jobs.py threshold | split COUNT MB | halves LIST"
                         " | side-by-side LIST")
