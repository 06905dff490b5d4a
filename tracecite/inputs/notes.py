"""The notes format (docs/guides/notes.md): records of ``claim:``, ``quote:`` and ``url:`` lines.

Parsing never stops at the first error: every problem in the file is reported with its line and
column, and the records that are well formed are still returned. A file is read as it streams
by, a block of lines at a time: memory follows what is kept of its records (nothing, or no
claims, when the caller says so; see :func:`read_notes`), not the size of the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.inputs.files import open_input, unreadable
from tracecite.model import NOTE_FIELDS, NoteRecord, NoteRecords

# A key is a word before the first colon; anything else before a colon is not a field line.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

_BLOCK = 1 << 20
"""How much of a notes file is read and decoded at once (its lines are then parsed)."""

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class NotesFile:
    """A parsed notes file: the well-formed records (those kept) and every format finding."""

    path: str
    records: Sequence[NoteRecord]
    findings: tuple[Finding, ...]
    record_count: int


def read_notes(path: str, *, records: bool = True, claims: bool = True) -> NotesFile:
    """Read and parse one notes file (TC101/TC102 when it cannot be read as UTF-8).

    ``records``: keep the well-formed records (without them only the findings and the count
    are kept: the format check needs no more); ``claims``: keep their claims too (the live
    checks never read them).
    """
    opened = open_input(path)
    if isinstance(opened, Finding):
        return NotesFile(path, (), (opened,), 0)
    parser = _Parser(path, records=records, claims=claims)
    try:
        with opened:
            for line in _lines(opened):
                parser.line(line)
    except _NotUtf8 as bad:
        return NotesFile(path, (), (Finding(Code.INPUT_NOT_UTF8, "input is not valid UTF-8",
                                            file=path, line=bad.line, column=bad.column),), 0)
    except OSError as exc:
        return NotesFile(path, (), (unreadable(path, exc),), 0)
    return parser.done()


def parse_notes(text: str, path: str) -> NotesFile:
    """Parse notes text; ``path`` is only used to locate findings."""
    parser = _Parser(path)
    for line in text.removeprefix("\ufeff").split("\n"):
        parser.line(line)
    return parser.done()


class _NotUtf8(Exception):
    """Where the first byte that is not UTF-8 is (1-based line and column, in characters)."""

    def __init__(self, line: int, column: int) -> None:
        super().__init__(line, column)
        self.line = line
        self.column = column


def _lines(handle: BinaryIO) -> Iterator[str]:
    """The lines of an open notes file, split at LF only, a leading BOM dropped; raises
    :class:`_NotUtf8` at the first bad byte (the lines before it have been handed out)."""
    pending = bytearray()
    before = 0  # lines handed out before the block in hand
    while True:
        block = handle.read(_BLOCK)
        if block:
            pending += block
            cut = pending.rfind(b"\n") + 1
            if not cut:
                continue  # a line longer than a block: read on
            data = bytes(pending[:cut])
            del pending[:cut]
        else:
            data = bytes(pending)
            pending.clear()
        if before == 0 and data.startswith(_BOM):
            data = data[len(_BOM):]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            start = data.rfind(b"\n", 0, exc.start) + 1
            # Everything before the first bad byte decodes (a dropped BOM is not counted).
            raise _NotUtf8(before + 1 + data.count(b"\n", 0, exc.start),
                           len(data[start:exc.start].decode("utf-8")) + 1) from None
        lines = text.split("\n")
        if block:
            lines.pop()  # the empty piece after the block's last LF
        before += len(lines)
        yield from lines
        if not block:
            return


def _either(names: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``: the names as a sentence says them."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


class _Record:
    """A record being collected: field → (value, line)."""

    __slots__ = ("broken", "fields", "index", "line")

    def __init__(self, index: int, line: int) -> None:
        self.index = index
        self.line = line
        self.fields: dict[str, tuple[str, int]] = {}
        self.broken = False


class _Parser:
    """Parses a notes file line by line (the lines as split at LF, a BOM already dropped)."""

    def __init__(self, path: str, *, records: bool = True, claims: bool = True) -> None:
        self.path = path
        self.records = NoteRecords(path, claims=claims) if records else None
        self.findings: list[Finding] = []
        self.current: _Record | None = None
        self.count = 0
        self.number = 0
        self.wrapped: tuple[str, int] | None = None
        """The field (key, line) that a bad line right after it may be the wrapped rest of:
        the last field line, while only bad lines have followed it."""

    def done(self) -> NotesFile:
        """The parsed file, once every line has been seen."""
        self._finish()
        return NotesFile(self.path, () if self.records is None else self.records,
                         tuple(self.findings), self.count)

    def _problem(self, code: Code, message: str, column: int, record: int) -> None:
        self.findings.append(Finding(code, message, file=self.path, line=self.number,
                                     column=column, record=record))

    def _finish(self) -> None:
        record, self.current = self.current, None
        if record is None:
            return
        missing = [k for k in NOTE_FIELDS if k not in record.fields]
        if missing:
            self.findings.append(Finding(
                Code.NOTES_MISSING_FIELD,
                f"record has no {_either(missing)} field",
                file=self.path, line=record.line, column=1, record=record.index,
            ))
        elif not record.broken and self.records is not None:
            self.records.append(record.index, record.line, record.fields)

    def line(self, raw: str) -> None:
        """Parse the next line (a trailing CR is dropped)."""
        self.number += 1
        line = raw[:-1] if raw.endswith("\r") else raw
        stripped = line.strip()
        after, self.wrapped = self.wrapped, None
        if not stripped or stripped == "---":
            self._finish()
            return
        if stripped.startswith("#"):
            return
        current = self.current
        if current is None:
            self.count += 1
            current = self.current = _Record(self.count, self.number)
        column = len(line) - len(line.lstrip()) + 1
        key, colon, value = line.partition(":")
        key = key.strip()
        if not colon or not _KEY.fullmatch(key):
            message = "line is not a field (key: value), a comment, a blank line or ---"
            if after is not None:
                # A value wrapped onto the next line, as editors and writers wrap prose.
                message += f"; values are one line: join this line to the `{after[0]}:` on " \
                           f"line {after[1]}"
                self.wrapped = after
            self._problem(Code.NOTES_BAD_LINE, message, column, current.index)
            current.broken = True
            return
        if key not in NOTE_FIELDS:
            hint = " (keys are lower case)" if key.lower() in NOTE_FIELDS else ""
            self._problem(Code.NOTES_UNKNOWN_FIELD,
                          f"unknown field; expected claim, quote or url{hint}",
                          column, current.index)
            current.broken = True
            return
        if key in current.fields:
            first = current.fields[key][1]
            self._problem(Code.NOTES_DUPLICATE_FIELD,
                          f"second {key} field in this record (first on line {first})",
                          column, current.index)
            current.broken = True
            return
        value = value.strip()
        current.fields[key] = (value, self.number)
        self.wrapped = (key, self.number)
        if not value:
            self._problem(Code.NOTES_EMPTY_VALUE, f"{key} field has an empty value",
                          column, current.index)
            current.broken = True
