"""Figures 2 and 3: ``tracecite verify-notes`` against a local server.

Figure 2, latency-bound: 200 small distinct pages, each response held back 50 ms; a notes file
of 1,000 records over those 200 URLs. The pages are served under one host name, and again under
25 (8 pages each). TraceCite runs at its defaults (at most 48 requests in flight, 8 per host),
at ``--concurrency 32 --per-host 32`` on the one host, and at the other settings ``run.py`` asks
for; linkinator checks the same 200 URLs on the same server at its defaults and at
``--concurrency 32``, and a plain urllib3 loop (a Python process, threads sharing one keep-alive
pool, no parsing) GETs them with TraceCite's default 8 in flight, and with 32. Each TraceCite
row is compared with its floor, URLs × latency ÷ the concurrency its limits allow on that layout,
plus the start-up of ``tracecite --version`` measured in the same run, and with its peers. The
server counts the requests, so each URL fetched once and the most requests in flight (overall
and per ``Host``) are shown, not assumed.

Figure 3, parse-bound: the real pages of the visible-text corpus served with no latency, one
note per page, compared with the sum of single-process parse times divided by the cores. Peak
memory of the whole process tree is shown for the pages once and three times (under other URLs),
to show that it follows the concurrency, not the number of pages.

TraceCite reaches the server only through ``--connect-to`` and ``--allow-net``
(docs/reference/commands.md), with URLs ``http://bench.test/…`` (and ``http://hN.bench.test/…`` for
the 25 hosts, host N at 127.0.0.N); linkinator is pointed at an index page that links to the 200
URLs (at ``http://127.0.0.N:PORT/…`` for the 25 hosts).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench_util import (
    BENCH_DIR,
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
    which,
)
from gen_trace import paragraph
from web_server import BenchServer, ServerStats

from tracecite.fetch.limits import DEFAULT_CONCURRENCY, DEFAULT_PER_HOST

HOST = "bench.test"
HOSTS = 25  # figure 2's many-host layout: the 200 pages under 25 host names, 8 pages each
LINKINATOR_VERSION = "7.6.1"  # the newest release that runs on Node 20 (8.x needs Node 22)
LINKINATOR = BENCH_DIR / "node_modules" / ".bin" / "linkinator"
EQUAL = 32  # figure 2's equal-concurrency comparison: --concurrency 32 (--per-host 32) for both
FLOOR_GOAL = 1.15  # at the defaults on one host: wall ≤ 1.15 × (floor + start-up)
PEER_GOAL = 0.8  # at equal concurrency: wall ≤ 0.8 × linkinator's
LOOP_GOAL = 1.05  # on one host: wall ≤ 1.05 × the plain urllib3 loop's with as many in flight

# The second peer: the least a Python client does for the same GETs (no URL or address checks,
# no parsing): threads sharing one keep-alive urllib3 pool, each reading whole bodies.
_URLLIB3_LOOP = """
import sys, threading, urllib3
port, host, paths, threads = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
pool = urllib3.HTTPConnectionPool("127.0.0.1", port, maxsize=threads, block=True, retries=False)
todo, lock, bad = list(reversed(paths)), threading.Lock(), []
def work():
    while True:
        with lock:
            if not todo:
                return
            path = todo.pop()
        response = pool.request("GET", path, headers={"Host": host})
        if response.status != 200 or not response.data:
            bad.append(path)
workers = [threading.Thread(target=work) for _ in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
print(len(paths) - len(bad))
"""


# -- running the two tools ------------------------------------------------------------------


@dataclass
class WebRun:
    """One command run against the server, with what the server saw meanwhile."""

    tool: str
    run: Measured
    stats: ServerStats
    problem: str  # "" when every check passed

    @property
    def first_request(self) -> float:
        """Seconds from the process's start to its first request at the server: the
        command's own start-up, its imports, inputs and pools included."""
        return (self.stats.first_request or self.run.started) - self.run.started

    @property
    def path(self) -> float:
        """Seconds from the first request's arrival to the last response's end: the
        per-host path itself, as the server saw it."""
        first, last = self.stats.first_request, self.stats.last_response
        return last - first if first is not None and last is not None else 0.0


def connect_flags(port: int, hosts: int = 1) -> list[str]:
    """How TraceCite reaches the server on ``port``: ``bench.test``, or ``hN.bench.test`` at
    127.0.0.N (where :class:`BenchServer` listens with ``addresses=hosts``)."""
    names = [HOST] if hosts == 1 else [many_host(n) for n in range(1, hosts + 1)]
    flags = [f"--connect-to={name}:80:127.0.0.{n}:{port}"
             for n, name in enumerate(names, start=1)]
    return [*flags, "--allow-net", "127.0.0.0/8"]


def many_host(n: int) -> str:
    """The name of host ``n`` (from 1) in the many-host layout."""
    return f"h{n}.{HOST}"


def run_tracecite(server: BenchServer, notes: Path, options: Sequence[str],
                  expected: int, *, hosts: int = 1, tree: bool = False,
                  env: dict[str, str] | None = None,
                  command: Sequence[str] | None = None) -> WebRun:
    """``verify-notes`` on ``notes`` with ``options`` (and ``env``, None: this process's);
    ``expected`` quotes must all match. ``command``: how TraceCite is run (None: this
    environment's)."""
    server.reset()
    cmd = [*(command or tracecite_command()), "verify-notes", str(notes), "--json",
           "--no-progress",
           *connect_flags(server.port, hosts), *options]
    run = measure(cmd, tree=tree, timeout=300, env=env)
    stats = server.reset()
    try:
        summary = json.loads(run.stdout)["summary"]
        matched = summary["live"]["matched"]
    except (ValueError, KeyError):
        return WebRun("tracecite", run, stats,
                      f"FAILED (exit {run.returncode}): {run.stderr.strip()[-120:]}")
    problem = "" if run.returncode == 0 and matched == expected else (
        f"WRONG: exit {run.returncode}, {matched}/{expected} matched")
    return WebRun("tracecite", run, stats, problem)


def linkinator_problem() -> str:
    """Why linkinator cannot run here, or ``""``; installs it from npm when it is missing."""
    node = which("node")
    if node is None:
        return "node is not installed"
    if not LINKINATOR.exists():
        npm = which("npm")
        if npm is None:
            return "npm is not installed"
        # The versions are pinned in benchmarks/package.json and its lock file.
        done = measure([npm, "ci", "--prefix", str(BENCH_DIR), "--no-audit", "--no-fund"],
                       timeout=300)
        if done.returncode != 0 or not LINKINATOR.exists():
            return f"npm could not install linkinator: {done.stderr.strip()[-200:]}"
    check = measure([str(LINKINATOR), "--version"], timeout=60)
    if check.returncode != 0:
        return f"linkinator does not run here: {check.stderr.strip()[-200:]}"
    return ""


def run_linkinator(server: BenchServer, index: str, expected: int,
                   options: Sequence[str] = ()) -> WebRun:
    """linkinator with ``options`` (none: its defaults) on the index page ``index`` (it checks
    every link there)."""
    server.reset()
    cmd = [str(LINKINATOR), f"http://127.0.0.1:{server.port}{index}", "--format", "json",
           *options]
    run = measure(cmd, timeout=300)
    stats = server.reset()
    problem = ""
    try:
        links = json.loads(run.stdout)["links"]
        ok = sum(1 for link in links if link.get("state") == "OK" and "/page/" in link["url"])
        if run.returncode != 0 or ok != expected:
            problem = f"WRONG: exit {run.returncode}, {ok}/{expected} links OK"
    except (ValueError, KeyError):
        problem = f"FAILED (exit {run.returncode}): {run.stderr.strip()[-120:]}"
    return WebRun("linkinator", run, stats, problem)


def run_urllib3(server: BenchServer, pages: int, threads: int) -> WebRun:
    """The plain urllib3 loop GETting the ``pages`` pages with ``threads`` in flight."""
    server.reset()
    paths = ",".join(f"/page/{i}" for i in range(pages))
    run = measure([sys.executable, "-c", _URLLIB3_LOOP, str(server.port), HOST, paths,
                   str(threads)], timeout=300)
    stats = server.reset()
    problem = "" if run.returncode == 0 and run.stdout.strip() == str(pages) else (
        f"WRONG: exit {run.returncode}, {run.stdout.strip() or run.stderr.strip()[-120:]}")
    return WebRun("urllib3", run, stats, problem)


def startup_seconds() -> float:
    """The wall time of ``tracecite --version``: what any run spends before it does work."""
    return measure([*tracecite_command(), "--version"], timeout=60).wall


# -- figure 2: latency-bound ----------------------------------------------------------------


def latency_site(pages: int, records: int, seed: int = 5, hosts: int = 1,
                 ) -> tuple[dict[str, bytes], str]:
    """``pages`` distinct small HTML pages, an index linking to them, and notes text with
    ``records`` records spread over the pages (each quote a sentence of its page). With
    ``hosts`` > 1, page i is cited on host ``i % hosts + 1`` of the many-host layout."""
    rng = random.Random(seed)
    site: dict[str, bytes] = {}
    sentences: list[list[str]] = []
    for i in range(pages):
        paragraphs = [paragraph(rng, 400) for _ in range(5)]
        sentences.append([s for p in paragraphs for s in _sentences(p)])
        body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
        site[f"/page/{i}"] = (
            f"<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>Page {i}</title>"
            f"<style>p {{ margin: 1em }}</style></head>\n<body><nav><a href=/>Home</a> · "
            f"<a href=/about>About</a></nav>\n<main><h1>Page <b>{i}</b></h1>\n{body}</main>\n"
            f"<footer>Bench site, page {i}</footer></body></html>\n"
        ).encode()
    site["/index.html"] = index_page([f"/page/{i}" for i in range(pages)])
    notes = []
    for k in range(records):
        i = k % pages
        quote = sentences[i][(k // pages) % len(sentences[i])]
        host = HOST if hosts == 1 else many_host(i % hosts + 1)
        notes.append(f"claim: Claim {k}.\nquote: {quote}\nurl: http://{host}/page/{i}\n")
    return site, "\n".join(notes)


def index_page(links: Sequence[str]) -> bytes:
    """An HTML page linking to each of ``links`` (for linkinator)."""
    items = "".join(f'<li><a href="{link}">{link}</a></li>\n' for link in links)
    return f"<!doctype html><title>Index</title><ul>\n{items}</ul>\n".encode()


def _sentences(text: str) -> list[str]:
    out, start = [], 0
    for i, char in enumerate(text):
        if char in ".!?" and (i + 1 == len(text) or text[i + 1] == " "):
            out.append(text[start:i + 1].strip())
            start = i + 1
    return [s for s in out if len(s.split()) >= 6]


@dataclass(frozen=True)
class Plan:
    """One configuration of figure 2: a tool (``tracecite``, ``linkinator`` or ``urllib3``, the
    plain loop), its settings (None: its default) and the layout."""

    tool: str
    hosts: int = 1
    concurrency: int | None = None
    per_host: int | None = None

    def options(self) -> list[str]:
        """The command-line options for the settings that are not the tool's defaults."""
        out = []
        if self.concurrency is not None:
            out += ["--concurrency", str(self.concurrency)]
        if self.per_host is not None:
            out += ["--per-host", str(self.per_host)]
        return out

    def limits(self) -> tuple[int, int]:
        """TraceCite's limits in force: (overall, per host)."""
        return (self.concurrency or DEFAULT_CONCURRENCY, self.per_host or DEFAULT_PER_HOST)

    def effective(self, pages: int) -> int:
        """The most requests TraceCite's limits allow in flight at once on this layout."""
        overall, per_host = self.limits()
        return min(overall, self.hosts * min(per_host, -(-pages // self.hosts)))

    def label(self) -> str:
        """The tool and its settings, as the table shows them."""
        if self.tool == "urllib3":
            return f"urllib3 loop ({self.concurrency} threads, one pool)"
        if self.tool != "tracecite":
            return f"{self.tool} {' '.join(self.options()) or '(default)'}"
        if self.concurrency is None and self.per_host is None:
            overall, per_host = self.limits()
            return f"tracecite (defaults: {overall}, {per_host} per host)"
        return f"tracecite {' '.join(self.options())}"


def latency_figure(*, pages: int = 200, records: int = 1000, latency: float = 0.05,
                   concurrencies: Sequence[int] = (8, 64), repeats: int = 3,
                   log: Log = print) -> Table:
    """Figure 2: TraceCite at its defaults on one host and on ``HOSTS`` hosts, and on one host
    with ``--concurrency N --per-host N`` for ``EQUAL`` and each N of ``concurrencies``;
    linkinator at its defaults on both layouts and at ``--concurrency EQUAL`` on one host; the
    plain urllib3 loop with the defaults' requests in flight on one host; and the start-up of
    ``tracecite --version``, each interleaved."""
    table = Table(
        f"Latency-bound: verify-notes vs linkinator ({pages} URLs, {latency * 1000:g} ms each, "
        f"{records} notes)",
        ["tool", "hosts", "wall", "in flight allowed", "floor", "floor + start-up",
         "÷ (floor + start-up)", "first request", "path", "path ÷ floor", "÷ linkinator",
         "÷ urllib3 loop", "requests", "max in flight (per host)", "goal"],
    )
    missing = linkinator_problem()
    if missing:
        table.note(f"linkinator not measured: {missing}; only the floor is shown")
    defaults = Plan("tracecite")
    equal = Plan("tracecite", concurrency=EQUAL, per_host=EQUAL)
    loop = Plan("urllib3", concurrency=DEFAULT_PER_HOST)
    loop_equal = Plan("urllib3", concurrency=EQUAL)
    plans = [defaults, Plan("tracecite", hosts=HOSTS), equal,
             *(Plan("tracecite", concurrency=c, per_host=c) for c in concurrencies if c != EQUAL),
             loop, loop_equal]
    if not missing:
        plans += [Plan("linkinator"), Plan("linkinator", hosts=HOSTS),
                  Plan("linkinator", concurrency=EQUAL)]
    results: dict[Plan, list[WebRun]] = {plan: [] for plan in plans}
    startups: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, BenchServer(
            latency_site(pages, records)[0], latency=latency, addresses=HOSTS) as server:
        notes: dict[int, Path] = {}
        for hosts in (1, HOSTS):
            notes[hosts] = Path(tmp) / f"notes-{hosts}.txt"
            notes[hosts].write_text(latency_site(pages, records, hosts=hosts)[1],
                                    encoding="utf-8")
        server.add_page("/many.html", index_page([
            f"http://{server.hosts[i % HOSTS]}:{server.port}/page/{i}" for i in range(pages)]))
        log(f"  {len(plans)} configurations and the start-up × {repeats} interleaved runs …")
        for _ in range(repeats):
            startups += [startup_seconds() for _ in range(3)]
            for plan in plans:
                if plan.tool == "tracecite":
                    result = run_tracecite(server, notes[plan.hosts], plan.options(), records,
                                           hosts=plan.hosts)
                elif plan.tool == "urllib3":
                    result = run_urllib3(server, pages, plan.concurrency or DEFAULT_PER_HOST)
                else:
                    result = run_linkinator(
                        server, "/index.html" if plan.hosts == 1 else "/many.html", pages,
                        plan.options())
                results[plan].append(result)
    startup = median(startups)
    walls = {plan: median([r.run.wall for r in runs]) for plan, runs in results.items()}
    linkinators = {(plan.hosts, plan.concurrency): wall for plan, wall in walls.items()
                   if plan.tool == "linkinator"}
    loops = {plan.concurrency: wall for plan, wall in walls.items() if plan.tool == "urllib3"}
    for plan, runs in results.items():
        wall = walls[plan]
        # linkinator with the same --concurrency if it ran, else at its defaults on the layout
        peer = linkinators.get((plan.hosts, plan.concurrency), linkinators.get((plan.hosts, None)))
        problems = [r.problem for r in runs if r.problem]
        in_flight = max(r.stats.max_in_flight for r in runs)
        per_host = max(max(r.stats.host_max_in_flight.values(), default=0) for r in runs)
        counts = ", ".join(f"{n} {m}" for m, n in sorted(_methods(runs[-1].stats).items()))
        allowed = floor_cell = with_startup = over_floor = goal = over_peer = over_loop = "–"
        path = median([r.path for r in runs])
        first, path_cell, path_over_floor = seconds(median([r.first_request for r in runs])), \
            seconds(path), "–"
        if plan.tool != "linkinator":
            effective = plan.effective(pages) if plan.tool == "tracecite" else (
                plan.concurrency or DEFAULT_PER_HOST)
            floor = pages * latency / effective
            allowed, floor_cell = str(effective), seconds(floor)
            with_startup, over_floor = seconds(floor + startup), ratio(wall / (floor + startup))
            path_over_floor = ratio(path / floor)
        if plan.tool == "tracecite":
            overall, host_limit = plan.limits()
            if peer is not None:
                over_peer = ratio(wall / peer)
            same_loop = loops.get(plan.effective(pages)) if plan.hosts == 1 else None
            if same_loop is not None:
                over_loop = ratio(wall / same_loop)
            if plan == defaults:
                goals = [f"path ≤ {FLOOR_GOAL:g}× floor {verdict(path <= FLOOR_GOAL * floor)}",
                         f"wall ≤ {FLOOR_GOAL:g}× (floor + start-up) "
                         f"{verdict(wall <= FLOOR_GOAL * (floor + startup))}"]
            elif plan == equal:
                goals = [] if peer is None else [
                    f"≤ {PEER_GOAL:g}× linkinator --concurrency {EQUAL} "
                    f"{verdict(wall <= PEER_GOAL * peer)}"]
            else:
                goals = [f"≤ 3× floor {verdict(wall <= 3 * floor)}"]
                if peer is not None and plan.hosts == HOSTS:
                    goals.append(f"≤ linkinator {verdict(wall <= peer)}")
            if same_loop is not None and plan in (defaults, equal):
                goals.append(f"≤ {LOOP_GOAL:g}× urllib3 loop "
                             f"{verdict(wall <= LOOP_GOAL * same_loop)}")
            if not _each_once(runs, "GET", pages):
                goals.append("a URL NOT fetched exactly once")
            if in_flight > overall or per_host > host_limit:
                goals.append("concurrency NOT bounded")
            goal = ", ".join(goals)
        table.add(plan.label(), plan.hosts, seconds(wall), allowed, floor_cell, with_startup,
                  over_floor, first, path_cell, path_over_floor, over_peer, over_loop, counts,
                  f"{in_flight} ({per_host})",
                  problems[0] if problems else goal)
    table.note("floor = URLs × latency ÷ in flight allowed, the most requests TraceCite's "
               "limits let run at once on that layout: min(--concurrency, hosts × "
               f"--per-host). On one host at the defaults that is {DEFAULT_PER_HOST}, so the "
               f"floor is {seconds(pages * latency / DEFAULT_PER_HOST)}: linkinator, which "
               f"puts every request on the one host at once, is out of reach there by design "
               "(a per-host limit is what keeps a link checker from hammering one site)")
    table.note(f"start-up = `tracecite --version`, {seconds(startup)} (median of "
               f"{len(startups)} runs interleaved with the others: "
               f"{seconds(min(startups))}–{seconds(max(startups))}); goals: at the defaults on "
               f"one host wall ≤ {FLOOR_GOAL:g} × (floor + start-up), at --concurrency {EQUAL} "
               f"--per-host {EQUAL} wall ≤ {PEER_GOAL:g} × linkinator --concurrency {EQUAL}'s; "
               f"on one host, at the defaults and at {EQUAL}, wall ≤ {LOOP_GOAL:g} × the "
               "urllib3 loop's with as many in flight")
    table.note("first request: from the process's start to its first request's arrival at "
               "the server (its imports, inputs and pools); path: from then to the end of the "
               "last response, the per-host path itself as the server saw it (path ÷ floor); "
               "wall − first request − path is what follows the last response (the last "
               "parses, the report, the exit); each the median over the runs")
    table.note(f"wall: median of {repeats} interleaved runs, from process start to exit; "
               "÷ linkinator: against linkinator with the same --concurrency where it ran, "
               "else at its defaults on the same layout; ÷ urllib3 loop: against the plain "
               f"loop (a Python process, {DEFAULT_PER_HOST} or {EQUAL} threads sharing one "
               "keep-alive urllib3 pool, no URL or address checks, no parsing) with as many "
               "in flight")
    once = all(_each_once(rs, "GET", pages) for p, rs in results.items() if p.tool == "tracecite")
    table.note(f"tracecite: {records} notes → {pages} GETs, each URL exactly once in every run: "
               f"{'yes' if once else 'NO'}; max in flight, overall and (in brackets) on the "
               "busiest host, is counted by the server")
    if not missing:
        table.note(f"linkinator {LINKINATOR_VERSION} (npm): GETs the index page, then a HEAD "
                   "per link (no body, no parsing), with no limit per host (its --concurrency "
                   "does not bound its requests either); tracecite GETs each page and parses it")
    return table


def _methods(stats: ServerStats) -> dict[str, int]:
    out: dict[str, int] = {}
    for (method, _), n in stats.requests.items():
        out[method] = out.get(method, 0) + n
    return out


def _each_once(runs: Sequence[WebRun], method: str, pages: int) -> bool:
    """Whether every run requested each page exactly once with ``method``."""
    for run in runs:
        counts = [n for path, n in run.stats.fetches(method).items() if path.startswith("/page/")]
        if len(counts) != pages or set(counts) != {1}:
            return False
    return True


# -- figure 3: parse-bound ------------------------------------------------------------------


def corpus_dir() -> Path | None:
    """The visible-text corpus: ``$TRACECITE_CORPUS``, or ``shared/corpus`` beside the repo."""
    candidates = [os.environ.get("TRACECITE_CORPUS", ""), str(REPO.parent / "shared" / "corpus")]
    for candidate in candidates:
        if candidate and (Path(candidate) / "readability").is_dir():
            return Path(candidate) / "readability"
    return None


@dataclass
class CorpusPage:
    """A corpus page with a quote that TraceCite's extraction finds, and its parse time."""

    name: str
    html: bytes
    quote: str
    parse_seconds: float


def corpus_pages(folder: Path, limit: int | None = None) -> tuple[list[CorpusPage], int]:
    """Pages with a usable quote (parsed once here, sequentially, timing each parse), and how
    many pages had none."""
    from tracecite.matching import MatchText, normalise
    from tracecite.visible import visible_text

    paths = sorted(folder.glob("*.html"))
    if limit is not None:
        paths = paths[:: max(1, len(paths) // limit)][:limit]
    pages: list[CorpusPage] = []
    skipped = 0
    for path in paths:
        html = path.read_bytes()
        text = html.decode("utf-8")
        start = time.perf_counter()
        visible = visible_text(text)
        elapsed = time.perf_counter() - start
        oracle = path.with_suffix(".innertext.txt")
        quote = _pick_quote(oracle.read_text(encoding="utf-8") if oracle.exists() else "",
                            MatchText(visible), normalise)
        if quote is None:
            skipped += 1
            continue
        pages.append(CorpusPage(path.stem, html, quote, elapsed))
    return pages, skipped


def _parse_seconds(pages: Sequence[CorpusPage], parser: str) -> float:
    """The single-process parse time of ``pages`` again, with ``parser``."""
    from tracecite.visible import visible_text

    total = 0.0
    for page in pages:
        text = page.html.decode("utf-8")
        start = time.perf_counter()
        visible_text(text, parser=parser)
        total += time.perf_counter() - start
    return total


def _parsers() -> list[str]:
    """The HTML parsers figure 3 runs with: html5lib (the default install's, which the goal is
    for), and lexbor when the fast extra is installed."""
    from tracecite.visible import lexbor

    return ["html5lib", "lexbor"] if lexbor.available() else ["html5lib"]


def _pick_quote(oracle: str, visible: object, normalise: object) -> str | None:
    """A run of up to 12 words from the middle of the oracle that the extraction finds."""
    lines = [normalise(line) for line in oracle.splitlines()]  # type: ignore[operator]
    for min_words in (12, 4):
        candidates = [line.split() for line in lines if len(line.split()) >= min_words]
        middle = len(candidates) // 2
        for words in candidates[middle:] + candidates[:middle]:
            start = max(0, len(words) // 2 - 6)
            quote = " ".join(words[start:start + 12])
            if visible.contains(quote):  # type: ignore[attr-defined]
                return quote
    return None


def parse_figure(*, limit: int | None = None, repeats: int = 3, log: Log = print) -> Table:
    """Figure 3, with each parser installed (html5lib, and lexbor with the fast extra)."""
    cores = os.cpu_count() or 1
    table = Table(
        f"Parse-bound: verify-notes on the visible-text corpus ({cores} cores, no latency)",
        ["parser", "pages", "parse sum", "sum ÷ cores", "wall", "wall ÷ (sum ÷ cores)", "CPU",
         "peak RSS (tree)", "peak RSS (main)", "goal"],
    )
    folder = corpus_dir()
    if folder is None:
        table.note("corpus not found (../shared/corpus/readability or $TRACECITE_CORPUS): "
                   "figure skipped")
        return table
    log("  parsing the corpus pages in this process, one at a time …")
    pages, skipped = corpus_pages(folder, limit)
    size = sum(len(p.html) for p in pages)
    site: dict[str, bytes] = {"/tiny/0": b"<!doctype html><p>Just one small page.</p>"}
    for copy in "abc":
        for page in pages:
            site[f"/{copy}/{page.name}"] = page.html
    passes: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp, BenchServer(site) as server:
        tiny = Path(tmp) / "tiny.txt"
        tiny.write_text(f"claim: c\nquote: Just one small page.\nurl: http://{HOST}/tiny/0\n")
        for parser in _parsers():
            env = {**os.environ, "TRACECITE_HTML_PARSER": parser}
            sums = passes[parser] = [_parse_seconds(pages, parser)]
            runs: list[tuple[str, int, list[WebRun]]] = [
                ("1 tiny page (baseline)", 0,
                 [run_tracecite(server, tiny, [], 1, tree=True, env=env)])]
            log(f"  {parser}: verify-notes on {len(pages)} pages ({megabytes(size)}) {repeats} "
                "times, and on three times as many once, each followed by the single-process "
                "parse again …")
            for copies, times in ((1, repeats), (3, 1)):
                notes = Path(tmp) / f"notes-{copies}.txt"
                notes.write_text("\n".join(
                    f"claim: {p.name}\nquote: {p.quote}\nurl: http://{HOST}/{copy}/{p.name}\n"
                    for copy in "abc"[:copies] for p in pages), encoding="utf-8")
                results = []
                for _ in range(times):
                    results.append(run_tracecite(server, notes, [], len(pages) * copies,
                                                 tree=True, env=env))
                    sums.append(_parse_seconds(pages, parser))  # interleaved
                runs.append((f"{len(pages)} × {copies} = {len(pages) * copies}", copies,
                             results))
            _parse_rows(table, parser, runs, median(sums), cores)
    table.note(f"{len(pages)} corpus pages with a quote the extraction finds ({skipped} without: "
               f"empty oracle or no usable line), {megabytes(size)} of HTML; tracecite at its "
               f"defaults (every page on one host: {DEFAULT_PER_HOST} in flight), with "
               "TRACECITE_HTML_PARSER set to the row's parser; parse sum: visible_text on each "
               "page in one process, one after another, with that parser (median of the "
               "passes: " + "; ".join(f"{parser} {', '.join(seconds(x) for x in sums)}"
                                      for parser, sums in passes.items())
               + f"); the pages once: median of {repeats} runs")
    table.note("goal (for html5lib, the default install's parser): wall ≤ 1.3 × (parse sum ÷ "
               "cores); lexbor parses about 6× faster, so its rows show mostly the fixed costs "
               "(start-up, the parse pool, fetching); CPU: user + system of the command and its "
               "parse workers; peak RSS (tree): sampled every 5 ms over the command and its "
               "parse workers, and must not grow with the number of pages")
    return table


def _parse_rows(table: Table, parser: str, runs: Sequence[tuple[str, int, list[WebRun]]],
                parse_sum: float, cores: int) -> None:
    """Figure 3's rows for one parser."""
    for label, copies, results in runs:
        wall = median([r.run.wall for r in results])
        problems = [r.problem for r in results if r.problem]
        if copies:
            work = parse_sum * copies
            share = work / cores
            goal = f"≤ 1.3× {verdict(wall <= 1.3 * share)}" if parser == "html5lib" else "–"
            cells = [seconds(work), seconds(share), seconds(wall), ratio(wall / share)]
        else:
            goal = ""
            cells = ["–", "–", seconds(wall), "–"]
        table.add(parser, label, *cells, seconds(median([r.run.cpu for r in results])),
                  megabytes(max(r.run.tree_rss for r in results)),
                  megabytes(max(r.run.peak_rss for r in results)),
                  problems[0] if problems else goal)
