"""The verdict in plain words (docs/reference/reports.md#honest-summaries): never "passed" when
nothing was verified."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import Cli
from tracecite.codes import Code
from tracecite.findings import Changes, Counts, Finding, Report, Summary
from tracecite.reporters import summary_line
from tracecite.reporters.verdict import exit_words, verdict

NOT_FOUND = Finding(Code.QUOTE_NOT_ON_PAGE, "m", file="a.notes", line=2, record=1)


def _says(report: Report) -> str:
    return str(verdict(report))


def test_failed_counts_what_failed_and_what_was_verified() -> None:
    down = [Finding(Code.CONNECT_FAILED, "m", file="a.notes", line=i, uri="https://down/")
            for i in (3, 7)]  # one source cited twice is one source unavailable
    report = Report("verify-notes", (NOT_FOUND, NOT_FOUND, NOT_FOUND, *down,
                                     Finding(Code.TIMEOUT, "m", file="a.notes", line=9)),
                    Summary(inputs=1, records=15, live=Counts(checked=15, matched=10,
                                                              not_found=3, unavailable=2)))
    assert _says(report) == ("failed: 3 quotes not found, 2 sources unavailable; 10 quotes "
                             "verified on live pages")


def test_passed_names_each_kind_of_check_apart() -> None:
    report = Report("hook", (), Summary(captured=Counts(checked=8, matched=8),
                                        live=Counts(checked=4, matched=4)), stage="all")
    assert _says(report) == ("passed: 8 quotes verified against captured content, "
                             "4 on live pages")
    one = Report("check", (), Summary(captured=Counts(checked=1, matched=1)))
    assert _says(one) == "passed: 1 quote verified against captured content"


def test_offline_stage_on_notes_verified_nothing() -> None:
    """Regression: ``hook --stage offline`` on notes with wrong quotes said every check
    passed, though the offline stage only checks the notes' format."""
    report = Report("hook", (), Summary(inputs=2, records=11), stage="offline")
    assert _says(report) == ("nothing verified: 11 notes records format-checked; their quotes "
                             "are verified online: --stage online")
    assert verdict(report).head == "nothing verified"
    assert summary_line(report) == (
        "tracecite hook --stage offline: nothing verified: 11 notes records format-checked; "
        "their quotes are verified online: --stage online; exit 0: nothing failed")


def test_check_without_evidence_verified_nothing() -> None:
    trace = Report("check", (), Summary(inputs=1, citations=4))
    assert _says(trace) == ("nothing verified: trace structure checked (4 citations); quotes "
                            "are checked with --evidence")
    notes = Report("check", (), Summary(inputs=1, records=1))
    assert _says(notes) == ("nothing verified: 1 notes record format-checked; their quotes are "
                            "verified online: tracecite verify-notes")


def test_passed_still_says_what_was_only_read() -> None:
    report = Report("check", (), Summary(inputs=2, records=3, citations=2,
                                         captured=Counts(checked=2, matched=2)))
    assert _says(report) == ("passed: 2 quotes verified against captured content; 3 notes "
                             "records format-checked; their quotes are verified online: "
                             "tracecite verify-notes")


def test_no_file_selected() -> None:
    assert _says(Report("hook", stage="offline")) == "nothing verified: no file selected"
    unselected = Finding(Code.NOT_SELECTED, "m", file="x.md")
    assert _says(Report("hook", (unselected, unselected), stage="online")) == (
        "nothing verified: no file selected; 2 warnings: 2 files not selected")


def test_nothing_checked_says_why() -> None:
    skipped = Report("verify-urls", (), Summary(inputs=1, citations=3,
                                                live=Counts(skipped=3)))
    assert _says(skipped) == "nothing verified: not checked: 3 skipped"
    empty = Report("check", (), Summary(inputs=1))
    assert _says(empty) == "nothing verified: no quote was checked"


def test_warnings_are_named_and_never_fail() -> None:
    slow = Finding(Code.TIMEOUT, "m", file="a.notes", line=1, uri="https://slow/", warned=True)
    report = Report("verify-notes", (slow,), Summary(live=Counts(checked=3, matched=2,
                                                                  unavailable=1, cached=2)))
    assert _says(report) == ("passed: 2 quotes verified on live pages; 2 verdicts cached; "
                             "1 warning: 1 source unavailable")
    only = Report("verify-notes", (slow,), Summary(live=Counts(checked=1, unavailable=1)))
    assert _says(only) == "nothing verified: 1 warning: 1 source unavailable"


def test_input_errors_give_no_advice_on_the_rest() -> None:
    bad = Finding(Code.NOTES_MISSING_FIELD, "m", file="a.notes", line=1)
    report = Report("hook", (bad, bad), Summary(inputs=1, records=4), stage="online")
    assert _says(report) == "failed: 2 notes format errors"
    usage = Report("check", (Finding(Code.USAGE, "m"),))
    assert _says(usage) == "failed: 1 usage error"


def test_compare() -> None:
    assert _says(Report("compare", (), Summary(inputs=2), Changes())) == (
        "passed: no captured source was added, removed or changed")
    found = (Finding(Code.SOURCE_ADDED, "m", file="n.jsonl", uri="https://a/"),
             Finding(Code.SOURCE_CHANGED, "m", file="n.jsonl", uri="https://b/"),
             Finding(Code.SOURCE_CHANGED, "m", file="n.jsonl", uri="https://c/"))
    changes = Changes(("https://a/",), (), ("https://b/", "https://c/"))
    assert _says(Report("compare", found, Summary(inputs=2), changes)) == (
        "failed: sources compared by stable URI: 1 added, 0 removed, 2 changed")
    # Changes made warnings (--warn TC402) still show: the run passes, saying what changed.
    warned = tuple(replace(f, warned=True) for f in found)
    assert _says(Report("compare", warned, Summary(inputs=2), changes)) == (
        "passed: sources compared by stable URI: 1 added, 0 removed, 2 changed; 3 warnings: "
        "1 source added, 2 sources changed")


def test_stopped_runs_say_what_finished() -> None:
    report = Report("verify-notes", (NOT_FOUND,),
                    Summary(live=Counts(checked=3, matched=2, not_found=1, interrupted=4)),
                    stopped_by=2)
    assert _says(report) == ("stopped by SIGINT: 1 quote not found; 2 quotes verified on live "
                             "pages; not checked: 4 interrupted")
    assert summary_line(report).endswith("; exit 130: stopped by SIGINT")


def test_not_checked_counts_add_up_over_the_kinds() -> None:
    report = Report("hook", (), Summary(captured=Counts(checked=1, matched=1),
                                        live=Counts(skipped=2, unchanged=5),
                                        files=Counts(skipped=1)), stage="online")
    assert _says(report) == ("passed: 1 quote verified against captured content; not "
                             "checked: 3 skipped, 5 unchanged")


@pytest.mark.parametrize(("code", "words"), [
    (0, "exit 0: nothing failed"), (1, "exit 1: input or usage error"), (2, "exit 2: findings"),
    (3, "exit 3: internal error"), (130, "exit 130: stopped by SIGINT"),
    (143, "exit 143: stopped by SIGTERM"), (7, "exit 7"),
])
def test_exit_words(code: int, words: str) -> None:
    assert exit_words(code) == words


def test_every_code_has_words_in_the_verdict() -> None:
    for code in Code:
        said = _says(Report("check", (Finding(code, "m", file="f"),)))
        assert "other finding" not in said, code.code


def test_cli_offline_hook_on_notes_with_a_wrong_quote(cli: Cli, tmp_path: Path) -> None:
    notes = tmp_path / "a.notes"
    notes.write_text("claim: c\nquote: not on that page\nurl: https://example.org/\n")
    run = cli("hook", "--stage", "offline", notes)
    assert run.exit == 0
    last = run.out.splitlines()[-1]
    assert "passed" not in last
    assert last == ("tracecite hook --stage offline: nothing verified: 1 notes record "
                    "format-checked; their quotes are verified online: --stage online; "
                    "exit 0: nothing failed")
