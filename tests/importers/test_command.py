"""``tracecite import`` end to end: where traces and reports go, nothing half-written, formats
out of scope, and each Anthropic citation kind through ``check --evidence`` and ``verify-urls``
against pages on loopback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, REPO_ROOT, Cli
from tests.importers.test_anthropic import FIXTURES, fixture
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tests.test_subprocess_stops import closing_reader
from tracecite import api
from tracecite.codes import Code
from tracecite.errors import UsageError
from tracecite.findings import Report, Summary
from tracecite.importers import command
from tracecite.importers.model import Unsupported
from tracecite.report_reader import read_report
from tracecite.report_writer import report_dict
from tracecite.reporters.json import format_json
from tracecite.reporters.verdict import verdict

KINDS = ["char_location", "content_block_location", "search_result_location",
         "web_search_result_location", "web_fetch"]


def copy_fixture(tmp_path: Path, name: str, as_name: str | None = None) -> Path:
    target = tmp_path / (as_name or f"{name}.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / f"{name}.json", target)
    return target


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ---- where the traces and the report go ------------------------------------------------------

def test_one_run_goes_to_stdout_and_the_report_to_stderr(cli: Cli, tmp_path: Path) -> None:
    path = copy_fixture(tmp_path, "char_location")
    res = cli("import", "anthropic", path)
    assert res.exit == 0
    events = [json.loads(line) for line in res.out.splitlines()]
    assert [e["type"] for e in events] == ["tool_call", "tool_result", "answer"]
    assert res.err.splitlines()[-1] == (
        "tracecite import: nothing verified: 1 run imported (1 citation); quotes are checked "
        "with tracecite check --evidence, verify-urls or verify-files; exit 0: nothing failed")
    # A report format asked for takes stdout, so the trace needs -o (docs/guides/importers.md).
    res = cli("import", "anthropic", path, "--json")
    assert res.exit == 1 and res.err == ""
    assert "give -o OUT" in json.loads(res.out)["findings"][0]["message"]
    res = cli("import", "anthropic", path, "--json", "-o", tmp_path / "out")
    report = json.loads(res.out)
    assert report["command"] == "import" and report["exit_code"] == 0
    assert {k: report["summary"][k] for k in ("inputs", "runs", "citations", "not_importable")
            } == {"inputs": 1, "runs": 1, "citations": 1, "not_importable": 0}


def test_with_out_each_run_is_a_file_named_uniquely(cli: Cli, tmp_path: Path) -> None:
    first = copy_fixture(tmp_path, "char_location", "a/exchange.json")
    second = copy_fixture(tmp_path, "web_fetch", "b/exchange.json")
    listed = tmp_path / "c" / "exchange.json"
    listed.parent.mkdir()
    listed.write_text(json.dumps([fixture("web_fetch"), fixture("search_result_location")]),
                      encoding="utf-8")
    out = tmp_path / "out" / "traces"
    res = cli("import", "anthropic", first, second, listed, "-o", out, "--json")
    assert res.exit == 0, res.out
    # Named by file, and a list's runs by their place in it; a name already taken gets -2.
    runs = {p.name: lines(p)[0]["run_id"] for p in out.iterdir()}
    assert runs == {"exchange.trace.jsonl": "msg_01CharLocation",
                    "exchange-2.trace.jsonl": "msg_01WebFetch",
                    "exchange-1.trace.jsonl": "msg_01WebFetch",
                    "exchange-2-2.trace.jsonl": "msg_01SearchResult"}
    summary = res.json()["summary"]
    assert (summary["inputs"], summary["runs"], summary["citations"]) == (3, 4, 5)
    # The report reads back as it was written (tracecite merge reads it so).
    assert format_json(read_report(json.loads(res.out))) == res.out


def test_names_differing_in_case_only_are_made_unique(tmp_path: Path) -> None:
    taken: set[str] = set()
    assert [command._unique(name, taken) for name in ("Run", "run", "../x", "", "run")] == [
        "Run.trace.jsonl", "run-2.trace.jsonl", "x.trace.jsonl", "run-3.trace.jsonl",
        "run-4.trace.jsonl"]


def test_several_runs_without_out_are_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    one = copy_fixture(tmp_path, "char_location")
    other = copy_fixture(tmp_path, "web_fetch")
    res = cli("import", "anthropic", one, other, "--json")
    assert res.exit == 1 and res.err == ""
    report = json.loads(res.out)
    assert [f["code"] for f in report["findings"]] == ["TC100"]
    assert "2 runs to write: give -o OUT" in report["findings"][0]["message"]


def test_nothing_is_written_when_any_input_cannot_be_imported(cli: Cli, tmp_path: Path) -> None:
    good = copy_fixture(tmp_path, "char_location")
    bad_exchange = fixture("web_fetch")
    bad_exchange["response"]["content"][4]["citations"][0]["document_index"] = 3
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_exchange), encoding="utf-8")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b"\xff")
    out = tmp_path / "out"
    res = cli("import", "anthropic", good, bad, latin, tmp_path / "gone.json", "-o", out,
              "--json")
    assert res.exit == 1 and not out.exists()
    findings = res.json()["findings"]
    assert [(f["code"], Path(f["file"]).name) for f in findings] == [
        ("TC107", "bad.json"), ("TC101", "gone.json"), ("TC102", "latin.json")]
    assert findings[0]["message"] == (
        "exchange 1: no document has this index at "
        "$.response.content[4].citations[0].document_index")
    assert res.json()["summary"]["runs"] == 0
    # Without -o, nothing reaches stdout either.
    res = cli("import", "anthropic", bad)
    assert res.exit == 1 and res.out == ""
    assert "bad.json  TC107 import-unsupported" in res.err


def test_a_failed_write_leaves_no_file_behind(cli: Cli, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = [copy_fixture(tmp_path, name) for name in KINDS[:3]]
    out = tmp_path / "out"
    out.mkdir()
    (out / "kept.txt").write_text("mine", encoding="utf-8")
    real = command.tempfile.mkstemp
    made: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> tuple[int, str]:
        made.append(1)
        if len(made) == 3:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(command.tempfile, "mkstemp", failing)
    monkeypatch.setattr(command, "UNNAMED_AT_ONCE", 0)  # hidden files, not unnamed ones
    res = cli("import", "anthropic", *inputs, "-o", out, "--json")
    assert res.exit == 1 and res.codes() == ["TC100"]
    assert "No space left on device" in res.json()["findings"][0]["message"]
    assert [p.name for p in out.iterdir()] == ["kept.txt"]


def test_out_that_is_a_file_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    path = copy_fixture(tmp_path, "char_location")
    out = tmp_path / "out"
    out.write_text("", encoding="utf-8")
    res = cli("import", "anthropic", path, "-o", out, "--json")
    assert res.exit == 1 and res.codes() == ["TC100"]
    assert "-o names a file, not a directory" in res.json()["findings"][0]["message"]


@pytest.mark.parametrize("fmt", ["openai", "gemini", "perplexity"])
def test_formats_that_cite_answer_spans_are_out_of_scope(cli: Cli, tmp_path: Path,
                                                         fmt: str) -> None:
    path = copy_fixture(tmp_path, "char_location")
    res = cli("import", fmt, path, "--json")
    assert res.exit == 1 and res.err == ""  # the report asked for is on stdout
    findings = json.loads(res.out)["findings"]
    assert [f["code"] for f in findings] == ["TC100"]
    message = findings[0]["message"]
    assert f"format '{fmt}' cannot be imported" in message
    assert "cite spans of the answer, not quotes of a source" in message


def test_an_unknown_format_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    path = copy_fixture(tmp_path, "char_location")
    res = cli("import", "Anthropic\x1b[31m", path)
    assert res.exit == 1 and res.out == ""
    assert "unknown format (formats: anthropic, inspect)" in res.err and "\x1b" not in res.err


def test_a_reader_that_closes_stdout_early_changes_nothing(tmp_path: Path) -> None:
    exchange = fixture("char_location")
    document = exchange["request"]["messages"][0]["content"][0]["source"]
    document["data"] = "The grass is green. " * 50_000  # 1 MB: far over a pipe's buffer
    path = tmp_path / "big.json"
    path.write_text(json.dumps(exchange), encoding="utf-8")
    for read in (0, 10):
        code, err = closing_reader(["import", "anthropic", str(path)], read=read)
        assert code == 0, err
        assert "Traceback" not in err and "nothing verified" in err


def test_the_library_writes_to_the_stream_or_the_directory(tmp_path: Path) -> None:
    path = copy_fixture(tmp_path, "web_fetch")
    stream = io.StringIO()
    report = api.import_transcripts("anthropic", [path], stream=stream)
    assert report.exit_code == 0 and report.summary.runs == 1
    assert json.loads(stream.getvalue().splitlines()[-1])["type"] == "answer"
    report = api.import_transcripts("anthropic", [path], tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["web_fetch.trace.jsonl"]
    with pytest.raises(UsageError, match="give out="):
        api.import_transcripts("anthropic", [path])
    with pytest.raises(UsageError, match="takes no option 'evidence'"):
        api.import_transcripts("anthropic", [path], stream=stream, evidence=True)


# ---- each citation kind, end to end ---------------------------------------------------------

PAGES: dict[str, dict[str, str]] = {
    # A request's documents are no pages (document:N): verify-urls skips their quotes.
    "char_location": {},
    "content_block_location": {},
    "search_result_location": {"/kb/intro": "The product ships in three editions.",
                               "/kb/warranty": "Every edition has a two-year warranty."},
    "web_search_result_location": {
        "/bridge": "The bridge was opened to traffic in March 1932 after eight years of "
                   "construction, and it is still in use."},
    "web_fetch": {"/fetched": "Owls hunt at night. Their feathers are soft, so they fly "
                              "silently."},
}
"""The live pages each fixture's cited sources point at."""

CAPTURED = {"char_location": 1, "content_block_location": 1, "search_result_location": 2,
            "web_search_result_location": 0, "web_fetch": 1}
"""Quotes checked against their captured content."""

@pytest.mark.network
@pytest.mark.parametrize("kind", KINDS)
def test_each_citation_kind_imports_checks_and_verifies_live(
        cli: Cli, site: Site, tmp_path: Path, kind: str) -> None:
    out = tmp_path / "traces"
    imported = cli("import", "anthropic", copy_fixture(tmp_path, kind), "-o", out)
    assert imported.exit == 0, imported.err
    trace = out / f"{kind}.trace.jsonl"
    checked = cli("check", "--evidence", trace, "--json")
    report = checked.json()
    assert checked.exit == 0, report["findings"]
    captured = report["summary"]["captured"]
    assert (captured["checked"], captured["matched"]) == (CAPTURED[kind],) * 2
    # Web search returns no text of its results: each of their quotes is to be verified live.
    cited = sum(len(claim["citations"]) for claim in lines(trace)[-1]["claims"])
    assert captured["skipped"] == cited - CAPTURED[kind]
    assert checked.codes() == ["TC203"] * (cited - CAPTURED[kind])
    for page, body in PAGES[kind].items():
        site.route(page, text(body))
    live = cli("verify-urls", trace, "--json", *site.flags)
    report = live.json()
    assert live.exit == 0, report["findings"]
    documents = {"char_location": 1, "content_block_location": 1}.get(kind, 0)
    assert report["summary"]["live"]["matched"] == cited - documents
    assert sorted(site.paths) == sorted(PAGES[kind])


@pytest.mark.network
def test_a_quote_gone_from_the_live_page_is_found_by_verify_urls(
        cli: Cli, site: Site, tmp_path: Path) -> None:
    out = tmp_path / "traces"
    assert cli("import", "anthropic", copy_fixture(tmp_path, "web_fetch"), "-o", out).exit == 0
    site.route("/fetched", text("Owls hunt at night."))
    res = cli("verify-urls", out / "web_fetch.trace.jsonl", "--json", *site.flags)
    assert res.exit == 2 and res.codes() == ["TC210"]
    finding = res.json()["findings"][0]
    assert (finding["source_id"], finding["uri"]) == ("document-0",
                                                      "https://example.test/fetched")


def test_the_readme_example_imports_and_passes_check_evidence(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    steps = ["tracecite import anthropic examples/anthropic/exchange.json -o runs/imported",
             "tracecite check --evidence runs/imported/exchange.trace.jsonl"]
    assert all(step in readme for step in steps)
    shutil.copytree(EXAMPLES / "anthropic", tmp_path / "examples" / "anthropic")
    monkeypatch.chdir(tmp_path)
    for step in steps:
        res = cli(*step.split()[1:], "--json")
        assert res.exit == 0, res.out
    report = res.json()
    assert report["summary"]["captured"]["matched"] == 2 and report["findings"] == []
    sources = lines(tmp_path / "runs" / "imported" / "exchange.trace.jsonl")[3]["sources"]
    assert sources == [{"id": "document-1", "uri": "https://www.iana.org/help/example-domains",
                        "content": sources[0]["content"], "captured_at": "2025-08-25T10:30:00Z",
                        "title": "Example Domains"}]


def test_the_verdict_of_an_import_says_how_to_check_it_and_what_was_not_importable() -> None:
    report = Report("import", (), Summary(inputs=1, citations=2, runs=2, not_importable=3))
    assert str(verdict(report)) == (
        "nothing verified: 2 runs imported (2 citations); quotes are checked with tracecite "
        "check --evidence, verify-urls or verify-files; 3 citations not importable: they cite "
        "spans of the answer, not quotes")


def test_a_report_without_the_import_members_reads_as_zero() -> None:
    doc = report_dict(Report("import", (), Summary(inputs=1, runs=4, not_importable=1)))
    assert read_report(json.loads(json.dumps(doc))).summary.runs == 4
    for key in ("runs", "not_importable"):
        del doc["summary"][key]
    again = read_report(doc).summary
    assert (again.runs, again.not_importable, again.inputs) == (0, 0, 1)


def test_a_stop_while_writing_leaves_no_temporary_file(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    traces = [command.Trace(f"t{i}.jsonl", "{}\n") for i in range(3)]
    real = command.os.replace

    def stopped(source: str, target: str) -> None:
        if target.endswith("t1.jsonl"):
            raise KeyboardInterrupt
        real(source, target)

    monkeypatch.setattr(command.os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt), command.Staged(str(out)) as staged:
        for trace in traces:
            staged.write(trace)
        staged.commit()
    assert [p.name for p in out.iterdir()] == ["t0.jsonl"]


def _unnamed_under(out: Path) -> list[str]:
    """This process's open files under ``out`` that have no name (Linux's ``O_TMPFILE``)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(f"{out}/") and target.endswith(" (deleted)"):
                found.append(target)
    return found


@pytest.mark.parametrize("unnamed", [False, True])
def test_each_run_is_written_before_the_next_is_read(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    unnamed: bool) -> None:
    """Memory holds one run at a time: an evaluation's thousands of runs are never all in it.
    Until every input is read the traces are temporary files (unnamed ones where the platform
    has them, else hidden ones); a problem in a later input removes them, and the folder made
    for them."""
    from tracecite.importers.model import ImportedCitation, ImportedClaim, ImportedRun

    if unnamed and not os.path.isdir("/proc/self/fd"):
        pytest.skip("no unnamed files here")
    if not unnamed:
        monkeypatch.setattr(command, "UNNAMED_AT_ONCE", 0)
    out = tmp_path / "out"
    seen: list[list[str]] = []

    def runs(path: Path, display: str) -> Iterator[ImportedRun]:
        for n in range(3):
            names = sorted(p.name for p in out.iterdir()) if out.exists() else []
            seen.append(_unnamed_under(out) + names if unnamed else names)
            claim = ImportedClaim("a claim", (ImportedCitation("s", "a quote"),))
            yield ImportedRun(f"{path.stem}-{n}", f"{path.stem}-{n}", (), (claim,))
        if path.stem == "bad":
            raise Unsupported(display, "$", "something this importer cannot map")

    monkeypatch.setattr(command, "reader", lambda fmt: runs)
    report = command.run_import("anthropic", [str(tmp_path / "a.json")], str(out), None)
    assert report.findings == () and report.summary.runs == 3
    assert [len(names) for names in seen] == [0, 1, 2]  # the runs before, written already
    if unnamed:
        assert all(name.endswith(" (deleted)") for name in seen[2])  # no name in OUT
    else:
        assert all(name.startswith(".a-") and name.endswith(".tmp") for name in seen[2])
    assert sorted(p.name for p in out.iterdir()) == [
        f"a-{n}.trace.jsonl" for n in range(3)]

    shutil.rmtree(out)
    inputs = [str(tmp_path / "a.json"), str(tmp_path / "bad.json")]
    report = command.run_import("anthropic", inputs, str(out), None)
    assert [f.code for f in report.findings] == [Code.IMPORT_UNSUPPORTED]
    assert not out.exists()


def test_the_folder_imported_into_is_checked_whole_by_its_name(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The traces are named ``*.trace.jsonl``, which the default globs select in any folder:
    ``tracecite check OUT`` checks every run imported, whatever OUT is called."""
    monkeypatch.chdir(tmp_path)
    assert cli("import", "anthropic", copy_fixture(tmp_path, "web_fetch"), "-o", "out").exit == 0
    checked = cli("check", "out", "--evidence", "--json")
    assert checked.exit == 0, checked.out
    assert checked.json()["summary"]["inputs"] == 1


@pytest.mark.network
def test_an_inspect_log_imports_checks_and_verifies_live(
        cli: Cli, site: Site, tmp_path: Path) -> None:
    """Inspect's research log, its sources moved to the test site: the runs whose tool output
    was captured pass ``check --evidence`` but the one that misquotes (TC202); the web-search
    run's quote is TC203 there; ``verify-urls`` then checks every quote against the pages."""
    from tests.importers.test_inspect import RESEARCH

    hosts = ("https://www.iana.org/", "https://www.rfc-editor.org/",
             "https://datatracker.ietf.org/")
    log = RESEARCH.read_text(encoding="utf-8")
    for n, host in enumerate(hosts):  # as the log spells them, in either case
        for spelling in (host, host.upper()):
            log = log.replace(spelling, f"https://example.test/h{n}/")
    (tmp_path / "research.json").write_text(log, encoding="utf-8")
    out = tmp_path / "traces"
    assert cli("import", "inspect", tmp_path / "research.json", "-o", out).exit == 0
    checked = cli("check", out, "--evidence", "--json")
    assert checked.exit == 2 and sorted(checked.codes()) == ["TC202", "TC203"]
    pages = {
        "/h0/help/example-domains": "example.com and example.org are maintained for "
                                    "documentation purposes.",
        "/h1/rfc/rfc2606": "The IETF reserves four top level domain names.",
        "/h0/domains/reserved": "Certain domains are set aside, and nominally registered to "
                                "“IANA”, for specific policy or technical purposes.",
    }
    for page, body in pages.items():
        site.route(page, text(body))
    live = cli("verify-urls", out, "--json", *site.flags)
    report = live.json()
    # The misquote is not on its page either; every other quote is.
    assert sorted(live.codes()) == ["TC202", "TC203", "TC210"]
    assert report["summary"]["live"]["matched"] == report["summary"]["live"]["checked"] - 1
