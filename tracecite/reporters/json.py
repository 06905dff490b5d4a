"""``--format json``: one JSON object (docs/reference/reports.md), the stable machine-readable
report, and :func:`read_report`, which reads it back (``tracecite merge`` combines shards'
reports)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from tracecite import __version__
from tracecite.findings import (
    CHECK_KINDS,
    EXIT_OK,
    ArchiveCopy,
    Changes,
    Counts,
    Diagnosis,
    Finding,
    Report,
    Summary,
)

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
        "runs": s.runs, "not_importable": s.not_importable,
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


# ---- reading a report back -------------------------------------------------------------------

class ReportFormatError(ValueError):
    """A JSON document that is not a TraceCite report of this schema; the message names the
    member that is wrong, never its value."""


def _exit_codes() -> frozenset[int]:
    from tracecite.stops import STOP_SIGNALS

    return frozenset({0, 1, 2, 3, *(128 + signum for signum in STOP_SIGNALS)})


_EXIT_CODES = _exit_codes()
"""The exit codes a report can have (docs/reference/commands.md): 0–3, or 128 + SIGINT or
SIGTERM."""


def read_report(document: object) -> Report:
    """The :class:`Report` a JSON report object (parsed, as :func:`report_dict` writes it)
    stands for: ``read_report(report_dict(r))`` writes back the same document.

    A stopped run's signal comes from its exit code (128 + the signal). Raises
    :class:`ReportFormatError` for anything else than a TraceCite report of schema 2.
    """
    doc = _object(document, "the document")
    if doc.get("tool") != "tracecite":
        raise ReportFormatError("is not a TraceCite report (its tool is not tracecite)")
    if doc.get("schema") != SCHEMA_VERSION:
        raise ReportFormatError(f"is not a report of JSON schema {SCHEMA_VERSION}")
    command = _typed(doc, "command", str)
    exit_code = _typed(doc, "exit_code", int)
    if exit_code not in _EXIT_CODES:
        raise ReportFormatError("exit_code is not a TraceCite exit code")
    findings = tuple(_finding(item, i) for i, item in
                     enumerate(_typed(doc, "findings", list), start=1))
    summary = _summary(_object(doc.get("summary"), "summary"))
    changes = None
    if doc.get("changes") is not None:
        raw = _object(doc["changes"], "changes")
        changes = Changes(*(tuple(_strings(raw, key, "changes")) for key in
                            ("added", "removed", "changed")))
    stage = _optional(doc, "stage", str)
    notices = tuple(_strings(doc, "notices", "the document")) if "notices" in doc else ()
    return Report(command, findings, summary, changes,
                  stopped_by=exit_code - 128 if exit_code > 128 else None, stage=stage,
                  notices=notices, shard=_shard(doc.get("shard")))


def _object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ReportFormatError(f"{where} is not a JSON object")
    return value


def _typed(doc: dict[str, Any], key: str, kind: type, where: str = "the document") -> Any:
    value = doc.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ReportFormatError(f"{where}: {key} is missing or of the wrong type")
    return value


def _optional(doc: dict[str, Any], key: str, kind: type, where: str = "the document") -> Any:
    return None if doc.get(key) is None else _typed(doc, key, kind, where)


def _strings(doc: dict[str, Any], key: str, where: str) -> list[str]:
    values: list[object] = _typed(doc, key, list, where)
    texts = [v for v in values if isinstance(v, str)]
    if len(texts) != len(values):
        raise ReportFormatError(f"{where}: {key} holds a value that is not a string")
    return texts


def _counts(value: object, where: str) -> Counts:
    raw = _object(value, where)
    names = [f.name for f in dataclasses.fields(Counts)]
    return Counts(**{name: _typed(raw, name, int, where) for name in names})


def _summary(raw: dict[str, Any]) -> Summary:
    captured, live, files = (_counts(raw.get(kind), f"summary.{kind}") for kind in CHECK_KINDS)
    summary = Summary(_typed(raw, "inputs", int, "summary"),
                      _typed(raw, "records", int, "summary"),
                      _typed(raw, "citations", int, "summary"), captured, live, files)
    # import's members (docs/guides/importers.md) are absent from reports written before them.
    return dataclasses.replace(summary, **{key: _typed(raw, key, int, "summary")
                                           for key in ("runs", "not_importable") if key in raw})


def _finding(value: object, index: int) -> Finding:
    from tracecite.codes import BY_CODE

    where = f"finding {index}"
    raw = _object(value, where)
    text = raw.get("code")
    code = BY_CODE.get(text) if isinstance(text, str) else None
    if code is None or raw.get("name") != code.label:
        raise ReportFormatError(f"{where}: code and name are not a code of the registry")
    severity = raw.get("severity")
    if severity not in ("error", "warning"):
        raise ReportFormatError(f"{where}: severity is neither error nor warning")
    numbers = {key: _optional(raw, key, int, where) for key in
               ("line", "column", "record", "claim", "citation", "status", "attempts",
                "failures", "fail_after")}
    texts = {key: _optional(raw, key, str, where) for key in
             ("file", "source_id", "uri", "final_url")}
    diagnosis = None
    if raw.get("diagnosis") is not None:
        d = _object(raw["diagnosis"], f"{where}: diagnosis")
        characters = d.get("characters")
        diagnosis = Diagnosis(
            tuple(_strings(d, "kinds", f"{where}: diagnosis")),
            **{key: _optional(d, key, int, f"{where}: diagnosis")
               for key in ("quote_chars", "matched_chars", "first_difference")},
            characters=(None if characters is None
                        else tuple(_strings(d, "characters", f"{where}: diagnosis"))),
            where=_optional(d, "where", str, f"{where}: diagnosis"))
    archive = None
    if raw.get("archive") is not None:
        a = _object(raw["archive"], f"{where}: archive")
        archive = ArchiveCopy(_typed(a, "url", str, f"{where}: archive"),
                              _typed(a, "timestamp", str, f"{where}: archive"),
                              _typed(a, "found", bool, f"{where}: archive"))
    return Finding(code, _typed(raw, "message", str, where), **numbers, **texts,
                   cached=_optional(raw, "cached", bool, where), diagnosis=diagnosis,
                   archive=archive,
                   # A warning made one by the run's settings, not by its code
                   # (docs/web-over-time.md#warnings-and-skips).
                   warned=severity == "warning" and code.exit != EXIT_OK)


def _shard(value: object) -> tuple[int, int] | None:
    if value is None:
        return None
    from tracecite.values import shard

    try:
        return shard(value)
    except ValueError:
        raise ReportFormatError("shard is not K/N") from None
