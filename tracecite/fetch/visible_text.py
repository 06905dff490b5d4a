"""Visible text of an HTML page: what a browser's ``innerText`` shows with scripts off (SPEC §4).

The page is parsed with html5lib (scripting off, so ``<noscript>`` content is ordinary, visible
markup) into a C ElementTree, which is then walked without recursion. Block boundaries, table
rows and ``<br>`` become ``"\n"``, table cells ``"\t"``; inline elements add nothing, so
``<b>foo</b><i>bar</i>`` is ``foobar``. Whitespace counts carry no meaning: callers normalise
(NFC, then every ``str.isspace`` run to one space, then strip) before matching.

Not visible, following SPEC §4 and the browser's default rendering: ``<head>`` (``<title>``,
``<meta>``, ``<link>``), ``<script>``, ``<style>``, ``<template>``, comments, attribute values,
``[hidden]`` elements, ``<textarea>`` text, a closed ``<details>`` except its first ``<summary>``,
a ``<dialog>`` without ``open``, ``<noembed>``, ``<noframes>``, ``<datalist>``, ``<rp>``, the
fallback content of ``<iframe>``, ``<object>``, ``<embed>``, ``<video>``, ``<audio>``,
``<canvas>``, ``<meter>`` and ``<progress>``, SVG ``<title>``/``<desc>``/``<metadata>`` (and SVG
character data outside ``<text>``, which SVG never paints), MathML ``<annotation>``/
``<annotation-xml>`` (and all but the first child of ``<semantics>``), and every element whose
inline ``style`` makes it ``display: none`` or ``visibility: hidden``/``collapse``. A descendant
may set ``visibility: visible`` again; nothing undoes ``display: none``. ``<select>`` options are
visible, one per line, as in Chromium's ``innerText``.

Inline ``style`` is read the way the CSS cascade reads one declaration block: names are
case-insensitive, comments and odd spacing are allowed, ``!important`` beats a later normal
declaration, otherwise the last valid declaration wins, and invalid values are ignored. An inline
``display`` may add a boundary (``<span style="display:block">`` separates words, and so do the
children of an inline flex or grid container) but never removes one: ``<li
style="display:inline">`` still separates its text, because a person sees the items apart (the
page's CSS adds margins or separators) and may quote them with a space. As in CSS, an inline
``display`` other than ``none`` overrides the default ``display: none`` of ``[hidden]`` and of a
closed ``<dialog>``.

Stylesheets (``<style>`` rules, linked CSS) are not applied (SPEC §4): text that a page hides
or transforms with CSS is still found here, and text CSS shows as generated content is not.

XHTML is handled as HTML: SPEC §4 names html5lib for both, so there is no separate entry point.
The one difference that matters: a browser parses ``application/xhtml+xml`` with an XML parser,
where a self-closed ``<script/>``, ``<style/>``, ``<title/>``, ``<textarea/>`` or ``<iframe/>`` is
empty, whereas the HTML parser (like a browser given the same file as ``text/html``) reads the
rest of the page as that element's raw text, which is then hidden. Well-formed XHTML with
explicit end tags gives the same text either way.

The parse is bounded (see "Bounding the parse" below): like Chromium, the parser nests elements
at most 512 deep, and a page that needs more than a parse may spend (its time budget, or more
formatting elements or nodes than any real page has) raises :class:`ParseLimitError` instead of
giving a text that a browser would not show.
"""

from __future__ import annotations

import math
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, Final, SupportsIndex

from html5lib import _utils as html5lib_utils
from html5lib._tokenizer import HTMLTokenizer
from html5lib.constants import specialElements, tokenTypes
from html5lib.html5parser import HTMLParser, getPhases
from html5lib.treebuilders import getTreeBuilder
from html5lib.treebuilders.base import ActiveFormattingElements, Marker

from tracecite.fetch.limits import MAX_TIMEOUT

__all__ = ["MAX_DEPTH", "MAX_FORMATTING", "MAX_NODES", "ParseLimitError", "visible_text"]

# What an element does to the text around it (its "display" as innerText sees it).
_INLINE: Final = 0
_BLOCK: Final = 1  # a line break before and after
_ROW: Final = 2  # table-row: a line break before and after
_CELL: Final = 3  # table-cell: a tab after (and before, harmlessly)
_NONE: Final = 4  # not rendered, nor is anything inside it

# HTML standard §15 "Rendering": display block / list-item / table / table-caption, the table
# groups (whose breaks are harmless), and option/optgroup, which Chromium's innerText puts on lines
# of their own.
_BLOCK_TAGS: Final = (
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "center",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "html",
    "legend",
    "li",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "optgroup",
    "option",
    "p",
    "plaintext",
    "pre",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "tfoot",
    "thead",
    "ul",
    "xmp",
)
# display: none in the UA stylesheet, or content never rendered as text: the raw text of
# <iframe>/<noembed>/<noframes>, the fallback of embedded media and of the <meter>/<progress>
# widgets, the value of a <textarea>.
_HIDDEN_TAGS: Final = (
    "area",
    "audio",
    "base",
    "basefont",
    "canvas",
    "datalist",
    "embed",
    "head",
    "iframe",
    "link",
    "meta",
    "meter",
    "noembed",
    "noframes",
    "object",
    "param",
    "progress",
    "rp",
    "script",
    "style",
    "template",
    "textarea",
    "title",
    "video",
)
_HTML_DISPLAY: Final[dict[str, int]] = {
    **dict.fromkeys(_BLOCK_TAGS, _BLOCK),
    "tr": _ROW,
    "td": _CELL,
    "th": _CELL,
    **dict.fromkeys(_HIDDEN_TAGS, _NONE),
}

_SVG: Final = "{http://www.w3.org/2000/svg}"
_MATHML: Final = "{http://www.w3.org/1998/Math/MathML}"
# SVG subtrees that are never painted as text: descriptions, resources referenced from
# elsewhere (a <use> copy lives in a shadow tree that innerText does not read), code.
_SVG_HIDDEN: Final = frozenset(
    (
        "title",
        "desc",
        "metadata",
        "script",
        "style",
        "defs",
        "symbol",
        "clipPath",
        "mask",
        "pattern",
        "marker",
        "linearGradient",
        "radialGradient",
        "filter",
    )
)
_SVG_TEXT: Final = frozenset(("text", "tspan", "textPath", "a"))

# Walk flags inherited from the parent.
_F_VISIBLE: Final = 1  # computed visibility of the parent is "visible"
_F_BLOCKIFY: Final = 2  # the parent is a flex or grid container: children become blocks
_F_SVG_TEXT: Final = 4  # inside an SVG <text>, where character data is painted

_CSS_COMMENT: Final = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)
_IMPORTANT: Final = re.compile(r"!\s*important\s*\Z", re.IGNORECASE)
_CSS_WIDE: Final = frozenset(("inherit", "initial", "unset", "revert", "revert-layer"))

# CSS Display 3 keywords (and the prefixed legacy ones Chromium still accepts).
_DISPLAY_OUTSIDE: Final = frozenset(("block", "inline", "run-in"))
_DISPLAY_INSIDE: Final = frozenset(("flow", "flow-root", "table", "flex", "grid", "ruby", "math"))
_DISPLAY_SINGLE: Final[dict[str, tuple[int, bool]]] = {
    "none": (_NONE, False),
    "contents": (_INLINE, False),
    "table-row": (_ROW, False),
    "table-cell": (_CELL, False),
    "table-caption": (_BLOCK, False),
    "table-row-group": (_BLOCK, False),
    "table-header-group": (_BLOCK, False),
    "table-footer-group": (_BLOCK, False),
    "table-column": (_BLOCK, False),
    "table-column-group": (_BLOCK, False),
    "ruby-base": (_INLINE, False),
    "ruby-text": (_INLINE, False),
    "ruby-base-container": (_INLINE, False),
    "ruby-text-container": (_INLINE, False),
    "inline-block": (_INLINE, False),
    "inline-table": (_INLINE, False),
    "inline-flex": (_INLINE, True),
    "inline-grid": (_INLINE, True),
    "-webkit-box": (_BLOCK, True),
    "-webkit-flex": (_BLOCK, True),
    "-webkit-inline-box": (_INLINE, True),
    "-webkit-inline-flex": (_INLINE, True),
}

_NO_ATTRIBUTES: Final[dict[str, str]] = {}

_Display = tuple[int, bool] | None  # (kind, makes its children blocks), None: not declared
_Visibility = bool | None  # True visible, False hidden, None: inherited / not declared


class ParseLimitError(Exception):
    """The page needs more work than one parse may spend; the message says which limit.

    The message is TraceCite's own words, never page text, so it is safe to report.
    """


def visible_text(html: str, *, budget: float = MAX_TIMEOUT) -> str:
    """Return the text a browser shows for ``html`` with scripts off, like ``innerText``.

    Block boundaries, table rows and ``<br>`` give ``"\\n"`` and table cells ``"\\t"``; inline
    element boundaries give nothing. Entities are decoded, ``&nbsp;`` stays U+00A0, and the
    source's own whitespace is kept as is, so callers must normalise whitespace (SPEC §2)
    before matching. Malformed HTML is never an error; elements nested deeper than
    :data:`MAX_DEPTH` are kept, as Chromium keeps them, beside the element at that depth. Raises
    :class:`ParseLimitError` when parsing takes more than ``budget`` seconds, the page keeps
    more than :data:`MAX_FORMATTING` formatting elements open, or makes more than
    :data:`MAX_NODES` elements and comments.
    """
    if html.startswith("\ufeff"):
        html = html[1:]  # a byte order mark that the caller's decoding kept; browsers drop it
    root: ET.Element = _Parser(budget).parse(html)
    return _render(root)


def _render(root: ET.Element) -> str:
    """Walk the tree without recursion and join the visible pieces."""
    out: list[str] = []
    emit = out.append
    # A str is emitted when popped; a pair is an element to enter with its inherited flags.
    stack: list[str | tuple[ET.Element, int]] = [(root, _F_VISIBLE)]
    push = stack.append
    pop = stack.pop
    while stack:
        item = pop()
        if isinstance(item, str):
            emit(item)
            continue
        node, flags = item
        tag = node.tag
        if type(tag) is not str:
            continue  # a comment or processing instruction
        visible = flags & _F_VISIBLE
        child_flags = flags & ~(_F_BLOCKIFY | _F_SVG_TEXT)
        shows_text = True
        closed_details = False  # shows its first <summary> child and nothing else
        only_first = False  # MathML <semantics>/<maction>: the first child element alone
        # items() first: reading .attrib would give every element a dict of its own.
        attrib = node.attrib if node.items() else _NO_ATTRIBUTES

        if tag[0] != "{":
            kind = _HTML_DISPLAY.get(tag, _INLINE)
            if kind == _NONE:
                continue  # never rendered, whatever the page's style says (SPEC §4)
            if attrib:
                display, visibility = _inline_style(attrib.get("style", ""))
                if display is None:
                    # UA-stylesheet display:none, which an inline display overrides.
                    if "hidden" in attrib or (tag == "dialog" and "open" not in attrib):
                        continue
                elif display[0] == _NONE:
                    continue
                else:
                    if display[0] != _INLINE:
                        kind = display[0]  # may add a boundary, never removes one (see above)
                    if display[1]:
                        child_flags |= _F_BLOCKIFY
                if visibility is not None:
                    visible = _F_VISIBLE if visibility else 0
                closed_details = tag == "details" and "open" not in attrib
            elif tag == "dialog":
                continue
            else:
                closed_details = tag == "details"
            if tag == "br":
                emit("\n")
                continue
        elif tag.startswith(_SVG):
            local = tag[len(_SVG) :]
            if local in _SVG_HIDDEN:
                continue
            kind = _INLINE
            if local == "text":
                kind = _BLOCK  # each <text> is positioned on its own
                child_flags |= _F_SVG_TEXT
            elif local in _SVG_TEXT and flags & _F_SVG_TEXT:
                child_flags |= _F_SVG_TEXT
            elif local != "foreignObject":  # whose children are HTML again
                shows_text = False  # SVG paints character data only inside <text>
            if attrib:
                # Presentation attributes first, so that the style attribute overrides them.
                display, visibility = _inline_style(
                    _svg_presentation(attrib) + attrib.get("style", "")
                )
                if display is not None and display[0] == _NONE:
                    continue
                if visibility is not None:
                    visible = _F_VISIBLE if visibility else 0
        elif tag.startswith(_MATHML):
            local = tag[len(_MATHML) :]
            if local in ("annotation", "annotation-xml"):
                continue
            kind = _INLINE
            if local == "math" and attrib.get("display", "").lower() == "block":
                kind = _BLOCK
            elif local in ("mtr", "mlabeledtr"):
                kind = _ROW
            elif local == "mtd":
                kind = _CELL
            elif local in ("semantics", "maction"):
                only_first = True  # MathML Core renders only the first child
            if attrib:
                display, visibility = _inline_style(attrib.get("style", ""))
                if display is not None:
                    if display[0] == _NONE:
                        continue
                    if display[0] != _INLINE:
                        kind = display[0]
                if visibility is not None:
                    visible = _F_VISIBLE if visibility else 0
        else:
            kind = _INLINE  # an element of another namespace: its text shows plainly

        if flags & _F_BLOCKIFY and kind == _INLINE:
            kind = _BLOCK
        if kind != _INLINE:
            separator = "\t" if kind == _CELL else "\n"
            emit(separator)
            push(separator)
        if visible:
            child_flags |= _F_VISIBLE
        else:
            child_flags &= ~_F_VISIBLE
            shows_text = False
        if closed_details:
            summary = _first_summary(node)
            if summary is not None:
                push((summary, child_flags))
            continue
        if shows_text and node.text:
            emit(node.text)
        first = _first_element(node) if only_first else None
        for child in reversed(node):
            if shows_text and child.tail:
                push(child.tail)
            if first is None or child is first:
                push((child, child_flags))
    return "".join(out)


def _first_summary(details: ET.Element) -> ET.Element | None:
    """The summary a closed ``<details>`` still shows: its first ``<summary>`` child."""
    for child in details:
        if child.tag == "summary":
            return child
    return None


def _first_element(node: ET.Element) -> ET.Element | None:
    """The first child element (not comment) of ``node``."""
    for child in node:
        if type(child.tag) is str:
            return child
    return None


def _svg_presentation(attrib: dict[str, str]) -> str:
    """SVG's ``display``/``visibility`` attributes as declarations, to be overridden by style."""
    return "".join(
        f"{name}:{attrib[name]};" for name in ("display", "visibility") if name in attrib
    )


@lru_cache(maxsize=4096)  # pages repeat the same few style attributes many times
def _inline_style(style: str) -> tuple[_Display, _Visibility]:
    """Parse one declaration block; return the ``display`` and ``visibility`` it sets."""
    lowered = style.lower()
    if "display" not in lowered and "visibility" not in lowered:
        return None, None  # the common case, without tokenising anything
    display: _Display = None
    visibility: _Visibility = None
    display_important = visibility_important = False
    for declaration in _split_declarations(_CSS_COMMENT.sub(" ", lowered)):
        name, colon, value = declaration.partition(":")
        if not colon:
            continue
        name = name.strip()
        if name not in ("display", "visibility"):
            continue
        important_match = _IMPORTANT.search(value)
        important = important_match is not None
        if important_match is not None:
            value = value[: important_match.start()]
        value = value.strip()
        if name == "display":
            if display_important and not important:
                continue
            valid, parsed_display = _parse_display(value)
            if valid:
                display = parsed_display
                display_important = important
        else:
            if visibility_important and not important:
                continue
            if value == "visible" or value == "initial":
                visibility = True
            elif value in ("hidden", "collapse"):
                visibility = False
            elif value in _CSS_WIDE:
                visibility = None  # inherited: the parent's visibility applies
            else:
                continue
            visibility_important = important
    return display, visibility


def _parse_display(value: str) -> tuple[bool, _Display]:
    """Map a ``display`` value to (valid, (kind, makes its children blocks))."""
    single = _DISPLAY_SINGLE.get(value)
    if single is not None:
        return True, single
    if value in _CSS_WIDE:
        # initial/unset compute to inline; inherit/revert are rare enough to read as "not set".
        return True, ((_INLINE, False) if value in ("initial", "unset") else None)
    words = value.split()
    if not words or len(set(words)) != len(words) or len(words) > 3:
        return False, None
    outside = [w for w in words if w in _DISPLAY_OUTSIDE]
    inside = [w for w in words if w in _DISPLAY_INSIDE]
    list_item = "list-item" in words
    if len(outside) + len(inside) + list_item != len(words) or len(outside) > 1 or len(inside) > 1:
        return False, None
    inner = inside[0] if inside else "flow"
    if list_item and inner not in ("flow", "flow-root"):
        return False, None
    # A lone inner keyword: ruby and math default to inline, the others to block.
    block = outside[0] == "block" if outside else list_item or inner not in ("ruby", "math")
    return True, ((_BLOCK if block else _INLINE), inner in ("flex", "grid"))


def _split_declarations(block: str) -> list[str]:
    """Split a declaration block at semicolons outside strings and brackets."""
    if '"' not in block and "'" not in block and "(" not in block:
        return block.split(";")
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    i = 0
    while i < len(block):
        char = block[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char == "\\":
            i += 1
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        elif char == ";" and not depth:
            parts.append(block[start:i])
            start = i + 1
        i += 1
    parts.append(block[start:])
    return parts


# --- Bounding the parse ------------------------------------------------------------------------
# A 2 MiB page of hostile markup (hundreds of thousands of unclosed or mis-nested elements) would
# otherwise cost html5lib many seconds (minutes in its quadratic corners), hundreds of megabytes,
# and a tree as deep as the page is long. Four limits bound a parse. The depth cap changes the
# tree, in the way Chromium (the corpus oracle) changes it, so the text stays what a browser
# shows. The others stop the parse with ParseLimitError: MAX_FORMATTING and MAX_NODES, which no
# real page comes near, and the time budget (_Tokenizer) behind them all. A page past them gets a
# finding, never a text that a browser would not show.

MAX_DEPTH: Final = 512
"""Chromium's ``kMaximumHTMLParserDOMTreeDepth``: once more than this many elements are open, a
new element is attached to the parent of the current node instead of to the current node, so
nesting stops at this depth and deeper elements become siblings (Blink's
``HTMLConstructionSite::AttachLater``). They are still pushed on the stack of open elements, so
which end tag closes what is unchanged. As in Chromium, elements that the adoption agency moves
(mis-nested formatting tags) are not capped: ``<a><div>`` repeated still nests ever deeper."""

MAX_FORMATTING: Final = 100
"""Entries (formatting elements and the markers of open cells, captions and objects) the list of
active formatting elements may hold; real pages keep a handful (the corpus at most 8). html5lib
scans this list for every formatting tag, and re-opens all of it after every block that closes
them, so an unbounded list makes parsing quadratic."""

MAX_NODES: Final = 500_000
"""Elements and comments one parse may create. The densest corpus page has one element per 30
bytes (about 70,000 in 2 MiB); a 2 MiB table of one-digit cells has 350,000. Without a limit,
2 MiB of bare tags make 760,000 elements, and formatting elements re-opened after every block
("reconstruct the active formatting elements") make millions from a small page."""

_CLOCK_STEPS: Final = 16  # tokenizer steps between two looks at the clock

# --- Keeping html5lib linear on deep nesting ---------------------------------------------------
# html5lib answers "is a <p> in scope?", "is this element open?" and "which open element does this
# end tag close?" by scanning (and sometimes copying) the whole stack of open elements, once per
# tag: 100,000 nested <div>s or <span>s took minutes. Counting the names and members of the
# stack answers the common "not there at all" case in O(1), and the end-tag search walks the
# stack without copying it. The tree html5lib builds is unchanged.

_EtreeTreeBuilder: Any = getTreeBuilder("etree")
_InBodyPhase: Any = getPhases(False)["inBody"]
_HTML_NS: Final = "http://www.w3.org/1999/xhtml"


class _OpenElements(list[Any]):
    """html5lib's stack of open elements, also counting names and members, and the nodes of the
    tree: every element html5lib creates enters this stack (a void one leaves it at once)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[tuple[str, str], int] = {}  # by (namespace, local name)
        self.local_names: dict[str, int] = {}
        self.members: dict[int, int] = {}  # by id(): html5lib's nodes compare by identity
        self.nodes = 0  # elements and comments created so far

    def count_node(self) -> None:
        """One more node in the tree; past :data:`MAX_NODES`, the parse stops."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ParseLimitError(f"the page makes more than {MAX_NODES} elements and comments")

    def _add(self, node: Any) -> None:
        self.count_node()
        self.names[node.nameTuple] = self.names.get(node.nameTuple, 0) + 1
        self.local_names[node.name] = self.local_names.get(node.name, 0) + 1
        self.members[id(node)] = self.members.get(id(node), 0) + 1

    def _drop(self, node: Any) -> None:
        self.names[node.nameTuple] -= 1
        self.local_names[node.name] -= 1
        self.members[id(node)] -= 1
        if not self.members[id(node)]:
            del self.members[id(node)]

    def append(self, node: Any) -> None:
        super().append(node)
        self._add(node)

    def insert(self, index: SupportsIndex, node: Any) -> None:
        super().insert(index, node)
        self._add(node)

    def pop(self, index: SupportsIndex = -1) -> Any:
        node = super().pop(index)
        self._drop(node)
        return node

    def remove(self, node: Any) -> None:
        list.pop(self, self.index(node))
        self._drop(node)

    def index(self, node: Any, start: SupportsIndex = 0, stop: SupportsIndex = sys.maxsize) -> int:
        # The adoption agency looks for elements near the top of the stack: search there first.
        near_top = max(int(start), len(self) - 32)
        if near_top > int(start):
            try:
                return super().index(node, near_top, stop)
            except ValueError:
                pass
        return super().index(node, start, stop)

    def __setitem__(self, index: Any, node: Any) -> None:
        if not isinstance(index, int):
            raise TypeError("only single items of the open-element stack are replaced")
        old = self[index]
        super().__setitem__(index, node)
        self._drop(old)
        self._add(node)

    def __contains__(self, node: object) -> bool:
        return id(node) in self.members


class _Element:
    """An element in html5lib's tree: html5lib's ElementTree node (its "etree" builder), lighter.

    A parse may make hundreds of thousands of these (MAX_NODES), so the memory of each is the
    memory of a page. html5lib's node holds a ``__dict__``, two lists and a tuple of its own, and
    creates an attribute dict for every element: about 530 bytes with its ElementTree element.
    This one has slots, shares the name tuples, and makes a child list or an attribute dict only
    when there is something to put in it: about 180 bytes. The methods do what html5lib's do,
    quirks included (``childNodes`` lists only the children appended, not those inserted before
    another), so the tree is the same; one is faster: inserting before a child (foster
    parenting: content misplaced in a table goes before the table) finds that child from the
    end, where the table nearly always is, instead of copying and searching all the children
    from the start (13,000 stray nodes took seconds, 2 MiB of them more than the time budget).
    """

    __slots__ = ("_childNodes", "_element", "name", "nameTuple", "namespace", "parent")

    def __init__(self, name: str, namespace: str | None = None) -> None:
        self.name = name
        self.namespace = namespace
        names = _NAMES.get((namespace, name))
        if names is None:
            tag = name if namespace is None else f"{{{namespace}}}{name}"
            names = (tag, (namespace or _HTML_NS, name))
            if len(_NAMES) < 4096:  # a worker parses page after page: made-up names are many
                _NAMES[(namespace, name)] = names
        self._element = ET.Element(names[0])
        self.nameTuple = names[1]
        self.parent: _Element | None = None
        self._childNodes: list[Any] | None = None

    @property
    def attributes(self) -> dict[str, str]:
        """The element's attributes (a live dict, which html5lib may change)."""
        return self._element.attrib

    @attributes.setter
    def attributes(self, attributes: dict[Any, str]) -> None:
        element = self._element
        if not attributes and not element.items():
            return  # nothing to clear or set: no dict for it
        attrib = element.attrib
        attrib.clear()
        for key, value in attributes.items():
            # A namespaced (prefix, local name, namespace) key becomes "{namespace}name".
            attrib[f"{{{key[2]}}}{key[1]}" if isinstance(key, tuple) else key] = value

    @property
    def childNodes(self) -> Sequence[Any]:
        """The children appended (html5lib's list: those inserted before another are not in it)."""
        return self._childNodes if self._childNodes is not None else ()

    @childNodes.setter
    def childNodes(self, value: Sequence[Any]) -> None:
        # html5lib only ever empties it (reparentChildren), which removes every child.
        del self._element[:]
        self._childNodes = None

    def hasContent(self) -> bool:
        """Whether the element has text or children."""
        return bool(self._element.text or len(self._element))

    def appendChild(self, node: Any) -> None:
        """Append ``node`` as the last child."""
        if self._childNodes is None:
            self._childNodes = [node]
        else:
            self._childNodes.append(node)
        self._element.append(node._element)
        node.parent = self

    def insertBefore(self, node: Any, refNode: Any) -> None:
        """Insert ``node`` before the child ``refNode`` (found from the end)."""
        self._element.insert(_index_from_end(self._element, refNode._element), node._element)
        node.parent = self

    def removeChild(self, node: Any) -> None:
        """Remove the child ``node``."""
        if self._childNodes is not None:
            self._childNodes.remove(node)
        self._element.remove(node._element)
        node.parent = None

    def insertText(self, data: str, insertBefore: Any = None) -> None:
        """Add text at the end, or before the child ``insertBefore``: to the previous child's
        tail, or to this element's text when there is no previous child."""
        element = self._element
        if insertBefore is None:
            index = len(element)
        else:
            index = _index_from_end(element, insertBefore._element)
        if index:
            previous = element[index - 1]
            previous.tail = (previous.tail or "") + data
        else:
            element.text = (element.text or "") + data

    def cloneNode(self) -> _Element:
        """A new element with the same name and attributes, and no children."""
        clone = _Element(self.name, self.namespace)
        items = self._element.items()
        if items:
            clone._element.attrib.update(items)
        return clone

    def reparentChildren(self, newParent: Any) -> None:
        """Move this element's text and children to the end of ``newParent``."""
        # html5lib's steps (its etree node's, then its base node's).
        text = self._element.text
        if newParent.childNodes:
            newParent.childNodes[-1]._element.tail += text
        elif text is not None:
            newParent._element.text = (newParent._element.text or "") + text
        elif not newParent._element.text:
            newParent._element.text = ""
        self._element.text = ""
        for child in self.childNodes:
            newParent.appendChild(child)
        self.childNodes = []


class _Comment:
    """A comment in html5lib's tree: its ElementTree comment node, in slots."""

    __slots__ = ("_element", "parent")

    def __init__(self, data: str) -> None:
        self._element = ET.Comment(data)
        self.parent: _Element | None = None


_NAMES: dict[tuple[str | None, str], tuple[str, tuple[str, str]]] = {}
"""(namespace, name) → (ElementTree tag, html5lib name tuple), shared by all elements."""


def _index_from_end(parent: ET.Element, child: ET.Element) -> int:
    """The index of ``child`` among ``parent``'s children, searched from the last."""
    for index in range(len(parent) - 1, -1, -1):
        if parent[index] is child:
            return index
    raise ValueError("not a child")


class _FormattingElements(ActiveFormattingElements):
    """html5lib's list of active formatting elements, at most :data:`MAX_FORMATTING` long."""

    def nodesEqual(self, node1: Any, node2: Any) -> bool:
        # html5lib compares the ``attributes`` dicts, which makes one for every element.
        if node1.nameTuple != node2.nameTuple:
            return False
        items1, items2 = node1._element.items(), node2._element.items()
        return items1 == items2 or (len(items1) == len(items2) and dict(items1) == dict(items2))

    def append(self, node: Any) -> None:
        if node is not Marker:
            # The HTML standard's "Noah's Ark" clause, as html5lib applies it, minus its copy
            # of the list: of the equal elements after the last marker, three at most stay;
            # the earliest goes.
            equal = 0
            for index in range(len(self) - 1, -1, -1):
                element = self[index]
                if element is Marker:
                    break
                if self.nodesEqual(element, node):
                    equal += 1
                    if equal == 3:
                        del self[index]
                        break
        if len(self) >= MAX_FORMATTING:
            raise ParseLimitError(
                f"the page keeps more than {MAX_FORMATTING} formatting elements open at once")
        list.append(self, node)


class _TreeBuilder(_EtreeTreeBuilder):  # type: ignore[misc]  # html5lib is untyped
    """html5lib's ElementTree builder with an O(1) answer for "not in scope", Chromium's depth
    cap, the limits on formatting elements and nodes, and the lighter nodes above."""

    elementClass = _Element
    commentClass = _Comment

    def reset(self) -> None:
        super().reset()
        self.openElements = _OpenElements()
        self.activeFormattingElements = _FormattingElements()

    def insertElementNormal(self, token: dict[str, Any]) -> Any:
        # html5lib's insertElementNormal, with Chromium's depth cap (see MAX_DEPTH).
        element = self.createElement(token)
        open_elements = self.openElements
        parent = open_elements[-1]
        if len(open_elements) > MAX_DEPTH and parent.parent is not None:
            parent = parent.parent
        parent.appendChild(element)
        open_elements.append(element)
        return element

    def insertComment(self, token: dict[str, Any], parent: Any = None) -> None:
        self.openElements.count_node()
        super().insertComment(token, parent)

    def elementInScope(self, target: Any, variant: str | None = None) -> Any:
        name = target.nameTuple if hasattr(target, "nameTuple") else target
        if isinstance(name, str):
            name = (_HTML_NS, name)
        if not self.openElements.names.get(name):
            return False  # not open at all, so in no scope
        return super().elementInScope(target, variant)


class _FastInBodyPhase(_InBodyPhase):  # type: ignore[misc]  # html5lib is untyped
    """The "in body" insertion mode, with html5lib's generic end-tag step made linear."""

    __slots__ = ()

    def endTagOther(self, token: dict[str, Any]) -> None:
        # Same steps as html5lib's InBodyPhase.endTagOther, minus its copy of the whole stack.
        name = token["name"]
        open_elements = self.tree.openElements
        if not open_elements.local_names.get(name):
            self.parser.parseError("unexpected-end-tag", {"name": name})
            return
        for node in reversed(open_elements):
            if node.name == name:
                self.tree.generateImpliedEndTags(exclude=name)
                if open_elements[-1].name != name:
                    self.parser.parseError("unexpected-end-tag", {"name": name})
                while open_elements.pop() != node:
                    pass
                return
            if node.nameTuple in specialElements:
                self.parser.parseError("unexpected-end-tag", {"name": name})
                return

    def addFormattingElement(self, token: dict[str, Any]) -> None:
        # html5lib applies the Noah's Ark clause here and again in the list's append, each time
        # scanning the list: once, in _FormattingElements.append, gives the same list.
        self.tree.insertElement(token)
        self.tree.activeFormattingElements.append(self.tree.openElements[-1])

    endTagHandler = html5lib_utils.MethodDispatcher(
        list(_InBodyPhase.__dict__["endTagHandler"].items())
    )
    endTagHandler.default = endTagOther


class _Tokenizer(HTMLTokenizer):
    """html5lib's tokenizer, stopping the parse once its time budget is spent."""

    def __init__(self, stream: str, parser: HTMLParser, budget: float) -> None:
        super().__init__(stream, parser=parser)
        self.budget = budget
        self.deadline = time.monotonic() + budget

    def __iter__(self) -> Iterator[Any]:
        # html5lib's loop, plus a look at the clock. The tree is built from each token while
        # this generator waits, so the clock measures tokenizing and tree building alike. A
        # step costs microseconds on real pages (looking every _CLOCK_STEPS steps costs nothing
        # measurable); where html5lib is quadratic a step costs more, but far less than a second.
        self.tokenQueue = deque()
        steps = 0
        while self.state():
            steps += 1
            if not steps % _CLOCK_STEPS and time.monotonic() > self.deadline:
                raise ParseLimitError(
                    f"the page's markup takes more than {self.budget:g} s to parse")
            while self.stream.errors:
                yield {"type": tokenTypes["ParseError"], "data": self.stream.errors.pop(0)}
            while self.tokenQueue:
                yield self.tokenQueue.popleft()


class _Parser(HTMLParser):
    """html5lib's parser (scripting off) building an ElementTree with the parts above, within a
    budget of ``budget`` seconds."""

    def __init__(self, budget: float = math.inf) -> None:
        super().__init__(tree=_TreeBuilder, namespaceHTMLElements=False)
        self.budget = budget
        self.phases["inBody"] = _FastInBodyPhase(self, self.tree)

    def _parse(self, stream: str, innerHTML: bool = False, container: Any = "div",
               scripting: bool = False, **kwargs: Any) -> None:
        # html5lib's _parse with the tokenizer above. (html5lib parses a second time only when
        # a byte stream turns out to be in another encoding; a str has none.)
        self.innerHTMLMode = innerHTML
        self.container = container
        self.scripting = scripting
        self.tokenizer = _Tokenizer(stream, self, self.budget, **kwargs)
        self.reset()
        self.mainLoop()

    def reset(self) -> None:
        super().reset()
        # Parse errors never change the tree, and nothing here reads them. html5lib looks for
        # "invalid-codepoint" errors by running a large regular expression over every chunk
        # of input: skipping that scan makes parsing the corpus about a fifth faster.
        self.tokenizer.stream.reportCharacterErrors = _ignore_chunk

    def parseError(self, errorcode: str = "", datavars: Any = None) -> None:
        """Keep no parse errors (html5lib would work out a line and column for each)."""

    def resetInsertionMode(self) -> None:
        # Same steps as html5lib's HTMLParser.resetInsertionMode, minus its copy of the stack
        # (and minus its asserts, which only hold for fragment parsing).
        open_elements = self.tree.openElements
        new_phase = None
        for node in reversed(open_elements):
            name = node.name
            last = node is open_elements[0]
            if last:
                name = self.innerHTML
            elif node.namespace != self.tree.defaultNamespace:
                continue
            if name in _INSERTION_MODES:
                new_phase = self.phases[_INSERTION_MODES[name]]
                break
            if last:
                new_phase = self.phases["inBody"]
                break
        self.phase = new_phase


def _ignore_chunk(data: str) -> None:
    """Look for nothing in a chunk of input (see ``_Parser.reset``)."""


_INSERTION_MODES: Final = {
    "select": "inSelect",
    "td": "inCell",
    "th": "inCell",
    "tr": "inRow",
    "tbody": "inTableBody",
    "thead": "inTableBody",
    "tfoot": "inTableBody",
    "caption": "inCaption",
    "colgroup": "inColumnGroup",
    "table": "inTable",
    "head": "inBody",
    "body": "inBody",
    "frameset": "inFrameset",
    "html": "beforeHead",
}
