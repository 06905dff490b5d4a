"""The fast parser: lexbor's HTML5 parser (through selectolax, the ``fast`` extra), giving the
tree html5lib gives.

lexbor is a C implementation of the HTML standard's parser, about fifty times faster than
html5lib. Its document is turned into the ElementTree that :mod:`~tracecite.visible.render`
walks and the near-miss diagnosis reads, shaped as html5lib's: HTML elements by their names,
SVG and MathML ones as ``{namespace}name`` (names and attributes adjusted as html5lib adjusts
them), text in ``text`` and ``tail``, comments as ElementTree comments, ``<template>`` content
left out. So there is one renderer, and the text is the one html5lib's tree gives.

lexbor follows the current standard (scripting off: ``<noscript>`` is markup) where html5lib 1.1
needed the corrections of :mod:`~tracecite.visible.parser` (``<template>``, ``<isindex>``), and
has none of html5lib's costs, so it needs none of its limits. What this parser does not do, or
does differently, sends the page to html5lib, which then decides (:func:`parse` returns None):

- a tree deeper than :data:`FAST_DEPTH`: html5lib applies Chromium's depth cap
  (:data:`~tracecite.visible.MAX_DEPTH`) to its stack of open elements, which a page whose
  tree is this shallow never reaches (foster parenting and table sections make the stack at
  most four times as deep as the tree), and nests formatting elements that deep only when
  they pile up: such pages go where the formatting limit is counted;
- more than half of :data:`~tracecite.visible.MAX_NODES` elements and comments (html5lib counts
  every element it puts on its stack, and some tags put the ``<head>`` there a second time),
  or more formatting start tags than end tags by :data:`FORMATTING_SURPLUS` (formatting
  elements left open, which html5lib's limit on them counts);
- markup whose tags, scanned before lexbor parses it, may keep more than 400 elements open
  (:func:`_unsuited`): lexbor cannot be interrupted, and a deep stack of open elements makes
  it quadratic;
- a ``<frameset>`` (which may drop what the body had), an HTML element with the name of an SVG
  or MathML one that the tree does not tell apart (``desc``, ``mi``, …), and a page with lone
  surrogates, which are not UTF-8.

The time budget is the same: lexbor's parse cannot be interrupted, but it is linear and takes
milliseconds for a 2 MiB page, and the clock is read after it and while the tree is built.
"""

from __future__ import annotations

import os
import re
import time
import xml.etree.ElementTree as ET
from typing import Any, Final

# The module itself, not its MAX_NODES: tests lower the limit on it. Named in full so that
# lexbor never depends on the package's __init__, which imports lexbor.
import tracecite.visible.tree_builder as tree_builder
from tracecite.ascii_case import ascii_lower
from tracecite.visible.limits import ParseLimitError

__all__ = ["FAST_DEPTH", "FORMATTING_SURPLUS", "PARSER_VARIABLE", "available", "chosen", "parse"]

PARSER_VARIABLE: Final = "TRACECITE_HTML_PARSER"
"""The environment variable that chooses the HTML parser: ``html5lib`` (the reference);
anything else, lexbor when it is installed (the ``fast`` extra)."""

FAST_DEPTH: Final = 100
"""Pages whose tree is deeper than this are parsed by html5lib (module docstring)."""

FORMATTING_SURPLUS: Final = 50
"""Pages with this many more formatting start tags than end tags are parsed by html5lib."""

_SVG: Final = "http://www.w3.org/2000/svg"
_MATHML: Final = "http://www.w3.org/1998/Math/MathML"
_SVG_TAG: Final = "{" + _SVG + "}"
_MATHML_TAG: Final = "{" + _MATHML + "}"
_HTML_NS: Final = 0
_SVG_NS: Final = 1
_MATHML_NS: Final = 2

_Parser: Any
try:
    from selectolax.lexbor import LexborHTMLParser as _Parser
except ImportError:  # the extra is not installed: html5lib alone
    _Parser = None


def available() -> bool:
    """Whether lexbor (selectolax) is installed."""
    return _Parser is not None


def chosen(parser: str | None = None) -> str:
    """The parser to use, ``"lexbor"`` or ``"html5lib"``: ``parser`` if given (ValueError for
    another name, or for lexbor when it is not installed), else the environment's
    :data:`PARSER_VARIABLE`, else lexbor when it is installed. The environment never stops a
    run: asking it for lexbor without the extra, or for a parser that does not exist, is
    asking for the default."""
    if parser is not None:
        if parser not in ("lexbor", "html5lib"):
            raise ValueError(f"the HTML parser is html5lib or lexbor, not {parser!r}")
        if parser == "lexbor" and _Parser is None:
            raise ValueError("the lexbor parser needs selectolax: pip install 'tracecite[fast]'")
        return parser
    if os.environ.get(PARSER_VARIABLE, "") == "html5lib" or _Parser is None:
        return "html5lib"
    return "lexbor"


def parse(html: str, budget: float) -> ET.Element | None:
    """The ``<html>`` element of ``html`` parsed by lexbor, shaped as html5lib's tree; None when
    the page goes to html5lib (module docstring). Raises :class:`ParseLimitError` past the
    time budget."""
    if _Parser is None:
        raise ValueError("the lexbor parser needs selectolax: pip install 'tracecite[fast]'")
    deadline = time.monotonic() + budget
    try:
        data = html.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: no UTF-8 for lexbor
        return None
    if _unsuited(html):
        return None
    document = _Parser(data)
    if time.monotonic() > deadline:
        raise _over_budget(budget)
    return _Builder(deadline, budget).build(document)


# What the scan reads of the markup, as the tokenizer reads it: a tag (group 1: its name, after
# a "/" in an end tag, ending at HTML's whitespace, "/" or ">", no other character str.isspace
# takes) with its attributes, whose quoted values may hold "<" and ">" (a value cut by the
# page's end runs to it); a comment (an abrupt one, or up to its end or the page's); a CDATA
# section's start (group 2); any other "<!" or "<?", and "</" with no letter, a bogus comment
# up to ">". Nothing in it can fail once a token has begun, so it never backtracks.
_ATTRIBUTES: Final = (
    r"(?:[\t\n\f\r /]+|[^\t\n\f\r />][^\t\n\f\r /=>]*"
    r"(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:\"[^\"]*(?:\"|\Z)|'[^']*(?:'|\Z)|[^\t\n\f\r >]*))?)*")
_TOKEN: Final = re.compile(  # "<" first, alone: the search then skips text at C speed
    r"<(?:(/?[A-Za-z][^\t\n\f\r />]*)" + _ATTRIBUTES + ">?"
    r"|!--(?:-?>|.*?(?:--!?>|\Z))|(!\[CDATA\[)|[!?][^>]*>?|/(?![A-Za-z])[^>]*>?)", re.S)
_SCAN_DEPTH: Final = 4 * FAST_DEPTH
_SCAN_REACH: Final = 16
# Start tags the scan leaves off its stack: void elements, and those whose end tag is optional
# and which cannot nest without an element that is on it (a list, a table, a select).
_NOT_OPENED: Final = frozenset((
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image", "img",
    "input", "keygen", "link", "meta", "param", "source", "track", "wbr",
    "p", "li", "dt", "dd", "td", "th", "tr", "tbody", "thead", "tfoot", "option", "optgroup",
    "rb", "rt", "rp", "rtc", "html", "head", "body", "colgroup",
))
# Where the parser stops looking for the element an end tag closes (and for most of what it
# looks for): a closing tag is not followed past them.
_SCOPE_EDGES: Final = frozenset((
    "applet", "caption", "html", "table", "td", "th", "marquee", "object", "template", "button",
    "ol", "ul", "select", "svg", "math", "foreignobject", "desc", "title", "mi", "mo", "mn", "ms",
    "mtext", "annotation-xml",
))
_FORMATTING_NAMES: Final = frozenset((
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt",
    "u",
))
# Elements whose content is text to the tokenizer: their end tag alone ends it.
_RAW_TEXT: Final = frozenset((
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "plaintext",
))
# Where a raw text element's text ends: its end tag (in any ASCII case), then HTML's whitespace,
# "/" or ">". A script's text, also at "<!--" and "<script" (the escapes that may keep a
# "</script>" inside it).
_RAW_END: Final = {name: re.compile(rf"</{name}(?=[\t\n\f\r />])", re.A | re.I)
                   for name in _RAW_TEXT - {"script", "plaintext"}}
_SCRIPT_MARKS: Final = re.compile(r"<!--(-*>)?|-->|</?script(?=[\t\n\f\r />])", re.A | re.I)


def _unsuited(html: str) -> bool:
    """Whether lexbor should leave the page to html5lib, by one scan of its tags: more
    formatting elements opened than closed by :data:`FORMATTING_SURPLUS`, or maybe more than
    :data:`_SCAN_DEPTH` elements open at once.

    lexbor looks through its stack of open elements for most tags, so a deep stack makes it
    quadratic (100,000 nested ``<div>`` take minutes, beyond any time budget, since lexbor
    cannot be interrupted): such a page goes to html5lib, which is bounded. The scan closes an
    element only where the parser surely would (an end tag that finds it near the top, before
    any element that ends a scope), so it never sees fewer open elements than there are where
    the stack is long and unbroken, which is where lexbor's searches are long. (It does not see
    the formatting elements the parser opens again by itself; those it opens from tags count,
    and so does what they leave open.) A page with more tags and comments than half the node
    limit goes too, before lexbor builds a tree that would be counted and sent there anyway.
    """
    stack: list[str] = []
    surplus = 0
    starts = 0  # start tags and comments: nodes, nearly
    ambiguous_until = 0  # end tags before this offset close nothing for the scan
    # Too many nodes, likely: the count after the parse would say so, after building the tree.
    limit: int = getattr(tree_builder, "MAX_NODES") // 2  # noqa: B009 (tests lower it)
    resume: int | None = 0  # where the tokens go on from, after a raw text element's text
    while resume is not None:
        tokens, resume = _TOKEN.finditer(html, resume), None
        for token in tokens:
            tag = token[1]
            if tag is None:
                if token[2] is not None:
                    # CDATA: text up to "]]>" in SVG and MathML, a bogus comment up to ">" in
                    # HTML: the scan goes on inside it, and nothing there closes.
                    close = html.find("]]>", token.end())
                    ambiguous_until = max(ambiguous_until,
                                          len(html) if close < 0 else close + 3)
                else:
                    starts += 1  # a comment (or a bogus one)
                continue
            # As the parser lowers it: with str.lower, an end tag that closes nothing there
            # ("</divk>" after "<divK>", a Kelvin sign) would close an element here.
            tag = ascii_lower(tag)
            if tag[0] != "/":
                starts += 1
                if tag in _NOT_OPENED:
                    continue
                if tag in _FORMATTING_NAMES:
                    surplus += 1
                stack.append(tag)
                if len(stack) > _SCAN_DEPTH or surplus >= FORMATTING_SURPLUS:
                    return True
                if tag in _RAW_TEXT:
                    if tag == "plaintext":
                        return starts > limit  # the rest of the page is its text
                    stack.pop()
                    ended = _raw_end(html, tag, token.end())
                    if "svg" in stack or "math" in stack:
                        # Raw text in HTML, markup in SVG and MathML (but for their
                        # integration points): the scan goes on inside, and nothing there closes.
                        ambiguous_until = max(ambiguous_until, ended[1])
                        continue
                    resume = ended[0]  # on from its end tag: its text is no markup
                    break
                continue
            if ambiguous_until and token.start() < ambiguous_until:
                continue
            name = tag[1:]
            if name in _FORMATTING_NAMES:
                surplus -= 1
                # The adoption agency may keep what is open inside: closed only when current.
                if stack and stack[-1] == name:
                    stack.pop()
            elif name in ("svg", "math"):
                # Self-closed SVG elements (<path/>) stay on the scan's stack: the end of the
                # drawing closes them.
                if name in stack:
                    del stack[len(stack) - 1 - stack[::-1].index(name):]
            elif name not in ("body", "html"):
                reach = max(-1, len(stack) - _SCAN_REACH - 1)
                for index in range(len(stack) - 1, reach, -1):
                    if stack[index] == name:
                        if name == "form":
                            del stack[index]  # </form> closes the form alone
                        else:
                            del stack[index:]
                        break
                    if stack[index] in _SCOPE_EDGES:
                        break
    return starts > limit


def _raw_end(html: str, name: str, position: int) -> tuple[int, int]:
    """Where the text of the raw text element ``name`` that starts at ``position`` ends, as the
    offsets of its end tag's start and of the end of the tag name (the page's end, twice, when
    it has none). A script's as the tokenizer's script states find it: after ``<!--`` it is
    escaped until ``-->``, and an escaped script's ``<script`` hides the ``</script>`` that
    follows (double escaped, until that ``</script>`` or ``-->``)."""
    if name != "script":
        end = _RAW_END[name].search(html, position)
        return (len(html), len(html)) if end is None else (end.start(), end.end())
    escaped = double = False
    for mark in _SCRIPT_MARKS.finditer(html, position):
        text = mark[0]
        if text[1] == "!":  # "<!--", or "<!-->" ("<!--->", …), which ends an escape at once
            if mark[1] is not None:
                escaped = double = False
            elif not double:
                escaped = True
        elif text == "-->":
            escaped = double = False
        elif text[1] == "/":
            if not double:
                return mark.start(), mark.end()
            double = False  # escaped again
        elif escaped:
            double = True
    return len(html), len(html)


def _over_budget(budget: float) -> ParseLimitError:
    return ParseLimitError(f"the page's markup takes more than {budget:g} s to parse")


class _Fallback(Exception):
    """The page goes to html5lib."""


# Elements whose children follow HTML rules again (HTML integration points and MathML text
# integration points; annotation-xml by its encoding, below).
_SVG_HOLDS_HTML: Final = frozenset(("foreignObject", "desc", "title"))
_MATHML_TEXT: Final = frozenset(("mi", "mo", "mn", "ms", "mtext"))
# Names that lexbor keeps for an SVG or MathML element moved into HTML: the tree alone does not
# say which namespace such an element is in.
_AMBIGUOUS: Final = frozenset(("desc", "mi", "mo", "mn", "ms", "mtext", "annotation-xml"))


def _foreign_attributes(attributes: dict[str, str | None], ns: int) -> dict[str, str]:
    """An SVG or MathML element's attributes named as html5lib names them."""
    from html5lib.constants import (
        adjustForeignAttributes,
        adjustMathMLAttributes,
        adjustSVGAttributes,
    )

    local = adjustSVGAttributes if ns == _SVG_NS else adjustMathMLAttributes
    out: dict[str, str] = {}
    for key, value in attributes.items():
        lowered = ascii_lower(key)
        foreign = adjustForeignAttributes.get(lowered)
        key = f"{{{foreign[2]}}}{foreign[1]}" if foreign is not None else local.get(lowered, key)
        out.setdefault(key, value or "")
    return out


class _Builder:
    """lexbor's document to an ElementTree, with the checks of the module docstring."""

    def __init__(self, deadline: float, budget: float) -> None:
        self.deadline = deadline
        self.budget = budget
        self.nodes = 0
        # Read at each parse, as the tree builder reads it (tests lower it there).
        self.limit: int = getattr(tree_builder, "MAX_NODES") // 2  # noqa: B009

    def build(self, document: Any) -> ET.Element | None:
        """The tree under the ``<html>`` element, or None for html5lib."""
        html = document.root
        if html is None:  # pragma: no cover - lexbor always makes an <html> element
            return None
        top = html.parent.first_child if html.parent is not None else html
        while top is not None:  # comments around <html> count, as html5lib counts them
            if top.is_comment_node:
                self.nodes += 1
            top = top.next
        try:
            return self._element(html)
        except _Fallback:
            return None

    def _element(self, html: Any) -> ET.Element:
        root = ET.Element("html", _attributes(html))
        nodes = self.nodes + 1
        limit = self.limit
        deadline = self.deadline
        sub_element = ET.SubElement
        comment = ET.Comment
        # (lexbor node, its ElementTree element, its namespace, whether its children follow
        # HTML rules, depth)
        stack: list[tuple[Any, ET.Element, int, bool, int]] = [(html, root, _HTML_NS, True, 0)]
        while stack:
            node, element, ns, html_rules, depth = stack.pop()
            if depth >= FAST_DEPTH:
                raise _Fallback
            last: ET.Element[Any] | None = None
            text: str | None = None  # the text since the last child
            for child in node.iter(include_text=True):
                tag = child.tag
                if tag == "-text":
                    piece = child.text_content or ""
                    text = piece if text is None else text + piece
                    continue
                if tag == "template" and html_rules:
                    continue  # an HTML template: its content is a fragment never rendered
                if text is not None:
                    if last is None:
                        element.text = text
                    else:
                        last.tail = text
                    text = None
                nodes += 1
                if nodes > limit:
                    raise _Fallback
                if not nodes % 1024 and time.monotonic() > deadline:
                    raise _over_budget(self.budget)
                if tag == "-comment":
                    last = comment(child.comment_content or "")
                    element.append(last)
                    continue
                if tag is None or tag[0] == "-":  # pragma: no cover - none in an element
                    continue
                if html_rules:
                    child_ns = _SVG_NS if tag == "svg" else _MATHML_NS if tag == "math" else (
                        _MATHML_NS if ns == _MATHML_NS and tag in ("mglyph", "malignmark")
                        else _HTML_NS)
                elif ns == _MATHML_NS and tag == "svg" and node.tag == "annotation-xml":
                    child_ns = _SVG_NS
                else:
                    child_ns = ns
                if child_ns == _HTML_NS:
                    if tag == "frameset" or tag in _AMBIGUOUS or tag != tag.lower():
                        raise _Fallback
                    raw = child.attributes
                    last = sub_element(element, tag, {
                        key: value or "" for key, value in raw.items()} if raw else {})
                    holds_html = True
                elif child_ns == _SVG_NS:
                    raw = child.attributes
                    last = sub_element(element, _SVG_TAG + tag,
                                       _foreign_attributes(raw, _SVG_NS) if raw else {})
                    holds_html = tag in _SVG_HOLDS_HTML
                else:
                    raw = child.attributes
                    attributes = _foreign_attributes(raw, _MATHML_NS) if raw else {}
                    last = sub_element(element, _MATHML_TAG + tag, attributes)
                    holds_html = tag in _MATHML_TEXT or (tag == "annotation-xml" and attributes.get(
                        "encoding", "").lower() in ("text/html", "application/xhtml+xml"))
                stack.append((child, last, child_ns, holds_html, depth + 1))
            if text is not None:
                if last is None:
                    element.text = text
                else:
                    last.tail = text
        self.nodes = nodes
        return root


def _attributes(node: Any) -> dict[str, str]:
    """An HTML element's attributes (an empty one's value is ``""``, as html5lib's)."""
    raw: dict[str, str | None] = node.attributes
    if not raw:
        return {}
    return {key: value or "" for key, value in raw.items()}


