"""Reporters: a :class:`~tracecite.findings.Report` in, text out (they never print).

Chosen by name from :data:`REPORTERS`; each formats the whole report at once, and
:func:`write_report` writes one to a stream (JSON a finding at a time, never built whole).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from tracecite.findings import Report
from tracecite.reporters.style import OutputStyle

__all__ = ["REPORTERS", "OutputStyle", "Reporter", "summary_line", "write_report"]

Reporter = Callable[[Report, OutputStyle], str]


def summary_line(report: Report) -> str:
    """The end of a run in one line (:func:`tracecite.reporters.verdict.summary_line`)."""
    from tracecite.reporters.verdict import summary_line as line

    return line(report)


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
"""Every output format by its ``--format`` name: one per name of
:data:`~tracecite.report_formats.REPORT_FORMATS`, which the option checks read without importing
the reporters."""


def write_report(fmt: str, report: Report, style: OutputStyle, stream: TextIO) -> None:
    """Write the report in ``fmt`` to ``stream``: the text of ``REPORTERS[fmt]``, the JSON
    report written a finding at a time (a million findings never make one string)."""
    if fmt == "json":
        from tracecite.reporters.json import write_json

        write_json(report, stream)
    else:
        stream.write(REPORTERS[fmt](report, style))
