"""The step summary (docs/action.md#the-step-summary): what ran and covered, the verdict, findings
by file with links to their lines, how to fix each code, what was not checked, and everything from
inputs escaped."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tracecite.codes import Code
from tracecite.findings import ArchiveCopy, Counts, Diagnosis, Finding, Report, Summary
from tracecite.reporters.sarif import help_uri
from tracecite.reporters.step_summary import format_step_summary, markdown_text

WORKSPACE = os.getcwd()  # findings name files relative to where the run started
ENV = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "octo/docs",
       "GITHUB_SHA": "0123abc", "GITHUB_WORKSPACE": WORKSPACE}
HOSTILE = "docs/we|ird <b>`x`</b> [a](b) #1\n.notes"


def _every_kind() -> Report:
    """A run with every kind of finding the step summary shows."""
    notes = "docs/site.notes"
    trace = "traces/run.trace.jsonl"
    return Report("hook", (
        Finding(Code.NOTES_MISSING_FIELD, "record has no url field", file=HOSTILE, line=4,
                column=1, record=2),
        Finding(Code.QUOTE_NOT_IN_CAPTURE, "quote is not in the captured content: found when "
                "case is ignored", file=trace, line=3, column=57, claim=1, citation=2,
                source_id="s|1", uri="https://example.org/a?b=[c](d)",
                diagnosis=Diagnosis(("case", "typography"), quote_chars=40, matched_chars=40,
                                    characters=("U+2019 RIGHT SINGLE QUOTATION MARK",))),
        Finding(Code.QUOTE_NOT_ON_PAGE, "quote not on the page; an archived copy has it",
                file=notes, line=7, record=3, uri="https://example.org/gone",
                diagnosis=Diagnosis(("none",), quote_chars=40, matched_chars=3),
                archive=ArchiveCopy("https://web.archive.org/web/20240101000000id_/"
                                    "https://example.org/gone", "20240101000000", True)),
        Finding(Code.CONNECT_FAILED, "connection refused", file=notes, line=12, record=4,
                uri="https://down.example/", attempts=3),
        Finding(Code.SOURCE_BLOCKED, "the site refused an automated client", file=notes,
                line=16, record=5, uri="https://walled.example/", warned=True, cached=True),
        Finding(Code.CACHE_UNUSABLE, "the cache file is corrupt", warned=True),
    ), Summary(inputs=3, records=9, citations=4,
               captured=Counts(checked=4, matched=3, not_found=1),
               live=Counts(checked=11, matched=8, not_found=1, unavailable=2, skipped=2,
                           unchanged=3, cached=5, retried=1, interrupted=0)),
        notices=("no source host resolved: offline? skip the online hook: "
                 "SKIP=tracecite-online",), stage="online")


def test_sample_structure() -> None:
    text = format_step_summary(_every_kind(), ENV)
    lines = text.splitlines()
    assert lines[0] == "### TraceCite: `tracecite hook --stage online`"
    assert lines[2].startswith("**failed**: 1 notes format error, ")
    assert lines[2].endswith(" (exit 1: input or usage error)")
    assert "Stage `online` read 3 files: 9 notes records, 4 trace citations." in lines
    heads = [line for line in lines if line.startswith("#### ")]
    assert heads == [
        # Grouped by file, in the reporters' order: input errors first, then by file.
        f"#### {markdown_text(HOSTILE)} (1 finding)",
        "#### Not in a file (1 finding)",
        "#### docs/site&#46;notes (3 findings)",
        "#### traces/run&#46;trace&#46;jsonl (1 finding)",
        "#### How to fix",
        "#### Not checked",
    ]
    # The counts of each kind of check that ran.
    assert "| against captured content | 4 | 3 | 1 | 0 | 0 | 0 | 0 | 0 | 0 |" in lines
    assert "| on live pages | 11 | 8 | 1 | 2 | 2 | 3 | 5 | 1 | 0 |" in lines
    assert "- no source host resolved&#58; offline? skip the online hook&#58; " \
           "SKIP=tracecite-online" in lines


def test_links_to_the_line_at_the_commit() -> None:
    text = format_step_summary(_every_kind(), ENV)
    assert ("| [7](https://github.com/octo/docs/blob/0123abc/docs/site.notes#L7) | "
            "TC210 quote-not-on-page |") in text
    assert "[3:57](https://github.com/octo/docs/blob/0123abc/traces/run.trace.jsonl#L3)" in text
    # The path is URL-escaped: nothing of a hostile name survives in the link.
    link = re.search(r"\[4:1\]\(([^)]*)\)", text)
    assert link is not None
    assert link[1] == ("https://github.com/octo/docs/blob/0123abc/docs/we%7Cird%20%3Cb%3E%60x"
                       "%60%3C/b%3E%20%5Ba%5D%28b%29%20%231%0A.notes#L4")


@pytest.mark.parametrize("unset", ["GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"])
def test_no_links_without_the_variables(unset: str) -> None:
    env = {k: v for k, v in ENV.items() if k != unset}
    text = format_step_summary(_every_kind(), env)
    assert "](https://github.com/octo" not in text
    assert "| 7 | TC210 quote-not-on-page |" in text


def test_no_link_outside_the_workspace(tmp_path: Path) -> None:
    report = Report("check", (Finding(Code.NOTES_BAD_LINE, "m", file=str(tmp_path / "x.notes"),
                                      line=1),))
    text = format_step_summary(report, {**ENV, "GITHUB_WORKSPACE": str(tmp_path / "repo")})
    assert "| 1 | TC110 notes-bad-line |" in text
    assert "/blob/" not in text.replace("/blob/main/docs/codes.md#", "")  # only the registry's


def test_details_diagnosis_archive_and_cache() -> None:
    rows = {line.split(" | ")[1]: line for line in
            format_step_summary(_every_kind(), ENV).splitlines() if line.startswith("| [")
            or line.startswith("| - |")}
    assert "near miss&#58; case, typography" in rows["TC202 quote-not-in-capture"]
    assert "found when case is ignored" in rows["TC202 quote-not-in-capture"]
    missed = rows["TC210 quote-not-on-page"]
    assert "near miss&#58; none" in missed
    assert ("archived copy 20240101000000 has the quote&#58; https&#58;//web&#46;archive&#46;"
            "org/web/20240101000000id&#95;/https&#58;//example&#46;org/gone") in missed
    assert rows["TC319 source-blocked (warning)"].endswith("; cached |")
    assert "3 attempts" in rows["TC311 connect-failed"]


def test_one_fix_line_per_code_from_the_registry() -> None:
    text = format_step_summary(_every_kind(), ENV)
    fixes = text.split("#### How to fix\n\n")[1].split("\n\n")[0].splitlines()
    codes = [Code.CACHE_UNUSABLE, Code.NOTES_MISSING_FIELD, Code.QUOTE_NOT_IN_CAPTURE,
             Code.QUOTE_NOT_ON_PAGE, Code.CONNECT_FAILED, Code.SOURCE_BLOCKED]
    assert fixes == [f"- [**{c.code} {c.label}**]({help_uri(c)}) (1×): {c.fix}" for c in codes]


def test_what_was_not_checked_and_why() -> None:
    text = format_step_summary(_every_kind(), ENV)
    section = text.split("#### Not checked\n\n")[1].splitlines()
    # Cached quotes were checked (their verdicts kept): counted there, never as not checked.
    assert [line.split(":")[0] for line in section] == ["- 2 skipped", "- 3 unchanged"]
    assert ("5 checked quotes have their verdict from the cache (`--cache`): not fetched again "
            "while younger than `--cache-max-age`.") in text.split("#### Not checked")[0]
    interrupted = Report("verify-notes", (), Summary(live=Counts(checked=1, matched=1,
                                                                 interrupted=4)), stopped_by=15)
    text = format_step_summary(interrupted, {})
    assert "- 4 interrupted: the run was stopped before they were checked" in text
    assert "**stopped by SIGTERM**" in text and "(exit 143: stopped by SIGTERM)" in text


def test_a_run_that_verified_nothing_says_so() -> None:
    text = format_step_summary(Report("hook", (), Summary(inputs=1, records=2),
                                      stage="offline"), ENV)
    assert ("**nothing verified**: 2 notes records format-checked; their quotes are verified "
            "online&#58; --stage online (exit 0: nothing failed)") in text
    assert "No quote was checked." in text
    assert "passed" not in text


@pytest.mark.parametrize("name", [
    "a|b", "<script>x</script>", "`code`", "[x](javascript:y)", "![i](http://e/)", "a\nb",
    "a\r\n| x | y |", "**bold** _it_ ~~s~~", "#1 @someone", "$x^2$", "\\|", "&amp;", "<!--",
    "https://evil.example/", "www.evil.example", "\x1b[31m", "\u202e",
])
def test_everything_from_inputs_is_escaped(name: str) -> None:
    report = Report("check", (Finding(Code.QUOTE_NOT_IN_CAPTURE, f"m {name}", file=name, line=1,
                                      source_id=name, uri=name),))
    text = format_step_summary(report, ENV)
    section = text.split("\n#### ", 2)[1]  # the file's own section: heading and table
    heading, table = section.split("\n\n")[:2]
    assert heading == f"{markdown_text(name)} (1 finding)"
    row = table.splitlines()[-1]
    assert row.count("|") == 5  # no cell adds or ends a column
    # Outside the character references, nothing Markdown or a terminal would act on is left.
    shown = re.sub(r"&#\d+;", "", heading + row.split(" | ", 2)[2])
    assert not any(char in shown for char in "<>`[]*_~#$&\n\r\x1b\u202e"), shown
    assert "https://" not in shown and "www." not in shown


def test_markdown_text() -> None:
    assert markdown_text("plain words, 42 of them") == "plain words, 42 of them"
    assert markdown_text("a|b") == "a&#124;b"
    assert markdown_text("x\ny") == "x&#92;ny"  # one line: the escape shows as \n
    assert markdown_text("&lt;") == "&#38;lt;"  # a reference in the input stays text


def test_rendered_by_githubs_markdown() -> None:
    """With GitHub's own Markdown (cmark-gfm, when installed): the only links are the line
    links and the registry's, the only tags the table's, and every hostile name is text."""
    cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmark-gfm renders GitHub's Markdown")
    report = _every_kind()
    html = cmarkgfm.github_flavored_markdown_to_html(format_step_summary(report, ENV))
    links = re.findall(r'<a href="([^"]*)"', html)
    assert links, html
    assert all(link.startswith(("https://github.com/octo/docs/blob/0123abc/",
                                "https://github.com/tracecite/tracecite/blob/main/docs/codes.md#tc"))
               for link in links)
    tags = set(re.findall(r"<(/?[a-z0-9]+)", html))
    assert tags <= {"h3", "/h3", "h4", "/h4", "p", "/p", "strong", "/strong", "code", "/code",
                    "table", "/table", "thead", "/thead", "tbody", "/tbody", "tr", "/tr",
                    "th", "/th", "td", "/td", "ul", "/ul", "li", "/li", "a", "/a"}
    assert "we|ird &lt;b&gt;`x`&lt;/b&gt; [a](b) #1\\n.notes" in html
    rows = re.findall(r"<tr>(.*?)</tr>", html, flags=re.DOTALL)
    assert all(row.count("<td") in (0, 4, 10) for row in rows)


def test_counts_of_one_are_singular() -> None:
    report = Report("check", (), Summary(inputs=1, records=1, citations=1))
    assert "read 1 file: 1 notes record, 1 trace citation." in format_step_summary(report, {})


def test_deferred_and_cached_findings_say_so_in_every_format() -> None:
    """"failure k of N" and "cached" in the console, the annotations, the step summary and
    SARIF, not only in JSON."""
    import json

    from tracecite.reporters import REPORTERS, OutputStyle

    report = Report("verify-notes", (
        Finding(Code.TIMEOUT, "timed out", file="a.notes", line=7, record=2, uri="https://y/",
                failures=2, fail_after=3, warned=True),
        Finding(Code.QUOTE_NOT_ON_PAGE, "not on the page", file="a.notes", line=2, record=1,
                uri="https://x/", cached=True)))
    for fmt in ("console", "github", "sarif"):
        text = REPORTERS[fmt](report, OutputStyle())
        if fmt == "sarif":
            text = " ".join(r["message"]["text"] for r in json.loads(text)["runs"][0]["results"])
        assert "failure 2 of 3" in text and "cached" in text, fmt
    summary = format_step_summary(report, {})
    assert "failure 2 of 3" in summary and "; cached |" in summary
