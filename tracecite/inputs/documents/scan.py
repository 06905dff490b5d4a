"""The block tokens of a piece of Markdown in its common citing shapes, made without
markdown-it-py's block parser (docs/guides/documents.md#citation-forms).

A piece (:mod:`~tracecite.inputs.documents.chunks`) that holds a citation is most often one
block of one of a few shapes: a plain paragraph; a block quote of plain paragraphs whose lines
all start with ``> `` and whose paragraphs a lone ``>`` line separates; a ```` ```tracecite ````
fence. For those the blocks are known without running the block rules: :func:`blocks` makes
them as records (a paragraph's rendered text, a block quote's paragraphs and lines, a fence's
content), and :func:`block_tokens` the tokens the parser makes of them (type, level, line map,
content; a test compares the two). Any other shape, and any line that could start or continue
a block of another kind (a heading, a list, a table, HTML, a definition, an indent, a setext
underline, a thematic break), returns None and the piece goes to the parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.inputs.documents.plain import plain_inline
from tracecite.inputs.documents.rendering import InlineText

if TYPE_CHECKING:  # markdown-it-py is imported only when a piece is parsed
    from markdown_it.token import Token

# A line that starts no block and continues a paragraph as text: its first character is none
# of those a block starts with (spaces, ``# > - + * = _ | : ` ~ < [ !``, a backslash), nor a
# digit that starts an ordered list item, and it ends in no space.
_UNSAFE_START = re.compile(r"[\s#>\-+*=_|:`~<\[!\\]|\d{1,9}[.)]")
_DASHES_ONLY = re.compile(r"[-\s]*")
_FENCE = "```tracecite"
_LONGEST = 10_000
"""A longer paragraph goes to the parser, which reports one too long to read."""


@dataclass(frozen=True)
class Paragraph:
    """A paragraph: its 0-based first and end lines, its rendered inline."""

    first: int
    end: int
    inline: InlineText


@dataclass(frozen=True)
class Quote:
    """A block quote of paragraphs, from 0-based line ``first`` to ``end``."""

    first: int
    end: int
    paragraphs: tuple[Paragraph, ...]


@dataclass(frozen=True)
class Fence:
    """A ```` ```tracecite ```` fence from 0-based line ``first`` to ``end``."""

    first: int
    end: int
    content: str


Block = Paragraph | Quote | Fence


def _plain_line(line: str) -> bool:
    """Whether ``line`` is text a paragraph holds, starting no block, ending in no space."""
    return bool(line) and _UNSAFE_START.match(line) is None and not line[-1].isspace()


def _opening_line(line: str) -> bool:
    """Whether ``line`` may open a paragraph: text, a link (a definition never passes the
    inline check), or an attribution's dash (``--`` only when the line is no thematic
    break)."""
    if not line or line[-1].isspace():
        return False
    if _UNSAFE_START.match(line) is None or line.startswith("["):
        return True
    return line.startswith("--") and _DASHES_ONLY.fullmatch(line) is None


def _paragraph(lines: list[str], first: int, column: int = 0) -> Paragraph | None:
    """A paragraph of ``lines`` from 0-based line ``first``, each the rest of its source line
    from ``column`` on; None when its inline content is not plain (the parser then reads the
    piece)."""
    content = "\n".join(lines)
    if len(content) > _LONGEST:
        return None
    rendered = plain_inline(content, first, column)
    return None if rendered is None else Paragraph(first, first + len(lines), rendered)


def blocks(piece: str, first: int) -> Block | None:
    """The block of ``piece`` (a piece of the document starting at 0-based line ``first``, its
    trailing blank lines included), or None when it is not of a shape known here."""
    if "\x00" in piece:
        return None  # the parser replaces NUL characters
    lines = piece.rstrip(" \t\n").split("\n")
    head = lines[0]
    if head.startswith("`"):
        return _fence(lines, first)
    if any(not line or line[-1].isspace() for line in lines):
        return None  # a blank line inside, or a line ending in a space
    if head.startswith(">"):
        return _blockquote(lines, first)
    if not _opening_line(head) or head.startswith("-"):
        return None
    if not all(_plain_line(line) or line.startswith("[") for line in lines[1:]):
        return None
    return _paragraph(lines, first)


def _blockquote(lines: list[str], first: int) -> Quote | None:
    """A block quote of plain paragraphs, every line ``> text`` or a lone ``>`` between two
    paragraphs."""
    if lines[-1] == ">" or lines[0] == ">":
        return None
    paragraphs: list[Paragraph] = []
    paragraph: list[str] = []
    start = first
    for number, line in enumerate([*lines, ">"]):
        if line == ">":
            made = _paragraph(paragraph, start, 2) if paragraph else None
            if made is None:
                return None
            paragraphs.append(made)
            paragraph = []
            start = first + number + 1
            continue
        if not line.startswith("> "):
            return None
        text = line[2:]
        if paragraph:
            if not (_plain_line(text) or text.startswith("[")):
                return None
        elif not _opening_line(text):
            return None
        paragraph.append(text)
    return Quote(first, first + len(lines), tuple(paragraphs))


def _fence(lines: list[str], first: int) -> Fence | None:
    """A ```` ```tracecite ```` fence closed by its last line, ```` ``` ````."""
    if lines[0] != _FENCE or len(lines) < 2 or lines[-1] != "```":
        return None
    inner = lines[1:-1]
    if any(line.lstrip(" ").startswith("```") for line in inner):
        return None
    return Fence(first, first + len(lines), "".join(line + "\n" for line in inner))


def block_tokens(block: Block) -> list[Token]:
    """The tokens markdown-it-py makes of a block (a test compares them with the parser's)."""
    from markdown_it.token import Token

    if isinstance(block, Fence):
        return [Token("fence", "code", 0, map=[block.first, block.end], content=block.content,
                      markup="```", info="tracecite", block=True)]
    if isinstance(block, Paragraph):
        return _paragraph_tokens(block, 0)
    tokens = [Token("blockquote_open", "blockquote", 1, map=[block.first, block.end],
                    markup=">", block=True)]
    for paragraph in block.paragraphs:
        tokens.extend(_paragraph_tokens(paragraph, 1))
    tokens.append(Token("blockquote_close", "blockquote", -1, markup=">", block=True))
    return tokens


def _paragraph_tokens(paragraph: Paragraph, level: int) -> list[Token]:
    from markdown_it.token import Token

    map_ = [paragraph.first, paragraph.end]
    return [Token("paragraph_open", "p", 1, map=map_, level=level, block=True),
            Token("inline", "", 0, map=map_, level=level + 1, content=paragraph.inline.content,
                  block=True, children=[]),
            Token("paragraph_close", "p", -1, level=level, block=True)]
