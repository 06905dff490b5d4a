"""PDF sources through the real commands (docs/guides/pdf.md): ``verify-files`` over the
generated PDFs, ``verify-notes`` against a loopback server that serves them as
``application/pdf`` and untyped, the layout diagnosis, hostile PDFs that cost one source, the
engine missing (TC324), the PDF cap and the cache key."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import tracecite.pdf.reader as reader_module
import tracecite.settings as settings_module
from tests.conftest import Cli, write_notes
from tests.fetch.servers import Reply
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
)
from tests.pdf.conftest import files_trace
from tests.pdf.make_pdfs import Made
from tests.stopping import cpu_seconds, descendants

PDF_TYPE = (("Content-Type", "application/pdf"),)
HOSTILE = [sys.executable, str(Path(__file__).with_name("hostile_worker.py"))]


def _flags(site: Site) -> list[str]:
    return [*site.connect_to, "--allow-net", "127.0.0.0/8", "--ca-cert", site.ca_path,
            "--no-progress"]


def _readable(pdfs: dict[str, Made]) -> dict[str, Made]:
    return {name: made for name, made in pdfs.items() if made.unreadable is None}


def _root(pdfs: dict[str, Made]) -> Path:
    return next(iter(pdfs.values())).path.parent


def _by_citation(report: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {f["citation"]: f for f in report["findings"]}


@pytest.mark.slow
def test_verify_files_finds_every_sentence_and_no_altered_one(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made]) -> None:
    cited = [(f"file:{made.path.name}", sentence) for made in _readable(pdfs).values()
             for sentence in made.found]
    altered = [(f"file:{made.path.name}", sentence) for made in _readable(pdfs).values()
               for sentence in made.altered]
    trace = files_trace(tmp_path / "t.jsonl", cited + altered)
    res = cli("verify-files", trace, "--root", _root(pdfs), "--json")
    report = res.json()
    files = report["summary"]["files"]
    assert (files["checked"], files["matched"]) == (len(cited) + len(altered), len(cited))
    findings = report["findings"]
    assert sorted(f["citation"] for f in findings) == list(
        range(len(cited) + 1, len(cited) + len(altered) + 1))
    assert {f["code"] for f in findings} == {"TC211"} and res.exit == 2
    for finding in findings:
        assert finding["diagnosis"]["kinds"], finding
    # Nothing of the text is echoed.
    assert all(sentence not in res.out + res.err for _, sentence in cited + altered)


@pytest.mark.parametrize(("name", "reason"), [
    ("encrypted-password", "encrypted"), ("image-only", "no text layer"),
    ("truncated", "damaged"),
])
def test_an_unreadable_pdf_is_tc323_with_the_reason(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made], name: str, reason: str) -> None:
    trace = files_trace(tmp_path / "t.jsonl", [(f"file:{name}.pdf", "Citation checkers")])
    res = cli("verify-files", trace, "--root", _root(pdfs), "--json")
    (finding,) = res.json()["findings"]
    assert (finding["code"], res.exit) == ("TC323", 2)
    assert reason in finding["message"]


def test_an_encrypted_pdf_the_empty_password_opens_is_read(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made]) -> None:
    made = pdfs["encrypted-open"]
    trace = files_trace(tmp_path / "t.jsonl", [(f"file:{made.path.name}", s) for s in made.found])
    res = cli("verify-files", trace, "--root", _root(pdfs), "--json")
    assert res.exit == 0, res.out


def test_layout_misses_are_diagnosed_with_their_pages(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made]) -> None:
    cited = [
        # Across a page break with a running footer and header between.
        ("file:headers-footers.pdf",
         "Section 1 reports what the institute measured this year. Section 2 reports"),
        # A hyphen at a line's end that belongs to the word (PDFium drops it).
        ("file:hyphenation.pdf", "The Franco-German treaty"),
        # Partial: the longest run is on page 150.
        ("file:long.pdf", "Page 150 of the long report records measurement 1051."),
    ]
    trace = files_trace(tmp_path / "t.jsonl", cited)
    report = cli("verify-files", trace, "--root", _root(pdfs), "--json").json()
    found = _by_citation(report)
    assert found[1]["diagnosis"]["kinds"] == ["layout"]
    assert found[1]["diagnosis"]["where"] == "pages 1-2"
    assert found[2]["diagnosis"]["kinds"] == ["layout"]
    assert found[2]["diagnosis"]["where"] == "page 1"
    assert found[3]["diagnosis"]["kinds"] == ["partial"]
    assert found[3]["diagnosis"]["where"] == "page 150"
    assert "page 150 of the PDF" in found[3]["message"]


def test_typography_misses_name_their_page(cli: Cli, tmp_path: Path,
                                            pdfs: dict[str, Made]) -> None:
    trace = files_trace(tmp_path / "t.jsonl", [("file:curly.pdf", pdfs["curly"].altered[0])])
    (finding,) = cli("verify-files", trace, "--root", _root(pdfs), "--json").json()["findings"]
    assert "typography" in finding["diagnosis"]["kinds"]
    assert finding["diagnosis"]["where"] == "page 1"


def _serve(site: Site, pdfs: dict[str, Made]) -> dict[str, str]:
    urls = {}
    for name, made in pdfs.items():
        data = made.path.read_bytes()
        urls[name] = site.route(f"/{name}.pdf", Reply(200, PDF_TYPE, data))
        urls[name + "+untyped"] = site.route(f"/untyped/{name}", Reply(200, (), data))
    return urls


def _notes(path: Path, records: list[tuple[str, str]]) -> Path:
    return write_notes(path, "\n".join(f"claim: c\nquote: {q}\nurl: {u}\n" for u, q in records))


@pytest.mark.slow
def test_verify_notes_reads_typed_and_untyped_pdfs(
        cli: Cli, tmp_path: Path, site: Site, pdfs: dict[str, Made]) -> None:
    urls = _serve(site, pdfs)
    records = []
    for name in ("one-column", "two-columns", "ligatures", "page-break", "table"):
        for url in (urls[name], urls[name + "+untyped"]):
            records += [(url, sentence) for sentence in pdfs[name].found]
    altered = [(urls["one-column"], pdfs["one-column"].altered[0]),
               (urls["curly+untyped"], pdfs["curly"].altered[0])]
    notes = _notes(tmp_path / "cite.notes", records + altered)
    res = cli("verify-notes", "--json", *_flags(site), notes)
    report = res.json()
    live = report["summary"]["live"]
    assert (live["checked"], live["matched"]) == (len(records) + 2, len(records)), report
    assert [f["code"] for f in report["findings"]] == ["TC210", "TC210"]
    assert res.exit == 2


def test_a_crashing_pdf_costs_that_source_only(
        cli: Cli, tmp_path: Path, site: Site, pdfs: dict[str, Made],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "worker_command", lambda: [*HOSTILE, "crash"])
    good = pdfs["one-column"].path.read_bytes() + b"\n%benign\n"
    records = [(site.route(f"/good{n}.pdf", Reply(200, PDF_TYPE, good)),
                pdfs["one-column"].found[0]) for n in range(3)]
    records.insert(1, (site.route("/crash.pdf", Reply(200, PDF_TYPE, b"%PDF-1.7 crash")),
                       "anything"))
    notes = _notes(tmp_path / "cite.notes", records)
    res = cli("verify-notes", "--json", "--concurrency", "2", *_flags(site), notes)
    report = res.json()
    assert [(f["code"], f["record"]) for f in report["findings"]] == [("TC323", 2)], report
    assert "engine stopped" in report["findings"][0]["message"]
    assert report["summary"]["live"]["matched"] == 3 and res.exit == 2


def test_without_the_engine_a_pdf_is_tc324(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2_raw", None)  # as if the extra were not installed
    trace = files_trace(tmp_path / "t.jsonl", [("file:one-column.pdf", "Citation checkers")])
    res = cli("verify-files", trace, "--root", _root(pdfs), "--json")
    (finding,) = res.json()["findings"]
    assert (finding["code"], finding["name"], res.exit) == ("TC324", "pdf-engine-missing", 2)
    assert "pip install 'tracecite[pdf]'" in finding["message"]


def test_without_the_engine_in_a_process_of_its_own(tmp_path: Path, pdfs: dict[str, Made]
                                                   ) -> None:
    import json
    import os
    import subprocess

    hide = tmp_path / "hide"
    hide.mkdir()
    # Every process of the run, the PDF workers too, finds no engine.
    (hide / "sitecustomize.py").write_text(
        "import sys\nsys.modules['pypdfium2'] = sys.modules['pypdfium2_raw'] = None\n")
    trace = files_trace(tmp_path / "t.jsonl", [("file:one-column.pdf", "Citation checkers")])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(hide), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "tracecite", "verify-files", str(trace),
                           "--root", str(_root(pdfs)), "--json"], capture_output=True,
                          text=True, env=env, timeout=60)
    (finding,) = json.loads(done.stdout)["findings"]
    assert (finding["code"], done.returncode) == ("TC324", 2)
    assert "pip install 'tracecite[pdf]'" in finding["message"]


def _big(pdfs: dict[str, Made], size: int) -> bytes:
    """The one-column PDF padded past ``size`` bytes after its end (its cross-reference
    table repeated after the padding, so it reads as before)."""
    data = pdfs["one-column"].path.read_bytes()
    tail = data[data.rindex(b"startxref"):]
    return data + b"\n%" + b"x" * size + b"\n" + tail


def test_max_pdf_bytes_raises_the_cap_of_pdfs_alone(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made]) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "big.pdf").write_bytes(_big(pdfs, 3 * 1024 * 1024))
    (root / "big.txt").write_bytes(b"Citation checkers " * 200_000)
    trace = files_trace(tmp_path / "t.jsonl", [("file:big.pdf", "Citation checkers read"),
                                               ("file:big.txt", "Citation checkers")])
    default = cli("verify-files", trace, "--root", root, "--json").json()
    assert [(f["code"], f["citation"]) for f in default["findings"]] == [("TC322", 1),
                                                                       ("TC322", 2)]
    raised = cli("verify-files", trace, "--root", root, "--json",
                 "--max-pdf-bytes", str(4 * 1024 * 1024)).json()
    assert [(f["code"], f["citation"]) for f in raised["findings"]] == [("TC322", 2)]
    over = cli("verify-files", trace, "--root", root, "--json", "--max-pdf-bytes",
               str(32 * 1024 * 1024 + 1))
    assert over.exit == 1 and over.codes() == ["TC100"]


@pytest.mark.slow
def test_the_pdf_cap_and_engine_are_in_the_cache_key(
        cli: Cli, tmp_path: Path, site: Site, pdfs: dict[str, Made],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = site.route("/big.pdf", Reply(200, PDF_TYPE, _big(pdfs, 3 * 1024 * 1024)))
    notes = _notes(tmp_path / "cite.notes", [(url, pdfs["one-column"].found[0])])
    cache = tmp_path / "verdicts.sqlite"
    raised = ["--max-pdf-bytes", str(4 * 1024 * 1024)]
    first = cli("verify-notes", "--json", "--cache", cache, *_flags(site), *raised, notes)
    assert first.exit == 0, first.out
    again = cli("verify-notes", "--json", "--cache", cache, *_flags(site), *raised, notes)
    assert again.json()["summary"]["live"]["cached"] == 1
    smaller = cli("verify-notes", "--json", "--cache", cache, *_flags(site), notes)
    assert smaller.codes() == ["TC314"] and smaller.json()["summary"]["live"]["cached"] == 0
    monkeypatch.setattr(settings_module, "pdf_engine", lambda: "pypdfium2 0.0.0, PDFium 1")
    other = cli("verify-notes", "--json", "--cache", cache, *_flags(site), *raised, notes)
    assert other.exit == 0 and other.json()["summary"]["live"]["cached"] == 0
    assert other.json()["run"]["options_digest"] != first.json()["run"]["options_digest"]


@pytest.mark.slow
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_stop_during_a_pdf_ends_the_run_and_its_pdf_workers(
        tmp_path: Path, pdfs: dict[str, Made], signum: str) -> None:
    import json
    import os
    import signal
    import subprocess
    import time

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    # The run's PDF workers are ones that spin without end: only a stop ends them.
    (hooks / "sitecustomize.py").write_text(
        "import tracecite.pdf.reader as reader\n"
        f"reader.worker_command = lambda: {[*HOSTILE, 'hang']!r}\n")
    trace = files_trace(tmp_path / "t.jsonl", [("file:one-column.pdf", "Citation checkers")])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(hooks), *filter(None, [os.environ.get("PYTHONPATH")])])}
    run = subprocess.Popen([sys.executable, "-m", "tracecite", "verify-files", str(trace),
                            "--root", str(_root(pdfs)), "--json"], stdout=subprocess.PIPE,
                           text=True, env=env)
    # The workers start before the run reads its trace: wait until one spins on the PDF (a
    # second of CPU among them, several times a worker's start), or the stop may come before
    # the PDF is sent, on a loaded host.
    deadline = time.monotonic() + 30
    workers: list[int] = []
    while time.monotonic() < deadline:
        time.sleep(0.1)
        workers = descendants(run.pid)
        if sum(map(cpu_seconds, workers)) >= 1.0:
            break
    assert workers, "the PDF worker never started"
    assert sum(map(cpu_seconds, workers)) >= 1.0, "no PDF worker began on the PDF"
    stopped = time.monotonic()
    run.send_signal(getattr(signal, signum))
    out, _ = run.communicate(timeout=10)
    assert time.monotonic() - stopped < 2.5
    assert run.returncode == 128 + getattr(signal, signum)
    report = json.loads(out)
    assert report["summary"]["files"]["interrupted"] == 1
    time.sleep(0.5)
    from tests.pdf.test_reader import _alive

    assert not any(_alive(pid) for pid in workers)


def test_verify_files_starts_the_workers_its_sources_need(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made], monkeypatch: pytest.MonkeyPatch) -> None:
    # A run of PDFs forked HTML parse workers it never used, and started its PDF workers only
    # once its first PDF was loaded.
    from tracecite.checks.parse_pool import ParsePool

    started: list[str] = []
    for name in ("fork_now", "start_pdf"):
        real = getattr(ParsePool, name)

        def counted(pool: ParsePool, name: str = name, real: Any = real) -> None:
            started.append(name)
            real(pool)
        monkeypatch.setattr(ParsePool, name, counted)
    made = pdfs["one-column"]
    root = tmp_path / "root"
    root.mkdir()
    (root / "report.pdf").write_bytes(made.path.read_bytes())
    (root / "page.html").write_text("<p>On the page.</p>", encoding="utf-8")
    trace = files_trace(tmp_path / "t.jsonl", [("file:report.pdf", made.found[0])])
    res = cli("verify-files", trace, "--root", root, "--json")
    assert (res.exit, res.json()["summary"]["files"]["matched"]) == (0, 1)
    assert started == ["start_pdf"]
    trace = files_trace(tmp_path / "t2.jsonl", [("file:report.pdf", made.found[0]),
                                                ("file:page.html", "On the page.")])
    started.clear()
    res = cli("verify-files", trace, "--root", root, "--json")
    assert (res.exit, res.json()["summary"]["files"]["matched"]) == (0, 2)
    assert started == ["fork_now", "start_pdf"]


def test_pdf_workers_started_early_are_taken_by_the_run_or_ended_unused(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made], monkeypatch: pytest.MonkeyPatch) -> None:
    # PDF workers started ahead of the traces (as the verify-files command does) are taken by
    # the run; a run that reads no PDF, or forks HTML workers, ends them at once instead.
    from tracecite.workers import cores
    started: list[reader_module.PdfReader] = []
    real = reader_module.PdfReader.start

    def recorded(self: reader_module.PdfReader) -> None:
        started.append(self)
        real(self)

    monkeypatch.setattr(reader_module.PdfReader, "start", recorded)
    made = pdfs["one-column"]
    root = tmp_path / "root"
    root.mkdir()
    (root / "report.pdf").write_bytes(made.path.read_bytes())
    (root / "page.html").write_text("<p>On the page.</p>", encoding="utf-8")
    (root / "notes.txt").write_text("A plain note.", encoding="utf-8")
    runs = {"pdf": [("file:report.pdf", made.found[0])],
            "text": [("file:notes.txt", "A plain note.")],
            "html": [("file:report.pdf", made.found[0]), ("file:page.html", "On the page.")]}
    readers: dict[str, list[reader_module.PdfReader]] = {}
    for name, cited in runs.items():
        started.clear()
        with reader_module.started_early(cores()):
            assert len(started) == 1
            res = cli("verify-files", files_trace(tmp_path / f"{name}.jsonl", cited), "--root",
                      root, "--json")
            readers[name] = list(dict.fromkeys(started))
            assert all(r._closed and not r._load for r in readers[name])
        assert (res.exit, res.json()["summary"]["files"]["matched"]) == (0, len(cited))
    assert len(readers["pdf"]) == 1  # the early one, taken by the run
    assert len(readers["text"]) == 1  # the early one, ended unused
    assert len(readers["html"]) == 2  # the early one ended before the fork, then the run's


def test_the_verify_files_command_starts_its_pdf_workers_before_its_own_imports(
        tmp_path: Path, pdfs: dict[str, Made]) -> None:
    import json
    import subprocess

    made = pdfs["one-column"]
    root = tmp_path / "root"
    root.mkdir()
    (root / "report.pdf").write_bytes(made.path.read_bytes())
    trace = files_trace(tmp_path / "t.jsonl", [("file:report.pdf", made.found[0])])
    script = (
        "import sys\n"
        f"sys.argv = ['tracecite', 'verify-files', {str(trace)!r}, '--root', {str(root)!r},"
        " '--json']\n"
        "import tracecite.pdf.reader as reader\n"
        "real = reader.PdfReader.start\n"
        "def start(self):\n"
        "    print('started', id(self), 'tracecite.cli' in sys.modules, file=sys.stderr)\n"
        "    real(self)\n"
        "reader.PdfReader.start = start\n"
        "from tracecite.__main__ import entry\n"
        "raise SystemExit(entry())\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["summary"]["files"]["matched"] == 1
    starts = [line.split() for line in run.stderr.splitlines() if line.startswith("started")]
    assert starts[0][2] == "False"  # before the command line's modules
    assert len({reader for _, reader, _ in starts}) == 1  # the run took those workers
