"""``--format console``: findings grouped by file; colour only on a terminal; names escaped."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from tests.conftest import Cli
from tracecite.cli import _is_color
from tracecite.codes import Code
from tracecite.findings import Counts, Finding, Report, Summary
from tracecite.reporters import OutputStyle, summary_line
from tracecite.reporters.console import format_console
from tracecite.reporters.escape import printable

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_passing_report() -> None:
    report = Report("check", (), Summary(captured=Counts(checked=2, matched=2)))
    assert format_console(report, OutputStyle()) == (
        "tracecite check: passed: 2 quotes verified against captured content; "
        "exit 0: nothing failed\n")
    assert format_console(report, OutputStyle(quiet=True)) == ""


def test_the_last_line_is_the_summary_line_with_the_verdict_coloured() -> None:
    report = Report("hook", (), Summary(inputs=1, records=3), stage="offline")
    plain = format_console(report, OutputStyle())
    assert plain == summary_line(report) + "\n"
    assert "nothing verified" in plain and "passed" not in plain
    coloured = format_console(report, OutputStyle(color=True))
    assert "\x1b[1;33mnothing verified\x1b[0m" in coloured  # yellow: neither passed nor failed
    failed = Report("check", (Finding(Code.NOTES_BAD_LINE, "m", file="a.md", line=1),))
    assert "\x1b[1;31mfailed\x1b[0m" in format_console(failed, OutputStyle(color=True))


def test_each_line_starts_with_path_line_col() -> None:
    report = Report("verify-notes", (
        Finding(Code.QUOTE_NOT_ON_PAGE, "quote not on page", file="docs/a.notes", line=12,
                column=7, record=3),
        Finding(Code.CONNECT_FAILED, "refused", file="docs/a.notes", line=14, record=3,
                uri="https://x/"),
        Finding(Code.INPUT_UNREADABLE, "missing", file="gone.notes"),
        Finding(Code.USAGE, "bad"),
    ))
    lines = format_console(report, OutputStyle()).splitlines()
    assert "  docs/a.notes:12:7  TC210 quote-not-on-page  record 3: quote not on page" in lines
    assert ("  docs/a.notes:14  TC311 connect-failed  record 3: refused [uri https://x/]"
            in lines)
    assert "  gone.notes  TC101 input-unreadable  missing" in lines
    assert "  TC100 usage  bad" in lines
    assert lines[lines.index("docs/a.notes") + 1].startswith("  docs/a.notes:12:7  ")


def test_notices_follow_the_findings() -> None:
    report = Report("hook", (Finding(Code.DNS_FAILURE, "m", file="a.notes", line=3),),
                    notices=("no source host resolved: offline?", "\x1b[2Jhostile\nline"),
                    stage="online")
    lines = format_console(report, OutputStyle()).splitlines()
    assert lines[-3:-1] == ["note: no source host resolved: offline?",
                            "note: \\x1b[2Jhostile\\nline"]
    assert lines[-1] == summary_line(report)
    # A notice is worth showing even when quiet and nothing was found.
    quiet = Report("hook", notices=("no source host resolved: offline?",), stage="online")
    assert "note: no source host resolved" in format_console(quiet, OutputStyle(quiet=True))


def test_findings_grouped_by_file() -> None:
    report = Report("check", (
        Finding(Code.QUOTE_NOT_IN_CAPTURE, "quote is not in the captured content",
                file="b.jsonl", line=3, claim=1, citation=2, source_id="s1", uri="https://x/"),
        Finding(Code.NOTES_BAD_LINE, "bad line", file="a.md", line=4, column=2, record=1),
        # An input error and a finding in one file: the file is still one group.
        Finding(Code.TRACE_RUN_ID_MISMATCH, "run_id differs", file="b.jsonl", line=1),
        Finding(Code.HTTP_STATUS, "HTTP status 404", file="b.jsonl", line=3, status=404),
        Finding(Code.USAGE, "bad"),
        Finding(Code.NOTES_MISSING_FIELD, "no url", file="c.md", line=1, column=1, record=1),
    ))
    lines = format_console(report, OutputStyle()).splitlines()
    headers = [line for line in lines if not line.startswith(("  ", "fix: "))]
    # Input errors first (so their files first), then by file; each file once.
    assert headers[:-1] == ["(no file)", "a.md", "b.jsonl", "c.md"]
    # One "fix:" line per code that occurs, in code order, the registry's text, before the
    # verdict.
    fixes = [line for line in lines if line.startswith("fix: ")]
    assert fixes == [f"fix: {c.code} {c.label}: {c.fix}" for c in (
        Code.USAGE, Code.NOTES_BAD_LINE, Code.NOTES_MISSING_FIELD, Code.TRACE_RUN_ID_MISMATCH,
        Code.QUOTE_NOT_IN_CAPTURE, Code.HTTP_STATUS)]
    assert lines[-len(fixes) - 1:-1] == fixes
    assert lines[-1].startswith("tracecite check: failed: 1 usage error, 2 notes format "
                                "errors, 1 trace structure error, 1 quote not found, "
                                "1 source unavailable;")
    body = lines[lines.index("b.jsonl") + 1:lines.index("c.md")]
    assert body == [
        "  b.jsonl:1  TC124 trace-run-id-mismatch  run_id differs",
        "  b.jsonl:3  TC315 http-status  HTTP status 404",
        "  b.jsonl:3  TC202 quote-not-in-capture  claim 1, citation 2: quote is not in the "
        "captured content [source s1; uri https://x/]",
    ]
    assert "  a.md:4:2  TC110 notes-bad-line  record 1: bad line" in lines


def test_one_fix_line_per_code_however_many_findings() -> None:
    report = Report("check", tuple(Finding(Code.NOTES_BAD_LINE, "m", file="a.md", line=n)
                                   for n in range(1, 6)))
    fixes = [line for line in format_console(report, OutputStyle()).splitlines()
             if line.startswith("fix:")]
    assert fixes == [f"fix: TC110 notes-bad-line: {Code.NOTES_BAD_LINE.fix}"]
    assert "fix:" not in format_console(Report("check"), OutputStyle())


def test_cached_and_deferred_findings_say_so() -> None:
    report = Report("verify-notes", (
        Finding(Code.QUOTE_NOT_ON_PAGE, "quote is not on the page", file="a.notes", line=2,
                record=1, uri="https://x/", cached=True),
        Finding(Code.TIMEOUT, "timed out", file="a.notes", line=7, record=2, uri="https://y/",
                failures=1, fail_after=3, warned=True),
    ), Summary(live=Counts(checked=2, not_found=1, unavailable=1, cached=1)))
    lines = format_console(report, OutputStyle()).splitlines()
    assert "  a.notes:2  TC210 quote-not-on-page  record 1: quote is not on the page " \
           "[uri https://x/; cached]" in lines
    assert "  a.notes:7  TC313 timeout (warning)  record 2: timed out [uri https://y/; " \
           "failure 1 of 3]" in lines
    assert "1 verdict cached" in lines[-1]


def test_no_colour_unless_asked() -> None:
    report = Report("check", (Finding(Code.NOTES_BAD_LINE, "m", file="a.md", line=1),))
    plain = format_console(report, OutputStyle())
    assert "\x1b" not in plain
    coloured = format_console(report, OutputStyle(color=True))
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured) == plain


def test_cli_output_has_no_ansi_when_not_a_terminal(cli: Cli, tmp_path: Path) -> None:
    notes = tmp_path / "n.md"
    notes.write_text("claim: a\n")
    run = cli("check", notes)
    assert run.exit == 1
    assert "\x1b" not in run.out + run.err
    assert run.out.splitlines()[0] == str(notes)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert _is_color(_Tty())
    assert not _is_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not _is_color(_Tty())


@pytest.mark.parametrize("name", [
    "\x1b[31mred", "\x1b]0;pwned\x07", "a\nb", "a\rb", "tab\there", "\u202eevil", "\ud800",
    "back\\slash", "::error::x", "  ::warning::y", "x##[error]y",
])
def test_hostile_names_are_escaped(name: str) -> None:
    report = Report("check", (Finding(Code.TRACE_UNKNOWN_SOURCE_ID, "m", file=name, line=1,
                                      source_id=name, uri=name),))
    text = format_console(report, OutputStyle(color=True))
    plain = ANSI.sub("", text)
    assert "\x07" not in text and "\u202e" not in text
    assert len(plain.splitlines()) == 4  # the file, its finding, the fix line, the verdict
    for line in plain.splitlines():
        assert not line.lstrip().startswith("::")
    assert "##[" not in text
    assert printable(name) in plain


def test_printable() -> None:
    assert printable("plain text: ok, 100%") == "plain text: ok, 100%"
    assert printable("a\\b") == "a\\\\b"
    assert printable("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert printable("\x1b[0m\x00\x7f") == "\\x1b[0m\\x00\\x7f"
    assert printable("\u2028\u202e\ufeff") == "\\u2028\\u202e\\ufeff"
    assert printable("\ud800\U000e0001") == "\\ud800\\U000e0001"
    assert printable("caf\u00e9 \u00a0") == "caf\u00e9 \\xa0"
    # Nothing that the Actions runner would take for a workflow command survives.
    assert printable("::error::x") == "\\x3a:error::x"
    assert printable("  ::x") == "  \\x3a:x"
    assert printable("a::b") == "a::b"
    assert printable("x##[set-output name=a]b") == "x#\\x23[set-output name=a]b"
    assert printable("###[") == "##\\x23["


def test_progress_bar_only_on_a_terminal() -> None:
    from tracecite.checks.live.records import NoProgress
    from tracecite.progress import BarProgress, progress_for

    assert isinstance(progress_for(io.StringIO()), NoProgress)
    assert isinstance(progress_for(_Tty(), enabled=False), NoProgress)
    stream = _Tty()
    bar = progress_for(stream, label="fetching")
    assert isinstance(bar, BarProgress)
    bar.start(3)
    for _ in range(3):
        bar.advance()
    bar.stop()
    assert "fetching" in stream.getvalue()
    idle = BarProgress(_Tty(), "x")
    idle.advance()  # before start: nothing to advance, and no error


def test_warnings_are_marked_and_do_not_fail() -> None:
    from tracecite.codes import Code

    warned = Finding(Code.TIMEOUT, "slow", file="a.notes", line=1, warned=True)
    text = format_console(Report("verify-notes", (warned,)), OutputStyle())
    assert "TC313 timeout (warning)" in text
    assert text.splitlines()[-1] == ("tracecite verify-notes: nothing verified: 1 warning: "
                                     "1 source unavailable; exit 0: nothing failed")


def test_location() -> None:
    from tracecite.reporters.escape import location

    assert location(Finding(Code.NOTES_BAD_LINE, "m", file="n.md", line=12, column=7)) == (
        "n.md:12:7")
    assert location(Finding(Code.NOTES_BAD_LINE, "m", file="n.md", line=12)) == "n.md:12"
    assert location(Finding(Code.INPUT_UNREADABLE, "m", file="n.md")) == "n.md"
    assert location(Finding(Code.USAGE, "m")) == ""
    assert location(Finding(Code.NOTES_BAD_LINE, "m", file="::a\n", line=1)) == "\\x3a:a\\n:1"


def test_a_stopping_error_on_the_console_reads_path_line_col(
        capsys: pytest.CaptureFixture[str]) -> None:
    from tracecite.cli import _fail

    finding = Finding(Code.CONFIG_INVALID, "bad value", file="a b.toml", line=3, column=9)
    _fail(Report("hook", (finding,)), "console")
    assert capsys.readouterr().err == (
        "tracecite: a b.toml:3:9: TC104 config-invalid: bad value\n")
