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
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Any, Final, SupportsIndex

from html5lib import _utils as html5lib_utils
from html5lib.constants import specialElements
from html5lib.html5parser import HTMLParser, getPhases
from html5lib.treebuilders import getTreeBuilder

__all__ = ["visible_text"]

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

_Display = tuple[int, bool] | None  # (kind, makes its children blocks), None: not declared
_Visibility = bool | None  # True visible, False hidden, None: inherited / not declared


def visible_text(html: str) -> str:
    """Return the text a browser shows for ``html`` with scripts off, like ``innerText``.

    Block boundaries, table rows and ``<br>`` give ``"\\n"`` and table cells ``"\\t"``; inline
    element boundaries give nothing. Entities are decoded, ``&nbsp;`` stays U+00A0, and the
    source's own whitespace is kept as is, so callers must normalise whitespace (SPEC §2)
    before matching. Never raises on malformed HTML; nesting depth is not limited.
    """
    if html.startswith("\ufeff"):
        html = html[1:]  # a byte order mark that the caller's decoding kept; browsers drop it
    root: ET.Element = _Parser().parse(html)
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
        attrib = node.attrib

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
    """html5lib's stack of open elements, also counting names and members."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[tuple[str, str], int] = {}  # by (namespace, local name)
        self.local_names: dict[str, int] = {}
        self.members: dict[int, int] = {}  # by id(): html5lib's nodes compare by identity

    def _add(self, node: Any) -> None:
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


class _TreeBuilder(_EtreeTreeBuilder):  # type: ignore[misc]  # html5lib is untyped
    """html5lib's ElementTree builder with an O(1) answer for "not in scope"."""

    def reset(self) -> None:
        super().reset()
        self.openElements = _OpenElements()

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

    endTagHandler = html5lib_utils.MethodDispatcher(
        list(_InBodyPhase.__dict__["endTagHandler"].items())
    )
    endTagHandler.default = endTagOther


class _Parser(HTMLParser):
    """html5lib's parser (scripting off) building an ElementTree with the fast parts above."""

    def __init__(self) -> None:
        super().__init__(tree=_TreeBuilder, namespaceHTMLElements=False)
        self.phases["inBody"] = _FastInBodyPhase(self, self.tree)

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
