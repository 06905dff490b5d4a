"""``--format console``: findings grouped by file, for people; colour only on a terminal.

Each finding's line starts with ``path:line:col`` (``notes.md:12:7``, ``notes.md:12`` without
a column), the form terminals and editors turn into a link to the line, and ends with how its
verdict came (``cached``, ``failure 1 of 3``). A ``fix:`` line per code that occurs follows the
findings, then a line per document ``check --docs`` lists (not with ``--quiet``), the run's
notices, and the verdict in plain words ends the output.
"""

from __future__ import annotations

import io

from tracecite.findings import Finding, ListedDocument, Report
from tracecite.reporters.escape import location, marks, position, printable, subject
from tracecite.reporters.style import OutputStyle
from tracecite.reporters.verdict import (
    FAILED,
    PASSED,
    codes_that_occur,
    command_line,
    exit_words,
    verdict,
)


def _details(finding: Finding) -> str:
    parts = [*subject(finding), *marks(finding)]
    return f" [{printable('; '.join(parts))}]" if parts else ""


def _message(finding: Finding) -> str:
    where = ", ".join(position(finding))
    return f"{where}: {printable(finding.message)}" if where else printable(finding.message)


def listing_line(document: ListedDocument) -> str:
    """The console's one line about a document ``check --docs`` lists: each citation's line and
    column, form and source link, a text directive named but never shown (it holds the quote's
    words); the file name and links made printable (:func:`printable`)."""
    parts = []
    cited = 0
    for c in document.listed():
        cited += 1
        part = f"{c.line}:{c.column} {c.form} {c.source}"
        if c.directive:
            part += " (text directive)"
        if c.ignored:
            part += " (ignored)"
        parts.append(part)
    head = f"{document.file}: {cited} citation{'' if cited == 1 else 's'}"
    line = f"{head}: {'; '.join(parts)}" if parts else head
    return printable(line)


Line = list[tuple[str, str]]
"""One line of output: its pieces, each with a rich style ("" for none)."""

_HEAD_COLOUR = {PASSED: "bold green", FAILED: "bold red"}


def format_console(report: Report, style: OutputStyle) -> str:
    """Findings by file, one ``fix:`` line per code that occurs (the registry's text), one line
    per listed document (not with ``quiet``), the run's notices, then the verdict line (all
    left out with ``quiet`` when there is neither a finding nor a notice)."""
    lines: list[Line] = []
    findings = report.sorted_findings()
    # One group per file, in the order the files first appear (input errors come first).
    groups: dict[str | None, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.file, []).append(finding)
    for file, group in groups.items():
        lines.append([(printable(file) if file is not None else "(no file)", "bold")])
        for finding in group:
            colour = {0: "cyan", 2: "yellow"}.get(finding.exit, "red")
            tag = " (warning)" if finding.severity == "warning" else ""
            where = location(finding)
            lines.append([
                ("  ", ""), (f"{where}  " if where else "", ""),
                (f"{finding.code.code} {finding.code.label}{tag}", colour),
                (f"  {_message(finding)}{_details(finding)}", ""),
            ])
    lines.extend([("fix: ", "bold"), (f"{code.code} {code.label}: {code.fix}", "")]
                 for code, _ in codes_that_occur(findings))
    if not style.quiet:  # the listing of check --docs (docs/reference/reports.md)
        lines.extend([("note: ", "bold"), (listing_line(document), "")]
                     for document in report.documents or ())
    lines.extend([("note: ", "bold"), (printable(notice), "")] for notice in report.notices)
    if not (style.quiet and not findings and not report.notices):
        said = verdict(report)
        lines.append([
            (f"{command_line(report)}: ", ""),
            (said.head, _HEAD_COLOUR.get(said.head, "bold yellow")),
            (f": {said.detail}" if said.detail else "", ""),
            (f"; {exit_words(report.exit_code)}", ""),
        ])
    if not style.color:  # plain text needs no rich, which is slow to import
        return "".join("".join(text for text, _ in line) + "\n" for line in lines)
    return _in_colour(lines)


def _in_colour(lines: list[Line]) -> str:
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", width=10_000,
                      highlight=False, emoji=False, markup=False, soft_wrap=True)
    for line in lines:
        console.print(Text.assemble(*line))
    return buffer.getvalue()
