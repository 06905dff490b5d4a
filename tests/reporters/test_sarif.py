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
from tracecite.findings import ArchiveCopy, Changes, Diagnosis, Finding, Report
from tracecite.reporters.escape import printable
from tracecite.reporters.sarif import format_sarif, help_uri

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
    "git": Report("hook", (Finding(Code.GIT_FAILED, "m"),), stage="online"),
    "config": Report("hook", (Finding(Code.CONFIG_INVALID, "m"),), stage="offline"),
    "every-kind": Report("hook", (
        Finding(Code.NOTES_BAD_LINE, "m", file="docs/a.notes", line=2, column=1, record=1),
        Finding(Code.QUOTE_NOT_IN_CAPTURE, "m", file="t.jsonl", line=3, column=40, claim=1,
                citation=1, source_id="s1", uri="https://a/",
                diagnosis=Diagnosis(("case",), quote_chars=10, matched_chars=10)),
        Finding(Code.QUOTE_NOT_ON_PAGE, "m", file="docs/b.notes", line=5, record=2,
                uri="https://b/", archive=ArchiveCopy("https://web.archive.org/web/2024id_/"
                                                      "https://b/", "20240101000000", True)),
        Finding(Code.HTTP_STATUS, "m", file="docs/b.notes", line=9, record=3, status=404,
                uri="https://c/", cached=True),
        Finding(Code.SOURCE_BLOCKED, "m", file="docs/b.notes", line=12, record=4,
                uri="https://d/", warned=True),
        Finding(Code.CACHE_UNUSABLE, "m", warned=True),
        Finding(Code.USAGE, "m"),
    ), notices=("no source host resolved: offline?",), stage="online"),
    "stopped": Report("verify-notes", (), stopped_by=2),
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
    # The message names the claim and citation (and the source), not only the properties.
    assert first["message"]["text"] == printable("m; claim 1; citation 2; source s\x1b1; "
                                                 "uri https://a/b")
    assert second["properties"]["status"] == 500
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 2}]


def test_locations() -> None:
    results = json.loads(format_sarif(REPORTS["notes"]))["runs"][0]["results"]
    by_rule = {r["ruleId"]: r for r in results}
    assert by_rule["TC110"]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2, "startColumn": 3}
    unreadable = by_rule["TC101"]["locations"][0]["physicalLocation"]
    assert unreadable == {"artifactLocation": {"uri": "file:///abs/path%20with%20space/n.md"},
                          "region": {"startLine": 1}}  # a whole-file finding: its first line


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_result_has_a_start_line(name: str) -> None:
    for located in json.loads(format_sarif(REPORTS[name]))["runs"][0]["results"]:
        assert located["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_uris_are_relative_to_the_repository_root(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a folder inside the repository, a file's URI is still the path from the root,
    which originalUriBaseIds names; a file outside the repository keeps its absolute URI."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "docs").mkdir()
    monkeypatch.chdir(tmp_path / "repo" / "docs")
    report = Report("check", (
        Finding(Code.NOTES_BAD_LINE, "m", file="a.notes", line=2),
        Finding(Code.NOTES_BAD_LINE, "m", file=str(tmp_path / "repo" / "b.notes"), line=1),
        Finding(Code.NOTES_BAD_LINE, "m", file="../../outside.notes", line=1),
    ))
    doc = json.loads(format_sarif(report))
    validate(doc)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"] == {
        "%SRCROOT%": {"uri": (tmp_path / "repo").as_uri() + "/"}}
    # In the findings' order: by file name as given.
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]
            for r in run["results"]] == [
        {"uri": (tmp_path / "outside.notes").as_uri()},
        {"uri": "b.notes", "uriBaseId": "%SRCROOT%"},
        {"uri": "docs/a.notes", "uriBaseId": "%SRCROOT%"},
    ]


def test_without_a_repository_uris_are_relative_to_the_current_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    from tracecite.reporters.sarif import repository_root

    if repository_root() != str(tmp_path):
        pytest.skip("the temporary folder is inside a git repository here")
    doc = json.loads(format_sarif(Report("check", (
        Finding(Code.NOTES_BAD_LINE, "m", file="a.notes", line=2),))))
    location = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "a.notes", "uriBaseId": "%SRCROOT%"}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_result_has_a_location(name: str) -> None:
    run = json.loads(format_sarif(REPORTS[name]))["runs"][0]
    for located in run["results"]:
        assert located["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    unlocated = sum(1 for f in REPORTS[name].findings if f.file is None)
    notifications = run["invocations"][0].get("toolExecutionNotifications", [])
    assert len(run["results"]) + unlocated == len(REPORTS[name].findings)
    assert len(notifications) == unlocated + len(REPORTS[name].notices)


def test_findings_without_a_file_are_notifications() -> None:
    (invocation,) = json.loads(format_sarif(REPORTS["usage"]))["runs"][0]["invocations"]
    assert json.loads(format_sarif(REPORTS["usage"]))["runs"][0]["results"] == []
    assert invocation == {
        "executionSuccessful": False, "exitCode": 1,
        "toolExecutionNotifications": [{
            "level": "error", "message": {"text": "bad option"},
            "associatedRule": {"id": "TC100", "index": 0}}]}
    for name in ("git", "config"):
        (invocation,) = json.loads(format_sarif(REPORTS[name]))["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False
        assert invocation["toolExecutionNotifications"][0]["associatedRule"]["id"] in (
            "TC103", "TC104")


def test_every_kind_of_finding() -> None:
    run = json.loads(format_sarif(REPORTS["every-kind"]))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["ruleId"] for r in run["results"]} == {"TC110", "TC202", "TC210", "TC315",
                                                     "TC319"}
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["TC319"] == "warning" and levels["TC210"] == "error"
    (invocation,) = run["invocations"]
    # A usage error without a file: the run did not do its work.
    assert invocation["executionSuccessful"] is False
    notes = [(n["level"], n.get("associatedRule", {}).get("id"), n["message"]["text"])
             for n in invocation["toolExecutionNotifications"]]
    assert notes == [("error", "TC100", "m"), ("warning", "TC105", "m"),
                     ("note", None, "no source host resolved: offline?")]
    for n in invocation["toolExecutionNotifications"]:
        if "associatedRule" in n:
            assert rules[n["associatedRule"]["index"]]["id"] == n["associatedRule"]["id"]
    messages = {r["ruleId"]: r["message"]["text"] for r in run["results"]}
    assert messages["TC210"] == "m; record 2; uri https://b/"
    assert messages["TC110"] == "m; record 1"


def test_a_warning_without_a_file_keeps_the_run_successful() -> None:
    report = Report("verify-notes", (Finding(Code.CACHE_UNUSABLE, "m", warned=True),))
    (invocation,) = json.loads(format_sarif(report))["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is True
    assert invocation["toolExecutionNotifications"][0]["level"] == "warning"


def test_a_stopped_run_names_its_signal() -> None:
    (invocation,) = json.loads(format_sarif(REPORTS["stopped"]))["runs"][0]["invocations"]
    assert invocation == {"executionSuccessful": False, "exitCode": 130,
                          "exitSignalName": "SIGINT", "exitSignalNumber": 2}


@pytest.mark.parametrize("code", list(Code), ids=[c.code for c in Code])
def test_every_rule_has_help_and_its_own_help_uri(code: Code) -> None:
    rules = json.loads(format_sarif(Report("check")))["runs"][0]["tool"]["driver"]["rules"]
    rule = rules[list(Code).index(code)]
    assert rule["helpUri"] == help_uri(code)
    assert help_uri(code) == (
        f"https://github.com/tracecite/tracecite/blob/main/docs/codes.md#{code.anchor}")
    assert code.when in rule["help"]["text"] and code.fix in rule["help"]["text"]
    markdown = rule["help"]["markdown"]
    assert code.when in markdown and code.fix in markdown and f"]({rule['helpUri']})" in markdown


def test_sarif_category_sets_the_automation_id() -> None:
    def automation(category: str | None) -> str:
        text = format_sarif(Report("hook", stage="online"), category=category)
        return str(json.loads(text)["runs"][0]["automationDetails"]["id"])

    assert automation(None) == "tracecite/hook/"  # the default stays what it was
    assert automation("citations-pr") == "citations-pr/"
    assert automation("citations/nightly/") == "citations/nightly/"


def test_cli_sarif_category(cli: Cli, tmp_path: Path) -> None:
    notes = tmp_path / "n.md"
    notes.write_text("claim: a\n")
    sarif = tmp_path / "out.sarif"
    run = cli("check", notes, "--format", "sarif", "--sarif-category", "docs-check",
              "--report-file", f"sarif:{sarif}")
    assert json.loads(run.out)["runs"][0]["automationDetails"]["id"] == "docs-check/"
    assert json.loads(sarif.read_text())["runs"][0]["automationDetails"]["id"] == "docs-check/"
    bad = cli("check", notes, "--format", "sarif", "--sarif-category", "two words")
    assert bad.exit == 1 and "--sarif-category" in bad.out + bad.err


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
    assert message["message"]["text"] == printable("m; source a\nb\\c; uri https://x/\x1b")


def test_internal_error_marks_run_unsuccessful() -> None:
    run = json.loads(format_sarif(REPORTS["internal"]))["runs"][0]
    (invocation,) = run["invocations"]
    assert (invocation["executionSuccessful"], invocation["exitCode"]) == (False, 3)
    assert invocation["toolExecutionNotifications"][0]["associatedRule"]["id"] == "TC900"


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
