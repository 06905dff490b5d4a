"""Runs imported one by one: a refused run is TC107 naming it while the others are written,
``--skip-unsupported`` makes it a TC108 warning, a run that is no run is a TC108 warning, an
uncited run is counted and not written, unknown blocks are counted; and the summary's members
through JSON and the console verdict."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Cli
from tracecite.codes import Code
from tracecite.errors import UsageError
from tracecite.findings import Finding, Report, Summary
from tracecite.importers import command
from tracecite.importers.model import (
    ImportedCall,
    ImportedCitation,
    ImportedClaim,
    ImportedRun,
    ImportedSource,
    RefusedRun,
    RunOutcome,
    SkippedRun,
    Unsupported,
)
from tracecite.report_reader import read_report
from tracecite.report_writer import report_dict
from tracecite.reporters.verdict import verdict


def cited(name: str, ignored: int = 0) -> ImportedRun:
    source = ImportedSource("s1", "https://example.com/", "the text")
    claim = ImportedClaim("a claim", (ImportedCitation("s1", "the text"),))
    return ImportedRun(name, name, (ImportedCall("c1", "fetch", True, (source,)),), (claim,),
                       ignored_blocks=ignored)


def refused(label: str) -> RefusedRun:
    return RefusedRun(label, Finding(Code.IMPORT_UNSUPPORTED, "no document has this index at "
                                     "$.response.content[0]", file="x.json", line=2))


def skipped(label: str) -> SkippedRun:
    return SkippedRun(label, Finding(Code.IMPORT_SKIPPED, f"{label}: the batch entry errored",
                                     file="x.json", line=3))


MIXED: list[RunOutcome] = [
    cited("one", ignored=2), refused("exchange 2"), skipped("exchange 3"),
    ImportedRun("none", "none", (), (ImportedClaim("uncited", ()),), ignored_blocks=1),
    cited("four"),
]


@pytest.fixture
def mixed(monkeypatch: pytest.MonkeyPatch) -> None:
    def runs(path: Path, display: str) -> Iterator[RunOutcome]:
        yield from MIXED

    monkeypatch.setattr(command, "reader", lambda fmt: runs)


@pytest.mark.usefixtures("mixed")
def test_a_refused_run_is_tc107_naming_it_while_the_others_are_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = command.run_import("anthropic", [str(tmp_path / "x.json")], str(out), None)
    assert sorted(p.name for p in out.iterdir()) == ["four.trace.jsonl", "one.trace.jsonl"]
    assert [(f.code, f.message, f.line) for f in report.findings] == [
        (Code.IMPORT_UNSUPPORTED,
         "exchange 2: no document has this index at $.response.content[0]", 2),
        (Code.IMPORT_SKIPPED, "exchange 3: the batch entry errored", 3)]
    assert report.exit_code == 1
    # The runs written are said beside the failure.
    assert str(verdict(report)) == (
        "failed: 1 element that cannot be imported; 2 runs imported (2 citations); quotes are "
        "checked with tracecite check --evidence, verify-urls or verify-files; 1 run not "
        "written: the answer cites nothing; 1 run not imported; 1 run without an answer; 3 "
        "unknown blocks ignored: nothing cites them; 1 warning: 1 run skipped")
    s = report.summary
    assert (s.runs, s.citations, s.uncited, s.refused, s.skipped, s.ignored_blocks) == (
        2, 2, 1, 1, 1, 3)


@pytest.mark.usefixtures("mixed")
def test_skip_unsupported_makes_a_refused_run_a_warning(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = command.run_import("anthropic", [str(tmp_path / "x.json")], str(out), None,
                                skip_unsupported=True)
    assert [f.code for f in report.findings] == [Code.IMPORT_SKIPPED, Code.IMPORT_SKIPPED]
    assert report.findings[0].message == (
        "exchange 2 skipped (--skip-unsupported): no document has this index at "
        "$.response.content[0]")
    assert report.exit_code == 0 and report.warnings == 2
    assert len(list(out.iterdir())) == 2


def test_the_option_reaches_the_importer(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    good = {"request": {"messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                        "data": "The sky is blue."}}]}]},
        "response": {"id": "msg_1", "type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Blue.", "citations": [
                {"type": "char_location", "cited_text": "The sky is blue.",
                 "document_index": 0, "start_char_index": 0, "end_char_index": 16}]}]}}
    wrong = json.loads(json.dumps(good))
    wrong["response"]["content"][0]["citations"][0]["document_index"] = 4
    bad.write_text(json.dumps(good) + "\n" + json.dumps(wrong) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    res = cli("import", "anthropic", bad, "-o", out, "--json")
    assert res.exit == 1 and len(list(out.iterdir())) == 1
    finding, = json.loads(res.out)["findings"]
    assert (finding["code"], finding["line"]) == ("TC107", 2)
    assert finding["message"].startswith("exchange 2: ")
    res = cli("import", "anthropic", bad, "-o", tmp_path / "again", "--skip-unsupported",
              "--json")
    assert res.exit == 0
    assert [f["code"] for f in json.loads(res.out)["findings"]] == ["TC108"]


def test_a_problem_of_a_whole_input_still_writes_nothing(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def runs(path: Path, display: str) -> Iterator[RunOutcome]:
        yield cited(path.stem)
        if path.stem == "bad":
            raise Unsupported(display, "$", "not valid JSON")

    monkeypatch.setattr(command, "reader", lambda fmt: runs)
    out = tmp_path / "out"
    report = command.run_import("anthropic", [str(tmp_path / "a.json"),
                                              str(tmp_path / "bad.json")], str(out), None)
    assert [f.code for f in report.findings] == [Code.IMPORT_UNSUPPORTED]
    assert not out.exists()


def test_only_uncited_runs_write_nothing_and_say_so(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def runs(path: Path, display: str) -> Iterator[RunOutcome]:
        yield ImportedRun("r", "r", (), ())

    monkeypatch.setattr(command, "reader", lambda fmt: runs)
    report = command.run_import("anthropic", [str(tmp_path / "a.json")], None, None)
    assert report.findings == () and report.summary.uncited == 1
    assert "1 run not written: the answer cites nothing" in str(verdict(report))

    def nothing(path: Path, display: str) -> Iterator[RunOutcome]:
        yield from ()

    monkeypatch.setattr(command, "reader", lambda fmt: nothing)
    with pytest.raises(UsageError, match="0 runs to write"):
        command.run_import("anthropic", [str(tmp_path / "a.json")], None, None)


def test_a_run_that_cannot_be_written_as_utf8_is_refused_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lone = ImportedRun("r", "lone", (), (ImportedClaim("\ud800", (ImportedCitation("s", "q"),)),))

    def runs(path: Path, display: str) -> Iterator[RunOutcome]:
        yield from (lone, cited("fine"))

    monkeypatch.setattr(command, "reader", lambda fmt: runs)
    out = tmp_path / "out"
    report = command.run_import("anthropic", [str(tmp_path / "a.json")], str(out), None)
    assert [p.name for p in out.iterdir()] == ["fine.trace.jsonl"]
    assert [f.message for f in report.findings] == [
        "run lone: text that cannot be written as UTF-8 at $"]
    assert (report.summary.runs, report.summary.citations, report.summary.refused) == (1, 1, 1)


def test_the_summary_members_go_through_json_and_the_verdict() -> None:
    summary = Summary(inputs=1, citations=2, runs=2, uncited=3, ignored_blocks=4, refused=5,
                      skipped=6)
    doc = report_dict(Report("import", (), summary))
    assert {k: doc["summary"][k] for k in ("uncited", "ignored_blocks", "refused", "skipped")
            } == {"uncited": 3, "ignored_blocks": 4, "refused": 5, "skipped": 6}
    assert read_report(json.loads(json.dumps(doc))).summary == summary
    for key in ("uncited", "ignored_blocks", "refused", "skipped"):
        del doc["summary"][key]
    assert read_report(doc).summary.uncited == 0
    assert str(verdict(Report("import", (), summary))).endswith(
        "3 runs not written: the answer cites nothing; 5 runs not imported; 6 runs without an "
        "answer; 4 unknown blocks ignored: nothing cites them")


def test_the_library_takes_skip_unsupported(tmp_path: Path) -> None:
    from tracecite import api

    path = tmp_path / "x.jsonl"
    path.write_text('{"request": {"messages": []}, "response": {"type": "error"}}\n'
                    '{"odd": 1}\n', encoding="utf-8")
    report = api.import_transcripts("anthropic", [path], tmp_path / "out")
    assert report.exit_code == 1 and report.summary.refused == 2
    report = api.import_transcripts("anthropic", [path], tmp_path / "out",
                                    skip_unsupported=True)
    assert report.exit_code == 0 and [f.code for f in report.findings] == [
        Code.IMPORT_SKIPPED, Code.IMPORT_SKIPPED]
