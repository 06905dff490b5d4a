"""Where things are in a document's source: lines, columns and the ignore comments
(docs/guides/documents.md#citation-forms).

Lines are what the Markdown parser counts: LF, CRLF and a lone CR each end one. Columns are
1-based and count the characters of the line as the file has them (a tab is one, a CR at a line's
end is never reached); a leading byte order mark is not part of the text at all.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

_NEWLINES = re.compile(r"\r\n?")
_IGNORE = re.compile(r"<!--[ \t]*tracecite:[ \t]*ignore[ \t]*-->")


class Source:
    """A document's text with its lines' offsets, for turning offsets into lines and columns."""

    __slots__ = ("_ignore", "_lazy_starts", "text")

    def __init__(self, text: str) -> None:
        text = text.removeprefix("\ufeff")
        if "\r" in text:
            # CR and CRLF end lines as LF does; every column before a line's end is unchanged.
            text = _NEWLINES.sub("\n", text)
        self.text = text
        self._lazy_starts: list[int] | None = None
        self._ignore: frozenset[int] | None = None

    @property
    def _starts(self) -> list[int]:
        """Each line's first offset, worked out when first needed (most files hold no
        citation and never need it), without a Python step per line."""
        if self._lazy_starts is None:
            ends = accumulate(map((1).__add__, map(len, self.text.split("\n"))))
            self._lazy_starts = [0, *ends]
            self._lazy_starts.pop()  # the offset after the last line, which starts none
        return self._lazy_starts

    def line_count(self) -> int:
        """How many lines the text has (a final LF ends the last, it starts no new one)."""
        return len(self._starts) - (1 if self.text.endswith("\n") else 0)

    def line_start(self, line: int) -> int:
        """The offset of a 0-based line's first character."""
        return self._starts[line] if line < len(self._starts) else len(self.text)

    def line_text(self, line: int) -> str:
        """A 0-based line's text, without its line end."""
        if line >= len(self._starts):
            return ""
        start = self._starts[line]
        end = self.text.find("\n", start)
        return self.text[start:] if end == -1 else self.text[start:end]

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of the character at ``offset``."""
        line = bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1

    def ignored(self, line: int) -> bool:
        """Whether the 1-based line before ``line`` is a ``<!-- tracecite: ignore -->`` line."""
        if self._ignore is None:
            found = set()
            if "ignore" in self.text:
                for match in _IGNORE.finditer(self.text):
                    number, _ = self.position(match.start())
                    if self.line_text(number - 1).strip() == match.group():
                        found.add(number)  # the comment alone on its line
            self._ignore = frozenset(found)
        return line - 1 in self._ignore
