"""The block tokens of a piece of Markdown in its common citing shapes, made without
markdown-it-py's block parser (docs/guides/documents.md#citation-forms).

A piece (:mod:`~tracecite.inputs.documents.chunks`) that holds a citation is most often one
block of one of a few shapes: a plain paragraph; a block quote of plain paragraphs whose lines
all start with ``> `` and whose paragraphs a lone ``>`` line separates; a ```` ```tracecite ````
fence. For those the tokens are known without running the block rules: :func:`block_tokens`
makes exactly the tokens the parser makes (type, level, line map, content; a test compares the
two). Any other shape, and any line that could start or continue a block of another kind (a
heading, a list, a table, HTML, a definition, an indent, a setext underline, a thematic break),
returns None and the piece goes to the parser.
"""

from __future__ import annotations

import re

from markdown_it.token import Token

from tracecite.inputs.documents.plain import plain_inline

# A line that starts no block and continues a paragraph as text: its first character is none
# of those a block starts with (spaces, ``# > - + * = _ | : ` ~ < [ !``, a backslash), nor a
# digit that starts an ordered list item, and it ends in no space.
_UNSAFE_START = re.compile(r"[\s#>\-+*=_|:`~<\[!\\]|\d{1,9}[.)]")
_DASHES_ONLY = re.compile(r"[-\s]*")
_FENCE = "```tracecite"


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


def _paragraph(lines: list[str], first: int, level: int, tokens: list[Token]) -> bool:
    """Append a paragraph's three tokens (``lines`` from 0-based line ``first``); False when its
    inline content is not plain (the parser then reads the piece)."""
    content = "\n".join(lines)
    rendered = plain_inline(content, first)
    if rendered is None:
        return False
    map_ = [first, first + len(lines)]
    tokens.append(Token("paragraph_open", "p", 1, map=map_, level=level, block=True))
    # The rendered text rides along, so that it is not made twice.
    tokens.append(Token("inline", "", 0, map=map_, level=level + 1, content=content,
                        block=True, children=[], meta={"rendered": rendered}))
    tokens.append(Token("paragraph_close", "p", -1, level=level, block=True))
    return True


def block_tokens(piece: str, first: int) -> list[Token] | None:
    """The block tokens of ``piece`` (a piece of the document starting at 0-based line
    ``first``, its trailing blank lines included), or None when it is not of a shape known
    here."""
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
    tokens: list[Token] = []
    return tokens if _paragraph(lines, first, 0, tokens) else None


def _blockquote(lines: list[str], first: int) -> list[Token] | None:
    """A block quote of plain paragraphs, every line ``> text`` or a lone ``>`` between two
    paragraphs."""
    if lines[-1] == ">" or lines[0] == ">":
        return None
    tokens = [Token("blockquote_open", "blockquote", 1, map=[first, first + len(lines)],
                    markup=">", block=True)]
    paragraph: list[str] = []
    start = first
    for number, line in enumerate([*lines, ">"]):
        if line == ">":
            if not paragraph or not _paragraph(paragraph, start, 1, tokens):
                return None
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
    tokens.append(Token("blockquote_close", "blockquote", -1, markup=">", block=True))
    return tokens


def _fence(lines: list[str], first: int) -> list[Token] | None:
    """A ```` ```tracecite ```` fence closed by its last line, ```` ``` ````."""
    if lines[0] != _FENCE or len(lines) < 2 or lines[-1] != "```":
        return None
    inner = lines[1:-1]
    if any(line.lstrip(" ").startswith("```") for line in inner):
        return None
    content = "".join(line + "\n" for line in inner)
    return [Token("fence", "code", 0, map=[first, first + len(lines)], content=content,
                  markup="```", info="tracecite", block=True)]
