"""Figure 1, evidence at scale: ``tracecite check BIG.jsonl --evidence`` next to its baselines.

Baselines on the same file, each run as its own process and measured the same way:

- ``jq empty`` (parses every line, keeps nothing);
- TraceCite itself without the ``fast`` extra's orjson (``TRACECITE_JSON_DECODER=json``), when
  orjson is installed: the extra's goal is at most half of jq's time;
- the stdlib ``json`` parsing each line and keeping nothing (``python bench_evidence.py stdlib``);
- a naive Python check that loads every event, keeps every source's content and then checks
  each quote (``python bench_evidence.py naive``).

Traces come from ``gen_trace.generate`` and are cached in ``benchmarks/out/traces/``, keyed by
size and by the generator's source, so a changed generator makes new ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import unicodedata
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
    which,
)

DECODER_VARIABLE = "TRACECITE_JSON_DECODER"  # tracecite.inputs.jsonl's: "json" turns orjson off
RSS_GOAL = 100 * MB
FAST_GOAL = 0.5
"""With the fast extra (orjson), check --evidence takes at most this share of jq's time."""
STDLIB_ROW = "tracecite check --evidence, stdlib json"


def trace_file(megabytes_: float, log: Log = print) -> tuple[Path, int]:
    """A cached synthetic trace of about ``megabytes_`` MB and its number of citations."""
    from gen_trace import generate

    source = (BENCH_DIR / "gen_trace.py").read_bytes()
    key = hashlib.sha256(source).hexdigest()[:10]
    folder = OUT_DIR / "traces"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"trace-{megabytes_:g}mb-{key}.jsonl"
    count_file = path.with_suffix(".citations")
    if not (path.exists() and count_file.exists()):
        for old in folder.glob(f"trace-{megabytes_:g}mb-*"):
            old.unlink()
        log(f"  generating a {megabytes_:g} MB trace (cached for later runs) …")
        partial = path.with_suffix(".partial")
        citations = generate(str(partial), megabytes_)
        partial.rename(path)
        count_file.write_text(str(citations))
    return path, int(count_file.read_text())


def figure(sizes: list[float], repeats: int, log: Log = print) -> Table:
    """Measure every tool at every size, ``repeats`` runs each (the naive check once above
    50 MB)."""
    table = Table(
        "Evidence at scale: check --evidence vs jq and stdlib json",
        ["trace", "tool", "wall", "CPU", "peak RSS", "wall ÷ jq", "goal"],
    )
    jq = which("jq")
    if jq is None:
        table.note("jq not installed: no jq baseline (apt-get install jq)")
    python = sys.executable
    here = str(Path(__file__).resolve())
    fast = _has_orjson()
    if not fast:
        table.note("orjson is not installed (pip install 'tracecite[fast]'): the stdlib decodes")
    for size in sizes:
        path, citations = trace_file(size, log)
        actual = path.stat().st_size
        check = [*tracecite_command(), "check", str(path), "--evidence", "--json"]
        tools: list[tuple[str, list[str]]] = [
            ("tracecite check --evidence" + (", orjson" if fast else ""), check),
        ]
        if fast:
            tools.append((STDLIB_ROW, check))
        if jq is not None:
            tools.append(("jq empty", [jq, "empty", str(path)]))
        tools += [
            ("stdlib json, per line", [python, here, "stdlib", str(path)]),
            ("naive load-everything check", [python, here, "naive", str(path)]),
        ]
        runs: dict[str, list[Measured]] = {name: [] for name, _ in tools}
        log(f"  {megabytes(actual)} trace, {citations} citations: {repeats} run(s) of each "
            "tool …")
        for round_ in range(repeats):  # interleaved, so a noisy moment hits every tool alike
            for name, cmd in tools:
                # The naive check is the slowest and largest by far: once is enough above 50 MB.
                if round_ and name.startswith("naive") and actual >= 50 * MB:
                    continue
                env = None
                if name == STDLIB_ROW:
                    env = {**os.environ, DECODER_VARIABLE: "json"}
                runs[name].append(measure(cmd, tree=True, env=env))
        walls = {name: median([r.wall for r in rs]) for name, rs in runs.items()}
        cpu = {name: median([r.cpu for r in rs]) for name, rs in runs.items()}
        rss = {name: max(max(r.peak_rss, r.tree_rss) for r in rs) for name, rs in runs.items()}
        jq_wall = walls.get("jq empty")
        for name, rs in runs.items():
            problem = _problem(name, rs[-1], citations)
            # Each round's ratio to jq's run of the same round: the median, and the spread.
            rounds = sorted(r.wall / j.wall for r, j in zip(rs, runs["jq empty"], strict=False)
                            ) if jq_wall is not None else []
            over_jq = median(rounds) if rounds else None
            if name.startswith("tracecite"):
                goals = [f"RSS {verdict(rss[name] <= RSS_GOAL)}"]
                if over_jq is not None:
                    goals.insert(0, f"< jq {verdict(over_jq < 1)}")
                    if fast and name != STDLIB_ROW:
                        goals.insert(1, f"≤ {FAST_GOAL:g}× jq {verdict(over_jq <= FAST_GOAL)}")
                goal = ", ".join(goals)
            else:
                goal = ""
            first = name == tools[0][0]
            spread = f" ({rounds[0]:.2f}–{rounds[-1]:.2f}×)" if len(rounds) > 1 else ""
            table.add(megabytes(actual) if first else "", name,
                      seconds(walls[name]), seconds(cpu[name]), megabytes(rss[name]),
                      ratio(over_jq) + spread if over_jq is not None else "–",
                      problem or goal)
    table.note("goals: tracecite wall < jq wall, and peak RSS ≤ 100 MB at every size; peak RSS "
               "is the larger of the process's own high-water mark and the sampled sum over "
               "its process tree (worker processes included)")
    table.note(f"wall and CPU (user + system): median of {repeats} interleaved runs (the naive "
               "check runs once above 50 MB); wall ÷ jq: each round's ratio to jq's run of the "
               "same round, the median and (in brackets) the spread; CPU time is the steadier "
               "figure on a busy machine")
    return table


def _has_orjson() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


def _problem(name: str, run: Measured, citations: int) -> str:
    """What went wrong with a run, or ``""``."""
    if name.startswith("tracecite"):
        try:
            summary = json.loads(run.stdout)["summary"]
        except (ValueError, KeyError):
            return f"FAILED (exit {run.returncode}): {run.stderr.strip()[:80]}"
        matched = summary["captured"]["matched"]
        if run.returncode != 0 or matched != citations:
            return f"WRONG: exit {run.returncode}, {matched}/{citations} matched"
        return ""
    if run.returncode != 0:
        return f"FAILED (exit {run.returncode})"
    if name.startswith("naive") and run.stdout.split() != [str(citations)]:
        return f"WRONG: {run.stdout.strip()}/{citations} matched"
    return ""


# -- the Python baselines, run as their own processes ---------------------------------------


def parse_each_line(path: str) -> None:
    """The stdlib json alone: parse every line, keep nothing."""
    loads = json.loads
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                loads(line)


def _normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


def naive_check(path: str) -> int:
    """Load every event, keep every source's content, then check each quote; return matches."""
    with open(path, encoding="utf-8") as handle:
        events = [json.loads(line) for line in handle if line.strip()]
    contents = {}
    claims = []
    for event in events:
        if event.get("type") == "tool_result":
            for source in event.get("sources") or []:
                contents[source["id"]] = source["content"]
        elif event.get("type") == "answer":
            claims = event["claims"]
    return sum(
        _normalise(citation["quote"]) in _normalise(contents[citation["source_id"]])
        for claim in claims for citation in claim["citations"]
    )


if __name__ == "__main__":
    mode, file = sys.argv[1], sys.argv[2]
    if mode == "stdlib":
        parse_each_line(file)
    elif mode == "naive":
        print(naive_check(file))
    else:
        raise SystemExit(f"unknown mode {mode!r}: stdlib or naive")
