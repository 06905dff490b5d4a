"""``--format github``: workflow commands for annotations and notices, and the step summary.

GitHub shows at most 10 annotations of each level per step: errors and warnings have budgets of
their own, so a warning after ten errors is still annotated. Within a level the most useful
findings come first (input errors, then by file and line) and, when there are more than ten,
the tenth annotation says how many more there are; every finding is in the step summary and in
the log (docs/reference/reports.md#github-annotations).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tracecite.findings import Finding, Report
from tracecite.reporters.escape import location, marks, position, printable, subject
from tracecite.reporters.verdict import summary_line

ANNOTATION_LIMIT = 10


def escape_data(text: str) -> str:
    """The toolkit's escaping of a command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """The toolkit's escaping of a command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _message(finding: Finding) -> str:
    return printable("; ".join([finding.message, *position(finding), *subject(finding),
                                *marks(finding)]))


def annotation(finding: Finding) -> str:
    """One ``::error`` (or, for a warning, ``::warning``) workflow command for a finding."""
    props = []
    if finding.file is not None:
        # An ordinary path is kept exactly (backslashes too) so the annotation finds its file.
        # Line breaks are left to the toolkit's escaping; other control characters are not.
        file = finding.file
        if not file.replace("\r", "").replace("\n", "").isprintable() or "##[" in file:
            file = printable(file)
        props.append(f"file={escape_property(file)}")
    if finding.line is not None:
        props.append(f"line={finding.line}")
    if finding.column is not None:
        props.append(f"col={finding.column}")
    props.append(f"title={escape_property(f'{finding.code.code} {finding.code.label}')}")
    return f"::{finding.severity} {','.join(props)}::{escape_data(_message(finding))}"


def _plain(finding: Finding) -> str:
    """A log line for a finding that is not annotated. It is no workflow command, so the
    toolkit's escaping would only garble it (``100%.md`` shown as ``100%25.md``): names are
    shown as :func:`printable` makes them, which keeps line breaks out."""
    where = location(finding) or "-"
    # The runner trims leading whitespace before it looks for "::", so the leading space alone
    # does not keep a name from starting a workflow command; an escaped first colon does.
    if where.startswith(":"):
        where = "\\x3a" + where[1:]
    return (f" {where}: {finding.code.code} {finding.code.label}{_tag(finding)}: "
            f"{_message(finding)}")


def _tag(finding: Finding) -> str:
    return " (warning)" if finding.severity == "warning" else ""


def notice(text: str) -> str:
    """A ``::notice::`` workflow command for a line about the whole run."""
    return f"::notice title=TraceCite::{escape_data(printable(text))}"


def format_github(report: Report) -> str:
    """Annotations (at most ten errors and ten warnings), the rest as plain log lines, the
    run's notices, and the verdict line."""
    findings = report.sorted_findings()
    lines: list[str] = []
    annotated: set[int] = set()
    for level, plural in (("error", "errors"), ("warning", "warnings")):
        of_level = [n for n, f in enumerate(findings) if f.severity == level]
        shown = of_level if len(of_level) <= ANNOTATION_LIMIT else of_level[:ANNOTATION_LIMIT - 1]
        lines.extend(annotation(findings[n]) for n in shown)
        annotated.update(shown)
        if len(shown) < len(of_level):
            lines.append(f"::{level} title=TraceCite::{len(of_level) - len(shown)} more "
                         f"{plural} are not annotated here: see the step summary or the log "
                         "below")
    lines.extend(_plain(f) for n, f in enumerate(findings) if n not in annotated)
    lines.extend(notice(text) for text in report.notices)
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def step_summary(report: Report, environ: Mapping[str, str] | None = None) -> str:
    """The Markdown step summary (``$GITHUB_STEP_SUMMARY``) of a run; see
    :mod:`tracecite.reporters.step_summary`. ``environ``: the Actions variables that make links to
    the lines at the commit (default: this process's environment)."""
    from tracecite.reporters.step_summary import format_step_summary

    return format_step_summary(report, os.environ if environ is None else environ)
