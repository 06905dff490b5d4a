"""A PDF's text as TraceCite matches it (docs/guides/pdf.md): each page as PDFium extracts it,
with the PDF rules applied to the page text before the project's normalisation.

The rules, on each page's text only:

- the ligatures U+FB00–U+FB06 become their letters;
- the mark PDFium puts where it finds a hyphenated line end (U+FFFE; U+0002 in older builds;
  the line break after it is already dropped) is removed, joining the halves;
- a hyphen (``-``, U+00AD, U+2010) left at a line's end before a lower-case letter at the next
  line's start joins the halves without it; a compound inside a line keeps its hyphen.

:func:`read_pages` runs the engine over every page, :func:`find_quotes` up to the page by which
some quotes are all found; both are called in a PDF worker process
(:mod:`tracecite.pdf.worker`), never in the run's own process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

__all__ = ["HYPHEN_BREAK", "HYPHEN_MARKS", "LIGATURES", "LIGATURE_TABLE", "PdfUnreadable",
           "find_quotes", "page_text", "read_pages"]

LIGATURES: dict[str, str] = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",  # LATIN SMALL LIGATURE LONG S T: its compatibility letters
    "\ufb06": "st",
}
"""The ligature characters of the Alphabetic Presentation Forms block, to their letters."""

LIGATURE_TABLE: dict[int, str] = {ord(char): letters for char, letters in LIGATURES.items()}
""":data:`LIGATURES` as a ``str.translate`` table."""

HYPHEN_MARKS = re.compile("[\ufffe\x02](?:\r\n|\r|\n)?")
"""PDFium's mark of a hyphenated line end, with the line break after it if any."""

HYPHEN_BREAK = re.compile("[-\u00ad\u2010][^\\S\r\n]*(?:\r\n|\r|\n)[^\\S\r\n]*(?=(.))")
"""A hyphen left at a line's end and the line break after it, when a line follows; group 1
is the next line's first character. The layout diagnosis joins these keeping the hyphen."""


class PdfUnreadable(Exception):
    """A PDF the engine cannot read, with the reason (never text of the PDF)."""


def _join(match: re.Match[str]) -> str:
    return "" if match.group(1).islower() else match.group(0)


def page_text(raw: str) -> str:
    """One page's text as PDFium gave it, with the PDF rules applied (module docstring)."""
    text = raw.translate(LIGATURE_TABLE)
    text = HYPHEN_MARKS.sub("", text)
    return HYPHEN_BREAK.sub(_join, text)


class _Finder:
    """Which of some normalised quotes the pages read so far hold, each new page looked at with
    just enough of the pages before it for the longest quote still missing.

    The pages are joined by a newline, which nothing before it combines with and which is
    whitespace: the normalised text of the pages from one to another is a part of the
    normalised text of them all, so a quote found there is in the whole text too. A quote that
    ends on the page just read begins within twice its length before it (more only where the
    page's text has long runs of whitespace), within the pages looked at, so it is found with
    that page. One found later, or never, only means more pages are read: the verdicts are
    those of the whole text either way."""

    def __init__(self, quotes: Sequence[str]) -> None:
        self._missing = {quote for quote in quotes if quote}  # an empty one is found anywhere
        self._pages: list[str] = []

    @property
    def looking(self) -> bool:
        """Whether any quote is still missing (none, from the start: nothing stops a read)."""
        return bool(self._missing)

    def read(self, raw: str) -> bool:
        """Take the next page as the engine gave it; whether every quote is found by now."""
        from tracecite.matching import MatchText

        self._pages.append(page_text(raw))
        reach, first = 2 * max(len(quote) for quote in self._missing), len(self._pages) - 1
        before = 0
        while first > 0 and before < reach:
            first -= 1
            before += len(self._pages[first]) + 1
        text = MatchText("\n".join(self._pages[first:]))
        self._missing = {quote for quote in self._missing if not text.contains(quote)}
        return not self._missing


def read_pages(data: bytes | ctypes.Array[ctypes.c_char], max_pages: int) -> tuple[str, ...]:
    """Each page's text, in order, as the engine gives it (the PDF rules are applied by
    :func:`page_text`, in the run's process); raises :class:`PdfUnreadable`
    (encrypted with a password, damaged, over ``max_pages`` pages, no text layer) and
    ``ImportError`` when the engine is not installed."""
    pages, _ = _read(data, max_pages, None)
    return pages


def find_quotes(data: bytes | ctypes.Array[ctypes.c_char], max_pages: int,
                quotes: Sequence[str]) -> int | tuple[str, ...]:
    """The PDF read for the normalised ``quotes``: the number of pages read when every quote
    is found by the last of them (what follows cannot change those verdicts), else every
    page's text, as :func:`read_pages` gives it, for the verdicts and the diagnosis of those
    missing (docs/guides/pdf.md#how-the-text-is-read). Raises as :func:`read_pages` does."""
    finder = _Finder(quotes)
    pages, found = _read(data, max_pages, finder if finder.looking else None)
    return len(pages) if found else pages


def _read(data: bytes | ctypes.Array[ctypes.c_char], max_pages: int, finder: _Finder | None
          ) -> tuple[tuple[str, ...], bool]:
    """The pages' text, up to the one by which ``finder`` has every quote (then True)."""
    from tracecite.pdf.engine import Document, OpenFailed

    try:
        document = Document(data)  # the empty password opens what it can
    except OpenFailed as error:
        raise PdfUnreadable(_open_failure(error.code)) from None
    found = False
    with document:
        count = document.pages
        if count > max_pages:
            raise PdfUnreadable(f"the PDF has {count} pages, over the limit of {max_pages}")
        pages: list[str] = []
        for index in range(count):
            text = document.text(index)
            if text is None:
                raise PdfUnreadable(f"page {index + 1} cannot be read (damaged)")
            pages.append(text)
            if finder is not None and finder.read(text):
                found = True
                break
    if not any(page.strip() for page in pages):
        raise PdfUnreadable("the PDF has no text layer (a scan or images only)")
    return tuple(pages), found


_OPEN_FAILURES = {
    1: "the PDF engine failed to open it",
    2: "the file cannot be read",
    3: "the PDF is damaged (not a PDF the engine can open)",
    4: "the PDF is encrypted and the empty password does not open it",
    5: "the PDF uses a security handler the engine does not support",
    6: "the PDF is damaged (a page cannot be read)",
}
"""PDFium's ``FPDF_GetLastError`` codes on opening a document, in TraceCite's words."""


def _open_failure(code: int) -> str:
    return _OPEN_FAILURES.get(code, "the PDF is damaged (the engine cannot open it)")
