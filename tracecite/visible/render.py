"""The renderer: a parsed page's tree walked to the text ``innerText`` shows with scripts off.

The walk uses a stack, not recursion, since a tree may be :data:`~tracecite.visible.MAX_DEPTH`
deep (and deeper where the adoption agency nests it). Block boundaries, table rows and ``<br>``
become ``"\\n"``, table cells ``"\\t"``; inline elements add nothing.

What each element does by default follows the browser's default rendering (the tables below);
an inline ``style`` (:mod:`tracecite.visible.style`) then may hide it, show it again
(``visibility``) or change its display. An inline ``display`` may add a boundary (``<span
style="display:block">`` separates words, and so do the children of an inline flex or grid
container) but never removes one: ``<li style="display:inline">`` still separates its text,
because a person sees the items apart (the page's CSS adds margins or separators) and may quote
them with a space. As in CSS, an inline ``display`` other than ``none`` overrides the default
``display: none`` of ``[hidden]`` and of a closed ``<dialog>``. A descendant may set
``visibility: visible`` again; nothing undoes ``display: none``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Final

from tracecite.visible.style import (
    BLOCK,
    CELL,
    INLINE,
    LOWERCASE,
    NONE,
    ROW,
    UPPERCASE,
    inline_style,
    svg_presentation,
)
from tracecite.visible.transform import Capitalized, capitalize

__all__ = ["render"]

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
# <iframe>/<noembed>/<noframes>, the fallback of <video>/<audio> and of the <meter>/<progress>
# widgets, the value of a <textarea>. Not here: <canvas> and <object>, whose fallback content a
# browser renders with scripts off (a canvas needs a script to draw anything) or when it does
# not render the object (TraceCite loads no sub-resources), nested objects included; their
# <param> children are display:none. <embed> is void: it has no content to show.
_HIDDEN_TAGS: Final = (
    "area",
    "audio",
    "base",
    "basefont",
    "datalist",
    "embed",
    "head",
    "iframe",
    "link",
    "meta",
    "meter",
    "noembed",
    "noframes",
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
    **dict.fromkeys(_BLOCK_TAGS, BLOCK),
    "tr": ROW,
    "td": CELL,
    "th": CELL,
    **dict.fromkeys(_HIDDEN_TAGS, NONE),
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
_TRANSFORM_SHIFT: Final = 3
_F_TRANSFORM: Final = 3 << _TRANSFORM_SHIFT  # the inherited text-transform (style.UPPERCASE, …)
_F_UPPERCASE: Final = UPPERCASE << _TRANSFORM_SHIFT
_F_LOWERCASE: Final = LOWERCASE << _TRANSFORM_SHIFT
# Form controls reset text-transform in the UA stylesheet (input, textarea, select, button).
_TRANSFORM_RESET: Final = frozenset(("button", "select"))

# What of an element's content is rendered.
_ALL: Final = 0  # its text and every child
_SUMMARY: Final = 1  # a closed <details>: its first <summary> child and nothing else
_FIRST_CHILD: Final = 2  # MathML <semantics>/<maction>: the first child element alone
_LINE_BREAK: Final = 3  # <br>: a line break in its place
_OPTIONS: Final = 4  # <select>: the text of its options, one per line, and nothing else
_OPTION_TEXT: Final = 5  # <option>: its text, as one line
_SPECIAL_CONTENT: Final = {"br": _LINE_BREAK, "select": _OPTIONS, "option": _OPTION_TEXT}

_Rendering = tuple[int, int, bool, int]
"""How one element renders: (display kind, flags for its children, whether its own character
data shows, which of its content is rendered)."""

_NO_ATTRIBUTES: Final[dict[str, str]] = {}


def render(root: ET.Element) -> str:
    """Walk the tree under ``root`` and join the visible pieces: its ``innerText``."""
    out: list[str] = []
    emit = out.append
    # A str is emitted when popped; a pair is an element to enter with its inherited flags.
    stack: list[str | tuple[ET.Element, int]] = [(root, _F_VISIBLE)]
    push = stack.append
    pop = stack.pop
    while stack:
        item = pop()
        if isinstance(item, str):
            # A capitalized text depends on the character before it, known only now.
            emit(item if type(item) is str else capitalize(item, out))
            continue
        node, flags = item
        tag = node.tag
        if type(tag) is not str:
            continue  # a comment or processing instruction
        # items() first: reading .attrib would give every element a dict of its own.
        attrib = node.attrib if node.items() else _NO_ATTRIBUTES
        rendering: _Rendering | None
        if tag[0] != "{":
            rendering = _html(tag, attrib, flags)
        elif tag.startswith(_SVG):
            rendering = _svg(tag[len(_SVG) :], attrib, flags)
        elif tag.startswith(_MATHML):
            rendering = _mathml(tag[len(_MATHML) :], attrib, flags)
        else:  # an element of another namespace: its text shows plainly
            rendering = (INLINE, flags & ~(_F_BLOCKIFY | _F_SVG_TEXT), True, _ALL)
        if rendering is None:
            continue
        kind, child_flags, shows_text, content = rendering
        if content == _LINE_BREAK:
            emit("\n")
            continue
        if flags & _F_BLOCKIFY and kind == INLINE:
            kind = BLOCK
        if kind != INLINE:
            separator = "\t" if kind == CELL else "\n"
            emit(separator)
            push(separator)
        if not child_flags & _F_VISIBLE:
            shows_text = False
        if content == _SUMMARY:
            summary = _first_summary(node)
            if summary is not None:
                push((summary, child_flags))
            continue
        if content >= _OPTIONS:  # _OPTIONS or _OPTION_TEXT
            text = "" if not shows_text else (
                _select_text(node) if content == _OPTIONS else _option_text(node))
            if text:
                emit(text)
            continue
        transform = child_flags & _F_TRANSFORM
        if shows_text and node.text:
            emit(_transformed(node.text, transform, out) if transform else node.text)
        first = _first_element(node) if content == _FIRST_CHILD else None
        for child in reversed(node):
            if shows_text and child.tail:
                push(_transformed(child.tail, transform, None) if transform else child.tail)
            if first is None or child is first:
                push((child, child_flags))
    return "".join(out)


def _transformed(text: str, transform: int, out: list[str] | None) -> str:
    """``text`` with the case ``transform`` (flag bits) applies; a capitalized text is done at
    once after ``out``, or marked to be done when it is emitted (``out`` None)."""
    if transform == _F_UPPERCASE:
        return text.upper()  # full case mapping, as innerText: "ß" is "SS"
    if transform == _F_LOWERCASE:
        return text.lower()
    return capitalize(text, out) if out is not None else Capitalized(text)


def _with_transform(flags: int, transform: int | None) -> int:
    """``flags`` with the text-transform an element declares (None: inherited as it is)."""
    if transform is None:
        return flags
    return (flags & ~_F_TRANSFORM) | (transform << _TRANSFORM_SHIFT)


def _html(tag: str, attrib: dict[str, str], flags: int) -> _Rendering | None:
    """How an HTML element renders, or None when it does not."""
    kind = _HTML_DISPLAY.get(tag, INLINE)
    if kind == NONE:
        return None  # never rendered, whatever the page's style says (docs/reference/fetching.md)
    child_flags = flags & ~(_F_BLOCKIFY | _F_SVG_TEXT)
    if child_flags & _F_TRANSFORM and tag in _TRANSFORM_RESET:
        child_flags &= ~_F_TRANSFORM
    content = _ALL
    if attrib:
        display, visibility, transform = inline_style(attrib.get("style", ""))
        if transform is not None:
            child_flags = _with_transform(child_flags, transform)
        if display is None:
            # UA-stylesheet display:none, which an inline display overrides.
            if "hidden" in attrib or (tag == "dialog" and "open" not in attrib):
                return None
        elif display[0] == NONE:
            return None
        else:
            if display[0] != INLINE:
                kind = display[0]  # may add a boundary, never removes one (module docstring)
            if display[1]:
                child_flags |= _F_BLOCKIFY
        if visibility is not None:
            child_flags = _with_visibility(child_flags, visibility)
        if tag == "details" and "open" not in attrib:
            content = _SUMMARY
    elif tag == "dialog":
        return None
    elif tag == "details":
        content = _SUMMARY
    return kind, child_flags, True, _SPECIAL_CONTENT.get(tag, content)


def _svg(local: str, attrib: dict[str, str], flags: int) -> _Rendering | None:
    """How an SVG element (``local``: its name without the namespace) renders, or None."""
    if local in _SVG_HIDDEN:
        return None
    kind = INLINE
    child_flags = flags & ~(_F_BLOCKIFY | _F_SVG_TEXT)
    shows_text = True
    if local == "text":
        kind = BLOCK  # each <text> is positioned on its own
        child_flags |= _F_SVG_TEXT
    elif local in _SVG_TEXT and flags & _F_SVG_TEXT:
        child_flags |= _F_SVG_TEXT
    elif local != "foreignObject":  # whose children are HTML again
        shows_text = False  # SVG paints character data only inside <text>
    if attrib:
        # Presentation attributes first, so that the style attribute overrides them.
        # text-transform is no presentation attribute (SVG 2 §6.6): only style sets it.
        display, visibility, transform = inline_style(
            svg_presentation(attrib) + attrib.get("style", ""))
        if display is not None and display[0] == NONE:
            return None
        child_flags = _with_transform(child_flags, transform)
        if visibility is not None:
            child_flags = _with_visibility(child_flags, visibility)
    return kind, child_flags, shows_text, _ALL


def _mathml(local: str, attrib: dict[str, str], flags: int) -> _Rendering | None:
    """How a MathML element (``local``: its name without the namespace) renders, or None."""
    if local in ("annotation", "annotation-xml"):
        return None
    kind = INLINE
    child_flags = flags & ~(_F_BLOCKIFY | _F_SVG_TEXT)
    content = _ALL
    if local == "math" and attrib.get("display", "").lower() == "block":
        kind = BLOCK
    elif local in ("mtr", "mlabeledtr"):
        kind = ROW
    elif local == "mtd":
        kind = CELL
    elif local in ("semantics", "maction"):
        content = _FIRST_CHILD  # MathML Core renders only the first child
    if attrib:
        display, visibility, transform = inline_style(attrib.get("style", ""))
        child_flags = _with_transform(child_flags, transform)
        if display is not None:
            if display[0] == NONE:
                return None
            if display[0] != INLINE:
                kind = display[0]
        if visibility is not None:
            child_flags = _with_visibility(child_flags, visibility)
    return kind, child_flags, True, content


def _with_visibility(flags: int, visible: bool) -> int:
    """``flags`` with the visibility an element declares, which its children inherit."""
    return (flags | _F_VISIBLE) if visible else (flags & ~_F_VISIBLE)


def _select_text(select: ET.Element) -> str:
    """What ``innerText`` shows of a ``<select>``: the text of each ``<option>`` and
    ``<optgroup>`` among its descendants (Chromium looks through all of them since the
    customizable-select changes), one per line. Nothing else inside a select is rendered."""
    return _options_text(select, nested_groups=True)


def _options_text(container: ET.Element, *, nested_groups: bool) -> str:
    """The options among the descendants of ``container``, each on a line of its own; in a
    select (``nested_groups``) an ``<optgroup>`` gives its options, in an optgroup a nested one
    gives nothing (as Chromium)."""
    lines: list[str] = []
    stack = list(reversed(container))
    while stack:
        node = stack.pop()
        tag = node.tag
        if tag == "option":
            lines.append(f"\n{_option_text(node)}\n")
        elif tag == "optgroup":
            if nested_groups:
                lines.append(f"\n{_options_text(node, nested_groups=False)}\n")
        elif type(tag) is str:
            stack.extend(reversed(node))
    return "".join(lines)


def _option_text(option: ET.Element) -> str:
    """An option's ``text``: all the text inside it but that of scripts, ASCII whitespace
    stripped and collapsed, as Chromium's ``innerText`` shows it (the element boundaries,
    styles and ``hidden`` attributes inside an option play no part)."""
    pieces: list[str] = [option.text or ""]
    stack: list[ET.Element | str] = list(reversed(option))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            pieces.append(item)
            continue
        if item.tail:
            stack.append(item.tail)
        tag = item.tag
        if type(tag) is not str or tag in _SCRIPTS:
            continue  # a comment, or a script: no text of the option
        if item.text:
            pieces.append(item.text)
        stack.extend(reversed(item))
    return _ASCII_WHITESPACE.sub(" ", "".join(pieces)).strip(" ")


_SCRIPTS: Final = frozenset(("script", _SVG + "script"))
_ASCII_WHITESPACE: Final = re.compile(r"[\t\n\f\r ]+")


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
