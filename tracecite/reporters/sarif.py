"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning, one rule per registry code.

Every rule carries the registry's help (what the code means and how to fix it) and a
``helpUri`` to the code's own row in docs/codes.md. Every result has a location, with a
``region.startLine`` (1 for a finding about a whole file), and an artifact URI relative to the
repository root (``uriBaseId: "%SRCROOT%"``, the root in ``originalUriBaseIds``) for a file under
it, so code scanning finds the file wherever the run started; findings without a file
(a bad command line, git, the configuration) go to the invocation's
``toolExecutionNotifications`` with the run's notices, because GitHub rejects a result without
a location. ``--sarif-category`` sets ``automationDetails.id``, so two workflows of one
repository keep their alerts apart (github/codeql-action/upload-sarif's own ``category`` is
used only for a run that has no ``automationDetails``).
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

from tracecite import __version__
from tracecite.codes import Code
from tracecite.findings import Finding, Report
from tracecite.reporters.escape import marks, position, printable, subject
from tracecite.reporters.json import safe_json

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/tracecite/tracecite"
_RULES = list(Code)
_RULE_INDEX = {code: i for i, code in enumerate(_RULES)}


REGISTRY_URI = f"{INFORMATION_URI}/blob/main/docs/codes.md"
"""The code registry's page (docs/codes.md) on GitHub."""


def help_uri(code: Code) -> str:
    """Where a code is explained: its row in the code registry, docs/codes.md."""
    return f"{REGISTRY_URI}#{code.anchor}"


def _rule(code: Code) -> dict[str, Any]:
    return {
        "id": code.code,
        "name": code.label,
        "shortDescription": {"text": f"{code.code} {code.label}"},
        "fullDescription": {"text": code.when},
        "help": {
            "text": f"{code.code} {code.label}: {code.when}. How to fix: {code.fix}",
            "markdown": f"**{code.code} {code.label}**: {code.when}.\n\n"
                        f"**How to fix:** {code.fix}\n\n"
                        f"[{code.code} in the code registry]({help_uri(code)})",
        },
        "helpUri": help_uri(code),
        "defaultConfiguration": {"level": "warning" if code.exit == 0 else "error"},
        "properties": {"exitCode": code.exit},
    }


def category_id(category: str | None, command: str) -> str:
    """``automationDetails.id``: the category followed by ``/`` (the form GitHub reads as a
    category with no run id); without one, ``tracecite/COMMAND/``."""
    if category is None:
        return f"tracecite/{command}/"
    return category if category.endswith("/") else category + "/"


def repository_root(start: str | None = None) -> str:
    """The repository root that artifact URIs are relative to: the nearest folder at or above
    ``start`` (default: the current directory) that holds ``.git`` (a folder, or the file of a
    worktree), else ``start`` itself."""
    here = os.path.abspath(start if start is not None else os.getcwd())
    folder = here
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return here
        folder = parent


def _file_uri(path: str) -> str:
    # The file system's bytes, so a name that is not UTF-8 (a lone surrogate from
    # surrogateescape) is escaped like any other byte instead of failing to encode.
    return quote(os.fsencode(path.replace(os.sep, "/")))


def _absolute_uri(path: str) -> str:
    """A ``file:`` URI of an absolute path (``file:///C:/…`` on Windows)."""
    uri = _file_uri(path)
    return "file://" + (uri if uri.startswith("/") else "/" + uri)


def _artifact_uri(path: str, root: str) -> dict[str, str]:
    full = os.path.abspath(path)
    try:
        inside = os.path.relpath(full, root)
    except ValueError:  # another drive (Windows)
        inside = os.pardir
    if inside == os.pardir or inside.startswith(os.pardir + os.sep):
        return {"uri": _absolute_uri(full)}
    return {"uri": _file_uri(inside), "uriBaseId": "%SRCROOT%"}


def _text(finding: Finding) -> str:
    """The message, then what it is about: record / claim / citation, source, URI; then how
    its verdict came (cached, failure k of N)."""
    return printable("; ".join([finding.message, *position(finding), *subject(finding),
                                *marks(finding)]))


def _result(finding: Finding, file: str, root: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code.code,
        "ruleIndex": _RULE_INDEX[finding.code],
        "level": finding.severity,
        "message": {"text": _text(finding)},
    }
    # Code scanning needs a line: a finding about the whole file (unreadable, not UTF-8) is
    # shown at its first.
    region: dict[str, int] = {"startLine": finding.line if finding.line is not None else 1}
    if finding.line is not None and finding.column is not None:
        region["startColumn"] = finding.column
    location: dict[str, Any] = {"artifactLocation": _artifact_uri(file, root),
                                "region": region}
    result["locations"] = [{"physicalLocation": location}]
    properties = {k: getattr(finding, k) for k in ("record", "claim", "citation", "status")
                  if getattr(finding, k) is not None}
    if properties:
        result["properties"] = properties
    return result


def _notification(finding: Finding) -> dict[str, Any]:
    """A finding without a file, as a tool execution notification about its rule."""
    return {
        "level": finding.severity,
        "message": {"text": _text(finding)},
        "associatedRule": {"id": finding.code.code, "index": _RULE_INDEX[finding.code]},
    }


def _invocation(report: Report, unlocated: list[Finding]) -> dict[str, Any]:
    # The run did its work unless it was stopped, hit a bug, or could not start (a command
    # line, git or configuration error: the findings without a file).
    failed = (report.stopped_by is not None
              or any(f.code.exit == 3 for f in report.findings)
              or any(f.severity == "error" for f in unlocated))
    invocation: dict[str, Any] = {"executionSuccessful": not failed,
                                  "exitCode": report.exit_code}
    if report.stopped_by is not None:
        from tracecite.stops import signal_name

        invocation["exitSignalName"] = signal_name(report.stopped_by)
        invocation["exitSignalNumber"] = report.stopped_by
    notifications = [_notification(f) for f in unlocated]
    notifications += [{"level": "note", "message": {"text": printable(notice)}}
                      for notice in report.notices]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return invocation


def format_sarif(report: Report, *, category: str | None = None,
                 root: str | None = None) -> str:
    """The report as a SARIF 2.1.0 log with one run; ``category``: ``--sarif-category``;
    ``root``: the folder artifact URIs are relative to (default: :func:`repository_root`)."""
    root = repository_root() if root is None else os.path.abspath(root)
    findings = report.sorted_findings()
    unlocated = [f for f in findings if f.file is None]
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
            "automationDetails": {"id": category_id(category, report.command)},
            "originalUriBaseIds": {"%SRCROOT%": {
                "uri": _absolute_uri(os.path.join(root, ""))}},
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, f.file, root) for f in findings if f.file is not None],
            "invocations": [_invocation(report, unlocated)],
        }],
    }
    return safe_json(log)
