"""The other ways ``layout`` joins a PDF's lines (docs/guides/pdf.md#near-misses), and how a
diagnosis names the pages of a stretch of a PDF's text. Pure functions of the page texts as the
engine gave them."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from tracecite.matching import normalise
from tracecite.pdf.text import HYPHEN_BREAK, HYPHEN_MARKS, LIGATURE_TABLE

__all__ = ["layout_pages", "page_names", "with_starts"]

_DIGITS = re.compile(r"\d+")


def _hyphens_kept(raw: str) -> str:
    """A page's text with every hyphenated line end joined keeping its hyphen (the patterns
    :func:`tracecite.pdf.text.page_text` joins without it)."""
    text = raw.translate(LIGATURE_TABLE)
    return HYPHEN_BREAK.sub("-", HYPHEN_MARKS.sub("-", text))


def _without_running(pages: list[str]) -> list[str]:
    """The pages without their running headers and footers: a first or last line that is, its
    numbers aside, the first or last line of another page too."""
    if len(pages) < 2:
        return pages
    lines = [page.splitlines() for page in pages]
    ends: dict[str, int] = {}
    for page_lines in lines:
        for line in {*page_lines[:1], *page_lines[-1:]}:
            key = _DIGITS.sub("#", line.strip())
            ends[key] = ends.get(key, 0) + 1
    out = []
    for page_lines in lines:
        kept = list(page_lines)
        for index in (0, -1):
            if kept and ends.get(_DIGITS.sub("#", kept[index].strip()), 0) >= 2:
                del kept[index]
        out.append("\n".join(kept))
    return out


def layout_pages(raw: Sequence[str], pages: Sequence[str]) -> list[list[str]]:
    """The PDF's pages (``raw`` as the engine gave them, ``pages`` with the PDF rules applied)
    with their lines joined the other ways ``layout`` tries: hyphens at line ends kept; running
    headers and footers left out; both."""
    kept = [_hyphens_kept(page) for page in raw]
    return [kept, _without_running(list(pages)), _without_running(kept)]


def with_starts(pages: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """The normalised text of ``pages`` joined by a newline, and where each page that has
    text starts in it, with its 1-based number."""
    starts: list[tuple[int, int]] = []
    parts: list[str] = []
    position = 0
    for number, page in enumerate(pages, 1):
        text = normalise(page)
        if text:
            starts.append((position, number))
            parts.append(text)
            position += len(text) + 1
    return " ".join(parts), starts


def page_names(starts: list[tuple[int, int]], start: int, end: int) -> str | None:
    """``page N`` or ``pages N-M``: the pages of the stretch ``start``..``end`` of the text
    whose page ``starts`` are given (:func:`with_starts`)."""
    if not starts:
        return None
    offsets = [offset for offset, _ in starts]
    first = starts[max(0, bisect.bisect_right(offsets, start) - 1)][1]
    last = starts[max(0, bisect.bisect_right(offsets, max(start, end - 1)) - 1)][1]
    return f"page {first}" if first == last else f"pages {first}-{last}"
