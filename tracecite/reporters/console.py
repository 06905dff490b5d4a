"""``--format console``: findings grouped by file, for people; colour only on a terminal."""

from __future__ import annotations

import io

from tracecite.findings import Finding, Report
from tracecite.reporters import OutputStyle, summary_line
from tracecite.reporters.escape import position, printable, subject


def _where(finding: Finding) -> str:
    parts = []
    if finding.line is not None:
        parts.append(f"line {finding.line}:{finding.column}" if finding.column
                     else f"line {finding.line}")
    return ", ".join([*parts, *position(finding)]) or "-"


def _details(finding: Finding) -> str:
    parts = subject(finding)
    return f" [{printable('; '.join(parts))}]" if parts else ""


Line = list[tuple[str, str]]
"""One line of output: its pieces, each with a rich style ("" for none)."""


def format_console(report: Report, style: OutputStyle) -> str:
    """Findings by file, then one summary line (left out with ``quiet`` when all passed)."""
    lines: list[Line] = []
    findings = report.sorted_findings()
    # One group per file, in the order the files first appear (input errors come first).
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.file or "(no file)", []).append(finding)
    for file, group in groups.items():
        lines.append([(printable(file), "bold")])
        for finding in group:
            colour = {0: "cyan", 2: "yellow"}.get(finding.exit, "red")
            tag = " (warning)" if finding.severity == "warning" else ""
            lines.append([
                ("  ", ""), (f"{finding.code.code} {finding.code.label}{tag}", colour),
                (f"  {_where(finding)}: {printable(finding.message)}{_details(finding)}", ""),
            ])
    if not (style.quiet and not findings):
        verdict = ("passed", "green") if report.exit_code == 0 else ("failed", "red")
        lines.append([(verdict[0], f"bold {verdict[1]}"), (f" {summary_line(report)}", "")])
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
