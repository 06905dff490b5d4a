"""``--format json``: the exact schema of docs/reference/reports.md, and nothing else on stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import Cli, answer, call, cite, claim, result, source, write_trace
from tracecite import __version__
from tracecite.codes import Code
from tracecite.findings import ArchiveCopy, Changes, Counts, Diagnosis, Finding, Report, Summary
from tracecite.report_reader import ReportFormatError, read_report
from tracecite.report_writer import finding_dict, report_dict
from tracecite.reporters.json import format_json, indented

TOP = ["tool", "version", "schema", "command", "exit_code", "summary", "findings", "shard",
       "run"]
FIXED = ["code", "name", "severity", "exit", "file", "line", "column"]
SUMMARY = ["inputs", "records", "citations", "findings", "errors", "warnings", "captured",
           "live", "files", "runs", "not_importable", "uncited", "ignored_blocks", "refused",
           "skipped", "document_citations"]
COUNTS = ["checked", "matched", "not_found", "unavailable", "skipped", "cached", "unchanged",
          "retried", "interrupted"]


def test_top_level() -> None:
    report = Report("check", (), Summary(inputs=2, records=3))
    doc = json.loads(format_json(report))
    assert list(doc) == TOP
    assert doc["tool"] == "tracecite"
    assert doc["version"] == __version__
    assert doc["schema"] == 2
    assert doc["command"] == "check"
    assert doc["exit_code"] == 0
    assert list(doc["summary"]) == SUMMARY
    assert doc["summary"]["inputs"] == 2 and doc["summary"]["records"] == 3
    assert doc["summary"]["findings"] == 0
    for kind in ("captured", "live", "files"):
        assert doc["summary"][kind] == dict.fromkeys(COUNTS, 0)
    assert doc["findings"] == []
    assert doc["shard"] is None  # unsharded (docs/guides/scale.md)


def test_a_shard_says_which_it_is() -> None:
    doc = json.loads(format_json(Report("verify-urls", shard=(2, 4))))
    assert doc["shard"] == "2/4"


def test_finding_with_nothing_optional() -> None:
    doc = finding_dict(Finding(Code.USAGE, "bad option"))
    assert doc == {"code": "TC100", "name": "usage", "severity": "error", "exit": 1,
                   "file": None, "line": None, "column": None, "message": "bad option"}
    assert list(doc) == [*FIXED, "message"]


def test_finding_with_everything() -> None:
    finding = Finding(Code.HTTP_STATUS, "status", file="t.jsonl", line=3, column=None, record=None,
                      claim=2, citation=1, source_id="s1", uri="https://a/", status=404)
    doc = finding_dict(finding)
    assert list(doc) == [*FIXED, "claim", "citation", "source_id", "uri", "status", "message"]
    assert doc["exit"] == 2 and doc["column"] is None and doc["status"] == 404
    notes = finding_dict(Finding(Code.NOTES_BAD_LINE, "m", file="n.md", line=1, column=4,
                                 record=1))
    assert list(notes) == [*FIXED, "record", "message"]


def test_changes_only_for_compare() -> None:
    changes = Changes(("https://a/",), (), ("https://c/", "https://d/"))
    doc = json.loads(format_json(Report("compare", (), Summary(), changes)))
    assert list(doc) == [*TOP, "changes"]
    assert doc["changes"] == {"added": ["https://a/"], "removed": [],
                              "changed": ["https://c/", "https://d/"]}


def test_findings_sorted_and_exit_code() -> None:
    report = Report("check", (
        Finding(Code.QUOTE_NOT_IN_CAPTURE, "q", file="a.jsonl", line=9),
        Finding(Code.NOTES_BAD_LINE, "b", file="z.md", line=2, column=1),
        Finding(Code.NOTES_BAD_LINE, "a", file="z.md", line=1, column=1),
    ))
    doc = json.loads(format_json(report))
    assert [(f["code"], f["line"]) for f in doc["findings"]] == [
        ("TC110", 1), ("TC110", 2), ("TC202", 9)]
    assert doc["exit_code"] == 1
    assert doc["summary"]["findings"] == 3


def test_control_characters_and_non_ascii_are_escaped() -> None:
    finding = Finding(Code.TRACE_UNKNOWN_SOURCE_ID, "m", file="caf\u00e9\n\x1b.jsonl", line=1,
                      source_id="\x07\ud800", uri="https://x/\u2028")
    text = format_json(Report("check", (finding,)))
    assert text.isascii()
    assert text.endswith("}\n")
    doc = json.loads(text)
    assert doc["findings"][0]["file"] == "caf\u00e9\n\x1b.jsonl"
    assert doc["findings"][0]["source_id"] == "\x07\ud800"


def test_legacy_workflow_commands_cannot_appear() -> None:
    """The Actions runner reads ``##[command]`` anywhere in a line of the log."""
    finding = Finding(Code.TRACE_UNKNOWN_SOURCE_ID, "m", file="##[error]f.jsonl", line=1,
                      source_id="x##[add-mask]y", uri="https://x/##[stop-commands]t")
    text = format_json(Report("check", (finding,)))
    assert "##[" not in text
    doc = json.loads(text)["findings"][0]
    assert (doc["file"], doc["source_id"], doc["uri"]) == (
        "##[error]f.jsonl", "x##[add-mask]y", "https://x/##[stop-commands]t")


def test_cli_stdout_is_one_document(cli: Cli, tmp_path: Path) -> None:
    notes = tmp_path / "n.md"
    notes.write_text("claim: a\n")
    trace = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(content="alpha")]),
        answer([claim(citations=[cite(quote="beta")])]),
    ])
    for argv in (("check", trace, "--evidence"), ("check", notes, trace, "--evidence"),
                 ("compare", trace, trace), ("check", tmp_path / "missing.md"),
                 ("check", "--bogus")):
        run = cli(*argv, "--json")
        doc = json.loads(run.out)  # raises if anything else is on stdout
        assert run.out.endswith("}\n")
        assert doc["exit_code"] == run.exit
        assert list(doc)[: len(TOP)] == TOP
        assert ("changes" in doc) == (argv[0] == "compare")
        assert run.err == ""
        for finding in doc["findings"]:
            assert list(finding)[:7] == FIXED
            assert list(finding)[-1] == "message"
            assert set(finding) <= {*FIXED, "record", "claim", "citation", "source_id", "uri",
                                    "status", "diagnosis", "message"}
            assert None not in [v for k, v in finding.items() if k not in FIXED]


def test_evidence_finding_fields(cli: Cli, tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(content="alpha")]),
        answer([claim(citations=[cite(quote="alpha")]), claim(citations=[cite(quote="beta")])]),
    ])
    finding = cli("check", trace, "--evidence", "--json").json()["findings"][0]
    # the quote's (docs/reference/reports.md#locations)
    column = trace.read_text().splitlines()[2].index('"beta"') + 1
    assert finding == {
        "code": "TC202", "name": "quote-not-in-capture", "severity": "error", "exit": 2,
        "file": str(trace), "line": 3, "column": column, "claim": 2, "citation": 1,
        "source_id": "s1", "uri": "https://example.com/a",
        "diagnosis": {"kinds": ["none"], "quote_chars": 4, "matched_chars": None,
                      "first_difference": None, "characters": None, "where": None,
                      "cut_short": None},
        "message": "quote is not in the captured content; nothing close is in the captured "
                   "content (no run of half the quote's 4 characters)",
    }


# ---- reading a report back ----------------------------------------------------------------

EVERYTHING = Report(
    "hook",
    (Finding(Code.NOTES_BAD_LINE, "not a field", file="n.notes", line=3, column=1, record=1),
     Finding(Code.QUOTE_NOT_ON_PAGE, "quote is not in the page's visible text", file="t.jsonl",
             line=4, column=40, claim=1, citation=2, source_id="s1", uri="https://a/",
             final_url="https://a/b", attempts=3, cached=True,
             diagnosis=Diagnosis(("case", "typography"), 20, 18, 5,
                                 ("U+2019 RIGHT SINGLE QUOTATION MARK",), None),
             archive=ArchiveCopy("https://web.archive.org/web/2023id_/https://a/", "2023",
                                 True)),
     Finding(Code.TIMEOUT, "deadline passed", file="t.jsonl", line=2, uri="https://b/",
             failures=1, fail_after=3, warned=True),
     Finding(Code.HTTP_STATUS, "status 404", file="t.jsonl", line=2, status=404,
             diagnosis=Diagnosis(("hidden",), where="script", cut_short="time")),
     Finding(Code.CACHE_UNUSABLE, "the cache is locked"),
     Finding(Code.SOURCE_ADDED, "added", file="new.jsonl", line=1, uri="https://c/")),
    Summary(3, 4, 5, Counts(5, 4, 1), Counts(5, 3, 1, 1, 2, 1, 1, 1, 0), Counts(skipped=5)),
    Changes(("https://c/",), (), ()),
    stopped_by=15, stage="online", notices=("no source host resolved",), shard=(3, 4))


def test_read_report_round_trips_every_field() -> None:
    """write → read → write is identical, every optional member and warning included."""
    doc = report_dict(EVERYTHING)
    again = read_report(json.loads(json.dumps(doc)))
    assert report_dict(again) == doc
    assert again.exit_code == 143 and again.shard == (3, 4)
    assert sorted(again.findings, key=Finding.sort_key) == EVERYTHING.sorted_findings()
    assert EVERYTHING.to_json() == doc


def test_read_report_round_trips_a_real_run(cli: Cli, tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "t.jsonl", [call(), result(), answer(claims=[
        claim(citations=[cite(quote="quick brown cat"), cite(quote="Quick brown fox")])])])
    text = cli("check", "--evidence", trace, "--json").out
    assert format_json(read_report(json.loads(text))) == text


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(tool="other"), "is not a TraceCite report"),
    (lambda d: d.update(schema=1), "is not a report of JSON schema 2"),
    (lambda d: d.pop("command"), "command is missing"),
    (lambda d: d["summary"]["live"].pop("checked"), "summary.live: checked is missing"),
    (lambda d: d["findings"][0].update(code="TC999"), "finding 1: code and name"),
    (lambda d: d["findings"][0].update(name="usage"), "finding 1: code and name"),
    (lambda d: d["findings"][1].update(line="4"), "finding 2: line is missing or of the wrong"),
    (lambda d: next(f for f in d["findings"] if "diagnosis" in f)["diagnosis"].update(
        kinds="case"), r"finding \d: diagnosis: kinds"),
    (lambda d: d["findings"][1].update(severity="fatal"), "finding 2: severity"),
    (lambda d: d.update(shard="5/4"), "shard is not K/N"),
    (lambda d: d.update(notices=[1]), "notices holds a value that is not a string"),
    (lambda d: d.update(exit_code=300), "exit_code is not a TraceCite exit code"),
    (lambda d: d.update(exit_code=137), "exit_code is not a TraceCite exit code"),
    (lambda d: d.update(exit_code=-1), "exit_code is not a TraceCite exit code"),
])
def test_read_report_refuses_what_is_not_a_report(change: Any, message: str) -> None:
    doc = json.loads(json.dumps(report_dict(EVERYTHING)))
    change(doc)
    with pytest.raises(ReportFormatError, match=message):
        read_report(doc)
    with pytest.raises(ReportFormatError, match="the document is not a JSON object"):
        read_report([doc])


# ---- the findings' encoder: the standard library's text, faster ------------------------------

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=True),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12)


@given(_JSON_VALUES)
def test_indented_is_the_standard_librarys_indented_text(value: object) -> None:
    assert indented(value) == json.dumps(value, indent=2, ensure_ascii=True)
    assert indented(value, "\n    ") == json.dumps(value, indent=2,
                                                   ensure_ascii=True).replace("\n", "\n    ")


def test_a_findings_text_is_the_standard_librarys() -> None:
    finding = Finding(Code.QUOTE_NOT_IN_CAPTURE, "quote not found \u2019 \ud800 ##[x]",
                      file="t.jsonl", line=3, column=9, claim=1, citation=2, source_id="s1",
                      diagnosis=Diagnosis(("typography", "partial"), quote_chars=40,
                                          matched_chars=12, first_difference=7,
                                          characters=("U+2019 RIGHT SINGLE QUOTATION MARK",)))
    assert indented(finding_dict(finding)) == json.dumps(finding_dict(finding), indent=2)
