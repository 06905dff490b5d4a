"""The inline tokens of a plain paragraph, without markdown-it-py's inline parser
(docs/guides/documents.md#citation-forms).

Most paragraphs that hold a citation are words, punctuation and ``[text](url)`` links: none of
the characters an inline rule of CommonMark starts at (``\\ & * _ ~ ! < > ` ^``, brackets outside
such a link) and no line ending in spaces. For those the tokens are known without running the
rules: the text between the links, each link (``link_open``, its text, ``link_close``), and a
soft break at each line end, the next line's leading spaces and tabs dropped, exactly as
markdown-it-py makes them (a test compares the two). Anything else returns None and goes to
the parser.
"""

from __future__ import annotations

import re

from markdown_it.token import Token

_LINK = re.compile(r"\[([^\[\]\\&*_~!<>`^\n]*)\]\(([^\s()<>\\&\[\]`\x00-\x1f\x7f]+)\)")
_SPECIAL = re.compile(r"[\\&*_~!<>`^\[\]]|[ \t]\n")
_LEADING = re.compile(r"\n[ \t]+")


def plain_children(content: str) -> list[Token] | None:
    """The inline tokens of ``content``, or None when it is not plain."""
    if _SPECIAL.search(_LINK.sub("x", content)) is not None:
        return None
    if content[-1:] in (" ", "\t"):
        return None  # the parser trims a paragraph's end; an inline that keeps one is unusual
    children: list[Token] = []
    at = 0
    for link in _LINK.finditer(content):
        _text(children, content[at:link.start()])
        children.append(Token("link_open", "a", 1, attrs={"href": link.group(2)}))
        _text(children, link.group(1))
        children.append(Token("link_close", "a", -1))
        at = link.end()
    _text(children, content[at:])
    return children


def _text(children: list[Token], text: str) -> None:
    """Text with its line breaks: text, soft break, text (the next line's indent dropped)."""
    if not text:
        return
    if "\n" in text:
        text = _LEADING.sub("\n", text)
        lines = text.split("\n")
        for number, line in enumerate(lines):
            if number:
                children.append(Token("softbreak", "br", 0))
            if line:
                children.append(Token("text", "", 0, content=line))
        return
    children.append(Token("text", "", 0, content=text))
