"""Figure 11: documents. ``check`` and ``verify-docs`` of a folder of Markdown documents beside
``check`` and ``verify-notes`` of a notes file that holds the same quotes and URLs
(docs/guides/documents.md).

The corpus is gen_docs.py's: N documents of about 5 KB with five citations each, one of each
form, citing one page per ten documents. The pages are served on 127.0.0.1 (reached as
``bench.test`` through ``--connect-to``), each holding the quotes of its ten documents, so every
quote matches. Goals: the offline pass at most 2× the notes file's ``check``, the live pass at
most 1.1× its ``verify-notes``, and a peak RSS of at most 150 MB.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import gen_docs
from bench_util import (
    MB,
    OUT_DIR,
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
from bench_web import HOST, connect_flags
from web_server import BenchServer

Log = Callable[[str], None]

OFFLINE_GOAL = 2.0
LIVE_GOAL = 1.1
RSS_GOAL = 150 * MB


def corpus(files: int, log: Log) -> Path:
    """The corpus of ``files`` documents and its notes file, made once and kept."""
    folder = OUT_DIR / f"docs-{files}"
    done = folder / ".done"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    log(f"  writing {files} documents under {folder} …")
    gen_docs.main(["gen_docs.py", str(folder), str(files), f"http://{HOST}"])
    done.write_text("", encoding="utf-8")
    return folder


def pages(files: int) -> dict[str, bytes]:
    """Each page the corpus cites, holding the quotes of the ten documents that cite it."""
    out: dict[str, list[str]] = {}
    for index in range(files):
        path = f"/page{index // 10}.html"
        out.setdefault(path, []).extend(gen_docs.quotes(index))
    return {path: ("<!doctype html><title>p</title><body>"
                   + "".join(f"<p>{q}.</p>" for q in quotes) + "</body>").encode("utf-8")
            for path, quotes in out.items()}


def _run(cmd: Sequence[str], cwd: Path) -> tuple[Measured, dict[str, object]]:
    # check shows no progress bar (and takes no --no-progress); the live commands get it.
    quiet = [] if cmd[0] == "check" else ["--no-progress"]
    run = measure([*tracecite_command(), *cmd, "--json", *quiet], cwd=cwd, tree=True,
                  timeout=900)
    try:
        report: dict[str, object] = json.loads(run.stdout)
    except ValueError:
        raise RuntimeError(f"{' '.join(cmd[:2])}: exit {run.returncode}: "
                           f"{run.stderr.strip()[-200:]}") from None
    return run, report


def _matched(report: dict[str, object]) -> int:
    summary = report["summary"]
    assert isinstance(summary, dict)
    return int(summary["live"]["matched"]) + int(summary["files"]["matched"])


def figure(files: int = 10_000, *, repeats: int = 3, log: Log = print) -> Table:
    """The documents figure: each pass and its peer, median wall of ``repeats`` runs, peak
    RSS of the main process and of its whole tree (workers included)."""
    folder = corpus(files, log)
    size = sum(p.stat().st_size for p in (folder / "docs").iterdir())
    citations = 5 * files
    table = Table(f"documents: {files} Markdown files ({megabytes(size)}), {citations} "
                  f"citations", ["run", "wall", "ratio", "CPU", "CPU ratio", "goal", "peak RSS",
                                 "tree RSS", "met"])
    offline: dict[str, list[Measured]] = {"docs": [], "notes": []}
    live: dict[str, list[Measured]] = {"docs": [], "notes": []}
    with BenchServer(pages(files)) as server:
        flags = connect_flags(server.port)
        for _ in range(repeats):  # the tools interleaved, so load hits both alike
            run, report = _run(["check", "docs"], folder)
            if run.returncode != 0:
                raise RuntimeError(f"check of the documents: exit {run.returncode}")
            offline["docs"].append(run)
            run, _ = _run(["check", "notes.txt"], folder)
            offline["notes"].append(run)
            run, report = _run(["verify-docs", "docs", *flags], folder)
            if run.returncode != 0 or _matched(report) != citations:
                raise RuntimeError(f"verify-docs: exit {run.returncode}, "
                                   f"{_matched(report)}/{citations} matched")
            live["docs"].append(run)
            run, report = _run(["verify-notes", "notes.txt", *flags], folder)
            if run.returncode != 0 or _matched(report) != citations:
                raise RuntimeError(f"verify-notes: exit {run.returncode}, "
                                   f"{_matched(report)}/{citations} matched")
            live["notes"].append(run)
    for name, runs, goal in (("check (offline)", offline, OFFLINE_GOAL),
                             ("verify-docs (live)", live, LIVE_GOAL)):
        docs = median([r.wall for r in runs["docs"]])
        notes = median([r.wall for r in runs["notes"]])
        docs_cpu = median([r.cpu for r in runs["docs"]])
        notes_cpu = median([r.cpu for r in runs["notes"]])
        peak = max(r.peak_rss for r in runs["docs"])
        tree = max(r.tree_rss for r in runs["docs"])
        ok = docs <= goal * notes and peak <= RSS_GOAL
        table.add(f"{name}: the documents", seconds(docs), ratio(docs / notes),
                  seconds(docs_cpu), ratio(docs_cpu / notes_cpu),
                  f"≤ {goal:g}×, ≤ 150 MB", megabytes(peak), megabytes(tree), verdict(ok))
        table.add(f"{name}: the notes file", seconds(notes), ratio(1.0), seconds(notes_cpu),
                  ratio(1.0), "",
                  megabytes(max(r.peak_rss for r in runs["notes"])),
                  megabytes(max(r.tree_rss for r in runs["notes"])), "")
    table.note(f"walls and CPU (user + system, the workers' included) are the median of "
               f"{repeats} runs; on a shared host the CPU ratio is the steadier one; peak RSS is "
               "the main process's high-water mark, tree RSS the sampled sum over it and its "
               "workers")
    table.note(f"{len(pages(files))} pages on 127.0.0.1 (as {HOST}), each holding the quotes "
               "of the ten documents that cite it")
    return table
