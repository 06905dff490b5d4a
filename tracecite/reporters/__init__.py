"""Reporters: a :class:`~tracecite.findings.Report` in, text out (they never print).

Chosen by name from :data:`REPORTERS`; each formats the whole report at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tracecite.findings import Report


@dataclass(frozen=True)
class OutputStyle:
    """How a reporter may draw: colour (only on a terminal) and quiet for the console; the
    SARIF run's category (``--sarif-category``; None: ``tracecite/COMMAND``)."""

    color: bool = False
    quiet: bool = False
    sarif_category: str | None = None


Reporter = Callable[[Report, OutputStyle], str]


def summary_line(report: Report) -> str:
    """The end of a run in one line: the command, its verdict in plain words (see
    :mod:`tracecite.reporters.verdict`) and the exit code with what it means."""
    from tracecite.reporters.verdict import command_line, exit_words, verdict

    return f"{command_line(report)}: {verdict(report)}; {exit_words(report.exit_code)}"


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

    return format_sarif(report, category=style.sarif_category)


# Imports are deferred so a run pays only for the reporter it uses (rich is slow to import).
REPORTERS: dict[str, Reporter] = {
    "console": _console,
    "json": _json,
    "github": _github,
    "sarif": _sarif,
}
"""Every output format by its ``--format`` name."""
