"""The command line, end to end through ``main([...])``: one test per finding code, exit codes,
usage errors, format selection and the internal-error boundary."""

from __future__ import annotations

import errno
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import (
    Cli,
    answer,
    call,
    cite,
    claim,
    jsonl,
    note,
    result,
    source,
    valid_events,
)
from tracecite import __version__
from tracecite.codes import BY_CODE, Code
from tracecite.findings import Counts, Finding, Report, Summary, exit_code_of
from tracecite.reporters.github import summary_line

NOTES_OK = note()
TRACE_OK = jsonl(valid_events())


@dataclass(frozen=True)
class Case:
    """Files to create (name → content), the command line, and the one finding expected."""

    id: str
    argv: tuple[str, ...]
    code: str
    exit: int
    file: str | None = None
    line: int | None = None
    column: int | None = None
    files: dict[str, Any] = field(default_factory=dict)


def _t(*events: Any) -> bytes:
    return jsonl(events)


CASES = [
    # ---- TC100: the command line itself (exit 1, never argparse's 2) ----
    Case("usage-unknown-option", ("check", "n.md", "--no-such-option", "--json"), "TC100", 1,
         files={"n.md": NOTES_OK}),
    Case("usage-unknown-option-bare", ("--no-such-option", "n.md", "--json"), "TC100", 1,
         files={"n.md": NOTES_OK}),
    Case("usage-no-args", (), "TC100", 1),
    Case("usage-bad-format", ("check", "n.md", "--format", "xml"), "TC100", 1,
         files={"n.md": NOTES_OK}),
    Case("usage-missing-files", ("check", "--json"), "TC100", 1),
    Case("usage-compare-one-arg", ("compare", "a.jsonl", "--json"), "TC100", 1,
         files={"a.jsonl": TRACE_OK}),
    Case("usage-report-file-no-colon", ("check", "n.md", "--json", "--report-file", "out.json"),
         "TC100", 1, files={"n.md": NOTES_OK}),
    Case("usage-report-file-bad-format",
         ("check", "n.md", "--json", "--report-file", "xml:out.xml"), "TC100", 1,
         files={"n.md": NOTES_OK}),
    Case("usage-report-file-no-path", ("check", "n.md", "--json", "--report-file", "json:"),
         "TC100", 1, files={"n.md": NOTES_OK}),
    Case("usage-report-file-no-dir",
         ("check", "n.md", "--json", "--report-file", "json:nowhere/out.json"), "TC100", 1,
         files={"n.md": NOTES_OK}),
    Case("usage-report-file-is-dir", ("check", "n.md", "--json", "--report-file", "json:adir"),
         "TC100", 1, files={"n.md": NOTES_OK, "adir/": None}),
    Case("usage-bad-number", ("verify-urls", "a.jsonl", "--concurrency", "0", "--json"),
         "TC100", 1, files={"a.jsonl": TRACE_OK}),
    Case("usage-not-a-number", ("verify-urls", "a.jsonl", "--max-bytes", "lots", "--json"),
         "TC100", 1, files={"a.jsonl": TRACE_OK}),
    Case("usage-timeout-too-long", ("verify-urls", "a.jsonl", "--timeout", "21", "--json"),
         "TC100", 1, files={"a.jsonl": TRACE_OK}),
    Case("usage-per-host-zero", ("verify-urls", "a.jsonl", "--per-host", "0", "--json"),
         "TC100", 1, files={"a.jsonl": TRACE_OK}),
    Case("usage-per-host-too-many", ("verify-notes", "n.md", "--per-host", "65", "--json"),
         "TC100", 1, files={"n.md": NOTES_OK}),
    # A common option is taken by every command, and checked there as anywhere (a command it
    # has no effect on says so in a notice: tests/test_cli_common_options.py).
    Case("usage-per-host-zero-for-files",
         ("verify-files", "a.jsonl", "--per-host", "0", "--json"), "TC100", 1,
         files={"a.jsonl": TRACE_OK}),
    Case("usage-timeout-too-long-for-check", ("check", "a.jsonl", "--timeout", "50", "--json"),
         "TC100", 1, files={"a.jsonl": TRACE_OK}),
    Case("usage-fail-after-without-cache-for-compare",
         ("compare", "a.jsonl", "a.jsonl", "--fail-after", "2", "--json"), "TC100", 1,
         files={"a.jsonl": TRACE_OK}),
    # A command's own option stays refused where it means nothing.
    Case("usage-root-for-check", ("check", "a.jsonl", "--root", ".", "--json"), "TC100", 1,
         files={"a.jsonl": TRACE_OK}),
    Case("usage-evidence-for-merge", ("merge", "r.json", "--evidence", "--json"), "TC100", 1,
         files={"r.json": "{}"}),
    # ---- TC101/TC102: reading inputs ----
    Case("unreadable-missing-notes", ("check", "missing.md", "--json"), "TC101", 1,
         file="missing.md"),
    Case("unreadable-missing-trace", ("check", "missing.jsonl", "--json"), "TC101", 1,
         file="missing.jsonl"),
    Case("not-utf8-notes", ("check", "n.md", "--json"), "TC102", 1, "n.md", 2, 9,
         files={"n.md": b"claim: ok\nquote: a\xffb\nurl: u\n"}),
    Case("not-utf8-notes-column-in-characters", ("check", "n.md", "--json"), "TC102", 1,
         "n.md", 2, 13, files={"n.md": "claim: ok\nquote: café \udcff\nurl: u\n"
                               .encode("utf-8", "surrogateescape")}),
    Case("not-utf8-notes-after-bom", ("check", "n.md", "--json"), "TC102", 1, "n.md", 2, 1,
         files={"n.md": b"\xef\xbb\xbf\n\xff"}),
    Case("not-utf8-trace", ("check", "t.jsonl", "--json"), "TC102", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), b'{"type": "x\xff", "run_id": "r1"}', result(),
                              answer())}),
    # ---- TC110–TC114: notes format ----
    Case("notes-bad-line", ("check", "n.md", "--json"), "TC110", 1, "n.md", 2, 3,
         files={"n.md": "claim: a\n  just some words\nquote: q\nurl: u\n"}),
    Case("notes-bad-line-bare-form", ("n.md", "--json"), "TC110", 1, "n.md", 2, 3,
         files={"n.md": "claim: a\n  just some words\nquote: q\nurl: u\n"}),
    Case("notes-unknown-field", ("check", "n.md", "--json"), "TC111", 1, "n.md", 5, 1,
         files={"n.md": "# notes\nclaim: a\nquote: q\nurl: u\nsource: elsewhere\n"}),
    Case("notes-duplicate-field", ("check", "n.md", "--json"), "TC112", 1, "n.md", 4, 2,
         files={"n.md": "claim: a\nquote: q\nurl: u\n\turl: v\n"}),
    Case("notes-missing-field", ("check", "n.md", "--json"), "TC113", 1, "n.md", 8, 1,
         files={"n.md": note() + "\n---\n\n# second\nclaim: b\nquote: q\n"}),
    Case("notes-empty-value", ("check", "n.md", "--json"), "TC114", 1, "n.md", 2, 1,
         files={"n.md": "claim: a\nquote:   \nurl: u\n"}),
    # ---- TC120–TC131: trace structure ----
    Case("trace-bad-json", ("check", "t.jsonl", "--json"), "TC120", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), "{not json", result(), answer())}),
    Case("trace-nan", ("check", "t.jsonl", "--json"), "TC120", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), '{"type": "x", "run_id": "r1", "n": NaN}', result(),
                              answer())}),
    Case("trace-not-object", ("check", "t.jsonl", "--json"), "TC121", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), "[1, 2]", result(), answer())}),
    Case("trace-missing-field", ("check", "t.jsonl", "--json"), "TC122", 1, "t.jsonl", 1,
         files={"t.jsonl": _t({"type": "tool_call", "run_id": "r1", "call_id": "c1"},
                              result(), answer())}),
    Case("trace-wrong-type", ("check", "t.jsonl", "--json"), "TC123", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), result(ok="true", sources=[]), answer(claims=[]))}),
    Case("trace-run-id-mismatch", ("check", "t.jsonl", "--json"), "TC124", 1, "t.jsonl", 3,
         files={"t.jsonl": _t(call(), result(), answer(run_id="r2"))}),
    Case("trace-duplicate-call-id", ("check", "t.jsonl", "--json"), "TC125", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), call(), result(), answer())}),
    Case("trace-unknown-call-id", ("check", "t.jsonl", "--json"), "TC126", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), result(call_id="c9"), answer())}),
    Case("trace-duplicate-result", ("check", "t.jsonl", "--json"), "TC127", 1, "t.jsonl", 3,
         files={"t.jsonl": _t(call(), result(), result(sources=[source("s2")]), answer())}),
    Case("trace-failed-result-has-sources", ("check", "t.jsonl", "--json"), "TC128", 1,
         "t.jsonl", 4,
         files={"t.jsonl": _t(call(), result(), call("c2"),
                              result("c2", ok=False, sources=[source("s2")]), answer())}),
    Case("trace-duplicate-source-id", ("check", "t.jsonl", "--json"), "TC129", 1, "t.jsonl", 4,
         files={"t.jsonl": _t(call(), result(), call("c2"), result("c2"), answer())}),
    Case("trace-two-answers", ("check", "t.jsonl", "--json"), "TC130", 1, "t.jsonl", 4,
         files={"t.jsonl": _t(call(), result(), answer(), answer())}),
    Case("trace-no-answer", ("check", "t.jsonl", "--json"), "TC130", 1, "t.jsonl", 2,
         files={"t.jsonl": _t(call(), result())}),
    Case("trace-unknown-source-id", ("check", "t.jsonl", "--json"), "TC131", 1, "t.jsonl", 3,
         115, files={"t.jsonl": _t(call(), result(), answer([claim(citations=[cite("s9")])]))}),
    # ---- TC200–TC202: evidence ----
    Case("evidence-no-claims", ("check", "t.jsonl", "--evidence", "--json"), "TC200", 2,
         "t.jsonl", 3, files={"t.jsonl": _t(call(), result(), answer(claims=[]))}),
    Case("evidence-uncited-claim", ("check", "t.jsonl", "--evidence", "--json"), "TC201", 2,
         "t.jsonl", 3,
         files={"t.jsonl": _t(call(), result(), answer([claim(), claim(citations=[])]))}),
    Case("quote-not-in-capture", ("check", "t.jsonl", "--evidence", "--json"), "TC202", 2,
         "t.jsonl", 3, 115,
         files={"t.jsonl": _t(call(), result(), answer([claim(citations=[cite(
             quote="quick red fox")])]))}),
    Case("quote-not-in-capture-bare-form", ("t.jsonl", "--evidence", "--json"), "TC202", 2,
         "t.jsonl", 3, 115,
         files={"t.jsonl": _t(call(), result(), answer([claim(citations=[cite(
             quote="quick red fox")])]))}),
    Case("source-not-captured", ("check", "t.jsonl", "--evidence", "--json"), "TC203", 0,
         "t.jsonl", 3, 115,
         files={"t.jsonl": _t(call(), result(sources=[source(content=None)]), answer())}),
    # ---- TC400–TC402: compare ----
    Case("source-added", ("compare", "old.jsonl", "new.jsonl", "--json"), "TC400", 2,
         "new.jsonl", 2,
         files={"old.jsonl": TRACE_OK,
                "new.jsonl": _t(call(), result(sources=[source(), source("s2", "https://b/")]),
                                answer())}),
    Case("source-removed", ("compare", "old.jsonl", "new.jsonl", "--json"), "TC401", 2,
         "old.jsonl", 2,
         files={"new.jsonl": TRACE_OK,
                "old.jsonl": _t(call(), result(sources=[source(), source("s2", "https://b/")]),
                                answer())}),
    Case("source-changed", ("compare", "old.jsonl", "new.jsonl", "--json"), "TC402", 2,
         "new.jsonl", 2,
         files={"old.jsonl": TRACE_OK,
                "new.jsonl": _t(call(), result(sources=[source(content="Other words.")]),
                                answer())}),
]

# The codes of the offline core (the hook's TC103/TC104 are tested with the hook).
OWNED = {"TC100", "TC101", "TC102", *(f"TC{n}" for n in range(110, 115)),
         *(f"TC{n}" for n in range(120, 132)), "TC200", "TC201", "TC202", "TC203",
         "TC400", "TC401", "TC402"}


def _make(tmp_path: Path, files: dict[str, Any]) -> None:
    for name, content in files.items():
        path = tmp_path / name
        if name.endswith("/"):
            path.mkdir()
        else:
            path.write_bytes(content.encode() if isinstance(content, str) else content)


def test_every_owned_code_has_a_case() -> None:
    assert set(BY_CODE) >= OWNED
    assert {c.code for c in CASES} == OWNED


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_code(case: Case, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _make(tmp_path, case.files)
    monkeypatch.chdir(tmp_path)
    run = cli(*case.argv)
    assert run.exit == case.exit
    assert "Traceback" not in run.err
    if "--json" not in case.argv:
        # A console-format usage error: one line on stderr, nothing on stdout.
        assert run.out == ""
        assert run.err.startswith(f"tracecite: {case.code} ")
        assert run.err.count("\n") == 1
        return
    report = run.json()
    assert report["exit_code"] == case.exit
    assert [f["code"] for f in report["findings"]] == [case.code]
    finding = report["findings"][0]
    registry = BY_CODE[case.code]
    assert finding["name"] == registry.label
    assert finding["exit"] == registry.exit
    assert (finding["file"], finding["line"], finding["column"]) == (
        case.file, case.line, case.column)


def test_unreadable_file(cli: Cli, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("running as root: chmod 000 does not stop root from reading")
    for name in ("n.md", "t.jsonl"):
        path = tmp_path / name
        path.write_text("x")
        path.chmod(0)
        try:
            run = cli("check", path, "--json")
        finally:
            path.chmod(0o644)
        assert run.exit == 1
        finding = run.json()["findings"][0]
        assert (finding["code"], finding["file"], finding["line"]) == ("TC101", str(path), None)


def test_every_input_error_of_every_file_in_one_run(cli: Cli, tmp_path: Path) -> None:
    a = tmp_path / "a.md"
    a.write_text("claim: a\nbad line\nquote: q\nurl: u\n\nclaim: b\n")
    b = tmp_path / "b.md"
    b.write_text("Claim: x\nquote: q\nurl: u\n")
    t = tmp_path / "t.jsonl"
    t.write_bytes(_t(call(), "nope", call()))
    run = cli("check", a, b, t, "--json")
    assert run.exit == 1
    got = [(f["file"], f["line"], f["code"]) for f in run.json()["findings"]]
    assert got == [
        (str(a), 2, "TC110"), (str(a), 6, "TC113"),
        (str(b), 1, "TC111"), (str(b), 1, "TC113"),
        (str(t), 2, "TC120"), (str(t), 3, "TC125"), (str(t), 3, "TC130"),
    ]


def test_input_errors_win_over_findings(cli: Cli, tmp_path: Path) -> None:
    """Exit precedence 1 > 2 > 0: a format error anywhere makes the run exit 1."""
    bad = tmp_path / "n.md"
    bad.write_text("claim: a\n")
    mismatch = tmp_path / "t.jsonl"
    mismatch.write_bytes(_t(call(), result(), answer([claim(citations=[cite(quote="nope")])])))
    run = cli("check", bad, mismatch, "--evidence", "--json")
    assert run.exit == 1
    assert sorted(run.codes()) == ["TC113", "TC202"]
    assert run.json()["exit_code"] == 1


def test_findings_win_over_passing(cli: Cli, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(TRACE_OK)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(_t(call(), result(), answer([claim(citations=[cite(quote="nope")])])))
    assert cli("check", good, "--evidence").exit == 0
    assert cli("check", good, bad, "--evidence").exit == 2


def test_passing_run(cli: Cli, tmp_path: Path) -> None:
    notes = tmp_path / "n.md"
    notes.write_text(NOTES_OK)
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE_OK)
    run = cli("check", notes, trace, "--evidence", "--json")
    assert run.exit == 0
    report = run.json()
    assert report["findings"] == []
    assert report["summary"]["records"] == 1
    assert report["summary"]["captured"]["checked"] == 1
    assert report["summary"]["captured"]["matched"] == 1


NOT_CAPTURED = _t(call(), result(sources=[source(content=None),
                                          source("s2", "file:doc.txt", "quick brown fox")]),
                  answer([claim(citations=[cite(quote="SECRET one"), cite("s2")]),
                          claim(citations=[cite(quote="SECRET two")])]))


def test_citations_of_a_source_not_captured_are_warnings_counted_as_skipped(
        cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(NOT_CAPTURED)
    run = cli("check", trace, "--evidence", "--json")
    assert run.exit == 0
    report = run.json()
    assert report["exit_code"] == 0
    assert [(f["code"], f["name"], f["severity"], f["exit"], f["line"], f["claim"],
             f["citation"], f["source_id"], f["uri"]) for f in report["findings"]] == [
        ("TC203", "source-not-captured", "warning", 0, 3, c, n, "s1", "https://example.com/a")
        for c, n in ((1, 1), (2, 1))]
    assert all(f["column"] is not None and f.get("diagnosis") is None
               for f in report["findings"])
    assert report["summary"]["citations"] == 3
    assert report["summary"]["captured"] == {**Counts().as_dict(), "checked": 1, "matched": 1,
                                             "skipped": 2}
    assert (report["summary"]["errors"], report["summary"]["warnings"]) == (0, 2)
    # Without --evidence nothing is said about it: the trace is structurally valid.
    assert cli("check", trace, "--json").json()["findings"] == []


def test_a_trace_of_sources_not_captured_never_reads_as_verified(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(_t(call(), result(sources=[source(content=None)]),
                         answer([claim(citations=[cite(quote="SECRET one")])])))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = cli("check", trace, "--evidence")
    assert run.exit == 0
    said = run.out + run.err
    assert "TC203" in said
    assert "nothing verified" in said and "passed" not in said
    assert "1 skipped" in said and "1 citation of a source not captured" in said
    assert "verify-urls" in said
    sarif = json.loads(cli("check", trace, "--evidence", "--format", "sarif").out)
    (result_,) = sarif["runs"][0]["results"]
    assert (result_["ruleId"], result_["level"]) == ("TC203", "warning")
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TC203"]["defaultConfiguration"]["level"] == "warning"
    github = cli("check", trace, "--evidence", "--format", "github")
    assert github.exit == 0
    assert github.out.startswith("::warning ") and "TC203" in github.out
    markdown = summary.read_text(encoding="utf-8")
    assert "**nothing verified**" in markdown and "(warning)" in markdown
    assert "the trace captured none for it (`content: null`)" in markdown
    for text in (said, markdown, json.dumps(sarif), github.out + github.err):
        assert "SECRET" not in text


def test_structure_only_without_evidence(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(_t(call(), result(), answer([claim(citations=[cite(quote="nope")])])))
    assert cli("check", trace).exit == 0


def test_bare_form_is_check(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE_OK)
    bare = cli(trace, "--evidence", "--json").json()
    full = cli("check", trace, "--evidence", "--json").json()
    assert bare == full
    assert bare["command"] == "check"


def test_version(cli: Cli) -> None:
    run = cli("--version")
    assert run.exit == 0
    assert run.out.strip() == f"tracecite {__version__}"


@pytest.mark.parametrize("argv", [("--help",), ("check", "--help"), ("compare", "-h")])
def test_help_exits_zero(cli: Cli, argv: tuple[str, ...]) -> None:
    run = cli(*argv)
    assert run.exit == 0
    assert "usage:" in run.out


def test_usage_error_in_json(cli: Cli) -> None:
    run = cli("check", "--json", "--format=json")
    assert run.exit == 1
    report = run.json()
    assert report["command"] == "check"
    assert [f["code"] for f in report["findings"]] == ["TC100"]
    assert report["findings"][0]["file"] is None


def test_usage_error_echoing_hostile_argument(cli: Cli) -> None:
    """argparse quotes bad arguments in its messages; they are shown escaped."""
    run = cli("check", "--x\x1b[31m\x07", "n.md")
    assert run.exit == 1
    assert "\x1b" not in run.err and "\x07" not in run.err
    assert run.err.count("\n") == 1


def test_github_format_when_in_actions(cli: Cli, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "n.md"
    notes.write_text("claim: a\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    run = cli("check", notes)
    assert run.exit == 1
    assert run.out.startswith("::error file=")
    assert cli("check", notes, "--format", "console").out.startswith(str(notes))
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    assert not cli("check", notes).out.startswith("::")


def test_json_flag_equals_format_json(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE_OK)
    assert cli("check", trace, "--json").out == cli("check", trace, "--format", "json").out


def test_quiet_prints_nothing_when_passing(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE_OK)
    assert cli("check", trace, "--quiet").out == ""
    assert cli("check", trace).out.startswith("tracecite check: nothing verified")
    bad = tmp_path / "n.md"
    bad.write_text("claim: a\n")
    assert "TC113" in cli("check", bad, "-q").out


def test_report_files(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(_t(call(), result(), answer([claim(citations=[cite(quote="nope")])])))
    out_json = tmp_path / "r.json"
    out_sarif = tmp_path / "r.sarif"
    run = cli("check", trace, "--evidence", "--report-file", f"json:{out_json}",
              "--report-file", f"sarif:{out_sarif}")
    assert run.exit == 2
    assert "TC202" in run.out  # console on stdout as usual
    assert [f["code"] for f in json.loads(out_json.read_text())["findings"]] == ["TC202"]
    sarif = json.loads(out_sarif.read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["TC202"]


# ---- the internal-error boundary -------------------------------------------------------------

def _explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("secret quote text from a source")


def test_internal_error(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tracecite.run.commands.run_check", _explode)
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE_OK)
    run = cli("check", trace)
    assert run.exit == 3
    assert run.out == ""
    assert run.err.count("\n") == 1
    assert "TC900" in run.err and "report" in run.err
    assert "Traceback" not in run.err
    assert "secret quote" not in run.err


def test_internal_error_traceback_only_with_debug(cli: Cli, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tracecite.run.commands.run_check", _explode)
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE_OK)
    run = cli("check", trace, "--debug")
    assert run.exit == 3
    assert "Traceback" in run.err
    assert "TC900" in run.err


def test_internal_error_in_json(cli: Cli, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tracecite.run.commands.run_compare", _explode)
    run = cli("compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--json")
    assert run.exit == 3
    report = run.json()
    assert report["exit_code"] == 3
    assert report["command"] == "compare"
    assert [(f["code"], f["exit"]) for f in report["findings"]] == [("TC900", 3)]
    assert "secret" not in run.out


# ---- bad input never produces a traceback ---------------------------------------------------

def _text(size: int) -> st.SearchStrategy[str]:
    """Text of every code point, lone surrogates included (``json.dumps`` escapes them)."""
    return st.text(st.characters(exclude_categories=()), max_size=size)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text(8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text(6), inner,
                                                                max_size=3),
    max_leaves=8,
)
# Events that are nearly right, so the checks behind the JSON parser are reached too.
events = st.fixed_dictionaries(
    {"type": st.sampled_from(["tool_call", "tool_result", "answer", "other"]) | json_values,
     "run_id": st.sampled_from(["r1", "r2"]) | json_values},
    optional={
        "call_id": st.sampled_from(["c1", "c2"]) | json_values,
        "tool": st.just("t") | json_values,
        "ok": st.booleans() | json_values,
        "sources": st.lists(st.fixed_dictionaries(
            {}, optional={"id": st.sampled_from(["s1", "s2", ""]) | json_values,
                          "uri": _text(5) | json_values,
                          "content": _text(20) | json_values}), max_size=3)
        | json_values,
        "claims": st.lists(st.fixed_dictionaries(
            {}, optional={"text": _text(5) | json_values,
                          "citations": st.lists(st.fixed_dictionaries(
                              {}, optional={"source_id": st.sampled_from(["s1", "s2"])
                                            | json_values,
                                            "quote": _text(10) | json_values}),
                              max_size=3) | json_values}), max_size=3) | json_values,
    },
).map(lambda e: json.dumps(e).encode())
trace_bytes = st.lists(events | st.binary(max_size=40), max_size=8).map(b"\n".join)
notes_bytes = st.binary(max_size=300) | st.lists(
    st.sampled_from([b"claim: a", b"quote: b", b"url: c", b"", b"---", b"# x", b"\xff", b"x",
                     b"Claim: d", b"quote:", b"\xef\xbb\xbf", b"\r"]), max_size=12
).map(b"\n".join)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=trace_bytes, notes=notes_bytes)
def test_bad_input_never_produces_a_traceback(cli: Cli, tmp_path: Path, trace: bytes,
                                               notes: bytes) -> None:
    trace_path = tmp_path / "fuzz.jsonl"
    trace_path.write_bytes(trace)
    notes_path = tmp_path / "fuzz.md"
    notes_path.write_bytes(notes)
    for argv in (("check", "--evidence", trace_path, notes_path, "--json"),
                 ("compare", trace_path, trace_path, "--json")):
        run = cli(*argv)
        assert run.exit in (0, 1, 2), run.out
        report = json.loads(run.out)
        assert report["exit_code"] == run.exit
        assert "Traceback" not in run.err
        assert run.err == ""


# ---- other ways a run ends -------------------------------------------------------------------

class _FailingFile(io.BytesIO):
    """A file that opens but cannot be read (an I/O error half way, say)."""

    def read(self, size: int | None = -1) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    def readline(self, size: int | None = -1) -> bytes:
        if self.tell() == 0:
            line = json.dumps(call()).encode() + b"\n"
            self.seek(len(line))
            return line
        raise OSError(errno.EIO, "Input/output error")


def test_unreadable_without_root(cli: Cli, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The TC101 paths chmod cannot reach when the tests run as root."""
    notes, trace = tmp_path / "n.md", tmp_path / "t.jsonl"
    notes.write_text("x")
    trace.write_bytes(TRACE_OK)

    def refuse(path: str, flags: int) -> int:
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr("tracecite.inputs.files.os_open", refuse)
    run = cli("check", notes, trace, "--json")
    assert run.exit == 1
    assert [(f["code"], f["line"], f["message"]) for f in run.json()["findings"]] == [
        ("TC101", None, "input cannot be read (Permission denied)")] * 2

    monkeypatch.setattr("tracecite.inputs.files.os_open", os.open)

    def failing(fd: int, mode: str, **options: Any) -> _FailingFile:
        os.close(fd)
        return _FailingFile()

    monkeypatch.setattr("tracecite.inputs.files.fdopen", failing)
    run = cli("check", notes, trace, "--json")
    assert run.exit == 1
    got = [(f["code"], f["file"], f["line"]) for f in run.json()["findings"]]
    # A read that fails says enough: no "no answer" on top of it.
    assert got == [("TC101", str(notes), None), ("TC101", str(trace), 1)]
    assert "Input/output error" in run.json()["findings"][0]["message"]


def test_keyboard_interrupt(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("tracecite.run.commands.run_check", interrupted)
    run = cli("check", tmp_path / "t.jsonl", "--json")
    assert run.exit == 130
    assert run.json()["exit_code"] == 130  # the report is still written
    assert run.err == ("tracecite: stopped by SIGINT; the report covers the sources that "
                       "finished\n")


def test_usage_error_when_the_step_summary_cannot_be_written(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a directory
    run = cli("check", "--format", "github")
    assert run.exit == 1
    assert run.out.startswith("::error title=TC100 usage::")
    assert "Traceback" not in run.err


def test_exit_code_precedence() -> None:
    def f(code: Code) -> Finding:
        return Finding(code, "m")

    internal, usage, mismatch = (f(Code.INTERNAL_ERROR), f(Code.NOTES_BAD_LINE),
                                 f(Code.QUOTE_NOT_IN_CAPTURE))
    assert exit_code_of([]) == 0
    assert exit_code_of([mismatch]) == 2
    assert exit_code_of([mismatch, usage]) == 1
    assert exit_code_of([mismatch, usage, internal]) == 3
    assert Report("check", (mismatch, usage)).exit_code == 1


def test_summary_line_counts() -> None:
    summary = Summary(captured=Counts(checked=5, matched=5),
                      live=Counts(checked=5, matched=2, not_found=2, unavailable=1, skipped=3))
    line = summary_line(Report("verify-urls", (), summary))
    assert line == ("tracecite verify-urls: passed: 5 quotes verified against captured "
                    "content, 2 on live pages; not checked: 3 skipped; exit 0: nothing failed")
    one = Summary(captured=Counts(checked=1, matched=1))
    assert summary_line(Report("check", (), one)) == (
        "tracecite check: passed: 1 quote verified against captured content; "
        "exit 0: nothing failed")
    assert summary_line(Report("check", (), Summary(records=3))) == (
        "tracecite check: nothing verified: 3 notes records format-checked; their quotes are "
        "verified online: tracecite verify-notes; exit 0: nothing failed")


def test_a_report_file_that_cannot_be_written_is_tc100_and_one_document(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: a failing report file after stdout was written gave exit 3 and two JSONs."""
    from tracecite.cli import main

    example = str(Path(__file__).resolve().parents[1] / "examples" / "passing.trace.jsonl")
    code = main(["check", example, "--json", "--report-file", "sarif:/dev/full"])
    out = capsys.readouterr().out
    assert code == 1
    assert [f["code"] for f in json.loads(out)["findings"]] == ["TC100"]


def test_an_unwritable_step_summary_only_warns(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.cli import main

    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "/dev/full")
    example = Path(__file__).resolve().parents[1] / "examples" / "failing-evidence.trace.jsonl"
    code = main(["check", str(example), "--evidence", "--format", "github"])
    captured = capsys.readouterr()
    assert code == 2
    assert "::error " in captured.out
    assert "step summary" in captured.err


def test_the_command_leaves_its_objects_to_the_exit_and_main_does_not(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``tracecite`` (the console script, ``python -m tracecite``) ends its process next, so
    it freezes what is left for the collector to skip on the way out; :func:`main`, which the
    library's callers and the tests run in their own process, leaves the collector alone."""
    import gc

    from tracecite import cli

    monkeypatch.setattr("sys.argv", ["tracecite", "--version"])
    assert gc.get_freeze_count() == 0
    try:
        assert cli.main() == 0
        assert gc.get_freeze_count() == 0
        assert cli.entry() == 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert "tracecite" in capsys.readouterr().out


def test_the_command_line_is_parsed_without_shutil() -> None:
    # argparse's own formatter imports shutil (and its archive modules) for every add_argument.
    import subprocess
    import sys

    probe = ("import sys; from tracecite.cli import build_parser; "
             "build_parser('check').parse_args(['check', 'notes.md']); "
             "print('shutil' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


@pytest.mark.parametrize("columns", ["50", "", "wide", "-3"])
def test_help_is_as_wide_as_argparse_makes_it(monkeypatch: pytest.MonkeyPatch,
                                              columns: str) -> None:
    import argparse

    from tracecite.cli import _Formatter

    monkeypatch.setenv("COLUMNS", columns)
    ours, theirs = _Formatter("tracecite")._width, argparse.HelpFormatter("tracecite")._width
    assert ours == theirs
    if columns == "50":
        assert ours == 48
