"""``--format json``: one JSON object (SPEC §5), the stable machine-readable report."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from tracecite import __version__
from tracecite.findings import Finding, Report

SCHEMA_VERSION = 2
_OPTIONAL = ("record", "claim", "citation", "source_id", "uri", "status", "final_url",
             "attempts", "cached", "failures", "fail_after")


def finding_dict(finding: Finding) -> dict[str, Any]:
    """A finding as its JSON object: fixed keys always, the others only where they apply."""
    out: dict[str, Any] = {
        "code": finding.code.code,
        "name": finding.code.label,
        "severity": finding.severity,
        "exit": finding.exit,
        "file": finding.file,
        "line": finding.line,
        "column": finding.column,
    }
    for key in _OPTIONAL:
        value = getattr(finding, key)
        if value is not None:
            out[key] = value
    if finding.diagnosis is not None:
        out["diagnosis"] = {k: list(v) if isinstance(v, tuple) else v
                            for k, v in dataclasses.asdict(finding.diagnosis).items()}
    if finding.archive is not None:
        out["archive"] = dataclasses.asdict(finding.archive)
    out["message"] = finding.message
    return out


def summary_dict(report: Report) -> dict[str, Any]:
    """The summary object of schema 2: what was read, the findings, and per kind of check."""
    s = report.summary
    return {
        "inputs": s.inputs, "records": s.records, "citations": s.citations,
        "findings": len(report.findings), "errors": report.errors,
        "warnings": report.warnings,
        **{kind: counts.as_dict() for kind, counts in s.kinds().items()},
    }


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as the JSON document's object."""
    findings = report.sorted_findings()
    out: dict[str, Any] = {
        "tool": "tracecite",
        "version": __version__,
        "schema": SCHEMA_VERSION,
        "command": report.command,
        "exit_code": report.exit_code,
        "summary": summary_dict(report),
        "findings": [finding_dict(f) for f in findings],
    }
    if report.stage is not None:  # hook runs: which stage ran (SPEC §8.5)
        out["stage"] = report.stage
    if report.notices:
        out["notices"] = list(report.notices)
    if report.changes is not None:
        out["changes"] = {
            "added": list(report.changes.added),
            "removed": list(report.changes.removed),
            "changed": list(report.changes.changed),
        }
    return out


def format_json(report: Report) -> str:
    """The report as JSON text; ``ensure_ascii`` keeps control characters escaped."""
    return safe_json(report_dict(report))


def safe_json(document: object) -> str:
    """JSON text that is safe in a GitHub Actions log, decoding to the same values.

    Control characters are escaped (``ensure_ascii``), and so is the ``#`` of every ``##[`` (the
    runner reads the legacy ``##[command]`` anywhere in a line). ``#`` and ``[`` never occur
    in JSON outside strings, nor inside an escape sequence, so this changes strings only.
    """
    text = json.dumps(document, indent=2, ensure_ascii=True)
    return text.replace("##[", "#\\u0023[") + "\n"
