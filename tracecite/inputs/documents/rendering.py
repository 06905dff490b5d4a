"""A Markdown inline's rendered text, with a map back to the source
(docs/guides/documents.md#citation-forms).

The text is what a reader sees: emphasis markers dropped, entities and escapes decoded, a link's
text kept, code spans' content kept, line breaks as spaces, images and raw HTML as nothing. Each
piece of it remembers where it stands in the inline's content (the block's text without its
container markers), which :class:`InlineText` turns into offsets of the source file.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracecite.inputs.documents.locate import Source

if TYPE_CHECKING:  # markdown-it-py is imported only when a piece is parsed
    from markdown_it.token import Token

_SKIPPED_MARKUP = frozenset({"em_open", "em_close", "strong_open", "strong_close", "s_open",
                             "s_close"})


class Tag:
    """A link or raw HTML tag of a plain inline, with what the forms read of markdown-it-py's
    token for it (made without importing it: most documents need no parser)."""

    __slots__ = ("attrs", "content", "markup", "meta", "type")

    def __init__(self, type: str, content: str = "", attrs: dict[str, str] | None = None,
                 ) -> None:
        self.type = type
        self.content = content
        self.attrs = attrs or {}
        self.markup = ""
        self.meta: dict[Any, Any] = {}

    def attrGet(self, name: str) -> str | None:  # the name the token's method has
        """The attribute's value, as :meth:`markdown_it.token.Token.attrGet` gives it."""
        return self.attrs.get(name)


@dataclass
class Event:
    """A link, footnote reference or raw HTML tag of an inline: where it stands in the rendered
    text (``at``) and in the content (``start`` to ``end``)."""

    token: Token | Tag
    at: int
    start: int
    end: int = -1
    close_at: int = -1
    """For a link: where its text ends in the rendered text."""
    reference: str | None = None
    """For a reference link: its label as written."""


@dataclass
class InlineText:
    """One inline's rendered ``text`` with its pieces' places and its events."""

    content: str
    map_start: int
    """The 0-based source line of the content's first line."""
    text: str = ""
    starts: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    literal: list[bool] = field(default_factory=list)
    code: list[bool] = field(default_factory=list)
    """Per piece: a code span's content or an escaped character, whose quotation marks are
    text, never a quotation's delimiters."""
    events: list[Event] = field(default_factory=list)
    column: int | None = None
    """Where each content line starts in its source line, when every line starts at the same
    column and is the rest of its source line (a scanned paragraph's); None: found per line."""

    def content_offset(self, at: int) -> int:
        """Where the rendered character ``at`` comes from in the content."""
        if not self.starts:
            return 0
        index = max(bisect_right(self.starts, at) - 1, 0)
        if self.literal[index]:
            return self.offsets[index] + at - self.starts[index]
        return self.offsets[index]

    def in_code(self, at: int) -> bool:
        """Whether the rendered character ``at`` is a code span's or an escaped one."""
        if not self.starts:
            return False
        return self.code[max(bisect_right(self.starts, at) - 1, 0)]

    def source_offset(self, source: Source, content_at: int) -> int:
        """The source offset of the content's character ``content_at``."""
        content = self.content
        if self.column is not None:
            line = content.count("\n", 0, content_at)
            line_start = content.rfind("\n", 0, content_at) + 1
            return (source.line_start(self.map_start + line) + self.column + content_at
                    - line_start)
        line = content.count("\n", 0, content_at)
        line_start = content.rfind("\n", 0, content_at) + 1
        line_end = content.find("\n", content_at)
        piece = content[line_start:] if line_end == -1 else content[line_start:line_end]
        source_line = self.map_start + line
        raw = source.line_text(source_line)
        piece_r = piece.rstrip()
        raw_r = raw.rstrip()
        if piece_r and raw_r.endswith(piece_r):
            column = len(raw_r) - len(piece_r)
        else:
            found = raw.find(piece.strip())
            column = max(found - (len(piece) - len(piece.lstrip())), 0)
        return source.line_start(source_line) + column + content_at - line_start

    def line_of(self, content_at: int) -> int:
        """The 1-based source line of the content's character ``content_at``."""
        return self.map_start + self.content.count("\n", 0, content_at) + 1


def render(children: list[Token], content: str, map_start: int) -> InlineText:
    """Render an inline's tokens (as markdown-it made them, escapes and entities kept apart)."""
    out = InlineText(content, map_start)
    parts: list[str] = []
    size = 0
    cursor = 0
    open_links: list[Event] = []

    def piece(text: str, offset: int, literal: bool, code: bool = False) -> None:
        nonlocal size
        out.starts.append(size)
        out.offsets.append(offset)
        out.literal.append(literal)
        out.code.append(code)
        parts.append(text)
        size += len(text)

    def seek(what: str) -> int:
        found = content.find(what, cursor) if what else -1
        return cursor if found == -1 else found

    for token in children:
        kind = token.type
        if kind == "text":
            at = seek(token.content)
            piece(token.content, at, True)
            cursor = at + len(token.content)
        elif kind == "text_special":
            at = seek(token.markup)
            piece(token.content, at, False, code=token.info == "escape")
            cursor = at + len(token.markup)
        elif kind in ("softbreak", "hardbreak"):
            at = seek("\n")
            piece(" ", at, False)
            cursor = at + 1
        elif kind == "code_inline":
            at = seek(token.markup) + len(token.markup)
            cursor = at
            inner = seek(token.content) if token.content else at
            piece(token.content, inner, True, code=True)
            cursor = inner + len(token.content)
        elif kind in _SKIPPED_MARKUP:
            cursor = seek(token.markup) + len(token.markup)
        elif kind == "link_open":
            at = seek("<" if token.markup == "autolink" else "[")
            event = Event(token, size, at)
            out.events.append(event)
            open_links.append(event)
            cursor = at + 1
        elif kind == "link_close":
            cursor = _close_link(content, cursor, token, open_links.pop() if open_links else None,
                                 size)
        elif kind == "image":
            cursor = seek("![") + 2
        elif kind == "html_inline":
            at = seek(token.content)
            out.events.append(Event(token, size, at, at + len(token.content)))
            cursor = at + len(token.content)
        elif kind in ("footnote_ref", "footnote_inline"):
            at = seek("[")
            end = content.find("]", at)
            out.events.append(Event(token, size, at, at if end == -1 else end + 1))
            cursor = at if end == -1 else end + 1
    out.text = "".join(parts)
    return out


def _close_link(content: str, cursor: int, token: Token, event: Event | None, size: int) -> int:
    """Move past a link's end (``]`` and its destination or label); completes its event."""
    if token.markup == "autolink":
        end = content.find(">", cursor)
        end = cursor if end == -1 else end + 1
        if event is not None:
            event.end, event.close_at = end, size
        return end
    close = content.find("]", cursor)
    if close == -1:
        return cursor
    end = close + 1
    reference: str | None = None
    if content.startswith("(", end):
        end = _past_parenthesis(content, end)
    elif content.startswith("[", end):
        label_end = content.find("]", end)
        if label_end != -1:
            reference = content[end + 1:label_end]
            end = label_end + 1
    else:
        reference = ""
    if event is not None:
        event.end, event.close_at = end, size
        if reference is not None:
            # A collapsed or shortcut reference is labelled by the link's own text.
            event.reference = reference or content[event.start + 1:close]
    return end


def _past_parenthesis(content: str, at: int) -> int:
    """The offset after the ``)`` that closes the destination starting at ``at`` (``(``)."""
    depth = 0
    i = at
    size = len(content)
    while i < size:
        char = content[i]
        if char == "\\":
            i += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return size
