"""The inline tokens of a plain paragraph, without markdown-it-py's inline parser
(docs/guides/documents.md#citation-forms).

Most paragraphs that hold a citation are words, punctuation and ``[text](url)`` links: none of
the characters an inline rule of CommonMark starts at (``\\ & * _ ~ ! < > ` ^``, brackets outside
such a link or a ``<q cite="…">``/``</q>`` tag) and no line ending in spaces. For those the
tokens are known without running the rules: the text between the links and tags, each link
(``link_open``, its text, ``link_close``), each tag (``html_inline``), and a soft break at each
line end, the next line's leading spaces and tabs dropped, exactly as markdown-it-py makes them
(a test compares the two). Anything else returns None and goes to the parser.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tracecite.inputs.documents.rendering import Event, InlineText, Tag

if TYPE_CHECKING:  # markdown-it-py is imported only when a piece is parsed
    from markdown_it.token import Token

_LINK = re.compile(r"\[([^\[\]\\&*_~!<>`^\n]*)\]\(([^\s()<>\\&\[\]`\x00-\x1f\x7f]+)\)"
                   r"|(?P<tag><q cite=\"[^\"\s<>&\\`]+\">|</q>)")
_SPECIAL = re.compile(r"[\\&*_~!<>`^\[\]]|[ \t]\n")
_LEADING = re.compile(r"\n[ \t]+")


def plain_children(content: str) -> list[Token] | None:
    """The inline tokens of ``content``, or None when it is not plain."""
    from markdown_it.token import Token

    if _SPECIAL.search(_LINK.sub("x", content)) is not None:
        return None
    if content[-1:] in (" ", "\t"):
        return None  # the parser trims a paragraph's end; an inline that keeps one is unusual
    children: list[Token] = []
    at = 0
    for link in _LINK.finditer(content):
        _text(children, content[at:link.start()])
        tag = link.group("tag")
        if tag is not None:
            children.append(Token("html_inline", "", 0, content=tag))
        else:
            children.append(Token("link_open", "a", 1, attrs={"href": link.group(2)}))
            _text(children, link.group(1))
            children.append(Token("link_close", "a", -1))
        at = link.end()
    _text(children, content[at:])
    return children


def plain_inline(content: str, map_start: int, column: int | None = None) -> InlineText | None:
    """A plain inline's rendered text, as :func:`~.rendering.render` renders the tokens
    :func:`plain_children` makes, made without them (its links and tags are
    :class:`~.rendering.Tag` records, for their events); None when ``content`` is not plain.
    ``column``: where each of its lines starts in its source line, when the caller knows (see
    :attr:`~.rendering.InlineText.column`)."""
    if content[-1:] in (" ", "\t"):
        return None
    links = list(_LINK.finditer(content))
    at = 0
    for link in links:  # what stands between the links and tags (or around them) is plain
        if _SPECIAL.search(content, at, link.start()) is not None:
            return None
        at = link.end()
    if _SPECIAL.search(content, at) is not None:
        return None
    out = InlineText(content, map_start, column=column)
    parts: list[str] = []
    size = 0
    at = 0
    for link in links:
        if at < link.start():
            size = _plain_text(out, parts, content, at, link.start(), size)
        tag = link.group("tag")
        if tag is not None:
            out.events.append(Event(Tag("html_inline", tag), size, link.start(), link.end()))
        else:
            event = Event(Tag("link_open", attrs={"href": link.group(2)}), size, link.start())
            out.events.append(event)
            text_end = link.end(1)
            if link.start(1) < text_end:
                size = _plain_text(out, parts, content, link.start(1), text_end, size)
            event.end, event.close_at = link.end(), size
        at = link.end()
    if at < len(content):
        _plain_text(out, parts, content, at, len(content), size)
    out.text = "".join(parts)
    return out


def _plain_text(out: InlineText, parts: list[str], content: str, start: int, end: int,
                size: int) -> int:
    """Add ``content[start:end]`` (text and soft breaks, the next line's indent dropped) to a
    rendered inline whose text is ``size`` long; its new length."""
    while start < end:
        line_end = content.find("\n", start, end)
        stop = end if line_end == -1 else line_end
        if start < stop:
            out.starts.append(size)
            out.offsets.append(start)
            out.literal.append(True)
            out.code.append(False)
            parts.append(content[start:stop])
            size += stop - start
        if line_end == -1:
            break
        out.starts.append(size)
        out.offsets.append(line_end)
        out.literal.append(False)
        out.code.append(False)
        parts.append(" ")
        size += 1
        start = line_end + 1
        while start < end and content[start] in " \t":
            start += 1
    return size


def _text(children: list[Token], text: str) -> None:
    """Text with its line breaks: text, soft break, text (the next line's indent dropped)."""
    from markdown_it.token import Token

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
