"""HTML's citations: ``<blockquote cite>``, ``<q cite>`` and links with a text directive, in HTML
files and as raw HTML in Markdown (docs/guides/documents.md#citation-forms).

HTML is parsed by html5lib (the parser the live checks use); an element's quote is its visible
text as a browser shows it. html5lib's tree has no source positions, so each element is found
again in the source by its start tag: the n-th ``<q`` written (comments skipped) is the n-th
``q`` element. The copies html5lib makes of an ``<a>`` left open across blocks (misnested
markup) have no start tag of their own and are skipped, so each ``<a>`` cites once.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

from tracecite.inputs.documents.forms import Collector, Place, cite_problem
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
              open_ended: list[tuple[str, str, int]] | None = None) -> None:
    """The ``cite`` and ``fragment`` forms of an HTML text starting at source offset ``base``.

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
    seen = {"blockquote": 0, "q": 0, "a": 0}
    for element in root.iter():
        name = element.tag if isinstance(element.tag, str) else ""
        if name not in seen or isinstance(element, CopiedElement):
            continue  # a copy has no start tag of its own: its original is the citation
        index = seen[name]
        seen[name] += 1
        at = tags[name][index] if index < len(tags[name]) else 0
        if name == "a":
            if "fragment" in forms:
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
