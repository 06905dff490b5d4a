"""A report as the JSON object of ``--json`` (docs/reference/reports.md): what
:meth:`Report.to_json <tracecite.findings.Report.to_json>` returns and ``--format json`` prints;
:mod:`tracecite.report_reader` reads it back.

Written from the records' attributes alone: :mod:`tracecite.findings` is imported for its types
only, so that the records can call this module without an import cycle.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from tracecite import __version__

if TYPE_CHECKING:  # the records call this module (Report.to_json): their types only
    from tracecite.findings import Finding, ListedDocument, Report

SCHEMA_VERSION = 2
IMPORT_MEMBERS = ("runs", "not_importable", "uncited", "ignored_blocks", "refused", "skipped")
"""The summary's members of ``import`` (docs/guides/importers.md), in the order written."""
LATER_MEMBERS = (*IMPORT_MEMBERS, "document_citations")
"""The summary's members added after schema 2 began (import's, then the documents' citations:
docs/guides/documents.md): always written; a report written before one of them reads it as 0."""
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
                            for k, v in _members(finding.diagnosis)}
    if finding.archive is not None:
        out["archive"] = dict(_members(finding.archive))
    out["message"] = finding.message
    return out


def _members(record: Any) -> list[tuple[str, Any]]:
    """A flat record's members by name, in field order: ``dataclasses.asdict`` without its deep
    copy of every value (the records hold strings, numbers and tuples of strings)."""
    names = _FIELDS.get(type(record))
    if names is None:
        names = _FIELDS[type(record)] = tuple(f.name for f in dataclasses.fields(record))
    return [(name, getattr(record, name)) for name in names]


_FIELDS: dict[type, tuple[str, ...]] = {}


def document_dict(document: ListedDocument) -> dict[str, Any]:
    """A document of ``check --docs``'s listing as its JSON object (docs/reference/reports.md):
    its file and each citation's members (its place, form, source link, whether the link has
    a text directive and whether it is ignored), never a quote."""
    return {"file": document.file,
            "citations": [dict(_members(citation)) for citation in document.listed()]}


def summary_dict(report: Report) -> dict[str, Any]:
    """The summary object of schema 2: what was read, the findings, and per kind of check."""
    s = report.summary
    return {
        "inputs": s.inputs, "records": s.records, "citations": s.citations,
        "findings": len(report.findings), "errors": report.errors,
        "warnings": report.warnings,
        **{kind: counts.as_dict() for kind, counts in s.kinds().items()},
        **{key: getattr(s, key) for key in LATER_MEMBERS},
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
        # Which shard of a sharded run (docs/guides/scale.md); null when unsharded or merged whole.
        "shard": f"{report.shard[0]}/{report.shard[1]}" if report.shard is not None else None,
        # What the run read and the options that decided its verdicts: merge tells the shards
        # of one run by it (docs/reference/reports.md#the-run); null before the inputs were read.
        "run": ({"inputs_digest": report.run.inputs_digest,
                 "options_digest": report.run.options_digest}
                if report.run is not None else None),
    }
    if report.stage is not None:  # hook runs: which stage ran (docs/action.md#the-step-summary)
        out["stage"] = report.stage
    if report.notices:
        out["notices"] = list(report.notices)
    if report.changes is not None:
        out["changes"] = {
            "added": list(report.changes.added),
            "removed": list(report.changes.removed),
            "changed": list(report.changes.changed),
        }
    if report.documents is not None:  # check --docs (docs/reference/reports.md)
        out["documents"] = [document_dict(d) for d in report.documents]
    return out
