"""Trace lines too long to hold (docs/guides/traces.md): a line of :data:`LONG_LINE` bytes or
more is read from the file a chunk at a time, never whole.

A tool result can hold two million sources on one line. Held whole, that line is its bytes, its
text and every source decoded at once: over a gigabyte for 230 MB. Instead the line is read
twice, each time a chunk at a time. The first pass checks its syntax and decodes the event's
fields, skipping the elements of its top-level ``sources`` and ``claims`` arrays (decoded one at
a time and dropped); those arrays become :class:`StreamedArray` values, which read the line
again and hand out one element at a time when the validator walks them. Memory follows one
element, not the line.

Any line this reader cannot take (bad JSON or UTF-8, numbers the decoder refuses, a file that
changed between the passes) goes the usual way, read whole, which gives the verdict.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any, BinaryIO

from tracecite.chunked_json import ChunkedJson
from tracecite.inputs.jsonl import (
    DECODER,
    LONE_SURROGATE_MESSAGE,
    LoneSurrogateError,
    has_lone_surrogate,
)

LONG_LINE = 16 << 20
"""Lines of at least this many bytes are read in chunks (the others are read whole)."""

CHANGED = "the trace changed or became unreadable while it was checked"
"""The message of the TC101 for a long line that changed between its two readings."""

_STREAMED = frozenset({"sources", "claims"})
"""The top-level arrays handed out an element at a time."""

_CHUNK = 1 << 20
_SKIPPABLE = ("\x1e", "\ufeff")  # one record separator or BOM before the line (line_text)

Element = tuple[str, int, Any]
"""A streamed array's element: its key, which of that key's arrays (1-based: JSON keeps the
last of two equal keys), and the element's value."""


class LineChangedError(ValueError):
    """A long line read again is not what its first reading saw (the file changed), or could
    not be read again."""


def _Text(handle: BinaryIO, offset: int) -> ChunkedJson:
    """The text of one line, read a chunk at a time from ``offset`` (a leading record separator
    or BOM skipped): ValueError (or UnicodeDecodeError) when it is not the JSON expected."""
    handle.seek(offset)
    text = ChunkedJson(handle.readline, DECODER, line=True, chunk=_CHUNK)
    text.more()
    if text.buffer.startswith(_SKIPPABLE):
        text.pos = 1
    return text


def _events(text: ChunkedJson, obj: dict[str, Any]) -> Generator[Element, None, dict[str, Any]]:
    """Walk the line's object into ``obj``: each element of a streamed array is yielded; the
    object comes back with each such array as ``(occurrence, length)``."""
    seen: dict[str, int] = {}
    if text.char() != "{":
        raise ValueError("not an object")
    if text.peek() == "}":
        text.char()
    else:
        while True:
            if text.peek() != '"':
                raise ValueError("expected a key")
            key = text.value()
            if text.char() != ":":
                raise ValueError("expected :")
            if key in _STREAMED and text.peek() == "[":
                text.char()
                occurrence = seen[key] = seen.get(key, 0) + 1
                length = 0
                if text.peek() == "]":
                    text.char()
                else:
                    while True:
                        element = text.value()
                        length += 1
                        yield key, occurrence, element
                        char = text.char()
                        if char == "]":
                            break
                        if char != ",":
                            raise ValueError("expected , or ] in an array")
                obj[key] = (occurrence, length)
            else:
                obj[key] = text.value()
            char = text.char()
            if char == "}":
                break
            if char != ",":
                raise ValueError("expected , or } in an object")
    if text.char() != "":
        raise ValueError("extra data after the value")
    return obj


def read_long_line(handle: BinaryIO, offset: int) -> Any:
    """The event on the long line at ``offset`` of an open trace, its streamed arrays as
    :class:`StreamedArray` values; the handle is left at the start of the next line. Raises
    :class:`~tracecite.inputs.jsonl.LoneSurrogateError` for a line that holds a lone surrogate
    (as a line read whole does), ValueError or UnicodeDecodeError for a line this reader cannot
    take (read it whole)."""
    walk = _events(_Text(handle, offset), {})
    while True:
        try:
            _, _, element = next(walk)
        except StopIteration as done:
            obj: dict[str, Any] = done.value
            break
        if has_lone_surrogate(element):
            raise LoneSurrogateError(LONE_SURROGATE_MESSAGE)
    if has_lone_surrogate(obj):  # the streamed arrays are (occurrence, length) here
        raise LoneSurrogateError(LONE_SURROGATE_MESSAGE)
    end = handle.tell()
    for key in _STREAMED:
        if type(obj.get(key)) is tuple:
            occurrence, length = obj[key]
            obj[key] = StreamedArray(handle, offset, end, key, occurrence, length)
    return obj


def event_type(handle: BinaryIO, offset: int) -> Any:
    """The ``type`` of the event on the long line at ``offset``, the line read only as far as
    its first ``type`` key (None where there is none). ValueError or UnicodeDecodeError for a
    line this reader cannot take."""
    obj: dict[str, Any] = {}
    for _ in _events(_Text(handle, offset), obj):
        if "type" in obj:
            break
    return obj.get("type")


class StreamedArray(list[Any]):
    """A long line's top-level array, read again from the file when iterated, one element at a
    time; its syntax was checked when it was made.

    It is a ``list`` to the validator's type checks; only iteration (once, while the file is
    open and before the next line is read), ``len``, truth and ``== []`` are meaningful.
    Iterating leaves the handle where it found it. :class:`LineChangedError` if the line
    changed or cannot be read again.
    """

    def __init__(self, handle: BinaryIO, offset: int, end: int, key: str, occurrence: int,
                 length: int) -> None:
        super().__init__()
        self._handle = handle
        self._offset = offset
        self._end = end
        self._key = key
        self._occurrence = occurrence
        self._length = length

    def __iter__(self) -> Iterator[Any]:
        here = self._handle.tell()
        try:
            count = 0
            walk = _events(_Text(self._handle, self._offset), {})
            for key, occurrence, element in walk:
                if key == self._key and occurrence == self._occurrence:
                    count += 1
                    yield element
            if count != self._length or self._handle.tell() != self._end:
                raise LineChangedError("the line changed while it was read")
        except (ValueError, UnicodeDecodeError, RecursionError, OSError) as exc:
            if isinstance(exc, LineChangedError):
                raise
            raise LineChangedError("the line changed or cannot be read again") from exc
        finally:
            self._handle.seek(here)

    def __len__(self) -> int:
        return self._length

    def __bool__(self) -> bool:
        return self._length > 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StreamedArray):
            return other is self
        return isinstance(other, list) and not other and not self._length

    __hash__ = None
