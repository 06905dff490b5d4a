"""``--format github``: workflow commands with the toolkit's escaping, the ten-annotation limit,
and the Markdown step summary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import Cli
from tracecite.codes import Code
from tracecite.findings import Counts, Finding, Report, Summary
from tracecite.reporters.escape import printable
from tracecite.reporters.github import (
    ANNOTATION_LIMIT,
    annotation,
    escape_data,
    escape_property,
    format_github,
    step_summary,
)

# What the runner accepts as a command (after trimming leading whitespace), per actions/runner.
COMMAND = re.compile(r"^::(?P<name>[^ :]+)(?: (?P<props>[^:]*))?::(?P<data>.*)$")


def unescape_property(text: str) -> str:
    """The runner's unescaping of a property value (its mapping order)."""
    for token, replacement in (("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"),
                               ("%", "%25")):
        text = text.replace(replacement, token)
    return text


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the runner parses it: name, properties, data."""
    match = COMMAND.match(line.lstrip())
    assert match, line
    props: dict[str, str] = {}
    for pair in (match["props"] or "").split(","):
        if pair:
            key, _, value = pair.partition("=")
            props[key] = unescape_property(value)
    data = match["data"].replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
    return match["name"], props, data


def test_escape_data() -> None:
    assert escape_data("100% a\r\nb") == "100%25 a%0D%0Ab"
    assert escape_data("a:b,c") == "a:b,c"


def test_escape_property() -> None:
    assert escape_property("a:b,c%d\r\ne") == "a%3Ab%2Cc%25d%0D%0Ae"
    assert escape_property("%3A") == "%253A"  # escaping is not applied twice


def test_windows_paths_are_kept() -> None:
    finding = Finding(Code.NOTES_BAD_LINE, "m", file="docs\\notes.md", line=1)
    assert parse_command(annotation(finding))[1]["file"] == "docs\\notes.md"


def test_annotation_format() -> None:
    finding = Finding(Code.NOTES_BAD_LINE, "line is not a field", file="docs/n.md", line=3,
                      column=2, record=1)
    assert annotation(finding) == (
        "::error file=docs/n.md,line=3,col=2,title=TC110 notes-bad-line"
        "::line is not a field; record 1")


def test_annotation_without_location() -> None:
    assert annotation(Finding(Code.USAGE, "bad")) == "::error title=TC100 usage::bad"


def test_annotation_with_everything() -> None:
    finding = Finding(Code.HTTP_STATUS, "HTTP status 404", file="t.jsonl", line=4, claim=1,
                      citation=2, source_id="s,1", uri="https://a/b?c=1%2C2", status=404)
    name, props, data = parse_command(annotation(finding))
    assert name == "error"
    assert props == {"file": "t.jsonl", "line": "4", "title": "TC315 http-status"}
    assert data == "HTTP status 404; claim 1; citation 2; source s,1; uri https://a/b?c=1%2C2"


@pytest.mark.parametrize("name", [
    "a,b.md", "a:b.md", "100%.md", "x%0Ay.md", "a\nb.md", "a\r\nb.md", "x,line=99.md",
    "x::warning::y.md", "%2C%3A,:", "\x1b[31mred.md", "t\x07.md",
])
def test_hostile_file_names_round_trip(name: str) -> None:
    finding = Finding(Code.NOTES_BAD_LINE, "m", file=name, line=7, column=1)
    line = annotation(finding)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and "\x07" not in line
    cmd, props, data = parse_command(line)
    assert cmd == "error"
    # An ordinary name is kept exactly (so the annotation finds its file), line breaks too
    # (the toolkit's escaping covers them); one with other control characters is escaped.
    ordinary = name.replace("\r", "").replace("\n", "").isprintable()
    shown = name if ordinary else printable(name)
    assert props == {"file": shown, "line": "7", "col": "1", "title": "TC110 notes-bad-line"}
    assert data == "m"


def _many(n: int) -> Report:
    return Report("check", tuple(
        Finding(Code.NOTES_BAD_LINE, "m", file=f"f{i:02d}.md", line=1, column=1)
        for i in range(n)))


def test_ten_annotations_at_most() -> None:
    lines = format_github(_many(ANNOTATION_LIMIT)).splitlines()
    assert [line.startswith("::error ") for line in lines] == [True] * 10 + [False]
    assert "more" not in lines[9]

    lines = format_github(_many(25)).splitlines()
    commands = [line for line in lines if line.lstrip().startswith("::")]
    assert len(commands) == ANNOTATION_LIMIT
    assert lines[:10] == commands
    assert parse_command(commands[-1])[1] == {"title": "TraceCite"}
    assert "16 more errors" in commands[-1]
    plain = lines[10:-1]
    assert len(plain) == 16
    assert all("TC110" in line and "f" in line for line in plain)
    assert [f"f{i:02d}.md" in " ".join(plain) for i in range(9, 25)] == [True] * 16
    assert lines[-1].startswith("tracecite check: failed: 25 notes format errors;")


def test_warnings_have_a_budget_of_their_own() -> None:
    """A warning after ten errors is still annotated; ten warnings at most, as errors."""
    errors = [Finding(Code.NOTES_BAD_LINE, "m", file=f"e{i:02d}.md", line=1) for i in range(12)]
    warning = Finding(Code.HTTP_STATUS, "HTTP status 503", file="w.notes", line=3, warned=True)
    lines = format_github(Report("check", (*errors, warning))).splitlines()
    commands = [parse_command(line) for line in lines if line.startswith("::")]
    assert [name for name, _, _ in commands] == ["error"] * 10 + ["warning"]
    assert commands[9][2].startswith("3 more errors are not annotated")
    assert commands[10][1]["file"] == "w.notes"

    warnings = [Finding(Code.TIMEOUT, "m", file=f"w{i:02d}.notes", line=1, warned=True)
                for i in range(13)]
    lines = format_github(Report("check", (errors[0], *warnings))).splitlines()
    commands = [parse_command(line) for line in lines if line.startswith("::")]
    assert [name for name, _, _ in commands] == ["error"] + ["warning"] * 10
    assert commands[-1][2].startswith("4 more warnings are not annotated")
    plain = [line for line in lines if line.startswith(" ")]
    assert [line.split(":")[0].strip() for line in plain] == [f"w{i:02d}.notes"
                                                               for i in range(9, 13)]


def test_plain_lines_show_names_as_they_are() -> None:
    """A log line is no workflow command: no toolkit escaping in it."""
    fillers = [Finding(Code.NOTES_BAD_LINE, "m", file=f"f{i}", line=1) for i in range(10)]
    odd = Finding(Code.QUOTE_NOT_IN_CAPTURE, "m", file="100%, a:b.jsonl", line=2,
                  source_id="s%1")
    lines = format_github(Report("check", (*fillers, odd))).splitlines()
    assert " 100%, a:b.jsonl:2: TC202 quote-not-in-capture: m; source s%1" in lines


def test_plain_lines_never_start_a_command() -> None:
    """The runner trims leading whitespace before looking for ``::``."""
    fillers = [Finding(Code.NOTES_BAD_LINE, "m", file=f"f{i}", line=1) for i in range(10)]
    # Exit-2 findings sort after the input errors, so these are the ones not annotated.
    hostile = [Finding(Code.QUOTE_NOT_IN_CAPTURE, "m", file=name, line=1, source_id=name)
               for name in [":", "::error::x", " ::warning::y", ":error::z", "  ::"]]
    lines = format_github(Report("check", (*fillers, *hostile))).splitlines()
    assert len(lines) == ANNOTATION_LIMIT + 6 + 1
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("::"):
            assert number <= ANNOTATION_LIMIT, line
            assert parse_command(line)[0] == "error"


def test_legacy_commands_are_escaped() -> None:
    finding = Finding(Code.TRACE_UNKNOWN_SOURCE_ID, "m", file="##[error]a.jsonl", line=1,
                      source_id="##[add-mask]s", uri="https://x/##[stop-commands]t")
    report = Report("check", (finding,) * 12)
    assert "##[" not in format_github(report)
    assert "##[" not in step_summary(report, {})


def test_summary_line_last() -> None:
    text = format_github(Report("check", (), Summary(captured=Counts(checked=3, matched=3))))
    assert text == ("tracecite check: passed: 3 quotes verified against captured content; "
                    "exit 0: nothing failed\n")


def test_notices_are_notice_commands() -> None:
    report = Report("hook", (Finding(Code.DNS_FAILURE, "m", file="a.notes", line=1),),
                    notices=("no source host resolved: offline? SKIP=tracecite-online",
                             "100% down\n::error::x"), stage="online")
    lines = format_github(report).splitlines()
    assert lines[1] == ("::notice title=TraceCite::no source host resolved: offline? "
                        "SKIP=tracecite-online")
    name, props, data = parse_command(lines[2])
    assert (name, props) == ("notice", {"title": "TraceCite"})
    assert data == printable("100% down\n::error::x")  # one line, one command
    assert len(lines) == 4 and lines[-1].startswith("tracecite hook --stage online: failed")


def test_step_summary_escapes_what_inputs_give() -> None:
    report = Report("check", (
        Finding(Code.NOTES_BAD_LINE, "line | not <b>ok</b>", file="a|b.md", line=2, record=1),
        Finding(Code.QUOTE_NOT_IN_CAPTURE, "m", file="t.jsonl", line=3, claim=1, citation=2,
                source_id="s*1", uri="https://x/[y](z)"),
        Finding(Code.USAGE, "u"),
    ))
    text = step_summary(report, {})
    rows = [line for line in text.splitlines() if line.startswith("| ") and "TC" in line]
    assert len(rows) == 3
    assert all(row.count("|") == 5 for row in rows)  # no cell adds a column
    assert "<b>" not in text and "[y](z)" not in text and "a|b" not in text
    assert "#### a&#124;b&#46;md (1 finding)" in text


def test_step_summary_when_nothing_was_verified() -> None:
    text = step_summary(Report("check"), {})
    assert "passed" not in text.lower()
    assert "**nothing verified**" in text


def test_cli_writes_step_summary(cli: Cli, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "n.md"
    notes.write_text("".join(f"bad line {i}\n" for i in range(12)))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    run = cli("check", notes)
    assert run.exit == 1
    assert sum(line.startswith("::error") for line in run.out.splitlines()) == 10
    text = summary.read_text()
    assert text.startswith("earlier step\n### TraceCite: `tracecite check`")  # appended
    assert sum("| TC110 notes-bad-line |" in line for line in text.splitlines()) == 12
    assert sum("| TC113 notes-missing-field |" in line for line in text.splitlines()) == 1


def test_step_summary_only_for_github_format(cli: Cli, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "n.md"
    notes.write_text("claim: a\n")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    cli("check", notes, "--json")
    cli("check", notes)
    assert not summary.exists()
    cli("check", notes, "--format", "github")
    assert "TC113" in summary.read_text()


def test_a_backslash_in_a_source_id_is_escaped_once() -> None:
    """Regression: ids and URIs were escaped, then the whole message again (\\ became \\\\\\\\)."""
    from tracecite.codes import Code
    from tracecite.findings import Finding, Report
    from tracecite.reporters.github import format_github

    finding = Finding(Code.QUOTE_NOT_IN_CAPTURE, "quote is not in the captured content",
                      file="t.jsonl", line=3, source_id="a\\b")
    out = format_github(Report("check", (finding,)))
    assert "source a\\\\b" in out and "a\\\\\\\\b" not in out


def test_warnings_are_warning_annotations_and_marked_in_the_step_summary() -> None:
    warned = Finding(Code.SOURCE_BLOCKED, "the site refused", file="a.notes", line=3,
                     warned=True)
    report = Report("verify-notes", (warned,))
    assert report.exit_code == 0
    text = format_github(report)
    assert text.startswith("::warning file=a.notes,line=3,title=TC319 source-blocked::")
    assert text.splitlines()[-1] == ("tracecite verify-notes: nothing verified: 1 warning: "
                                     "1 source unavailable; exit 0: nothing failed")
    assert "| TC319 source-blocked (warning) |" in step_summary(report, {})
