"""Reading a trace's lines into JSON values, with each one's line number and byte offset.

The validator consumes these in order. They come either from one sequential reader or, for
large traces, from worker processes that each decode one byte range of the file (JSON
decoding is most of the cost of reading a trace, and it is independent line by line).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import jsonlines

from tracecite.codes import Code
from tracecite.inputs.jsonl import loads


@dataclass(frozen=True)
class LineError:
    """A line that is not a JSON value (bad UTF-8 or bad JSON), or a read that failed."""

    code: Code
    message: str


Event = tuple[int, int, Any]
"""``(line number, byte offset of the line, decoded JSON value or LineError)``."""


class _Lines:
    """The lines of a byte range, counted and measured as jsonlines consumes them."""

    def __init__(self, handle: BinaryIO, start: int, end: int | None) -> None:
        self.handle = handle
        self.number = 0
        self.offset = start  # of the line handed out last
        self._next = start
        self._end = end
        handle.seek(start)

    def __iter__(self) -> Iterator[bytes]:
        for line in self.handle:
            if self._end is not None and self._next >= self._end:
                return
            self.number += 1
            self.offset = self._next
            self._next += len(line)
            yield line


def read_events(handle: BinaryIO, start: int = 0, end: int | None = None) -> Iterator[Event]:
    """The events of the lines in ``[start, end)`` of an open trace; line numbers count from 1
    at ``start``. Blank lines are skipped."""
    lines = _Lines(handle, start, end)
    reader = jsonlines.Reader(lines, loads=loads)
    while True:
        try:
            value = reader.read(allow_none=True, skip_empty=True)
        except EOFError:
            return
        except jsonlines.InvalidLineError as exc:
            if isinstance(exc.__cause__, UnicodeDecodeError):
                value = LineError(Code.INPUT_NOT_UTF8, "line is not valid UTF-8")
            else:
                value = LineError(Code.TRACE_BAD_JSON, "line is not valid JSON")
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            yield lines.number, lines.offset, LineError(Code.INPUT_UNREADABLE,
                                                        f"input cannot be read ({reason})")
            return
        yield lines.number, lines.offset, value


def count_lines(handle: BinaryIO, start: int, end: int) -> int:
    """How many lines begin in ``[start, end)`` (``end`` is a line start or the file's end)."""
    handle.seek(start)
    count = 0
    remaining = end - start
    last = b"\n"
    while remaining > 0:
        block = handle.read(min(remaining, 1 << 20))
        if not block:
            break
        count += block.count(b"\n")
        remaining -= len(block)
        last = block[-1:]
    return count + (last != b"\n")


def chunk_bounds(path: str, count: int) -> list[tuple[int, int]]:
    """About ``count`` byte ranges of the file, each starting at the beginning of a line."""
    size = os.path.getsize(path)
    step = max(1, size // max(1, count))
    bounds: list[tuple[int, int]] = []
    with open(path, "rb") as handle:
        start = 0
        while start < size:
            handle.seek(min(start + step, size))
            if start + step < size:
                handle.readline()  # move to the start of the next line
            end = min(handle.tell(), size) if start + step < size else size
            bounds.append((start, end))
            start = end
    return bounds
