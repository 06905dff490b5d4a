"""Figure 12, PDF sources (docs/guides/pdf.md):

- ``verify-files`` over 40 local reports of 25 pages (1,000 pages) against poppler's
  ``pdftotext`` over the same files, run with as many at once as there are cores (``xargs
  -P``), interleaved; goal: at most 1.5× its time. Skipped, saying so, without ``pdftotext``.
  Beside them, PDFium's text alone of the same files, one bare interpreter per core
  (``pdfium_text.py``): the floor of any tool that reads PDFs with PDFium.
- ``verify-notes`` of 100 PDFs of 2 MiB each (``--max-pdf-bytes`` raised a little over it) on a
  loopback server: how busy the cores are (CPU time of TraceCite and its PDF workers ÷ wall time
  ÷ cores) and the main process's peak RSS; goal: at most 150 MB.
- ``verify-notes`` of 48 PDFs of 24 MiB, all requested at once (``--per-host 48``,
  ``--max-pdf-bytes`` 32 MiB): the main process's peak RSS stays at what the run's PDF budgets
  allow (goal: at most 256 MB, where 48 bodies held whole would be 1.2 GB).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import gen_pdfs
from bench_util import (
    MB,
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
    which,
)
from bench_web import HOST, connect_flags
from web_server import BenchServer

from tracecite.pdf.reader import WORKER_ALLOCATOR

TIME_GOAL = 1.5
TEXT_PAGES = 60
"""Pages of text in the PDFs of figure 12's second 2 MiB row."""
RSS_GOAL = 150 * MB
LARGE = 24 * MB
LARGE_RSS_GOAL = 256 * MB


def _trace(path: Path, quotes: dict[str, list[str]]) -> Path:
    """A trace citing each report's sentences as ``file:`` sources (captured, so the evidence
    check passes)."""
    sources: list[dict[str, str]] = []
    cites: list[dict[str, str]] = []
    for n, (name, said) in enumerate(sorted(quotes.items()), 1):
        sources.append({"id": f"s{n}", "uri": f"file:{name}", "content": " ".join(said)})
        cites.extend({"source_id": f"s{n}", "quote": quote} for quote in said)
    events = [{"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "read"},
              {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True,
               "sources": sources},
              {"type": "answer", "run_id": "r", "claims": [{"text": "c", "citations": cites}]}]
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    return path


def _files_rows(table: Table, repeats: int, log: Log) -> None:
    folder, quotes = gen_pdfs.report_set(40, 25)
    pdfs = sorted(folder.glob("*.pdf"))
    size = sum(p.stat().st_size for p in pdfs)
    with tempfile.TemporaryDirectory() as tmp:
        trace = _trace(Path(tmp) / "reports.jsonl", quotes)
        ours = [*tracecite_command(), "verify-files", str(trace), "--root", str(folder),
                "--json", "--no-progress"]
        peer = None
        if which("pdftotext"):
            peer = ["sh", "-c", f"ls {folder}/*.pdf | xargs -P {os.cpu_count() or 1} -I F "
                                "pdftotext -q F /dev/null"]
        # PDFium alone, a bare interpreter for each core's share of the files: the floor.
        cores = os.cpu_count() or 1
        share = -(-len(pdfs) // cores)
        floor = ["sh", "-c", f"ls {folder}/*.pdf | xargs -P {cores} -n {share} "
                             f"{sys.executable} {Path(__file__).with_name('pdfium_text.py')}"]
        floor_env = {**os.environ, **WORKER_ALLOCATOR}  # the allocator the workers have
        times: dict[str, list[float]] = {"tracecite": [], "pdftotext": [], "pdfium": []}
        log(f"  {len(pdfs)} PDFs, {len(pdfs) * 25} pages, {size / MB:.1f} MB: "
            f"{repeats} run(s) …")
        matched = 0
        for _ in range(repeats):
            run = measure(ours)  # no tree sampler: it would take CPU from the run, not the peer
            report = json.loads(run.stdout)
            matched = report["summary"]["files"]["matched"]
            times["tracecite"].append(run.wall)
            if peer is not None:
                times["pdftotext"].append(measure(peer).wall)
            times["pdfium"].append(measure(floor, env=floor_env).wall)
    ours_time = median(times["tracecite"])
    quotes_total = sum(len(q) for q in quotes.values())
    if peer is None:
        table.add("verify-files, 40 PDFs (1,000 pages)", seconds(ours_time), "", "",
                  f"{matched}/{quotes_total} quotes")
        table.note("pdftotext is not installed (Debian: poppler-utils): the peer is skipped")
        return
    theirs, engine = median(times["pdftotext"]), median(times["pdfium"])
    # Each round's ratio to the peer's run beside it: the median, and the spread.
    rounds = sorted(a / b for a, b in zip(times["tracecite"], times["pdftotext"], strict=True))
    floors = sorted(a / b for a, b in zip(times["pdfium"], times["pdftotext"], strict=True))
    ours_ratio, floor_ratio = median(rounds), median(floors)
    spread = f" ({rounds[0]:.2f}–{rounds[-1]:.2f}×)" if len(rounds) > 1 else ""
    table.add("verify-files, 40 PDFs (1,000 pages)", seconds(ours_time), seconds(theirs),
              f"{ratio(ours_ratio)}{spread} (≤ {TIME_GOAL:g}× "
              f"{verdict(ours_ratio <= TIME_GOAL)})",
              f"{matched}/{quotes_total} quotes")
    table.add("  PDFium's text alone, the same files", seconds(engine), seconds(theirs),
              ratio(floor_ratio) + (f" ({floors[0]:.2f}–{floors[-1]:.2f}×)"
                                    if len(floors) > 1 else ""), "")
    table.note(f"verify-files: {repeats} rounds, each TraceCite, pdftotext and PDFium's text "
               "alone in turns; the times are medians, the ratios each round's against the "
               "pdftotext run beside it: the median, and the spread")
    table.note("PDFium's text alone: the engine in a bare interpreter per core, each reading "
               "its share of the files (benchmarks/pdfium_text.py), and nothing else: the "
               "floor of any tool that reads PDFs with PDFium (with the C allocator's settings "
               "that TraceCite's workers start with)")


def _verify_pdfs(size: int, count: int, flags: list[str], *, pages: int = 4,
                 last_page: bool = False) -> tuple[Measured, int, float]:
    """``verify-notes`` of ``count`` padded PDFs of ``size`` bytes and ``pages`` pages of text
    on a loopback server, a quote each (from the last page with ``last_page``: the whole PDF
    is read), with ``flags``: the run, the PDF's size, and the server's CPU seconds in it."""
    data, by_page = gen_pdfs.padded_pdf(size, pages)
    sentences = by_page[-1] if last_page else [s for page in by_page for s in page]
    pdfs = {f"/report/{n}.pdf": data for n in range(count)}
    with tempfile.TemporaryDirectory() as tmp, BenchServer(
            pdfs, content_type="application/pdf") as server:
        notes = Path(tmp) / "pdfs.notes"
        notes.write_text("\n".join(
            f"claim: c\nquote: {sentences[n % len(sentences)]}\nurl: http://{HOST}{path}\n"
            for n, path in enumerate(pdfs)), encoding="utf-8")
        cmd = [*tracecite_command(), "verify-notes", str(notes), "--json", "--no-progress",
               *flags, *connect_flags(server.port)]
        served = server.cpu()
        run = measure(cmd, tree=True)
        served = server.cpu() - served
    return run, len(data), served


def _quotes_matched(run: Measured) -> str:
    live = json.loads(run.stdout)["summary"]["live"]
    return f"{live['matched']}/{live['checked']} quotes"


def _notes_rows(table: Table, count: int, log: Log) -> None:
    cores = os.cpu_count() or 1
    for pages, last_page, label in (
            (4, False, f"verify-notes, {count} PDFs of 2 MiB"),
            (TEXT_PAGES, True, f"  the same, {TEXT_PAGES} pages of text each, quoted from the "
                               "last")):
        log(f"  verify-notes of {count} PDFs of 2 MiB, {pages} pages of text each …")
        run, _, served = _verify_pdfs(2 * MB, count, ["--max-pdf-bytes", str(3 * MB)],
                                      pages=pages, last_page=last_page)
        busy = run.cpu / run.wall / cores
        table.add(label, seconds(run.wall),
                  f"cores busy {busy:.0%}, {(run.cpu + served) / run.wall / cores:.0%} "
                  "with the server",
                  f"main RSS {megabytes(run.peak_rss)} "
                  f"(≤ 150 MB {verdict(run.peak_rss <= RSS_GOAL)})",
                  _quotes_matched(run))
        table.note(f"{label.strip()}: at most {run.tree_procs} processes at once; the loopback "
                   f"server's CPU {served:.2f} s; whole tree's peak RSS "
                   f"{megabytes(run.tree_rss)}")
    table.note(f"cores busy: CPU time of TraceCite and its PDF workers ÷ wall time ÷ {cores} "
               "cores, then with the loopback server's, which shares the cores. The 4-page "
               "PDFs take a worker less time to read than the run's process takes to receive "
               f"and hand over their 2 MiB; the {TEXT_PAGES}-page ones, read to their last "
               "page, give the workers more to do than that")


def _large_rows(table: Table, count: int, log: Log) -> None:
    """``count`` PDFs of 24 MiB from one host that allows as many requests at once, with
    ``--max-pdf-bytes`` at its 32 MiB limit: the run's process holds what its budgets allow
    (64 MiB of PDFs loading, 64 MiB waiting for a worker), not ``count`` × 24 MiB."""
    log(f"  verify-notes of {count} PDFs of 24 MiB, {count} at once …")
    run, size, _ = _verify_pdfs(LARGE, count, [
        "--max-pdf-bytes", str(32 * MB), "--per-host", str(count), "--concurrency", str(count)])
    table.add(f"verify-notes, {count} PDFs of 24 MiB at once", seconds(run.wall), "",
              f"main RSS {megabytes(run.peak_rss)} (≤ 256 MB "
              f"{verdict(run.peak_rss <= LARGE_RSS_GOAL)})", _quotes_matched(run))
    table.note(f"{count} PDFs of 24 MiB, all requested at once, would be "
               f"{megabytes(count * size)} held whole; the run holds 64 MiB of PDFs "
               "loading and 64 MiB waiting for a worker at most, the rest waits (docs/guides/"
               "pdf.md#limits); the goal is those 128 MiB, the interpreter, and what its "
               "memory allocator's heaps keep for reuse (up to 4 MiB each)")


def figure(repeats: int, count: int = 100, large: int = 48, files_repeats: int | None = None,
           log: Log = print) -> Table:
    """The rows of figure 12 (``files_repeats``: the rounds of ``verify-files`` and its peers,
    ``repeats`` if None)."""
    table = Table("PDF sources: verify-files vs pdftotext, and verify-notes of 2 MiB and "
                  "24 MiB PDFs", ["run", "TraceCite", "peer / cores", "ratio / memory",
                                  "verdicts"])
    _files_rows(table, files_repeats or repeats, log)
    _notes_rows(table, count, log)
    _large_rows(table, large, log)
    table.note("TraceCite reads each PDF's pages with PDFium in its PDF workers (one per core) "
               "and matches every quote; pdftotext only writes each file's text")
    return table
