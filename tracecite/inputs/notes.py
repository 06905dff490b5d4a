"""The notes format (SPEC §1.1): records of ``claim:``, ``quote:`` and ``url:`` lines.

Parsing never stops at the first error: every problem in the file is reported with its line and
column, and the records that are well formed are still returned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.inputs.files import read_text
from tracecite.model import NOTE_FIELDS, NoteRecord

# A key is a word before the first colon; anything else before a colon is not a field line.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class NotesFile:
    """A parsed notes file: the well-formed records and every format finding."""

    path: str
    records: tuple[NoteRecord, ...]
    findings: tuple[Finding, ...]
    record_count: int


def read_notes(path: str) -> NotesFile:
    """Read and parse one notes file (TC101/TC102 when it cannot be read as UTF-8)."""
    text = read_text(path)
    if isinstance(text, Finding):
        return NotesFile(path, (), (text,), 0)
    return parse_notes(text, path)


def _either(names: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``: the names as a sentence says them."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


class _Record:
    """A record being collected: field → (value, line)."""

    def __init__(self, index: int, line: int) -> None:
        self.index = index
        self.line = line
        self.fields: dict[str, tuple[str, int]] = {}
        self.broken = False


def parse_notes(text: str, path: str) -> NotesFile:
    """Parse notes text; ``path`` is only used to locate findings."""
    records: list[NoteRecord] = []
    findings: list[Finding] = []
    current: _Record | None = None
    count = 0

    def finish(record: _Record | None) -> None:
        if record is None:
            return
        missing = [k for k in NOTE_FIELDS if k not in record.fields]
        if missing:
            findings.append(Finding(
                Code.NOTES_MISSING_FIELD,
                f"record has no {_either(missing)} field",
                file=path, line=record.line, column=1, record=record.index,
            ))
        elif not record.broken:
            f = record.fields
            records.append(NoteRecord(
                file=path, index=record.index, line=record.line,
                claim=f["claim"][0], quote=f["quote"][0], url=f["url"][0],
                quote_line=f["quote"][1], url_line=f["url"][1], claim_line=f["claim"][1],
            ))

    if text.startswith("\ufeff"):
        text = text[1:]
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        stripped = line.strip()
        if not stripped or stripped == "---":
            finish(current)
            current = None
            continue
        if stripped.startswith("#"):
            continue
        if current is None:
            count += 1
            current = _Record(count, number)
        column = len(line) - len(line.lstrip()) + 1
        key, colon, value = line.partition(":")
        key = key.strip()
        if not colon or not _KEY.fullmatch(key):
            findings.append(Finding(
                Code.NOTES_BAD_LINE,
                "line is not a field (key: value), a comment, a blank line or ---",
                file=path, line=number, column=column, record=current.index,
            ))
            current.broken = True
            continue
        if key not in NOTE_FIELDS:
            hint = " (keys are lower case)" if key.lower() in NOTE_FIELDS else ""
            findings.append(Finding(
                Code.NOTES_UNKNOWN_FIELD,
                f"unknown field; expected claim, quote or url{hint}",
                file=path, line=number, column=column, record=current.index,
            ))
            current.broken = True
            continue
        if key in current.fields:
            first = current.fields[key][1]
            findings.append(Finding(
                Code.NOTES_DUPLICATE_FIELD,
                f"second {key} field in this record (first on line {first})",
                file=path, line=number, column=column, record=current.index,
            ))
            current.broken = True
            continue
        value = value.strip()
        current.fields[key] = (value, number)
        if not value:
            findings.append(Finding(
                Code.NOTES_EMPTY_VALUE,
                f"{key} field has an empty value",
                file=path, line=number, column=column, record=current.index,
            ))
            current.broken = True
    finish(current)
    return NotesFile(path, tuple(records), tuple(findings), count)
