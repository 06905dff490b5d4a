"""Citations of a Markdown document (docs/guides/documents.md#citation-forms).

The document is parsed as CommonMark with GitHub's tables, strikethrough and footnotes by
markdown-it-py, whose block tokens carry their source lines. Inline parsing is the slow half of a
pure-Python Markdown parser, and most paragraphs can hold no citation: only the inlines that can
(a quotation mark and a link, a text directive, raw HTML with ``cite``, a block quote's
paragraphs when its last one reads as an attribution, a footnote a citation names) are parsed
further. The pieces of the common citing shapes are not parsed at all: the scanner
(:mod:`~tracecite.inputs.documents.scan`) makes their blocks, read by the same form code, and
markdown-it-py is imported only when a piece needs it.
"""

from __future__ import annotations

import html
import os
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracecite.inputs.documents.chunks import may_open_region, pieces
from tracecite.inputs.documents.cite import from_html, from_inline_html
from tracecite.inputs.documents.forms import (
    QUOTE_ENTITIES,
    QUOTE_MARKS,
    Collector,
    Place,
    cite_problem,
    enough_words,
    is_attribution,
    only_between,
    quotation_pairs,
)
from tracecite.inputs.documents.locate import Source
from tracecite.inputs.documents.plain import plain_inline
from tracecite.inputs.documents.rendering import Event, InlineText, render
from tracecite.inputs.documents.scan import Block, Fence, Paragraph, blocks
from tracecite.inputs.notes import parse_notes
from tracecite.text_directive import DELIMITER

if TYPE_CHECKING:  # imported when a piece is parsed: most documents' pieces are scanned
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

MAX_NESTING = 40
"""How deep blocks and inline markup nest before markdown-it-py stops reading deeper (a document
nesting deeper is reported, TC140): it bounds the parser's recursion."""

MAX_INLINE = 100_000
"""The longest paragraph (in characters) read for citations: inline parsing costs Python time per
bracket and delimiter, and no real paragraph comes near it (a longer one is reported, TC140)."""

MAX_MARKUP = 10_000
"""The most brackets, angle brackets and emphasis delimiters a paragraph read for citations may
hold (a paragraph with more is reported, TC140)."""

MAX_QUOTE_DEPTH = 32
"""Lines inside more block quotes than this are left out before parsing (reported, TC140):
markdown-it-py would stop at :data:`MAX_NESTING` anyway, but only after working through every
level of every such line, which a hostile file makes minutes."""

PARSER_VARIABLE = "TRACECITE_MARKDOWN_PARSER"
"""Set to ``markdown-it``, every piece of a document is parsed by markdown-it-py, none made
directly (:func:`read_markdown`)."""

_BLOCKQUOTE_TAG = re.compile("<blockquote", re.I)
_DEEP = re.compile(rf"\n[ \t]*(?:>[ \t]*){{{MAX_QUOTE_DEPTH + 1},}}[^\n]*")

_parser: MarkdownIt | None = None


def parser() -> MarkdownIt:
    """The one parser: CommonMark, tables, strikethrough, footnotes; inline parsing by hand."""
    global _parser
    if _parser is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.footnote import footnote_plugin

        md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING})
        md.enable(["table", "strikethrough"]).use(footnote_plugin)
        md.disable(["inline", "footnote_tail", "text_join"])
        # A link's URL as the writer wrote it (escapes and entities decoded), not re-encoded.
        md.normalizeLink = _as_written  # type: ignore[method-assign]
        # markdown-it refuses file: (and javascript:) links to keep rendered HTML safe; as
        # CommonMark says they are links, and a file: link names a local source.
        md.validateLink = _any_link  # type: ignore[method-assign]
        _parser = md
    return _parser


def _as_written(url: str) -> str:
    return url


def _any_link(url: str) -> bool:
    return True


def _quick_candidate(content: str) -> bool:
    """Whether an inline's raw content can hold an inline, fragment or cite citation."""
    if DELIMITER in content:
        return True
    if "<" in content and "cite" in content:
        return True
    if "[" not in content and "<" not in content:
        return False
    return any(mark in content for mark in QUOTE_MARKS) or (
        "&" in content and any(entity in content for entity in QUOTE_ENTITIES))


@dataclass
class _Document:
    source: Source
    collector: Collector
    env: dict[str, Any]
    footnotes: dict[str, tuple[list[Token], int]] = field(default_factory=dict)
    used_links: set[int] = field(default_factory=set)
    rendered: dict[int, InlineText] = field(default_factory=dict)
    direct: bool = True
    """Plain inlines rendered without the parser (False: markdown-it-py parses every one)."""


def read_markdown(source: Source, collector: Collector, *, whole: bool = False,
                  direct: bool | None = None) -> None:
    """Find every citation of a Markdown document into ``collector`` (``whole``: parse all of
    it, which gives the same citations, slower).

    Only the pieces that can hold one are read (:mod:`~tracecite.inputs.documents.chunks`).
    A piece of a common citing shape has its block tokens made directly
    (:mod:`~tracecite.inputs.documents.scan`; ``direct`` False, or the environment variable
    ``TRACECITE_MARKDOWN_PARSER`` set to ``markdown-it``, parses every piece instead, which
    gives the same citations, slower); the others are joined into one text and parsed: each
    starts where CommonMark starts afresh, so the joined text parses into the blocks each piece
    has in the whole document, and its lines are mapped back.
    """
    text = source.text
    spans = [(0, len(text))] if whole else pieces(text, merged=False)
    if not spans:
        return
    if direct is None:
        direct = os.environ.get(PARSER_VARIABLE, "") != "markdown-it"
    if (direct and not whole
            and sum(text.count(">", start, end) for start, end in spans) <= MAX_QUOTE_DEPTH):
        spans = _read_direct(source, collector, spans)
        if not spans:
            return
    else:
        spans = _merged(spans)
    doc = _Document(source, collector, {}, direct=direct)
    parts: list[str] = []
    starts: list[int] = []  # the joined text's line where each piece starts
    origins: list[int] = []  # the document's line where it starts
    line = 0
    for start, end in spans:
        starts.append(line)
        origins.append(source.position(start)[0] - 1)
        part = text[start:end]
        parts.append(part)
        line += part.count("\n")
    joined = "".join(parts)
    if joined.count(">") > MAX_QUOTE_DEPTH:
        joined = _without_deep_lines(doc, joined)
    tokens = parser().parse(joined, doc.env)
    if spans != [(0, len(text))]:
        _map_lines(tokens, doc.env, starts, origins)
    _collect_footnotes(doc, tokens)
    _deepest(doc, tokens)
    _walk(doc, tokens)


def _read_direct(source: Source, collector: Collector,
                 spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Read the pieces whose block tokens :func:`block_tokens` makes; the others, merged where
    they touch, are left for the parser. From the first ``<blockquote`` on, every piece is
    left to it: a block quote's HTML block left open quotes the blocks that follow it; and so,
    from the first piece left to it that holds a fence or a long HTML block, is every later one
    (joined, the parser may read it as held open by that piece)."""
    text = source.text
    made: list[Block] = []
    rest: list[tuple[int, int]] = []
    html_quote = _BLOCKQUOTE_TAG.search(text) if "<" in text else None
    parsed_from = len(text) if html_quote is None else html_quote.start()
    for start, end in spans:
        block = (None if end > parsed_from
                 else blocks(text[start:end], source.position(start)[0] - 1))
        if block is None:
            rest.append((start, end))
            if parsed_from > end and may_open_region(text[start:end]):
                parsed_from = end
        else:
            made.append(block)
    if made:
        _walk_blocks(_Document(source, collector, {}), made)
    return _merged(rest)


def _walk_blocks(doc: _Document, made: list[Block]) -> None:
    """:func:`_walk` of the blocks the scanner made: the same forms, in the same order."""
    forms = doc.collector.forms
    inlines: list[InlineText] = []
    for block in made:
        if isinstance(block, Fence):
            if "notes" in forms:
                _notes(doc, block.content, block.first)
        elif isinstance(block, Paragraph):
            inlines.append(block.inline)
        else:
            parts = [p.inline for p in block.paragraphs]
            inlines.extend(parts)
            if "blockquote" in forms and len(parts) > 1:
                _quoted_parts(doc, [block.first, block.end], parts)
    for inline in inlines:
        if _quick_candidate(inline.content):
            _inline_forms(doc, inline)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans with each one that starts where the one before ends joined to it."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _without_deep_lines(doc: _Document, joined: str) -> str:
    """``joined`` with the lines nested too deep in block quotes emptied (their line ends kept,
    so every other line stays where it is), and a TC140 at the document's first one."""
    deep = _DEEP.search("\n" + doc.source.text)
    if deep is None:
        return joined
    doc.collector.problem(deep.start(), f"block quotes nest deeper than {MAX_QUOTE_DEPTH} "
                          "levels here: those lines are not read for citations")
    return _DEEP.sub("\n", "\n" + joined)[1:]


def _map_lines(tokens: list[Token], env: dict[str, Any], starts: list[int],
               origins: list[int]) -> None:
    """Make the joined pieces' line maps (and their reference definitions') the document's."""
    def moved(pair: list[int]) -> list[int]:
        first = bisect_right(starts, pair[0]) - 1
        last = bisect_right(starts, max(pair[1] - 1, pair[0])) - 1
        return [pair[0] - starts[first] + origins[first],
                max(pair[1] - 1, pair[0]) - starts[last] + origins[last] + 1]

    for token in tokens:
        if token.map:
            token.map = moved(token.map)
    for definition in env.get("references", {}).values():
        if definition.get("map"):
            definition["map"] = moved(definition["map"])


def _deepest(doc: _Document, tokens: list[Token]) -> None:
    """A TC140 where blocks nest deeper than the parser reads."""
    deepest = next((t for t in tokens if t.level >= MAX_NESTING - 1 and t.map), None)
    if deepest is not None and deepest.map:
        doc.collector.problem(doc.source.line_start(deepest.map[0]),
                              f"blocks nest deeper than {MAX_NESTING} levels here: what is "
                              "deeper is not read for citations")


def _render(doc: _Document, token: Token) -> InlineText:
    """An inline token's rendered text (inline-parsed once; a plain one, and one the scanner
    rendered, without the parser unless the document is read by markdown-it alone)."""
    done = doc.rendered.get(id(token))
    if done is None and not _bounded(doc, token):
        done = doc.rendered[id(token)] = InlineText("", 0)
    if done is None:
        start = (token.map[0] if token.map else 0)
        if doc.direct:
            done = plain_inline(token.content, start)
        if done is None:
            children: list[Token] = []
            parser().inline.parse(token.content, parser(), doc.env, children)
            token.children = children
            done = render(children, token.content, start)
        doc.rendered[id(token)] = done
    return done


def _walk(doc: _Document, tokens: list[Token]) -> None:
    forms = doc.collector.forms
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "blockquote_open" and "blockquote" in forms:
            _blockquote(doc, tokens, index)
        elif kind == "fence" and token.info.strip().split(None, 1)[:1] == ["tracecite"]:
            if "notes" in forms:
                _notes(doc, token.content, token.map[0] if token.map else 0)
        elif kind == "html_block" and ("cite" in token.content
                                       or DELIMITER in token.content):
            _html_block(doc, tokens, index)
    for token in tokens:
        if token.type == "inline" and _quick_candidate(token.content):
            _inline_forms(doc, _render(doc, token))


def _small(content: str) -> bool:
    """Whether an inline is within :data:`MAX_INLINE` and :data:`MAX_MARKUP`."""
    return len(content) <= MAX_INLINE and sum(content.count(c) for c in "[<*_") <= MAX_MARKUP


def _bounded(doc: _Document, token: Token) -> bool:
    """Whether an inline is small enough to be read for citations (else a TC140)."""
    if _small(token.content):
        return True
    line = (token.map[0] if token.map else 0)
    doc.collector.problem(doc.source.line_start(line),
                          f"a paragraph over {MAX_INLINE:,} characters or with more than "
                          f"{MAX_MARKUP:,} brackets and emphasis marks is not read for citations")
    return False


def _html_block(doc: _Document, tokens: list[Token], index: int) -> None:
    """Raw HTML's ``cite`` and ``fragment`` forms; a ``<blockquote cite>`` the block leaves open
    quotes the Markdown blocks up to the HTML block that closes it."""
    token = tokens[index]
    line = token.map[0] if token.map else 0
    start = doc.source.line_start(line)
    # Inside a block quote or a list the block's text starts after the line's markers.
    raw = doc.source.line_text(line)
    head = token.content.split("\n", 1)[0]
    if head and raw.endswith(head):
        start += len(raw) - len(head)
    open_ended: list[tuple[str, str, int]] = []
    from_html(doc.collector, token.content, start, open_ended)
    for text, value, at in open_ended:
        problem = cite_problem(value)
        if problem is not None:
            doc.collector.problem(at, problem)
            continue
        end = next((i for i in range(index + 1, len(tokens)) if tokens[i].type == "html_block"
                    and "</blockquote" in tokens[i].content.lower()), len(tokens) - 1)
        parts = [_render(doc, t) for t in tokens[index + 1:end] if t.type == "inline"]
        texts = [text] + [p.text for p in parts]
        words = text.split()
        offset = doc.source.text.find(words[0], at) if words else -1
        if offset == -1 and parts:
            first = next((p for p in parts if p.text.strip()), parts[0])
            lead = len(first.text) - len(first.text.lstrip())
            offset = first.source_offset(doc.source, first.content_offset(lead))
        first_line = doc.source.position(at)[0]
        end_map = tokens[end].map
        last = end_map[1] if end_map else first_line
        doc.collector.add("cite", " ".join(texts), html.unescape(value).strip(),
                          Place(max(offset, at), first_line,
                                frozenset(range(first_line, max(last, first_line) + 1))))


def _collect_footnotes(doc: _Document, tokens: list[Token]) -> None:
    """Each footnote definition's tokens (rendered only when a citation names it)."""
    label: str | None = None
    body: list[Token] = []
    for token in tokens:
        if token.type == "footnote_reference_open":
            label, body = str(token.meta.get("label", "")), []
            doc.footnotes[label] = (body, (token.map[0] if token.map else 0))
        elif token.type == "footnote_reference_close":
            label = None
        elif label is not None:
            body.append(token)


def _blockquote(doc: _Document, tokens: list[Token], index: int) -> None:
    """The ``blockquote`` form: the other paragraphs, attributed by the last one's one link."""
    opening = tokens[index]
    end = _closing(tokens, index)
    if end - index < 4 or tokens[end - 1].type != "paragraph_close":
        return
    if tokens[end - 1].level != opening.level + 1:
        return  # the last paragraph is inside a nested block, not the quote's own
    attribution_token = tokens[end - 2]
    _quoted(doc, opening.map or [0, 1], attribution_token.content,
            lambda: _render(doc, attribution_token),
            lambda: [_render(doc, t) for t in tokens[index + 1:end - 2] if t.type == "inline"])


def _quoted(doc: _Document, map_: list[int], attribution_content: str,
            attribution_of: Callable[[], InlineText],
            parts_of: Callable[[], list[InlineText]]) -> None:
    """The ``blockquote`` form of a block quote at lines ``map_`` whose last paragraph's
    content is ``attribution_content``: rendered (each only when needed), the attribution and
    the other paragraphs."""
    if not is_attribution(attribution_content.lstrip("*_~ ")):
        return
    attribution = attribution_of()
    if not is_attribution(attribution.text):
        return
    links = [e for e in attribution.events if e.token.type == "link_open"]
    if len(links) != 1:
        return
    parts = [p for p in parts_of() if p.text.strip()]
    if not parts:
        return
    first = parts[0]
    lead = len(first.text) - len(first.text.lstrip())
    offset = first.source_offset(doc.source, first.content_offset(lead))
    start_line = map_[0] + 1
    lines = set(range(start_line, map_[1] + 1))
    link = links[0]
    lines |= _link_lines(doc, attribution, link)
    url = str(link.token.attrGet("href") or "")
    if doc.collector.add("blockquote", " ".join(p.text for p in parts), url,
                         Place(offset, start_line, frozenset(lines))):
        doc.used_links.add(id(link.token))


def _quoted_parts(doc: _Document, map_: list[int], parts: list[InlineText]) -> None:
    """:func:`_quoted` of a block quote's paragraphs already rendered."""
    _quoted(doc, map_, parts[-1].content, lambda: parts[-1], lambda: parts[:-1])


def _closing(tokens: list[Token], index: int) -> int:
    """The index of the token closing the one opened at ``index``."""
    level = tokens[index].level
    close = tokens[index].type.replace("_open", "_close")
    for at in range(index + 1, len(tokens)):
        if tokens[at].type == close and tokens[at].level == level:
            return at
    return len(tokens) - 1


def _link_lines(doc: _Document, inline: InlineText, link: Event) -> set[int]:
    """The 1-based lines of a link: where it is written, and its reference definition's."""
    lines = set(range(inline.line_of(link.start),
                      inline.line_of(max(link.end - 1, link.start)) + 1))
    if link.reference is not None:
        from markdown_it.common.utils import normalizeReference

        found = doc.env.get("references", {}).get(normalizeReference(link.reference))
        if found and found.get("map"):
            start, stop = found["map"]
            lines |= set(range(start + 1, stop + 1))
    return lines


def _notes(doc: _Document, content: str, fence_line: int) -> None:
    """The ``notes`` form: a ```` ```tracecite ```` block's records (its ``content``, the
    fence at 0-based line ``fence_line``), at the document's lines."""
    collector = doc.collector
    first = fence_line + 1  # the fence's own line, 1-based
    parsed = parse_notes(content, collector.path)
    for problem in parsed.findings:
        line = (problem.line or 1) + first
        collector.problems.append(_moved(problem, line, doc.source.line_text(line - 1),
                                         content, problem.line or 1))
    for record in parsed.records:
        quote_line = record.quote_line + first
        raw = doc.source.line_text(quote_line - 1)
        column = raw.find("quote:") + 1 if "quote:" in raw else 1
        value_at = column - 1 + len("quote:")
        column = value_at + len(raw[value_at:]) - len(raw[value_at:].lstrip()) + 1
        lines = frozenset({record.claim_line + first, quote_line, record.url_line + first})
        collector.add("notes", record.quote, record.url,
                      Place(doc.source.line_start(quote_line - 1) + column - 1, quote_line,
                            lines),
                      claim=record.claim)


def _moved(problem: Any, line: int, raw: str, content: str, inner_line: int) -> Any:
    """A notes finding at the document's line, its column shifted by the block's indent."""
    from dataclasses import replace
    inner = content.split("\n")[inner_line - 1] if content else ""
    shift = max(len(raw) - len(inner), 0) if raw.endswith(inner) else 0
    return replace(problem, line=line, column=(problem.column or 1) + shift, record=None)


def _inline_forms(doc: _Document, inline: InlineText) -> None:
    """The ``inline``, ``fragment`` and inline ``cite`` forms of one inline."""
    forms = doc.collector.forms
    if "inline" in forms:
        _quotations(doc, inline)
    if "cite" in forms:
        from_inline_html(doc.collector, doc.source, inline)
    if "fragment" in forms:
        for event in inline.events:
            if event.token.type == "link_open" and id(event.token) not in doc.used_links:
                _fragment(doc, inline, event)


def _quotations(doc: _Document, inline: InlineText) -> None:
    """The ``inline`` form: a quotation followed at once by its link or footnote."""
    text = inline.text
    for opening, closing in quotation_pairs(text, inline.in_code):
        if _in_link_text(inline, closing):
            continue
        quote = text[opening + 1:closing]
        if not enough_words(quote):
            continue
        follower = _follower(inline, closing + 1)
        if follower is None:
            continue
        found = _source_of(doc, inline, follower)
        if found is None:
            continue
        url, lines = found
        lead = len(quote) - len(quote.lstrip())
        offset = inline.source_offset(doc.source, inline.content_offset(opening + 1 + lead))
        line = doc.source.position(offset)[0]
        # Every line from the quote's to its link's (or footnote reference's) end.
        lines |= set(range(line, inline.line_of(max(follower.end - 1, follower.start)) + 1))
        if doc.collector.add("inline", quote, url, Place(offset, line, frozenset(lines))):
            doc.used_links.add(id(follower.token))


def _in_link_text(inline: InlineText, at: int) -> bool:
    """Whether the rendered character ``at`` is in a link's text (a quote there is followed
    by the end of its own link, not by a link)."""
    return any(e.token.type == "link_open" and e.at <= at < e.close_at for e in inline.events)


def _follower(inline: InlineText, after: int) -> Event | None:
    """The link or footnote reference right after a closing mark, if only spaces, one comma or
    ``(`` stand between."""
    for event in inline.events:
        if event.at < after:
            continue
        if event.token.type not in ("link_open", "footnote_ref"):
            return None
        return event if only_between(inline.text[after:event.at]) else None
    return None


def _source_of(doc: _Document, inline: InlineText, event: Event) -> tuple[str, set[int]] | None:
    """The URL a link or footnote reference names, with the lines it takes."""
    if event.token.type == "link_open":
        return str(event.token.attrGet("href") or ""), _link_lines(doc, inline, event)
    label = str(event.token.meta.get("label", ""))
    footnote = doc.footnotes.get(label)
    if footnote is None:
        return None
    body, _ = footnote
    for token in body:
        if token.type != "inline":
            continue
        rendered = _render(doc, token)
        for link in rendered.events:
            if link.token.type == "link_open":
                lines = _link_lines(doc, inline, event) | _link_lines(doc, rendered, link)
                return str(link.token.attrGet("href") or ""), lines
    return None


def _fragment(doc: _Document, inline: InlineText, event: Event) -> None:
    """The ``fragment`` form: a link whose URL has a text directive."""
    url = str(event.token.attrGet("href") or "")
    hash_at = url.find("#")
    if hash_at == -1 or url.find(DELIMITER, hash_at) == -1:
        return
    at = inline.content.find(DELIMITER, event.start)
    if at == -1 or (event.end != -1 and at > event.end):
        at = event.start  # the URL comes from a reference definition
    else:
        term = inline.content.find("=", at)
        at = term + 1 if term != -1 else at
    offset = inline.source_offset(doc.source, at)
    ok, directive = doc.collector.directive(url, offset)
    if not ok or directive is None:
        return
    line = doc.source.position(offset)[0]
    lines = _link_lines(doc, inline, event) | {line}
    doc.collector.add("fragment", directive.start, url, Place(offset, line, frozenset(lines)))



def rendered_blocks(source: Source) -> str:
    """The whole document as a reader sees it, a block to a line (code blocks as written, raw
    HTML as its visible text; a paragraph too large to render, as written)."""
    from tracecite.visible import visible_text
    doc = _Document(source, Collector("", source, frozenset()), {},
                    direct=os.environ.get(PARSER_VARIABLE, "") != "markdown-it")
    text = source.text
    if text.count(">") > MAX_QUOTE_DEPTH:
        text = _without_deep_lines(doc, text)
    out: list[str] = []
    for token in parser().parse(text, doc.env):
        if token.type == "inline":
            out.append(_render(doc, token).text if _small(token.content) else token.content)
        elif token.type in ("fence", "code_block"):
            out.append(token.content)
        elif token.type == "html_block":
            out.append(visible_text(token.content))
    return "\n".join(out)
