"""The parts of a Markdown document that can hold a citation, found without parsing it
(docs/guides/documents.md#citation-forms).

markdown-it-py reads about a megabyte a second; most of a documentation site is prose that holds
no citation. A document is cut where CommonMark itself starts afresh: before a line that follows
a blank line and starts at its first column (no block continues over that: a paragraph, block
quote, table or HTML block of kinds 6 and 7 ends at a blank line, and a list item or footnote
goes on only with indented lines), except inside a fenced code block or an HTML block of kinds
1 to 5 (``<script>``, ``<pre>``, ``<style>``, ``<textarea>``, comments, ``<?``, ``<!X``,
``<![CDATA[``), which blank lines do not end. Only the pieces that hold a mark a citation needs
(or a reference or footnote definition, which links anywhere may use) are parsed, each from a
boundary, so each parses as it would in the whole document.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from tracecite.inputs.documents.forms import ATTRIBUTION_DASHES, QUOTE_ENTITIES, QUOTE_MARKS

_BOUNDARY = re.compile(r"\n[ \t]*\n(?=[^ \t\n])")
# Patterns start at a "\n": the text is searched with one put before it, which is much faster
# than "^" in MULTILINE mode (that tries every character).
_REGION = re.compile(
    r"\n {0,3}(?:(?P<fence>`{3,}(?=[^`\n]*(?:\n|\Z))|~{3,})"
    r"|<(?P<raw>script|pre|style|textarea)(?=[\s>]|\Z)|(?P<comment><!--)|(?P<pi><\?)"
    r"|(?P<cdata><!\[CDATA\[)|(?P<decl><![A-Za-z]))",
    re.IGNORECASE,
)
_HTML_START = re.compile(r"\n {0,3}<[A-Za-z/]")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_RAW_END = re.compile(r"</(?:script|pre|style|textarea)>", re.I)
_ENDS = {"comment": "-->", "pi": "?>", "cdata": "]]>", "decl": ">"}
# The marks the forms look for (forms.py), so that a paragraph this filter passes over can
# hold none of them.
_QUOTE_MARKS = (*QUOTE_MARKS, *QUOTE_ENTITIES)
_DASHES = ATTRIBUTION_DASHES
_BLOCK_QUOTE = re.compile(r"\n[ \t]*>")
_OPEN_BLOCKQUOTE = re.compile(r"<blockquote(?=[\s>/])", re.I)
_CLOSE_BLOCKQUOTE = re.compile(r"</blockquote", re.I)
_ANY = (*QUOTE_MARKS, "&", ":~:", "cite", "tracecite", "]:", ">")


def _regions(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the fenced code blocks and long HTML blocks of a text that
    starts with a "\n", in order. A region's first line that may stand inside an HTML block (a
    line that may start one comes before it, no blank line between) is text there, and what
    the region was taken to hold may open one (a fence's closing line, a fence inside
    ``<pre>``): its region runs to the text's end, no cut being sure after it. So does an
    indented fence's (in a list item, maybe) with a line indented less: that line may stand
    outside the item, and the one taken for its closing fence open one."""
    out: list[tuple[int, int]] = []
    html = _HtmlLines(text)
    at = 0
    while True:
        opening = _REGION.search(text, at)
        if opening is None:
            return out
        end = _region_end(text, opening)
        if html.before(opening.start()) or (opening.lastgroup == "fence"
                                            and _closed_outside(text, opening, end)):
            end = len(text)
        out.append((opening.start() + 1, end))
        at = max(end, opening.end())


def _closed_outside(text: str, opening: re.Match[str], end: int) -> bool:
    """Whether an indented fence has a line up to its closing one (the line ``end`` ends)
    indented less than it (not blank): that line may end the list item the fence is in."""
    indent = opening.start("fence") - opening.start() - 1
    if indent == 0 or end >= len(text):
        return False
    first = text.find("\n", opening.end())
    for line in text[first + 1:end].split("\n"):
        if line.strip() and len(line) - len(line.lstrip(" ")) < indent:
            return True
    return False


class _HtmlLines:
    """The lines of a text that may start an HTML block (``<`` and a letter or ``/``, up to
    three spaces in), each with where its run of lines ends (the next blank line)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts = [found.start() for found in _HTML_START.finditer(text)]
        self._run_ends: dict[int, int] = {}

    def before(self, line_end: int) -> bool:
        """Whether such a line stands before the line after ``line_end`` (a "\n") in its run
        of lines (no blank line between)."""
        index = bisect_left(self._starts, line_end) - 1
        if index < 0:
            return False
        start = self._starts[index]
        run_end = self._run_ends.get(start)
        if run_end is None:
            blank = _BLANK_LINE.search(self._text, start + 1)
            run_end = self._run_ends[start] = blank.start() if blank else len(self._text)
        return line_end <= run_end


def may_open_region(piece: str) -> bool:
    """Whether a piece holds a line that may open a fenced code block or a long HTML block:
    parsed, such a line can hold open what follows, where the cuts took it for closed (a fence
    inside an HTML block of kind 6 is text, its closing line then opens one)."""
    return _REGION.search("\n" + piece) is not None


def _fenced(text: str, regions: list[tuple[int, int]]) -> list[bool]:
    """Whether each region is a fenced code block (not a long HTML block)."""
    return [text[start:start + 4].lstrip(" ")[:1] in ("`", "~") for start, _ in regions]


def _region_end(text: str, opening: re.Match[str]) -> int:
    """Where the region ``opening`` starts ends: at the end of the line that closes it (its
    "\n"), or the text's end."""
    kind = opening.lastgroup or ""
    if kind == "fence":
        fence = opening.group("fence")
        closer = re.compile(rf"\n {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*(?=\n|\Z)")
        line_end = text.find("\n", opening.end())
        found = closer.search(text, line_end) if line_end != -1 else None
        stop = found.end() if found else len(text)
    elif kind == "raw":
        # Any of the four end tags ends it, not only its own (as CommonMark has it).
        found = _RAW_END.search(text, opening.end())
        stop = found.end() if found else len(text)
    else:
        index = text.find(_ENDS[kind], opening.end())
        stop = len(text) if index == -1 else index + len(_ENDS[kind])
    line_end = text.find("\n", stop)
    return len(text) if line_end == -1 else line_end


def _marked(text: str, cuts: list[int], marks: tuple[str, ...]) -> set[int]:
    """The indexes of the pieces (between ``cuts``) that hold one of ``marks``; each piece is
    looked in once per mark, whatever the mark's count in it."""
    found: set[int] = set()
    for mark in marks:
        at = text.find(mark)
        while at != -1:
            index = bisect_right(cuts, at) - 1
            found.add(index)
            at = text.find(mark, cuts[index + 1]) if index + 1 < len(cuts) else -1
    return found


def _has(text: str, cuts: list[int], index: int, marks: tuple[str, ...]) -> bool:
    start, end = cuts[index], cuts[index + 1]
    return any(text.find(mark, start, end) != -1 for mark in marks)


def _entity_marked(text: str, cuts: list[int]) -> set[int]:
    """:func:`_marked` of the quotation marks' character references: each ``&`` found once,
    then told apart (an ``&`` is a single character to find, five entities are not)."""
    found: set[int] = set()
    at = text.find("&")
    while at != -1:
        if text.startswith(QUOTE_ENTITIES, at):
            index = bisect_right(cuts, at) - 1
            found.add(index)
            at = text.find("&", cuts[index + 1]) if index + 1 < len(cuts) else -1
        else:
            at = text.find("&", at + 1)
    return found


def _wanted(text: str, cuts: list[int], fences: list[tuple[int, int]]) -> list[int]:
    """The indexes of the pieces that hold what a citation needs (or a definition links use);
    ``fences``: the (start, end) offsets of the fenced code blocks."""
    wanted = _marked(text, cuts, (":~:", "]:"))
    # "cite" is found once for both marks: a piece holding "tracecite" holds "cite".
    wanted |= {i for i in _marked(text, cuts, ("cite",)) - wanted
               if _has(text, cuts, i, ("<", "tracecite"))}
    quoted = _marked(text, cuts, tuple(QUOTE_MARKS)) | _entity_marked(text, cuts)
    wanted |= {i for i in quoted - wanted if _has(text, cuts, i, ("[", "<"))}
    wanted |= {i for i in _marked(text, cuts, _DASHES) - wanted
               if _BLOCK_QUOTE.search(text, cuts[i] - 1, cuts[i + 1]) is not None}
    for index in sorted(wanted):
        # A <blockquote cite> left open (no "</blockquote" after its start tag) quotes the
        # pieces up to one whose "</blockquote" is no code (the HTML block that closes it).
        start, end = cuts[index], cuts[index + 1]
        opened = _last(_OPEN_BLOCKQUOTE, text, start, end)
        if opened != -1 and opened > _last(_CLOSE_BLOCKQUOTE, text, start, end):
            following = index + 1
            while following < len(cuts) - 1:
                wanted.add(following)
                if _closes(text, cuts[following], cuts[following + 1], fences):
                    break
                following += 1
    return sorted(wanted)


def _last(pattern: re.Pattern[str], text: str, start: int, end: int) -> int:
    """Where ``pattern`` last matches in ``text[start:end]``, or -1."""
    at = -1
    for found in pattern.finditer(text, start, end):
        at = found.start()
    return at


def _closes(text: str, start: int, end: int, fences: list[tuple[int, int]]) -> bool:
    """Whether a piece holds a ``</blockquote`` outside the fenced code blocks."""
    for found in _CLOSE_BLOCKQUOTE.finditer(text, start, end):
        at = found.start()
        if not any(begin <= at < stop for begin, stop in fences):
            return True
    return False


def pieces(text: str, *, merged: bool = True) -> list[tuple[int, int]]:
    """The (start, end) offsets of the runs of the document to parse, in order; each starts
    at a line's start where CommonMark starts afresh (``merged`` False: each piece apart, even
    where one ends where the next starts)."""
    if not any(mark in text for mark in _ANY):
        return []
    padded = "\n" + text  # offsets in it are one more than in the text
    regions = _regions(padded)
    ends = [boundary.end() for boundary in _BOUNDARY.finditer(padded)]
    cuts = [1]
    kept = 0
    for start, end in regions:  # no cut inside a code block or a long HTML block
        inside = bisect_right(ends, start, kept)
        cuts.extend(ends[kept:inside])
        kept = bisect_right(ends, end, inside)
    cuts.extend(ends[kept:])
    cuts.append(len(padded))
    out: list[tuple[int, int]] = []
    fences = [region for region, fenced in zip(regions, _fenced(padded, regions), strict=True)
              if fenced]
    for index in _wanted(padded, cuts, fences):
        start, end = cuts[index], cuts[index + 1]
        if start < end:
            if merged and out and out[-1][1] == start - 1:
                out[-1] = (out[-1][0], end - 1)
            else:
                out.append((start - 1, end - 1))
    return out
