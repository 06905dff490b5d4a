"""``--format sarif``: valid SARIF 2.1.0, one rule per registry code."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, answer, call, cite, claim, result, write_trace
from tracecite import __version__
from tracecite.codes import Code
from tracecite.findings import Changes, Finding, Report
from tracecite.reporters.escape import printable
from tracecite.reporters.sarif import format_sarif

SCHEMA = (Path(__file__).resolve().parents[2].parent / "shared" / "schemas"
          / "sarif-schema-2.1.0.json")


@cache
def _validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is a test dependency")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def validate(doc: dict[str, Any]) -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"the SARIF 2.1.0 schema is not at {SCHEMA} (the shared folder is absent)")
    errors = sorted(_validator().iter_errors(doc), key=str)
    assert not errors, "\n".join(str(e) for e in errors[:3])


REPORTS = {
    "empty": Report("check"),
    "usage": Report("check", (Finding(Code.USAGE, "bad option"),)),
    "notes": Report("check", (
        Finding(Code.NOTES_BAD_LINE, "m", file="docs/n.md", line=2, column=3, record=1),
        Finding(Code.INPUT_UNREADABLE, "m", file="/abs/path with space/n.md"),
    )),
    "evidence": Report("check", (
        Finding(Code.QUOTE_NOT_IN_CAPTURE, "m", file="t.jsonl", line=3, claim=1, citation=2,
                source_id="s\x1b1", uri="https://a/b"),
        Finding(Code.HTTP_STATUS, "m", file="t.jsonl", line=3, claim=1, citation=1, status=500,
                uri="https://a/"),
    )),
    "compare": Report("compare", (
        Finding(Code.SOURCE_ADDED, "m", file="new.jsonl", line=2, uri="https://x/"),
    ), changes=Changes(("https://x/",))),
    "internal": Report("check", (Finding(Code.INTERNAL_ERROR, "m"),)),
    "odd-names": Report("check", (
        Finding(Code.NOTES_BAD_LINE, "m", file="a b%c#d?e:f,\u00e9\n.md", line=1, column=1),
        Finding(Code.NOTES_BAD_LINE, "m", file="##[error]x.md", line=1, column=1),
    )),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_validates(name: str) -> None:
    validate(json.loads(format_sarif(REPORTS[name])))


def test_one_rule_per_code() -> None:
    doc = json.loads(format_sarif(Report("check")))
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [c.code for c in Code]
    assert [r["name"] for r in rules] == [c.label for c in Code]
    assert len({r["id"] for r in rules}) == len(rules)
    assert run["tool"]["driver"]["version"] == __version__
    assert doc["version"] == "2.1.0"


def test_results() -> None:
    doc = json.loads(format_sarif(REPORTS["evidence"]))
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    second, first = run["results"]  # sorted: citation 1 before citation 2
    assert rules[first["ruleIndex"]]["id"] == first["ruleId"] == "TC202"
    assert rules[second["ruleIndex"]]["id"] == "TC315"
    assert first["level"] == "error"
    assert first["locations"] == [{"physicalLocation": {
        "artifactLocation": {"uri": "t.jsonl", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3}}}]
    assert first["properties"] == {"claim": 1, "citation": 2}
    assert "\x1b" not in first["message"]["text"]
    assert second["properties"]["status"] == 500
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 2}]


def test_locations() -> None:
    results = json.loads(format_sarif(REPORTS["notes"]))["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in results}
    assert by_rule["TC110"]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 3}
    unreadable = by_rule["TC101"]["locations"][0]["physicalLocation"]
    assert unreadable == {"artifactLocation": {"uri": "file:///abs/path%20with%20space/n.md"}}
    usage = json.loads(format_sarif(REPORTS["usage"]))["runs"][0]["results"][0]
    assert "locations" not in usage


def test_odd_file_names_are_uri_encoded() -> None:
    text = format_sarif(REPORTS["odd-names"])
    assert "##[" not in text
    results = json.loads(text)["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris[0] == "%23%23%5Berror%5Dx.md"
    assert uris[1] == "a%20b%25c%23d%3Fe%3Af%2C%C3%A9%0A.md"


def test_a_file_name_that_is_not_utf8_is_percent_encoded() -> None:
    """Regression: a name with an undecodable byte (a lone surrogate here) ended the run with
    TC900 instead of its report."""
    name = os.fsdecode(b"bad\xffname.jsonl")
    text = format_sarif(Report("check", (Finding(Code.INPUT_UNREADABLE, "m", file=name),)))
    location = json.loads(text)["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "bad%FFname.jsonl"


def test_source_ids_and_uris_are_escaped_once() -> None:
    finding = Finding(Code.QUOTE_NOT_IN_CAPTURE, "m", file="t.jsonl", source_id="a\nb\\c",
                      uri="https://x/\x1b")
    message = json.loads(format_sarif(Report("check", (finding,))))["runs"][0]["results"][0]
    assert message["message"]["text"] == printable("m (source a\nb\\c) (uri https://x/\x1b)")


def test_internal_error_marks_run_unsuccessful() -> None:
    run = json.loads(format_sarif(REPORTS["internal"]))["runs"][0]
    assert run["invocations"] == [{"executionSuccessful": False, "exitCode": 3}]


def test_cli_sarif(cli: Cli, tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "t.jsonl", [
        call(), result(), answer([claim(citations=[cite(quote="not there")])])])
    notes = tmp_path / "n.md"
    notes.write_text("claim: a\n")
    for argv in (("check", trace, "--evidence"), ("check", notes), ("compare", trace, trace),
                 ("check", "--nope")):
        run = cli(*argv, "--format", "sarif")
        doc = json.loads(run.out)
        validate(doc)
        assert doc["runs"][0]["invocations"][0]["exitCode"] == run.exit


def test_warnings_have_level_warning() -> None:
    from tracecite.codes import Code
    from tracecite.findings import Finding, Report
    from tracecite.reporters.sarif import format_sarif

    warned = Finding(Code.TIMEOUT, "slow", file="a.notes", line=1, warned=True)
    error = Finding(Code.TIMEOUT, "slow", file="a.notes", line=2)
    log = json.loads(format_sarif(Report("verify-notes", (warned, error))))
    assert [r["level"] for r in log["runs"][0]["results"]] == ["warning", "error"]
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TC105"]["defaultConfiguration"]["level"] == "warning"
