"""JSON text decoded a chunk at a time, a value at a time: only what is not consumed yet is
kept. The one reader behind a trace's long lines (:mod:`tracecite.inputs.long_lines`) and a
report read back for ``merge`` (:mod:`tracecite.report_reader`); the standard library only.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from typing import Any

CHUNK = 1 << 20
"""Bytes read at a time by default, doubled while one value does not fit."""

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # what json.loads skips around a value


class ChunkedJson:
    """The text ``read`` returns (``read(n)``: up to ``n`` more bytes, ``b""`` at the end),
    decoded as UTF-8; with ``line``, the text also ends at the first chunk that ends with a
    line break (``read`` is then a ``readline``). Values are decoded by ``decoder``. ValueError
    (UnicodeDecodeError) when the text is not UTF-8 or not the JSON expected."""

    def __init__(self, read: Callable[[int], bytes], decoder: json.JSONDecoder, *,
                 line: bool = False, chunk: int = CHUNK) -> None:
        self._read = read
        self._decoder = decoder
        self._line = line
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self._chunk = self._want = chunk
        self.buffer = ""
        self.pos = 0
        self.ended = False

    def more(self) -> None:
        """Read the next chunk onto what is left of the buffer."""
        if self.ended:
            raise ValueError("the text ends inside a value")
        data = self._read(self._want)
        self.ended = not data or (self._line and data.endswith(b"\n"))
        self.buffer = self.buffer[self.pos:] + self._utf8.decode(data, final=self.ended)
        self.pos = 0

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end)."""
        while True:
            self.pos = _WHITESPACE.match(self.buffer, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buffer) or self.ended:
                return self.buffer[self.pos:self.pos + 1]
            self.more()

    def char(self) -> str:
        """The next character that is not whitespace, consumed."""
        char = self.peek()
        self.pos += len(char)
        return char

    def value(self) -> Any:
        """The next JSON value, decoded."""
        self.peek()
        while True:
            try:
                value, end = self._decoder.raw_decode(self.buffer, self.pos)
            except ValueError:
                if self.ended:
                    raise
                end = -1
            # A value that ends where the text in hand does may go on (a number).
            if end != -1 and (end < len(self.buffer) or self.ended):
                self.pos = end
                self._want = self._chunk
                return value
            self._want *= 2  # a long value: read more at a time, so retries stay few
            self.more()
