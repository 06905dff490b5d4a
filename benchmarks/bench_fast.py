"""Figure 9, the ``fast`` extra: the visible text of every corpus page with html5lib (the
reference) and with lexbor (selectolax), in this one process; and ``verify-notes`` of one note
per corpus page end to end, with the fast extra installed and in a default install.

Each page is parsed with each parser in turn (interleaved, so a noisy moment hits both alike),
``repeats`` times; a page's time is its fastest run, and a parser's figure the sum over the
pages. The texts must be the same, character for character: the table counts the pages where
they are, and those where lexbor left the page to html5lib (lexbor.py says when).

The default install is a virtual environment of its own, ``benchmarks/out/venv-default``, made
once with ``python -m venv`` and, with pip, only the package's own dependencies as
``pyproject.toml`` lists them (no extra: the test extra pulls the fast one in, so the
environment the tests run in never measures a default install); TraceCite runs in it from this
checkout (``PYTHONPATH``). Both installs run in turns, and each round's ratio counts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_util import MB, OUT_DIR, REPO, Log, Table, median, ratio, seconds, verdict
from bench_web import HOST, corpus_dir, corpus_pages, run_tracecite
from web_server import BenchServer

SPEED_GOAL = 5.0
DEFAULT_VENV = OUT_DIR / "venv-default"


def default_install(log: Log = print) -> tuple[list[str], dict[str, str]] | str:
    """How to run TraceCite as a default install runs it (command, environment), making the
    environment the first time; or why it cannot be made."""
    python = DEFAULT_VENV / "bin" / "python"
    if not python.exists():
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
        log(f"  making a default install in {DEFAULT_VENV} (once) …")
        made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(DEFAULT_VENV)],
                              capture_output=True, text=True, check=False)
        if made.returncode == 0:
            made = subprocess.run([str(python), "-m", "pip", "install", "-q",
                                   *project["project"]["dependencies"]],
                                  capture_output=True, text=True, check=False)
        if made.returncode != 0:
            return f"could not make the default install: {made.stderr.strip()[-200:]}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("TRACECITE_HTML_PARSER", None)
    env.pop("TRACECITE_JSON_DECODER", None)
    extras = subprocess.run([str(python), "-c", "import importlib.util as u; print("
                             "[m for m in ('orjson', 'selectolax') if u.find_spec(m)])"],
                            capture_output=True, text=True, env=env, check=False).stdout.strip()
    if extras != "[]":
        return f"the default install has the fast extra's modules: {extras}"
    subprocess.run([str(python), "-m", "compileall", "-q", str(REPO / "tracecite")],
                   check=False)
    return [str(python), "-m", "tracecite"], env


def figure(repeats: int, limit: int | None = None, log: Log = print) -> Table:
    """Time ``visible_text`` over the corpus with each parser; ``limit`` pages at most."""
    from tracecite.visible import lexbor, visible_text

    table = Table(
        "The fast extra: corpus visible text with html5lib vs lexbor (selectolax)",
        ["parser", "pages", "MB", "sum of parses", "MB/s", "html5lib ÷ this", "goal"],
    )
    folder = corpus_dir()
    if folder is None:
        table.note("corpus not found (../shared/corpus/readability or $TRACECITE_CORPUS)")
        return table
    if not lexbor.available():
        table.note("selectolax is not installed (pip install 'tracecite[fast]'): html5lib only")
    paths = sorted(folder.glob("*.html"))
    if limit is not None:
        paths = paths[:: max(1, len(paths) // limit)][:limit]
    pages = [path.read_bytes().decode("utf-8") for path in paths]
    size = sum(len(page.encode("utf-8")) for page in pages)
    parsers = ["html5lib", *(["lexbor"] if lexbor.available() else [])]
    log(f"  {len(pages)} pages, {size / MB:.1f} MB: {repeats} run(s) of each parser …")
    best = {name: [float("inf")] * len(pages) for name in parsers}
    texts: dict[str, list[str]] = {name: [""] * len(pages) for name in parsers}
    for _ in range(repeats):
        for index, page in enumerate(pages):
            for name in parsers:
                start = time.perf_counter()
                text = visible_text(page, parser=name)
                elapsed = time.perf_counter() - start
                best[name][index] = min(best[name][index], elapsed)
                texts[name][index] = text
    reference = sum(best["html5lib"])
    for name in parsers:
        total = sum(best[name])
        speedup = reference / total
        goal = "" if name == "html5lib" else f"≥ {SPEED_GOAL:g}× {verdict(speedup >= SPEED_GOAL)}"
        table.add(name, len(pages), f"{size / MB:.1f}", seconds(total), f"{size / MB / total:.1f}",
                  ratio(speedup), goal)
    if "lexbor" in parsers:
        same = sum(a == b for a, b in zip(texts["html5lib"], texts["lexbor"], strict=True))
        left = sum(lexbor.parse(page, 20.0) is None for page in pages)
        table.note(f"the same text from both: {same} of {len(pages)} pages "
                   f"({verdict(same == len(pages))}); pages lexbor left to html5lib: {left}")
    table.note(f"a page's time is its fastest of {repeats} interleaved runs; lexbor's includes "
               "its checks and building the tree the renderer walks")
    if "lexbor" in parsers:
        _end_to_end(table, folder, limit, max(repeats, 3), log)
    return table


def _end_to_end(table: Table, folder: Path, limit: int | None, rounds: int, log: Log) -> None:
    """``verify-notes`` of one note per corpus page with the fast extra (this environment) and
    in a default install, in turns: each round's default ÷ fast, every round ≥ the goal."""
    default = default_install(log)
    if isinstance(default, str):
        table.note(f"verify-notes end to end not measured: {default}")
        return
    command, env = default
    fast_env = {k: v for k, v in os.environ.items()
                if k not in ("TRACECITE_HTML_PARSER", "TRACECITE_JSON_DECODER")}
    pages, _ = corpus_pages(folder, limit)
    site = {f"/{page.name}": page.html for page in pages}
    walls: dict[str, list[float]] = {"fast": [], "default": []}
    problems: list[str] = []
    log(f"  verify-notes of {len(pages)} corpus pages, the fast extra and a default install in "
        f"turns, {rounds} rounds …")
    with tempfile.TemporaryDirectory() as tmp, BenchServer(site) as server:
        notes = Path(tmp) / "notes.txt"
        notes.write_text("\n".join(f"claim: {p.name}\nquote: {p.quote}\nurl: http://{HOST}/"
                                   f"{p.name}\n" for p in pages), encoding="utf-8")
        for n in range(rounds):
            order = [("fast", None, fast_env), ("default", command, env)]
            for name, cmd, run_env in order if n % 2 == 0 else order[::-1]:
                run = run_tracecite(server, notes, [], len(pages), env=run_env, command=cmd)
                walls[name].append(run.run.wall)
                problems += [f"{name}: {run.problem}"] if run.problem else []
    speedups = [d / f for d, f in zip(walls["default"], walls["fast"], strict=True)]
    table.add("verify-notes, default install (html5lib, json)", len(pages), "",
              seconds(median(walls["default"])), "", "", "")
    table.add("verify-notes, the fast extra", len(pages), "", seconds(median(walls["fast"])),
              "", f"{ratio(median(speedups))} ({min(speedups):.2f}–{max(speedups):.2f}×)",
              problems[0] if problems else
              f"≥ {SPEED_GOAL:g}× in every round {verdict(min(speedups) >= SPEED_GOAL)}")
    table.note(f"verify-notes rows: one note per corpus page ({len(pages)} with a quote the "
               "extraction finds), served from loopback with no latency, at the defaults; "
               f"wall: the median of {rounds} rounds, the two installs in turns; the ratio is "
               "each round's default wall ÷ fast wall, the median with the rounds' spread; the "
               f"default install is {DEFAULT_VENV.relative_to(REPO)} (no extra)")
