"""``--format github``: workflow commands for annotations, and a Markdown step summary.

GitHub shows at most 10 error annotations per step, so the most useful findings come first
(input errors, then by file and line) and the tenth annotation says how many more there are;
every finding is in the step summary table and in the log.
"""

from __future__ import annotations

from tracecite.findings import Finding, Report
from tracecite.reporters import summary_line
from tracecite.reporters.escape import position, printable, subject

ANNOTATION_LIMIT = 10


def escape_data(text: str) -> str:
    """The toolkit's escaping of a command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """The toolkit's escaping of a command's property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _message(finding: Finding) -> str:
    return printable("; ".join([finding.message, *position(finding), *subject(finding)]))


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
    where = printable(finding.file or "-")
    if finding.line is not None:
        where += f":{finding.line}"
    # The runner trims leading whitespace before it looks for "::", so the leading space alone
    # does not keep a name from starting a workflow command; an escaped first colon does.
    if where.startswith(":"):
        where = "\\x3a" + where[1:]
    return escape_data(f" {where}: {finding.code.code} {finding.code.label}{_tag(finding)}: "
                       f"{_message(finding)}")


def _tag(finding: Finding) -> str:
    return " (warning)" if finding.severity == "warning" else ""


def format_github(report: Report) -> str:
    """Annotations (at most ten), the rest as plain log lines, and a closing summary line."""
    findings = report.sorted_findings()
    lines: list[str] = []
    if len(findings) <= ANNOTATION_LIMIT:
        lines.extend(annotation(f) for f in findings)
    else:
        shown = ANNOTATION_LIMIT - 1
        lines.extend(annotation(f) for f in findings[:shown])
        rest = len(findings) - shown
        lines.append(
            f"::error title=TraceCite::{rest} more findings are not annotated here: "
            "see the step summary or the log below"
        )
        lines.extend(_plain(f) for f in findings[shown:])
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell: no markup, no pipes, no line breaks."""
    text = printable(text)
    for char, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "&#124;"),
                         ("`", "&#96;"), ("[", "&#91;"), ("]", "&#93;"), ("*", "&#42;"),
                         ("_", "&#95;"), ("\\", "&#92;")):
        text = text.replace(char, entity)
    return text


def step_summary(report: Report) -> str:
    """A Markdown section with every finding, for ``$GITHUB_STEP_SUMMARY``."""
    findings = report.sorted_findings()
    out = [f"### TraceCite `{report.command}`", "", summary_line(report), ""]
    if not findings:
        out.append("Every check passed.")
        return "\n".join(out) + "\n"
    out.append("| code | file | line | where | message |")
    out.append("|---|---|---|---|---|")
    for f in findings:
        where = [*position(f), *subject(f)]
        out.append(
            f"| {f.code.code} {f.code.label}{_tag(f)} | {_cell(f.file or '')} | "
            f"{'' if f.line is None else f.line} | {_cell(', '.join(where))} | "
            f"{_cell(f.message)} |"
        )
    return "\n".join(out) + "\n"
