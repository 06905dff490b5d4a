"""A run's memory grows with what it must keep, never with a finding list it can stream
(docs/guides/scale.md): a million quotes not found share their messages and diagnoses, are
located a batch at a time, and the JSON report is written a finding at a time, byte for byte
the text ``json.dumps`` gives of the whole report."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.memory import peak_run
from tracecite.checks import evidence
from tracecite.checks.evidence import scan_with_evidence
from tracecite.codes import Code
from tracecite.findings import ArchiveCopy, Changes, Diagnosis, Finding, Report, Summary
from tracecite.report_writer import report_dict
from tracecite.reporters.json import format_json, write_json

MIB = 1 << 20


def dumped(report: Report) -> str:
    """The JSON report as one ``json.dumps`` of its object makes it (docs/reference/reports.md)."""
    text = json.dumps(report_dict(report), indent=2, ensure_ascii=True)
    return text.replace("##[", "#\\u0023[") + "\n"


def failing_trace(path: Path, claims: int, sources: int = 10) -> Path:
    """A trace whose answer has ``claims`` claims, each quoting what its capture lacks."""
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "tool_call", "run_id": "r", "call_id": "c1",
                              "tool": "search"}) + "\n")
        captured = [{"id": f"s{n}", "uri": f"https://example.com/{n}",
                     "content": f"the captured words of page {n}"} for n in range(sources)]
        out.write(json.dumps({"type": "tool_result", "run_id": "r", "call_id": "c1",
                              "ok": True, "sources": captured}) + "\n")
        out.write('{"type": "answer", "run_id": "r", "claims": [')
        for n in range(claims):
            claim = {"text": f"Claim {n}.", "citations": [
                {"source_id": f"s{n % sources}", "quote": f"nowhere to be found {n:07d}"}]}
            out.write(("" if n == 0 else ", ") + json.dumps(claim))
        out.write("]}\n")
    return path


FINDINGS = (
    Finding(Code.QUOTE_NOT_IN_CAPTURE, "not found ##[x]\x01", file="a##[.jsonl", line=3,
            column=7, claim=1, citation=2, source_id="s1", uri="https://example.com/é",
            diagnosis=Diagnosis(("typography",), 12, characters=("U+2019 X",))),
    Finding(Code.SOURCE_NOT_CAPTURED, "not captured", file="b.jsonl", line=1, warned=True),
    Finding(Code.INPUT_UNREADABLE, "unreadable", file="c.jsonl",
            archive=ArchiveCopy("https://web.archive.org/x", "20240101000000", True)),
)


@pytest.mark.parametrize("report", [
    Report("check"),
    Report("check", FINDINGS[:1]),
    Report("check", FINDINGS, Summary(inputs=3, citations=2)),
    Report("hook", FINDINGS, stage="offline", notices=("a notice",), shard=(1, 2)),
    Report("compare", FINDINGS[1:], changes=Changes(added=("https://a",), changed=("b",))),
], ids=["empty", "one", "several", "hook", "compare"])
def test_the_json_written_in_pieces_is_the_report_dumped_whole(report: Report) -> None:
    stream = io.StringIO()
    write_json(report, stream)
    assert stream.getvalue() == format_json(report) == dumped(report)


def test_stdout_and_a_report_file_carry_the_same_json(cli: Cli, tmp_path: Path) -> None:
    trace = failing_trace(tmp_path / "run.trace.jsonl", 300)
    res = cli("check", trace, "--evidence", "--json", "--report-file",
              f"json:{tmp_path / 'report.json'}")
    assert res.exit == 2
    assert res.out == (tmp_path / "report.json").read_text(encoding="utf-8")
    assert len(res.json()["findings"]) == 300


def test_quotes_missed_alike_share_one_message_and_one_diagnosis(tmp_path: Path) -> None:
    scan = scan_with_evidence(str(failing_trace(tmp_path / "run.trace.jsonl", 50)))
    assert len(scan.findings) == 50
    first = scan.findings[0]
    assert all(f.message is first.message and f.diagnosis is first.diagnosis
               for f in scan.findings)


def test_findings_located_in_batches_are_those_located_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(failing_trace(tmp_path / "run.trace.jsonl", 25))
    whole = scan_with_evidence(path)
    monkeypatch.setattr(evidence, "_LOCATED_AT_ONCE", 4)
    batched = scan_with_evidence(path)
    assert batched.findings == whole.findings
    assert batched.summary == whole.summary
    assert [f.column for f in batched.findings] == [f.column for f in whole.findings]
    assert all(f.column for f in batched.findings)


@pytest.mark.slow
def test_a_hundred_thousand_findings_cost_what_they_keep(tmp_path: Path) -> None:
    """100,000 quotes not found in one run (docs/guides/scale.md: 1,000,000 within 1 GB):
    their report was one JSON text built whole, from as many pieces as it has lines."""
    trace = failing_trace(tmp_path / "run.trace.jsonl", 100_000)
    run = peak_run("check", trace, "--evidence", "--json", cwd=tmp_path)
    assert run.exit == 2, run.err[-500:]
    assert run.out.count('"code": "TC202"') == 100_000
    assert run.peak_bytes < 200 * MIB, run.peak_bytes
