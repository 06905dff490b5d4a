"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning, one rule per registry code."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

from tracecite import __version__
from tracecite.codes import Code
from tracecite.findings import Finding, Report
from tracecite.reporters.escape import printable
from tracecite.reporters.json import safe_json

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/tracecite/tracecite"
_RULES = list(Code)
_RULE_INDEX = {code: i for i, code in enumerate(_RULES)}


def _rule(code: Code) -> dict[str, Any]:
    return {
        "id": code.code,
        "name": code.label,
        "shortDescription": {"text": f"{code.code} {code.label}"},
        "fullDescription": {"text": code.when},
        "helpUri": f"{INFORMATION_URI}#code-registry",
        "defaultConfiguration": {"level": "warning" if code.exit == 0 else "error"},
        "properties": {"exitCode": code.exit},
    }


def _artifact_uri(path: str) -> dict[str, str]:
    # The file system's bytes, so a name that is not UTF-8 (a lone surrogate from
    # surrogateescape) is escaped like any other byte instead of failing to encode.
    escaped = quote(os.fsencode(path.replace(os.sep, "/")))
    if os.path.isabs(path):
        return {"uri": "file://" + escaped}
    return {"uri": escaped, "uriBaseId": "%SRCROOT%"}


def _result(finding: Finding) -> dict[str, Any]:
    text = finding.message  # escaped once, below, with what is added to it
    if finding.source_id is not None:
        text += f" (source {finding.source_id})"
    if finding.uri is not None:
        text += f" (uri {finding.uri})"
    result: dict[str, Any] = {
        "ruleId": finding.code.code,
        "ruleIndex": _RULE_INDEX[finding.code],
        "level": finding.severity,
        "message": {"text": printable(text)},
    }
    if finding.file is not None:
        location: dict[str, Any] = {"artifactLocation": _artifact_uri(finding.file)}
        if finding.line is not None:
            region: dict[str, int] = {"startLine": finding.line}
            if finding.column is not None:
                region["startColumn"] = finding.column
            location["region"] = region
        result["locations"] = [{"physicalLocation": location}]
    properties = {k: getattr(finding, k) for k in ("record", "claim", "citation", "status")
                  if getattr(finding, k) is not None}
    if properties:
        result["properties"] = properties
    return result


def format_sarif(report: Report) -> str:
    """The report as a SARIF 2.1.0 log with one run."""
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "TraceCite",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(code) for code in _RULES],
            }},
            "automationDetails": {"id": f"tracecite/{report.command}/"},
            "columnKind": "unicodeCodePoints",
            "results": [_result(f) for f in report.sorted_findings()],
            "invocations": [{"executionSuccessful": report.exit_code in (0, 2),
                             "exitCode": report.exit_code}],
        }],
    }
    return safe_json(log)
