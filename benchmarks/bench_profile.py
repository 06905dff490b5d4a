"""Profiling helpers for the two live paths (not part of ``run.py``'s figures).

    .venv/bin/python benchmarks/bench_profile.py parse [--pages N]   # where parsing spends time
    .venv/bin/python benchmarks/bench_profile.py live [--concurrency N] [--per-host N]
                                                      [--hosts H] [--latency-ms MS]

``parse`` runs ``visible_text`` over the corpus pages in this process under pyinstrument
(``.venv/bin/pip install pyinstrument``), or cProfile when pyinstrument is missing.

``live`` runs ``verify-notes`` in this process against the latency server (started in a child
process, so it does not share this one's GIL) and prints a timeline: when loads start and end,
how long pages wait for a parse worker, how long the parse pool takes to start and stop, and
how many loads were in flight every 25 ms.
Samplers such as pyinstrument follow one thread; the loaders are many, so a timeline says more.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_web
from web_server import BenchServer


def profile_parse(pages: int | None) -> None:
    """Profile ``visible_text`` on the corpus, one page after another."""
    from tracecite.visible import visible_text

    folder = bench_web.corpus_dir()
    if folder is None:
        raise SystemExit("corpus not found (../shared/corpus or $TRACECITE_CORPUS)")
    texts = [p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.html"))[:pages]]
    try:
        from pyinstrument import Profiler
    except ImportError:
        import cProfile
        import pstats

        print("pyinstrument is not installed: cProfile instead", file=sys.stderr)
        profile = cProfile.Profile()
        profile.runcall(lambda: [visible_text(t) for t in texts])
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return
    profiler = Profiler(interval=0.0005)
    profiler.start()
    for text in texts:
        visible_text(text)
    profiler.stop()
    print(profiler.output_text(unicode=True, color=False, show_all=False))


def _serve(conn: Connection, latency: float, hosts: int) -> None:
    site, _ = bench_web.latency_site(200, 1000)
    with BenchServer(site, latency=latency, addresses=hosts) as server:
        conn.send(server.port)
        conn.recv()  # until the profile is done


def profile_live(plan: bench_web.Plan, latency: float) -> None:
    """Timeline of one latency-bound ``verify-notes`` run."""
    import tracecite.checks.parse_pool as parse_pool
    import tracecite.checks.web as web
    from tracecite.cli import main

    here, there = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(target=_serve,
                                                          args=(there, latency, plan.hosts))
    server.start()
    events: list[tuple[str, float, float]] = []
    origin = time.perf_counter()

    def timed(owner: Any, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            result = original(*args, **kwargs)
            if name == "submit" and hasattr(result, "add_done_callback"):
                result.add_done_callback(lambda _: events.append(
                    ("parse", start - origin, time.perf_counter() - origin)))
            else:
                events.append((name, start - origin, time.perf_counter() - origin))
            return result

        setattr(owner, name, wrapper)

    try:
        port = here.recv()
        _, notes_text = bench_web.latency_site(200, 1000, hosts=plan.hosts)
        for owner, name in ((web.WebLoader, "load"), (parse_pool.ParsePool, "submit"),
                            (parse_pool.ParsePool, "start"), (parse_pool.ParsePool, "close")):
            timed(owner, name)
        flags = bench_web.connect_flags(port, plan.hosts)
        with tempfile.TemporaryDirectory() as tmp:
            notes = Path(tmp) / "notes.txt"
            notes.write_text(notes_text, encoding="utf-8")
            origin = time.perf_counter()
            code = main(["verify-notes", str(notes), "--quiet", "--no-progress", *flags,
                         "--debug", *plan.options()])
            total = time.perf_counter() - origin
    finally:
        here.send("done")
        server.join(10)
    floor = 200 * latency / plan.effective(200)
    print(f"{plan.label()} on {plan.hosts} host(s): verify-notes exit {code}, {total:.3f} s in "
          f"this process; floor {floor:.3f} s ({plan.effective(200)} in flight allowed)")
    for kind in ("start", "load", "parse", "close"):
        spans = [(s, e) for k, s, e in events if k == kind]
        if spans:
            durations = sorted(e - s for s, e in spans)
            print(f"  {kind:6} ×{len(spans):<4} first start "
                  f"{min(s for s, _ in spans):.3f}  last end {max(e for _, e in spans):.3f}  "
                  f"median {durations[len(durations) // 2] * 1000:.1f} ms  "
                  f"max {durations[-1] * 1000:.1f} ms")
    loads = [(s, e) for k, s, e in events if k == "load"]
    if loads:
        # Loads in flight at each 25 ms: a ramp-up, a plateau at the limit, a tail.
        steps = int(max(e for _, e in loads) / 0.025) + 1
        counts = [sum(1 for s, e in loads if s <= t * 0.025 < e) for t in range(steps)]
        print("  loads in flight every 25 ms: " + " ".join(str(c) for c in counts))


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    parse = sub.add_parser("parse")
    parse.add_argument("--pages", type=int, default=None)
    live = sub.add_parser("live")
    live.add_argument("--concurrency", type=int, default=None,
                      help="tracecite's --concurrency (default: its default)")
    live.add_argument("--per-host", type=int, default=None,
                      help="tracecite's --per-host (default: its default)")
    live.add_argument("--hosts", type=int, default=1,
                      help=f"1, or {bench_web.HOSTS}: the pages under that many host names")
    live.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    if args.mode == "parse":
        profile_parse(args.pages)
    else:
        plan = bench_web.Plan("tracecite", args.hosts, args.concurrency, args.per_host)
        profile_live(plan, args.latency_ms / 1000)


if __name__ == "__main__":
    main()
