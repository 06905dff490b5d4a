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
from bisect import bisect_right

_BOUNDARY = re.compile(r"\n[ \t]*\n(?=[^ \t\n])")
_REGION = re.compile(
    r"^ {0,3}(?:(?P<fence>`{3,}(?=[^`\n]*$)|~{3,})"
    r"|<(?P<raw>script|pre|style|textarea)(?=[\s>]|$)|(?P<comment><!--)|(?P<pi><\?)"
    r"|(?P<cdata><!\[CDATA\[)|(?P<decl><![A-Za-z]))",
    re.MULTILINE | re.IGNORECASE,
)
_ENDS = {"comment": "-->", "pi": "?>", "cdata": "]]>", "decl": ">"}
_WANTED = re.compile(r"""["“«„]|:~:|cite|tracecite|\]:|^[ \t>]*>""", re.MULTILINE)


def _regions(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the fenced code blocks and long HTML blocks, in order."""
    out: list[tuple[int, int]] = []
    at = 0
    while True:
        opening = _REGION.search(text, at)
        if opening is None:
            return out
        start = opening.start()
        end = _region_end(text, opening)
        out.append((start, end))
        at = max(end, opening.end())


def _region_end(text: str, opening: re.Match[str]) -> int:
    """Where the region ``opening`` starts ends: after the line that closes it, or the text."""
    kind = opening.lastgroup or ""
    if kind == "fence":
        fence = opening.group("fence")
        closer = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$",
                            re.MULTILINE)
        found = closer.search(text, text.find("\n", opening.end()) + 1 or len(text))
        stop = found.end() if found else len(text)
    else:
        if kind == "raw":
            found = re.compile(f"</{opening.group('raw')}", re.I).search(text, opening.end())
            stop = found.end() if found else len(text)
        else:
            index = text.find(_ENDS[kind], opening.end())
            stop = len(text) if index == -1 else index + len(_ENDS[kind])
    line_end = text.find("\n", stop)
    return len(text) if line_end == -1 else line_end


def pieces(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the runs of the document to parse, in order; each starts
    at a line's start where CommonMark starts afresh."""
    wanted = _WANTED.search(text)
    if wanted is None:
        return []
    regions = _regions(text)
    region_starts = [start for start, _ in regions]
    cuts = [0]
    for boundary in _BOUNDARY.finditer(text):
        at = boundary.end()
        index = bisect_right(region_starts, at) - 1
        if index >= 0 and regions[index][0] < at <= regions[index][1]:
            continue  # inside a code block or a long HTML block
        cuts.append(at)
    cuts.append(len(text))
    out: list[tuple[int, int]] = []
    found: re.Match[str] | None = wanted
    while found is not None:
        index = bisect_right(cuts, found.start()) - 1
        start, end = cuts[index], cuts[min(index + 1, len(cuts) - 1)]
        if out and out[-1][1] >= start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
        found = _WANTED.search(text, end) if end < len(text) else None
    return out
