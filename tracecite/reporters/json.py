"""``--format json``: one JSON object (docs/reference/reports.md), the stable machine-readable
report, as :mod:`tracecite.report_writer` writes it (:mod:`tracecite.report_reader` reads it
back: ``tracecite merge`` combines shards' reports).

A report of a million findings is written a finding at a time (:func:`write_json`): the text is
never built whole, nor the findings' JSON objects all at once, and the bytes are those of
:func:`format_json`, which joins the same pieces (docs/guides/scale.md)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii
from typing import TextIO

from tracecite.findings import Report
from tracecite.report_writer import document_dict, finding_dict, report_dict, summary_dict

_EMPTY_FINDINGS = '\n  "findings": []'
_EMPTY_DOCUMENTS = '\n  "documents": []\n}\n'
_BATCH = 1 << 16  # characters written at a time


def format_json(report: Report) -> str:
    """The report as JSON text; ``ensure_ascii`` keeps control characters escaped."""
    return "".join(json_pieces(report))


def write_json(report: Report, stream: TextIO) -> None:
    """Write :func:`format_json`'s text to ``stream`` a piece at a time: memory holds one
    finding's JSON, not the report's."""
    batch: list[str] = []
    size = 0
    for piece in json_pieces(report):
        batch.append(piece)
        size += len(piece)
        if size >= _BATCH:
            stream.write("".join(batch))
            batch, size = [], 0
    stream.write("".join(batch))


def json_pieces(report: Report) -> Iterator[str]:
    """The pieces of the report's JSON text, in order: the text of ``json.dumps`` of its
    object with ``indent=2`` (made :func:`safe_json`), the findings one at a time, then the
    documents' listing (``check --docs``) a document at a time."""
    documents = report.documents
    if not report.findings and documents is None:
        yield safe_json(report_dict(report))
        return
    # The object without its findings (their counts and the exit code are the report's own)
    # and its documents' citations, cut where they go: nothing before "findings" is input
    # text, so the first '"findings": []' at the top level is that key's; "documents" is the
    # last member.
    head = report_dict(dataclasses.replace(report, findings=(), documents=None))
    head["exit_code"] = report.exit_code
    head["summary"] = summary_dict(report)
    if documents is not None:
        head["documents"] = []
    text = safe_json(head)
    if report.findings:
        end = text.index(_EMPTY_FINDINGS) + len(_EMPTY_FINDINGS)  # just after its "[]"
        yield text[:end - 1] + "\n    "
        for n, finding in enumerate(report.sorted_findings()):
            # An item of a list two levels in, as json.dumps indents it; strings are escaped
            # (ensure_ascii), so every newline of the text is indentation.
            item = _safe(indented(finding_dict(finding), "\n    "))
            yield ("" if n == 0 else ",\n    ") + item
        text = "\n  ]" + text[end:]
    if not documents:  # none, or an empty listing
        yield text
        return
    yield text[:-len(_EMPTY_DOCUMENTS)] + '\n  "documents": [\n    '
    for n, document in enumerate(documents):
        yield ("" if n == 0 else ",\n    ") + _safe(indented(document_dict(document), "\n    "))
    yield "\n  ]\n}\n"


def indented(value: object, newline: str = "\n") -> str:
    """``json.dumps(value, indent=2, ensure_ascii=True)``, the same text, for the values a
    finding holds (objects, lists, strings, integers, booleans, null), with each line break
    written as ``newline`` (a line break and the indentation the text stands at).

    The standard library encodes with indentation in Python, several calls per value; a report
    of a million findings spent most of its writing there. Here the members of an object or a
    list that are strings or integers are written in its own loop (strings by the C encoder),
    and anything unusual goes to ``json.dumps`` itself. Booleans too are written in the loop:
    a listed citation of ``check --docs`` has two."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if value is None or kind is bool:
        return "null" if value is None else "true" if value else "false"
    inner = newline + "  "
    if isinstance(value, dict) and value and all(type(key) is str for key in value):
        parts = []
        for key, item in value.items():
            item_kind = type(item)
            parts.append(encode_basestring_ascii(key) + ": " + (
                encode_basestring_ascii(item) if item_kind is str
                else int.__repr__(item) if item_kind is int
                else ("true" if item else "false") if item_kind is bool
                else indented(item, inner)))
        return "{" + inner + ("," + inner).join(parts) + newline + "}"
    if isinstance(value, list) and value:
        return "[" + inner + ("," + inner).join(
            encode_basestring_ascii(item) if type(item) is str else indented(item, inner)
            for item in value) + newline + "]"
    # Empty containers, floats, keys that are not strings: as the standard library writes them.
    return json.dumps(value, indent=2, ensure_ascii=True).replace("\n", newline)


def safe_json(document: object) -> str:
    """JSON text that is safe in a GitHub Actions log, decoding to the same values.

    Control characters are escaped (``ensure_ascii``), and so is the ``#`` of every ``##[`` (the
    runner reads the legacy ``##[command]`` anywhere in a line). ``#`` and ``[`` never occur
    in JSON outside strings, nor inside an escape sequence, so this changes strings only.
    """
    return _safe(json.dumps(document, indent=2, ensure_ascii=True)) + "\n"


def _safe(text: str) -> str:
    return text.replace("##[", "#\\u0023[")
