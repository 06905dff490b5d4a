"""HTML's citations: ``<blockquote cite>``, ``<q cite>`` and links with a text directive, in HTML
files and as raw HTML in Markdown, and in HTML files the ``inline`` form, a quotation followed at
once by an ``<a href>`` (docs/guides/documents.md#citation-forms).

HTML is parsed by html5lib (the parser the live checks use); an element's quote is its visible
text as a browser shows it. html5lib's tree has no source positions, so each element is found
again in the source by its start tag: the n-th ``<q`` written (comments skipped) is the n-th
``q`` element. The copies html5lib makes of an ``<a>`` left open across blocks (misnested
markup) have no start tag of their own and are skipped, so each ``<a>`` cites once.

The ``inline`` form is read from the source itself (:func:`_quotations`), with Markdown's rules
and the same functions (:mod:`~tracecite.inputs.documents.forms`): the text of each block, its
tags left out and its character references decoded, each character kept with its offset in the
source, so a quote is located at its first character as written.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from bisect import bisect_right
from dataclasses import dataclass

from tracecite.inputs.documents.forms import (
    QUOTE_ENTITIES,
    QUOTE_MARKS,
    Collector,
    Place,
    cite_problem,
    enough_words,
    only_between,
    quotation_pairs,
)
from tracecite.inputs.documents.locate import Source
from tracecite.inputs.documents.rendering import InlineText
from tracecite.text_directive import DELIMITER

# Comments and the raw text of script, style, textarea and title hold no elements.
_TAGS = re.compile(r"<!--.*?(?:-->|\Z)|<(script|style|textarea|title)\b.*?(?:</\1\s*>|\Z)"
                   r"|<(blockquote|q|a)(?=[\s/>])", re.S | re.I)
_OPEN = re.compile(r"<(q|blockquote)(?=[\s/>])([^>]*)>\Z", re.I)
_CLOSE_BLOCKQUOTE = re.compile(r"</blockquote", re.I)
_CITE = re.compile(r"""\bcite\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.I)


def _start_tags(text: str) -> dict[str, list[int]]:
    """The offsets of each start tag of interest, by lower-case name, in source order."""
    found: dict[str, list[int]] = {"blockquote": [], "q": [], "a": []}
    for match in _TAGS.finditer(text):
        name = match.group(2)
        if name:
            found[name.lower()].append(match.start())
    return found


def from_html(collector: Collector, text: str, base: int,
              open_ended: list[tuple[str, str, int]] | None = None, *,
              quotes: bool = False) -> None:
    """The ``cite`` and ``fragment`` forms of an HTML text starting at source offset ``base``,
    and with ``quotes`` (an HTML file) the ``inline`` form: a link that is an inline quote's
    source is not also a ``fragment`` citation (its directive is checked with the quote).

    ``open_ended``: collect, instead of citing, a ``<blockquote cite>`` the text does not close
    (as its text, its ``cite`` and its tag's offset): in Markdown its quote goes on in the
    blocks that follow, up to the HTML block that closes it."""
    # html5lib is imported only when a document holds HTML that may cite: most Markdown
    # never needs it, and it takes longer to import than a page takes to parse.
    from tracecite.visible import DEFAULT_BUDGET, ParseLimitError
    from tracecite.visible.nodes import CopiedElement
    from tracecite.visible.parser import BoundedParser
    from tracecite.visible.render import render

    forms = collector.forms
    try:
        root = BoundedParser(DEFAULT_BUDGET).parse(text)
    except ParseLimitError:
        collector.problem(base, "the HTML is too large or too deeply nested to be read for "
                          "citations")
        return
    tags = _start_tags(text)
    used = _quotations(collector, text, base) if quotes and "inline" in forms else frozenset()
    seen = {"blockquote": 0, "q": 0, "a": 0}
    for element in root.iter():
        name = element.tag if isinstance(element.tag, str) else ""
        if name not in seen or isinstance(element, CopiedElement):
            continue  # a copy has no start tag of its own: its original is the citation
        index = seen[name]
        seen[name] += 1
        at = tags[name][index] if index < len(tags[name]) else 0
        if name == "a":
            if "fragment" in forms and at not in used:
                _fragment_link(collector, element, text, base, at)
        elif "cite" in forms and "cite" in element.attrib:
            if (open_ended is not None and name == "blockquote"
                    and _CLOSE_BLOCKQUOTE.search(text, at) is None):
                open_ended.append((render(element), element.attrib["cite"], base + at))
                continue
            _cite_element(collector, element, text, base, at)


def _cite_element(collector: Collector, element: ET.Element, text: str, base: int,
                  at: int) -> None:
    from tracecite.visible.render import render

    value = element.attrib["cite"]
    problem = cite_problem(value)
    if problem is not None:
        collector.problem(base + at, problem)
        return
    quote = render(element)
    words = quote.split()
    tag_end = text.find(">", at) + 1
    first = text.find(words[0], tag_end) if words else -1
    offset = base + (first if first != -1 else tag_end)
    closing = text.find(f"</{element.tag}", tag_end)
    end = base + (closing if closing != -1 else tag_end)
    start_line = collector.source.position(base + at)[0]
    lines = frozenset(range(start_line, collector.source.position(end)[0] + 1))
    collector.add("cite", quote, html.unescape(value).strip(), Place(offset, start_line, lines))


def _fragment_link(collector: Collector, element: ET.Element, text: str, base: int,
                   at: int) -> None:
    url = element.attrib.get("href", "")
    hash_at = url.find("#")
    if hash_at == -1 or url.find(DELIMITER, hash_at) == -1:
        return
    # The directive's first term, where the source spells it (else the tag's start).
    tag_end = text.find(">", at)
    term = text.find(DELIMITER + "text=", at, None if tag_end == -1 else tag_end)
    at = base + (term + len(DELIMITER + "text=") if term != -1 else at)
    line = collector.source.position(at)[0]
    ok, directive = collector.directive(url, at)
    if ok and directive is not None:
        collector.add("fragment", directive.start, url, Place(at, line, frozenset({line})))


def from_inline_html(collector: Collector, source: Source, inline: InlineText) -> None:
    """``<q cite>`` (or ``<blockquote cite>``) written as inline HTML in a Markdown paragraph."""
    events = inline.events
    for index, event in enumerate(events):
        if event.token.type != "html_inline":
            continue
        opening = _OPEN.match(event.token.content)
        if opening is None:
            continue
        attribute = _CITE.search(opening.group(2))
        if attribute is None:
            continue
        value = html.unescape(next(g for g in attribute.groups() if g is not None))
        name = opening.group(1).lower()
        close = next((e for e in events[index + 1:] if e.token.type == "html_inline"
                      and e.token.content.lower().startswith(f"</{name}")), None)
        start_offset = inline.source_offset(source, event.start)
        problem = cite_problem(value)
        if problem is not None:
            collector.problem(start_offset, problem)
            continue
        if close is None:
            continue
        quote = inline.text[event.at:close.at]
        lead = len(quote) - len(quote.lstrip())
        offset = inline.source_offset(source, inline.content_offset(event.at + lead))
        first = source.position(start_offset)[0]
        last = inline.line_of(close.start)
        collector.add("cite", quote, value.strip(),
                      Place(offset, first, frozenset(range(first, last + 1))))


# ---- the inline form in HTML ------------------------------------------------------------------

_TOKENS = re.compile(
    r"(?P<comment><!--.*?(?:-->|\Z))"
    r"|(?P<raw><(?P<raw_name>script|style|textarea|title)(?=[\s/>]).*?(?:</(?P=raw_name)\s*>|\Z))"
    r"|(?P<declaration><[!?][^>]*>?)"
    r"|(?P<tag></?(?P<name>[A-Za-z][^\s/>]*)(?P<attributes>(?:[^>\"']|\"[^\"]*\"|'[^']*')*)>)"
    r"|(?P<reference>&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);?)",
    re.S | re.I)
"""What is not literal text in HTML: comments, the raw text of elements that show none
(``script``, ``style``, ``textarea``, ``title``), declarations, tags and character references."""

_HREF = re.compile(r"""(?<![\w-])href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.I)

_CODE = frozenset({"code", "pre", "kbd", "samp", "template"})
"""Elements whose text is code, or no text at all: no quotation there is a citation."""

_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
    "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
    "h3", "h4", "h5", "h6", "head", "header", "hgroup", "hr", "html", "legend", "li", "main",
    "menu", "nav", "ol", "option", "p", "pre", "section", "summary", "table", "tbody", "td",
    "tfoot", "th", "thead", "tr", "ul"})
"""Elements that start and end a block: a quotation and its link stand in one block, as a
Markdown paragraph's do."""


_MARKUP = re.compile(r"<[^>]*>")


def _may_quote(text: str) -> bool:
    """Whether the text outside the tags holds a quotation mark, or a reference that may be one:
    most pages hold none, and need no reading for the inline form."""
    visible = _MARKUP.sub("", text)
    return any(mark in visible for mark in QUOTE_MARKS) or (
        "&" in visible and any(entity in visible for entity in QUOTE_ENTITIES))


@dataclass
class _Link:
    """An ``<a href>`` of a block: where its text starts and ends in the block's text, its URL,
    and where its start tag and its end tag's end are in the source. Not a record: the scan
    closes it (``close_at``, ``end``) when its end tag, the next ``<a>`` or the block's end
    comes."""

    at: int
    href: str
    tag: int
    close_at: int = -1
    end: int = -1


class _Block:
    """One block's text as a reader sees it, each character mapped back to the source."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.starts: list[int] = []  # where each piece starts in the block's text
        self.origins: list[int] = []  # … and in the source
        self.literal: list[bool] = []  # a piece as written (else a decoded reference)
        self.code_starts: list[int] = []  # the text in code or in a taken cite, from …
        self.code_ends: list[int] = []  # … to
        self.links: list[_Link] = []

    def add(self, text: str, origin: int, literal: bool, code: bool) -> None:
        """Append ``text``, which stands at ``origin`` in the source (each of its characters,
        when ``literal``; else it is a reference decoded); ``code``: in code or a taken cite."""
        if not text:
            return
        if code:
            if self.code_ends and self.code_ends[-1] == self.size:
                self.code_ends[-1] += len(text)
            else:
                self.code_starts.append(self.size)
                self.code_ends.append(self.size + len(text))
        self.parts.append(text)
        self.starts.append(self.size)
        self.origins.append(origin)
        self.literal.append(literal)
        self.size += len(text)

    def source_offset(self, at: int) -> int:
        """The source offset of the block text's character ``at``."""
        piece = bisect_right(self.starts, at) - 1
        origin = self.origins[piece]
        return origin + (at - self.starts[piece]) if self.literal[piece] else origin

    def in_code(self, at: int) -> bool:
        """Whether the character ``at`` is in code or in a taken cite's quote."""
        index = bisect_right(self.code_starts, at) - 1
        return index >= 0 and at < self.code_ends[index]

    def open_link(self, href: str, tag: int) -> None:
        """An ``<a href>`` whose start tag is at ``tag`` in the source starts here."""
        self.links.append(_Link(self.size, href, tag))

    def close_link(self, end: int) -> None:
        """The open link, if any, ends here; its markup ends at ``end`` in the source."""
        if self.links and self.links[-1].end == -1:
            self.links[-1].close_at, self.links[-1].end = self.size, end


def _quotations(collector: Collector, text: str, base: int) -> frozenset[int]:
    """The ``inline`` citations of an HTML text (docs/guides/documents.md#citation-forms): in
    each block, a quotation of at least four words outside code, comments and taken ``cite``
    elements, followed at once (only spaces, one comma or ``(`` between) by an ``<a href>``.
    Returns the offsets (in ``text``) of the start tags of the links they took."""
    if not _may_quote(text):
        return frozenset()
    used: set[int] = set()
    takes_cite = "cite" in collector.forms
    block = _Block()
    code = 0  # how deep in code elements
    cites: list[bool] = []  # each open q or blockquote: whether its text is a taken cite's
    taken = 0  # how many of them are
    at = 0
    for match in _TOKENS.finditer(text):
        hidden = code > 0 or taken > 0
        if match.start() > at:
            block.add(text[at:match.start()], at, True, hidden)
        at = match.end()
        if match.group("reference") is not None:
            decoded = html.unescape(match.group())
            block.add(decoded, match.start(), decoded == match.group(), hidden)
            continue
        name = (match.group("name") or "").lower()
        if not name:
            continue  # a comment, raw text or a declaration: no text
        closing = match.group().startswith("</")
        if name in _BLOCKS:
            block.close_link(match.start())
            _block_quotations(collector, block, base, used)
            block = _Block()
        if name in _CODE:
            code = max(code - 1, 0) if closing else code + 1
        elif name in ("q", "blockquote"):
            if not closing:
                cites.append(takes_cite and _CITE.search(match.group("attributes")) is not None)
                taken += cites[-1]
            elif cites:
                taken -= cites.pop()
        elif name == "a":
            # An <a> ends the one before it, as in a browser.
            block.close_link(match.end() if closing else match.start())
            href = None if closing else _HREF.search(match.group("attributes"))
            if href is not None:
                value = next(g for g in href.groups() if g is not None)
                block.open_link(html.unescape(value).strip(), match.start())
        elif name == "br":
            block.add("\n", match.start(), False, hidden)
    if at < len(text):
        block.add(text[at:], at, True, code > 0 or taken > 0)
    block.close_link(len(text))
    _block_quotations(collector, block, base, used)
    return frozenset(used)


MAX_BLOCK = 100_000
"""The longest block (in characters of its text) read for inline quotes, as for a Markdown
paragraph: a longer one that holds a link is reported (TC140), never read for them."""


def _block_quotations(collector: Collector, block: _Block, base: int, used: set[int]) -> None:
    """The ``inline`` citations of one block: Markdown's rules on its text."""
    if not block.links or not block.size:
        return
    if block.size > MAX_BLOCK:
        collector.problem(base + block.origins[0], f"a block of HTML over {MAX_BLOCK:,} "
                          "characters of text is not read for inline quotes")
        return
    text = "".join(block.parts)
    position = collector.source.position
    starts = [link.at for link in block.links]  # in order: each <a> ends the one before it
    for opening, closing in quotation_pairs(text, block.in_code):
        after = bisect_right(starts, closing)  # the first link after the closing mark
        if after and closing < block.links[after - 1].close_at:
            continue  # in a link's text: followed by the end of its own link
        quote = text[opening + 1:closing]
        if not enough_words(quote) or after == len(starts):
            continue
        follower = block.links[after]
        if not only_between(text[closing + 1:follower.at]):
            continue
        lead = len(quote) - len(quote.lstrip())
        offset = base + block.source_offset(opening + 1 + lead)
        line = position(offset)[0]
        last = position(base + max(follower.end - 1, follower.tag))[0]
        if collector.add("inline", quote, follower.href,
                         Place(offset, line, frozenset(range(line, last + 1)))):
            used.add(follower.tag)
