"""Reporters: a :class:`~tracecite.findings.Report` in, text out (they never print).

Chosen by name from :data:`REPORTERS`; each formats the whole report at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tracecite.findings import Counts, Report


@dataclass(frozen=True)
class OutputStyle:
    """How the console reporter may draw: colour (only on a terminal) and quiet."""

    color: bool = False
    quiet: bool = False


Reporter = Callable[[Report, OutputStyle], str]


_WHERE = {"captured": "against captured content", "live": "on live pages",
          "files": "in local files"}


def summary_line(report: Report) -> str:
    """One line of counts for the end of a run: each kind of check that ran, apart."""
    head = f"tracecite {report.command}: {_count(len(report.findings), 'finding')}"
    if report.warnings:
        head += f" ({_count(report.warnings, 'warning')})"
    if report.changes is not None:
        c = report.changes
        body = f"{len(c.added)} added, {len(c.removed)} removed, {len(c.changed)} changed"
    else:
        parts = [_kind_phrase(kind, counts)
                 for kind, counts in report.summary.kinds().items() if counts]
        body = "; ".join(parts) or "no quote checked"
    return f"{head}; {body}; exit {report.exit_code}"


def _kind_phrase(kind: str, counts: Counts) -> str:
    phrase = f"{_count(counts.checked, 'quote')} checked {_WHERE[kind]}, {counts.matched} matched"
    for name, words in (("not_found", "not found"), ("unavailable", "with the source unavailable"),
                        ("skipped", "skipped"), ("cached", "cached"),
                        ("unchanged", "unchanged"), ("interrupted", "interrupted")):
        if getattr(counts, name):
            phrase += f", {getattr(counts, name)} {words}"
    return phrase


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
