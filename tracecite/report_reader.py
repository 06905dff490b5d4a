"""A JSON report read back into its :class:`~tracecite.findings.Report`
(docs/reference/reports.md): the inverse of :mod:`tracecite.report_writer`, for ``tracecite
merge`` (docs/guides/scale.md) and :func:`tracecite.api.read_report`."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, BinaryIO

from tracecite.chunked_json import ChunkedJson
from tracecite.codes import BY_CODE, Code
from tracecite.findings import (
    CHECK_KINDS,
    EXIT_OK,
    ArchiveCopy,
    Changes,
    Counts,
    Diagnosis,
    Finding,
    ListedCitation,
    ListedDocument,
    Report,
    RunDigests,
    Summary,
)
from tracecite.inputs.files import open_input, read_text
from tracecite.report_writer import LATER_MEMBERS, SCHEMA_VERSION
from tracecite.stops import STOP_SIGNALS
from tracecite.values import shard


class ReportFormatError(ValueError):
    """A JSON document that is not a TraceCite report of this schema; the message names the
    member that is wrong, never its value."""


_EXIT_CODES = frozenset({0, 1, 2, 3, *(128 + signum for signum in STOP_SIGNALS)})
"""The exit codes a report can have (docs/reference/commands.md): 0–3, or 128 + SIGINT or
SIGTERM."""


def read_report(document: object) -> Report:
    """The :class:`Report` a JSON report object (parsed, as
    :func:`~tracecite.report_writer.report_dict` writes it) stands for:
    ``report_dict(read_report(report_dict(r)))`` is the same document.

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
    documents = None
    if "documents" in doc:  # check --docs's listing
        documents = tuple(_document(item, i) for i, item in
                          enumerate(_typed(doc, "documents", list), start=1))
    return Report(command, findings, summary, changes,
                  stopped_by=exit_code - 128 if exit_code > 128 else None, stage=stage,
                  notices=notices, shard=_shard(doc.get("shard")), run=_run(doc.get("run")),
                  documents=documents)


_LISTED: tuple[tuple[str, type], ...] = (
    ("record", int), ("line", int), ("column", int), ("form", str), ("source", str),
    ("directive", bool), ("ignored", bool))
"""A listed citation's members (:class:`ListedCitation`'s fields, in order) and their types."""


def _document(value: object, index: int) -> ListedDocument:
    """Document ``index`` of ``check --docs``'s listing: its file and each citation's members,
    every one present and of its type exactly (a boolean is no integer, nor an integer one)."""
    where = f"documents: item {index}"
    raw = _object(value, where)
    citations = []
    for n, item in enumerate(_typed(raw, "citations", list, where), start=1):
        at = f"{where}: citation {n}"
        listed = _object(item, at)
        for key, kind in _LISTED:
            if type(listed.get(key)) is not kind:
                raise ReportFormatError(f"{at}: {key} is missing or of the wrong type")
        citations.append(ListedCitation(**{key: listed[key] for key, _ in _LISTED}))
    return ListedDocument(_typed(raw, "file", str, where), tuple(citations))


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
    # import's members (docs/guides/importers.md) and documents' are absent from reports written
    # before them.
    return dataclasses.replace(summary, **{key: _typed(raw, key, int, "summary")
                                           for key in LATER_MEMBERS if key in raw})


def _finding(value: object, index: int, shared: dict[object, Any] | None = None) -> Finding:
    """Finding ``index``; with ``shared``, its texts and diagnosis are the ones an earlier
    finding of the same file had, when equal (a report's findings repeat their messages,
    files, sources and diagnoses: each is held once)."""
    where = f"finding {index}"
    raw = _object(value, where)
    text = raw.get("code")
    code = BY_CODE.get(text) if isinstance(text, str) else None
    if code is None or raw.get("name") != code.label:
        raise ReportFormatError(f"{where}: code and name are not a code of the registry")
    severity = raw.get("severity")
    if severity not in ("error", "warning"):
        raise ReportFormatError(f"{where}: severity is neither error nor warning")
    numbers = _present(raw, _NUMBERS, int, where)
    texts = _present(raw, _TEXTS, str, where)
    diagnosis = None
    if raw.get("diagnosis") is not None:
        diagnosis = _diagnosis(raw["diagnosis"], where)
    archive = None
    if raw.get("archive") is not None:
        a = _object(raw["archive"], f"{where}: archive")
        archive = ArchiveCopy(_typed(a, "url", str, f"{where}: archive"),
                              _typed(a, "timestamp", str, f"{where}: archive"),
                              _typed(a, "found", bool, f"{where}: archive"))
    message = _typed(raw, "message", str, where)
    if shared is not None:
        message = shared.setdefault(message, message)
        texts = {key: shared.setdefault(text, text) for key, text in texts.items()}
        diagnosis = shared.setdefault(diagnosis, diagnosis)
    return Finding(code, message, **numbers, **texts,
                   cached=_optional(raw, "cached", bool, where), diagnosis=diagnosis,
                   archive=archive,
                   # A warning made one by the run's settings, not by its code
                   # (docs/web-over-time.md#warnings-and-skips).
                   warned=severity == "warning" and code.exit != EXIT_OK)


_NUMBERS = ("line", "column", "record", "claim", "citation", "status", "attempts", "failures",
            "fail_after")
_TEXTS = ("file", "source_id", "uri", "final_url")


def _present(raw: dict[str, Any], keys: tuple[str, ...], kind: type, where: str
             ) -> dict[str, Any]:
    """The members of ``keys`` that ``raw`` holds, not null, each of type ``kind`` exactly (a
    boolean is no integer); an absent or null member is left to the record's default."""
    out: dict[str, Any] = {}
    for key in keys:
        value = raw.get(key)
        if value is not None:
            if type(value) is not kind:
                _typed(raw, key, kind, where)  # raises, naming the member
            out[key] = value
    return out


def _diagnosis(value: object, where: str) -> Diagnosis:
    where = f"{where}: diagnosis"
    d = _object(value, where)
    characters = d.get("characters")
    return Diagnosis(tuple(_strings(d, "kinds", where)),
                     **_present(d, ("quote_chars", "matched_chars", "first_difference"), int,
                                where),
                     characters=(None if characters is None
                                 else tuple(_strings(d, "characters", where))),
                     **_present(d, ("where", "cut_short"), str, where))


def _shard(value: object) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        return shard(value)
    except ValueError:
        raise ReportFormatError("shard is not K/N") from None


def _run(value: object) -> RunDigests | None:
    """The report's ``run``; None when it has none (written before ``run`` existed, or a usage
    error's report), which ``merge`` never takes for a shard (docs/guides/scale.md)."""
    if value is None:
        return None
    raw = _object(value, "run")
    digests = [_typed(raw, key, str, "run") for key in ("inputs_digest", "options_digest")]
    if not all(_HEX_DIGEST.fullmatch(d) for d in digests):
        raise ReportFormatError("run: a digest is not SHA-256 hex")
    return RunDigests(*digests)


_HEX_DIGEST = re.compile(r"[0-9a-f]{64}")


def read_report_file(path: str) -> Report | Finding:
    """The report in the JSON file at ``path``, or the input error that says why it cannot
    be read as one (TC101, TC102) with its file.

    The file is read a chunk at a time and its findings decoded one at a time, each made its
    :class:`Finding` at once (docs/guides/scale.md#merging-shards): memory follows the
    findings kept, not the file's text and every finding's JSON object besides. A file this
    reader cannot take (bad JSON or UTF-8, a report that is wrong, two ``findings`` members) is
    read again whole, which gives the verdict, so every error is the one a whole reading gives.
    """
    opened = open_input(path)
    if isinstance(opened, Finding):
        return opened
    try:
        with opened:
            report = _streamed(opened)
    except (ValueError, RecursionError, OSError):
        report = None  # the whole reading below says why
    return report if report is not None else _read_whole(path)


def _read_whole(path: str) -> Report | Finding:
    text = read_text(path)
    if isinstance(text, Finding):
        return text
    try:
        return read_report(json.loads(text))
    except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
        what = (str(exc) if isinstance(exc, ReportFormatError)
                else "is not JSON (a report of --json or --report-file json:PATH)")
        return Finding(Code.INPUT_UNREADABLE, f"cannot be merged: {what}", file=path)


_CHUNK = 1 << 20
_DECODER = json.JSONDecoder()  # json.loads' own


def _streamed(handle: BinaryIO) -> Report | None:
    """The report in ``handle``, its findings decoded one at a time; None (or ValueError)
    for anything the whole reading must judge."""
    text = ChunkedJson(handle.read, _DECODER, chunk=_CHUNK)
    doc: dict[str, Any] = {}
    findings: list[Finding] = []
    shared: dict[object, Any] = {}
    if text.char() != "{":
        return None  # a leading BOM too: json.loads refuses it, and says so
    if text.peek() == "}":
        text.char()
    else:
        while True:
            key = text.value()
            if not isinstance(key, str) or text.char() != ":":
                return None
            if key != "findings":
                doc[key] = text.value()
            elif "findings" in doc or text.peek() != "[":
                return None  # twice (the last would win), or not an array
            else:
                doc[key] = None
                text.char()
                if text.peek() == "]":
                    text.char()
                else:
                    while True:
                        # Each element made its Finding at once, its JSON object dropped.
                        findings.append(_finding(text.value(), len(findings) + 1, shared))
                        separator = text.char()
                        if separator == "]":
                            break
                        if separator != ",":
                            return None
            separator = text.char()
            if separator == "}":
                break
            if separator != ",":
                return None
    if text.peek() != "":
        return None  # more than one value
    if "findings" in doc:
        doc["findings"] = []
    report = read_report(doc)
    # Every other member checked as a whole reading checks it; the findings were, one by one.
    return dataclasses.replace(report, findings=tuple(findings))
