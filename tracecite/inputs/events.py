"""Reading a trace's lines into JSON values, with each one's line number and byte offset.

The validator consumes these in order; jsonlines does the reading (with the ``fast`` extra,
orjson first, and jsonlines for the lines it refuses: :mod:`~tracecite.inputs.jsonl`), this
module adds where each line is (findings need its number, the source index its byte offset).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from tracecite.codes import Code
from tracecite.inputs.answer import PreparedAnswer, tail_digest
from tracecite.inputs.files import unreadable_message
from tracecite.inputs.jsonl import (
    LONE_SURROGATE_MESSAGE,
    REFUSED,
    LoneSurrogateError,
    fast_loads,
    loads,
)
from tracecite.inputs.long_lines import LONG_LINE, read_long_line


@dataclass(frozen=True)
class LineError:
    """A line that is not a JSON value (bad UTF-8 or bad JSON), or a read that failed."""

    code: Code
    message: str


Event = tuple[int, int, Any]
"""``(line number, byte offset of the line, value)``: the value is the line's decoded JSON, a
:class:`LineError`, or the :class:`PreparedAnswer` read ahead for that line."""


class _Lines:
    """The lines of a trace, counted and measured as jsonlines consumes them; with
    ``stop_at``, the lines before that offset only (iterating again goes on from there)."""

    def __init__(self, handle: BinaryIO, stop_at: int | None = None) -> None:
        self.handle = handle
        self.number = 0
        self.offset = 0  # of the line handed out last
        self.following = 0  # of the next line
        self.stop_at = stop_at

    def __iter__(self) -> Iterator[bytes | None]:
        """Each line's bytes; None for a line of :data:`LONG_LINE` bytes or more, which is
        left to :func:`_long_line` (the handle at its start), never read whole."""
        while self.following != self.stop_at:
            line = self.handle.readline(LONG_LINE)
            if not line:
                return
            self.number += 1
            self.offset = self.following
            if len(line) == LONG_LINE and not line.endswith(b"\n"):
                del line
                yield None  # the reader of long lines sets ``following``
                continue
            self.following += len(line)
            # Blank lines are skipped here, where no copy is made (jsonlines' skip_empty
            # copies every line to find out); isspace knows the same whitespace as rstrip.
            if not line.isspace():
                yield line


def read_events(handle: BinaryIO, answer: PreparedAnswer | None = None) -> Iterator[Event]:
    """The events of an open trace, from its start; blank lines are skipped.

    With ``answer`` (read ahead from the last line), that line is not decoded again: if the
    file from there on is still what was read, ``answer`` itself is handed out as its event.
    """
    lines = _Lines(handle, None if answer is None else answer.offset)
    read_all = yield from _decode(lines)
    if answer is None or not read_all or lines.following != answer.offset:
        return
    try:
        unchanged = tail_digest(handle, answer.offset) == answer.digest
    except OSError as exc:
        yield lines.number + 1, answer.offset, _unreadable(exc)
        return
    if unchanged:
        yield lines.number + 1, answer.offset, answer
        return
    handle.seek(answer.offset)  # it changed since: read what is there now
    lines.stop_at = None
    yield from _decode(lines)


def _decode(lines: _Lines) -> Generator[Event, None, bool]:
    """Decode the lines; False if reading failed (the failure is the last event)."""
    iterator = iter(lines)
    reader: _LineReader | None = None  # made for the first line orjson leaves (if any)
    while True:
        try:
            raw = next(iterator)
        except StopIteration:
            return True
        except OSError as exc:
            yield lines.number, lines.offset, _unreadable(exc)
            return False
        if raw is None:
            value = _long_line(lines)
            if value is not REFUSED:
                yield lines.number, lines.offset, value
                continue
            try:  # a long line the reader of long lines cannot take: read whole, as any other
                raw = lines.handle.readline()
            except OSError as exc:
                yield lines.number, lines.offset, _unreadable(exc)
                return False
            lines.following = lines.offset + len(raw)
        value = fast_loads(raw)
        if value is REFUSED:
            reader = reader or _LineReader()
            value = reader.read(raw)
        yield lines.number, lines.offset, value


def _long_line(lines: _Lines) -> Any:
    """The event on the long line at ``lines.offset``, read a chunk at a time
    (:mod:`~tracecite.inputs.long_lines`), with ``lines.following`` set past it; or
    :data:`REFUSED`, the handle back at the line's start, for a line to read whole."""
    try:
        value = read_long_line(lines.handle, lines.offset)
    except LoneSurrogateError:  # refused as a line read whole is; the next line follows it
        lines.handle.seek(lines.offset)
        while (chunk := lines.handle.readline(LONG_LINE)) and not chunk.endswith(b"\n"):
            pass
        lines.following = lines.handle.tell()
        return LineError(Code.TRACE_WRONG_TYPE, LONE_SURROGATE_MESSAGE)
    except (ValueError, UnicodeDecodeError, RecursionError, OSError):
        lines.handle.seek(lines.offset)
        return REFUSED
    lines.following = lines.handle.tell()
    return value


class _LineReader:
    """jsonlines (with :func:`loads`) reading the lines it is given one at a time: one Reader
    for a whole pass, not one for every line (which doubled the time of a trace read without
    orjson)."""

    def __init__(self) -> None:
        import jsonlines  # slow to import (with attrs): only for lines orjson leaves

        self._line = b""
        self._reader = jsonlines.Reader(self, loads=loads)
        self._invalid = jsonlines.InvalidLineError

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return self._line

    def read(self, raw: bytes) -> Any:
        """The line's value, or its :class:`LineError`."""
        self._line = raw
        try:
            return self._reader.read(allow_none=True)
        except self._invalid as exc:
            if isinstance(exc.__cause__, UnicodeDecodeError):
                return LineError(Code.INPUT_NOT_UTF8, "line is not valid UTF-8")
            if isinstance(exc.__cause__, LoneSurrogateError):
                return LineError(Code.TRACE_WRONG_TYPE, LONE_SURROGATE_MESSAGE)
            return LineError(Code.TRACE_BAD_JSON, "line is not valid JSON")


def _unreadable(exc: OSError) -> LineError:
    return LineError(Code.INPUT_UNREADABLE, unreadable_message(exc))
