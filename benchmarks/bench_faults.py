"""Figure 5, the web over time: ``verify-notes`` against a server that fails now and then.

The pages of figure 2's generator (2,000 by default, each holding its quotes) are served by
:class:`fault_server.FaultServer` under 20 host names (page i on host ``i % 20 + 1``, host K
at 127.0.0.K). A tenth of the pages, chosen from a seed, fail on their first request (a 503, a
reset mid-body, a 429 with ``Retry-After: 1``, a gzip body cut short with its framing intact, in
turns) and are served from the next one on; the first host allows 5 requests per second (beyond
that: 429 with ``Retry-After: 1``); the second host stalls (every request takes
:data:`STALL` seconds) and a quarter of its pages answer their first request 503 with
``Retry-After: 1``, so it is in back-off again and again while its other pages queue behind it
(docs/web-over-time.md#retries: waiting for a slot is no attempt, and fails no page). The notes
are 5,000 records over those pages, every quote on its page: the truth is "all match", so every
finding about a source or a quote (TC3xx, TC210) is a wrong verdict.

The rows, measured in one run against the same faults (the server forgets them between runs):
``--retries 0``, today's behaviour and the baseline; the defaults; the defaults with a
:data:`SHORT_TIMEOUT` deadline, shorter than the stalled host's queue (waiting for a request
slot must use none of it, nor any retry); and, when the build has
``--cache``, the defaults with a fresh cache file, run twice. The server counts the requests, so
requests per URL are shown, not assumed, and the second cached run must make none
(docs/web-over-time.md#the-cache: within ``--cache-max-age`` no request). The options a row needs
are looked up in ``tracecite verify-notes --help`` first: a build without them says so in the row
instead of failing.
"""

from __future__ import annotations

import json
import re
import signal
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench_util import Log, Measured, Table, measure, ratio, seconds, tracecite_command, verdict
from bench_web import connect_flags, latency_site, many_host
from fault_server import FAULTS, STALL_FAULT, FaultServer, FaultStats, plan_faults, plan_stalls

SEED = 5
RATE = 5  # requests per second allowed on the rate-limited host
STALL = 0.4  # seconds every request to the stalled host takes
SHORT_TIMEOUT = 2.0  # a per-source deadline shorter than the stalled host's queue
NOT_AVAILABLE = "not available in this build"


def cli_options() -> set[str]:
    """The long options ``tracecite verify-notes --help`` lists (empty if it does not run)."""
    done = measure([*tracecite_command(), "verify-notes", "--help"], timeout=60)
    if done.returncode != 0:
        return set()
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", done.stdout))


@dataclass
class Row:
    """One row of the figure: what it runs, the options it needs, and what came of it."""

    label: str
    options: list[str]
    needs: tuple[str, ...] = ()
    run: Measured | None = None
    stats: FaultStats = field(default_factory=FaultStats)
    wrong: int | None = None  # findings about a source or a quote; None: no report
    codes: Counter[str] = field(default_factory=Counter)
    sources: int = 0  # distinct URLs with a wrong verdict
    cached: int | None = None  # the summary's count of cached sources, when it has one
    problem: str = ""
    missing: list[str] = field(default_factory=list)

    def pages(self) -> Counter[str]:
        """Requests per page path (every method)."""
        out: Counter[str] = Counter()
        for (_, path), n in self.stats.requests.items():
            if path.startswith("/page/"):
                out[path] += n
        return out


def run_row(row: Row, server: FaultServer, notes: Path, hosts: int, timeout: float) -> None:
    """Run ``verify-notes`` for ``row`` and record what the report and the server say."""
    server.reset()
    cmd = [*tracecite_command(), "verify-notes", str(notes), "--json", "--no-progress",
           *connect_flags(server.port, hosts), *row.options]
    row.run = run = measure(cmd, timeout=timeout)
    row.stats = server.reset()
    if run.returncode == -signal.SIGKILL and run.wall >= timeout * 0.99:
        row.problem = f"cut at {timeout:g} s"
        return
    try:
        report = json.loads(run.stdout)
        findings = report["findings"]
        live = report["summary"]["live"]
    except (ValueError, KeyError, TypeError):
        row.problem = f"FAILED (exit {run.returncode}): {run.stderr.strip()[-120:]}"
        return
    row.codes = Counter(f["code"] for f in findings)
    wrong = [f for f in findings if f["code"].startswith("TC3") or f["code"] == "TC210"]
    row.wrong = len(wrong)
    row.sources = len({f.get("uri") for f in wrong})
    if "cached" in live:
        row.cached = live["cached"]
    others = sorted(code for code in row.codes if not code.startswith(("TC3", "TC210")))
    if others:
        row.problem = f"unexpected findings: {', '.join(others)}"


def figure(*, urls: int = 2000, hosts: int = 20, records: int = 5000, timeout: float = 120.0,
           log: Log = print) -> Table:
    """Figure 5: the rows of the module's docstring, each run once with a ``timeout``."""
    limited, stalled = many_host(1), many_host(2)
    table = Table(
        f"The web over time: verify-notes with transient faults ({urls} URLs over {hosts} hosts, "
        f"{records} notes, a tenth of first requests failing, {limited} at {RATE} requests/s, "
        f"{stalled} stalling in back-off)",
        ["run", "wrong verdicts", "wall", "÷ baseline", "requests", "per URL (max)",
         "rate-limit 429s", "goal"],
    )
    options = cli_options()
    retries = "--retries" in options
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "cache.sqlite")
        rows = [
            Row("--retries 0 (baseline)", ["--retries", "0"]) if retries else
            Row("no retries (baseline: this build has no --retries)", []),
            Row("defaults", []),
            Row(f"--timeout {SHORT_TIMEOUT:g} (a slot wait outlasts a deadline)",
                ["--timeout", f"{SHORT_TIMEOUT:g}"], ("--timeout",)),
            Row("defaults, fresh --cache: 1st run", ["--cache", cache], ("--cache",)),
            Row("defaults, --cache: 2nd run", ["--cache", cache], ("--cache",)),
        ]
        for row in rows:
            row.missing = [name for name in row.needs if name not in options]
        site, text = latency_site(urls, records, seed=SEED, hosts=hosts)
        pages = sorted(path for path in site if path.startswith("/page/"))
        faults = plan_faults(pages, SEED)
        # Page i is on host i % hosts + 1: the stalled host's pages get its own fault.
        faults.update(plan_stalls([p for p in pages if int(p.rsplit("/", 1)[1]) % hosts == 1],
                                  SEED))
        notes = Path(tmp) / "notes.txt"
        notes.write_text(text, encoding="utf-8")
        runnable = [row for row in rows if not row.missing]
        with FaultServer(site, faults=faults, limited=[limited], rate=RATE, stalled=[stalled],
                         stall=STALL, addresses=hosts,
                         max_seconds=timeout * len(runnable) + 60) as server:
            log(f"  {len(runnable)} runs of {records} notes, at most {timeout:g} s each …")
            for row in runnable:
                run_row(row, server, notes, hosts, timeout)
                log(f"  {row.label}: {seconds(row.run.wall) if row.run else '–'}")
    baseline = rows[0].run.wall if rows[0].run and not rows[0].problem else None
    for row in rows:
        _add(table, row, urls, baseline, second=row is rows[-1])
    base, defaults = rows[0], rows[1]
    if base.wrong is not None and defaults.wrong is not None and baseline:
        assert defaults.run is not None  # a row with a verdict count has run
        table.note(f"what the defaults buy over the baseline: {defaults.wrong} wrong verdicts "
                   f"instead of {base.wrong}, at {ratio(defaults.run.wall / baseline)} its wall "
                   f"time and {_requests(defaults) / max(1, _requests(base)):.2f}× its requests")
    kinds = Counter(faults.values())
    table.note(f"faults on the first request of {len(faults)} URLs (seed {SEED}): "
               + ", ".join(f"{kinds[k]} {_FAULT_NAMES[k]}" for k in (*FAULTS, STALL_FAULT))
               + f"; {limited} ({urls // hosts} URLs) answers 429 with Retry-After: 1 beyond "
               f"{RATE} requests in any second; every request to {stalled} takes {STALL:g} s; "
               "every quote is on its page, so every TC3xx or TC210 finding is a wrong verdict")
    table.note("requests and per URL: counted by the server (every request for a page, the "
               "refused ones included); goals: 0 wrong verdicts at the defaults (and with a "
               f"{SHORT_TIMEOUT:g} s --timeout: a page queued behind a host in back-off waits for "
               "its slot outside its deadline), and no request in a second run with the cache")
    if retries:
        table.note("at --retries 0 a 429 is still waited for when the build treats rate limiting "
                   "as no failure, so the baseline is today's behaviour less that")
    table.note("options found in `tracecite verify-notes --help`: "
               + ", ".join(f"{name} {'yes' if name in options else 'no'}"
                           for name in ("--retries", "--cache", "--cache-max-age")))
    table.note(f"each run once, killed after {timeout:g} s (the row then says it was cut)")
    return table


_FAULT_NAMES = {"503": "503s", "reset": "resets mid-body", "429": "429s (Retry-After: 1)",
                "gzip-cut": "gzip bodies cut short (framing intact)",
                STALL_FAULT: "503s (Retry-After: 1) on the stalled host"}


def _requests(row: Row) -> int:
    return sum(row.pages().values())


def _add(table: Table, row: Row, urls: int, baseline: float | None, *, second: bool) -> None:
    """The row's cells: its verdicts, its cost, its goal."""
    if row.missing:
        table.add(row.label, "–", "–", "–", "–", "–", "–",
                  f"{' '.join(row.missing)} {NOT_AVAILABLE}")
        return
    if row.run is None:
        return
    per_url = row.pages()
    requests = _requests(row)
    wrong = "–" if row.wrong is None else str(row.wrong)
    if row.wrong:
        wrong += f" on {row.sources} URLs"
    if row.codes:
        wrong += " (" + ", ".join(f"{code} {n}" for code, n in sorted(row.codes.items())) + ")"
    cells = [row.label, wrong, seconds(row.run.wall),
             ratio(row.run.wall / baseline) if baseline else "–",
             f"{requests} ({row.stats.answers['304']} answered 304)" if row.stats.answers["304"]
             else str(requests), f"{requests / urls:.2f} ({max(per_url.values(), default=0)})",
             str(row.stats.answers["429 rate limit"])]
    if row.problem:
        goal = row.problem
        if row.problem.startswith("cut") and "baseline" not in row.label:
            goal += ": goal NOT met"
    elif "baseline" in row.label:
        goal = "baseline"
    elif second:
        goal = (f"0 requests {verdict(requests == 0)}, "
                f"0 wrong verdicts {verdict(row.wrong == 0)}")
        if row.cached is not None:
            goal += f"; {row.cached} cached"
    else:
        goal = f"0 wrong verdicts {verdict(row.wrong == 0)}"
    table.add(*cells, goal)

