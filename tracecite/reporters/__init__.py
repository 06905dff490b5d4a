"""Reporters: a :class:`~tracecite.findings.Report` in, text out (they never print).

Chosen by name from :data:`REPORTERS`; each formats the whole report at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tracecite.findings import Report


@dataclass(frozen=True)
class OutputStyle:
    """How the console reporter may draw: colour (only on a terminal) and quiet."""

    color: bool = False
    quiet: bool = False


Reporter = Callable[[Report, OutputStyle], str]


def summary_line(report: Report) -> str:
    """One line of counts for the end of a run."""
    s = report.summary
    head = f"tracecite {report.command}: {_count(len(report.findings), 'finding')}"
    if report.changes is not None:
        c = report.changes
        body = f"{len(c.added)} added, {len(c.removed)} removed, {len(c.changed)} changed"
    else:
        body = f"{_count(s.checked, 'quote')} checked, {s.matched} matched"
        if s.unavailable:
            body += f", {s.unavailable} with the source unavailable"
        if s.skipped:
            body += f", {s.skipped} skipped"
    return f"{head}; {body}; exit {report.exit_code}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _console(report: Report, style: OutputStyle) -> str:
    from tracecite.reporters.console import format_console

    return format_console(report, style)


def _json(report: Report, style: OutputStyle) -> str:
    from tracecite.reporters.json import format_json

    return format_json(report)


def _github(report: Report, style: OutputStyle) -> str:
    from tracecite.reporters.github import format_github

    return format_github(report)


def _sarif(report: Report, style: OutputStyle) -> str:
    from tracecite.reporters.sarif import format_sarif

    return format_sarif(report)


# Imports are deferred so a run pays only for the reporter it uses (rich is slow to import).
REPORTERS: dict[str, Reporter] = {
    "console": _console,
    "json": _json,
    "github": _github,
    "sarif": _sarif,
}
"""Every output format by its ``--format`` name."""
