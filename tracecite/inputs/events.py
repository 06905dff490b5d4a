"""Reading a trace's lines into JSON values, with each one's line number and byte offset.

The validator consumes these in order; jsonlines does the reading, this module adds where
each line is (findings need its number, the source index its byte offset).
"""

from __future__ import annotations

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
    """The lines of a trace, counted and measured as jsonlines consumes them."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.number = 0
        self.offset = 0  # of the line handed out last

    def __iter__(self) -> Iterator[bytes]:
        following = 0
        for line in self.handle:
            self.number += 1
            self.offset = following
            following += len(line)
            yield line


def read_events(handle: BinaryIO) -> Iterator[Event]:
    """The events of an open trace, from its start; blank lines are skipped."""
    lines = _Lines(handle)
    reader = jsonlines.Reader(lines, loads=loads)
    while True:
        value: Any
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
