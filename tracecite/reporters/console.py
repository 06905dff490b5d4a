"""``--format console``: findings grouped by file, for people; colour only on a terminal."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from tracecite.findings import Finding, Report
from tracecite.reporters import OutputStyle
from tracecite.reporters.escape import position, printable, subject
from tracecite.reporters.github import summary_line


def _where(finding: Finding) -> str:
    parts = []
    if finding.line is not None:
        parts.append(f"line {finding.line}:{finding.column}" if finding.column
                     else f"line {finding.line}")
    return ", ".join([*parts, *position(finding)]) or "-"


def _details(finding: Finding) -> str:
    parts = subject(finding)
    return f" [{printable('; '.join(parts))}]" if parts else ""


def format_console(report: Report, style: OutputStyle) -> str:
    """Findings by file, then one summary line (left out with ``quiet`` when all passed)."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=style.color, no_color=not style.color,
                      color_system="standard" if style.color else None, width=10_000,
                      highlight=False, emoji=False, markup=False, soft_wrap=True)
    findings = report.sorted_findings()
    # One group per file, in the order the files first appear (input errors come first).
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.file or "(no file)", []).append(finding)
    for file, group in groups.items():
        console.print(Text(printable(file), style="bold"))
        for finding in group:
            colour = "red" if finding.exit != 2 else "yellow"
            console.print(Text.assemble(
                "  ", (f"{finding.code.code} {finding.code.label}", colour),
                f"  {_where(finding)}: ", printable(finding.message), _details(finding),
            ))
    if not (style.quiet and not findings):
        verdict = ("passed", "green") if report.exit_code == 0 else ("failed", "red")
        console.print(Text.assemble((verdict[0], f"bold {verdict[1]}"), " ",
                                    summary_line(report)))
    return buffer.getvalue()
