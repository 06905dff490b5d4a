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
from tracecite.reporters import OutputStyle
from tracecite.reporters.console import format_console
from tracecite.reporters.escape import printable

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_passing_report() -> None:
    report = Report("check", (), Summary(captured=Counts(checked=2, matched=2)))
    assert format_console(report, OutputStyle()) == (
        "passed tracecite check: 0 findings; 2 quotes checked against captured content, "
        "2 matched; exit 0\n")
    assert format_console(report, OutputStyle(quiet=True)) == ""


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
    headers = [line for line in lines if not line.startswith("  ")]
    # Input errors first (so their files first), then by file; each file once.
    assert headers[:-1] == ["(no file)", "a.md", "b.jsonl", "c.md"]
    assert lines[-1].startswith("failed tracecite check: 6 findings;")
    body = lines[lines.index("b.jsonl") + 1:lines.index("c.md")]
    assert body == [
        "  TC124 trace-run-id-mismatch  line 1: run_id differs",
        "  TC315 http-status  line 3: HTTP status 404",
        "  TC202 quote-not-in-capture  line 3, claim 1, citation 2: quote is not in the captured "
        "content [source s1; uri https://x/]",
    ]
    assert "  TC110 notes-bad-line  line 4:2, record 1: bad line" in lines


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
    assert len(plain.splitlines()) == 3
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
    from tracecite.checks.live import NoProgress
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
    assert text.splitlines()[-1].startswith("passed tracecite verify-notes: 1 finding (1 warning)")
