"""Figure 10, import at scale: ``tracecite import anthropic`` of a JSONL of many Messages API
exchanges, one trace written per exchange, beside the floor of merely decoding its lines.

The file is made here, deterministically: exchange ``n`` is a request with one text document and
a response citing it (every third one also searches the web and cites a result). Its time is the
median of ``repeats`` runs, its peak RSS the highest; the floor is one Python process that reads
the file and decodes each line, nothing else.

    .venv/bin/python benchmarks/bench_import.py [EXCHANGES]
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

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
)

MEMORY_GOAL = 300 * MB
"""Memory holds one run at a time: the peak must not grow with the number of exchanges."""


def exchange(n: int) -> dict[str, object]:
    """Exchange ``n`` of the file: small, and each a little different."""
    text = f"Fact {n}: the value of item {n} is {n * 7 % 1000}. Other text follows here."
    quote = f"the value of item {n} is {n * 7 % 1000}."
    content: list[dict[str, object]] = []
    if n % 3 == 0:
        url = f"https://example.test/page/{n % 500}"
        content += [
            {"type": "server_tool_use", "id": f"srvtoolu_{n}", "name": "web_search",
             "input": {"query": f"item {n}"}},
            {"type": "web_search_tool_result", "tool_use_id": f"srvtoolu_{n}",
             "content": [{"type": "web_search_result", "url": url, "title": "Page",
                          "encrypted_content": "EqgfCioIARgB", "page_age": None}]},
            {"type": "text", "text": "The web agrees.", "citations": [
                {"type": "web_search_result_location", "url": url, "title": "Page",
                 "encrypted_index": "Eo8B", "cited_text": f"Item {n} is listed ..."}]}]
    content.append({"type": "text", "text": f"Item {n} is worth {n * 7 % 1000}.", "citations": [
        {"type": "char_location", "cited_text": quote, "document_index": 0,
         "document_title": None, "start_char_index": text.index(quote),
         "end_char_index": text.index(quote) + len(quote)}]})
    return {
        "request": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
            {"role": "user", "content": [
                {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                                "data": text},
                 "title": f"Item {n}", "citations": {"enabled": True}},
                {"type": "text", "text": f"What is item {n} worth?"}]}]},
        "response": {"id": f"msg_{n:08d}", "type": "message", "role": "assistant",
                     "model": "claude-sonnet-4-5", "content": content,
                     "stop_reason": "end_turn",
                     "usage": {"input_tokens": 100, "output_tokens": 20}},
    }


def write_exchanges(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for n in range(count):
            out.write(json.dumps(exchange(n), separators=(",", ":")) + "\n")


FLOOR = ("import json, sys\n"
         "with open(sys.argv[1], encoding='utf-8') as f:\n"
         "    n = sum(1 for line in f if json.loads(line))\n"
         "print(n)\n")


def import_run(path: Path, command: list[str], repeats: int) -> list[Measured]:
    """``command`` import of ``path`` into a fresh folder each time."""
    runs = []
    for _ in range(repeats):
        out = Path(tempfile.mkdtemp(prefix="tracecite-import-"))
        try:
            runs.append(measure([*command, "import", "anthropic", str(path), "-o",
                                 str(out / "traces"), "--json"], timeout=3600, tree=True))
        finally:
            shutil.rmtree(out, ignore_errors=True)
    return runs


def figure(exchanges: int = 200_000, repeats: int = 1, log: Log = print,
           command: list[str] | None = None) -> Table:
    """Import a JSONL of ``exchanges`` exchanges ``repeats`` times, and decode it as the floor."""
    table = Table(f"Import at scale: tracecite import anthropic of {exchanges:,} exchanges "
                  "(JSONL), a trace per exchange",
                  ["case", "runs written", "MB in", "time", "÷ floor", "peak RSS", "goal"])
    with tempfile.TemporaryDirectory(prefix="tracecite-bench-import-") as folder:
        path = Path(folder) / "exchanges.jsonl"
        log(f"  writing {exchanges:,} exchanges …")
        write_exchanges(path, exchanges)
        size = path.stat().st_size
        floor = [measure([sys.executable, "-c", FLOOR, str(path)], timeout=900)
                 for _ in range(repeats)]
        floor_time = median([r.wall for r in floor])
        log(f"  importing, {repeats} run(s) …")
        runs = import_run(path, command or tracecite_command(), repeats)
    last = runs[-1]
    try:
        written = json.loads(last.stdout)["summary"]["runs"]
    except (ValueError, KeyError):
        written = f"FAILED (exit {last.returncode}): {last.stderr.strip()[-80:]}"
    wall = median([r.wall for r in runs])
    peak = max(r.peak_rss for r in runs)
    table.add("decode each line (floor)", "", f"{size / MB:.0f}", seconds(floor_time), "1.0×",
              megabytes(max(r.peak_rss for r in floor)), "")
    table.add("import -o DIR", written, f"{size / MB:.0f}", seconds(wall),
              ratio(wall / floor_time), megabytes(peak),
              f"peak ≤ {MEMORY_GOAL // MB} MB {'ok' if peak <= MEMORY_GOAL else 'MISSED'}")
    table.note(f"time: the median of {repeats} run(s); peak RSS: the highest, of the import "
               "process itself")
    return table


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    print(figure(count, log=lambda m: print(m, file=sys.stderr)).text())
