"""Inline ``style``: the ``display``, ``visibility`` and ``text-transform`` an element's
declarations set.

A ``style`` attribute is read the way the CSS cascade reads one declaration block: names are
case-insensitive, comments and odd spacing are allowed, ``!important`` beats a later normal
declaration, otherwise the last valid declaration wins, and invalid values are ignored. Only
``display``, ``visibility`` and ``text-transform`` matter to the text; every other property is
skipped.

A display is reduced to what it does to the text around the element (:data:`INLINE`,
:data:`BLOCK`, :data:`ROW`, :data:`CELL` or :data:`NONE`) and whether it makes the element's
children blocks (a flex or grid container).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

# What an element does to the text around it (its "display" as innerText sees it).
INLINE: Final = 0
BLOCK: Final = 1  # a line break before and after
ROW: Final = 2  # table-row: a line break before and after
CELL: Final = 3  # table-cell: a tab after (and before, harmlessly)
NONE: Final = 4  # not rendered, nor is anything inside it

Display = tuple[int, bool] | None
"""(kind, makes its children blocks), or None when no valid ``display`` is declared."""
Visibility = bool | None
"""True visible, False hidden, None when inherited or not declared."""

# The case a text-transform applies (CSS Text 3 §2.1); 0 is none.
UPPERCASE: Final = 1
LOWERCASE: Final = 2
CAPITALIZE: Final = 3
Transform = int | None
"""0 (none), :data:`UPPERCASE`, :data:`LOWERCASE` or :data:`CAPITALIZE`; None when inherited
or not declared."""

_CASE_TRANSFORMS: Final = {"uppercase": UPPERCASE, "lowercase": LOWERCASE, "capitalize": CAPITALIZE}
# Valid beside a case keyword, or alone (then no case is applied): out of scope here, they
# change the width or the form of characters, not their case.
_OTHER_TRANSFORMS: Final = frozenset(("full-width", "full-size-kana"))

_CSS_COMMENT: Final = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)
_IMPORTANT: Final = re.compile(r"!\s*important\s*\Z", re.IGNORECASE)
_CSS_WIDE: Final = frozenset(("inherit", "initial", "unset", "revert", "revert-layer"))

# CSS Display 3 keywords (and the prefixed legacy ones Chromium still accepts).
_DISPLAY_OUTSIDE: Final = frozenset(("block", "inline", "run-in"))
_DISPLAY_INSIDE: Final = frozenset(("flow", "flow-root", "table", "flex", "grid", "ruby", "math"))
_DISPLAY_SINGLE: Final[dict[str, tuple[int, bool]]] = {
    "none": (NONE, False),
    "contents": (INLINE, False),
    "table-row": (ROW, False),
    "table-cell": (CELL, False),
    "table-caption": (BLOCK, False),
    "table-row-group": (BLOCK, False),
    "table-header-group": (BLOCK, False),
    "table-footer-group": (BLOCK, False),
    "table-column": (BLOCK, False),
    "table-column-group": (BLOCK, False),
    "ruby-base": (INLINE, False),
    "ruby-text": (INLINE, False),
    "ruby-base-container": (INLINE, False),
    "ruby-text-container": (INLINE, False),
    "inline-block": (INLINE, False),
    "inline-table": (INLINE, False),
    "inline-flex": (INLINE, True),
    "inline-grid": (INLINE, True),
    "-webkit-box": (BLOCK, True),
    "-webkit-flex": (BLOCK, True),
    "-webkit-inline-box": (INLINE, True),
    "-webkit-inline-flex": (INLINE, True),
}


def svg_presentation(attrib: dict[str, str]) -> str:
    """SVG's ``display``/``visibility`` attributes as declarations, to be overridden by style."""
    return "".join(
        f"{name}:{attrib[name]};" for name in ("display", "visibility") if name in attrib
    )


@lru_cache(maxsize=4096)  # pages repeat the same few style attributes many times
def inline_style(style: str) -> tuple[Display, Visibility, Transform]:
    """Parse one declaration block; return the ``display``, ``visibility`` and
    ``text-transform`` it sets."""
    lowered = style.lower()
    if "display" not in lowered and "visibility" not in lowered and "transform" not in lowered:
        return None, None, None  # the common case, without tokenising anything
    display: Display = None
    visibility: Visibility = None
    transform: Transform = None
    display_important = visibility_important = transform_important = False
    for declaration in _split_declarations(_CSS_COMMENT.sub(" ", lowered)):
        name, colon, value = declaration.partition(":")
        if not colon:
            continue
        name = name.strip()
        if name not in ("display", "visibility", "text-transform"):
            continue
        important_match = _IMPORTANT.search(value)
        important = important_match is not None
        if important_match is not None:
            value = value[: important_match.start()]
        value = value.strip()
        if name == "text-transform":
            if transform_important and not important:
                continue
            valid, parsed_transform = _parse_transform(value)
            if valid:
                transform = parsed_transform
                transform_important = important
        elif name == "display":
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
    return display, visibility, transform


def _parse_transform(value: str) -> tuple[bool, Transform]:
    """Map a ``text-transform`` value to (valid, the case it applies)."""
    case = _CASE_TRANSFORMS.get(value)
    if case is not None:
        return True, case
    if value in ("none", "initial", "math-auto"):
        return True, 0
    if value in _CSS_WIDE:
        return True, None  # inherit, unset (an inherited property) and revert: the parent's
    # [capitalize | uppercase | lowercase] || full-width || full-size-kana, in any order.
    words = value.split()
    if not words or len(words) > 3 or len(set(words)) != len(words):
        return False, None
    cases = [_CASE_TRANSFORMS[word] for word in words if word in _CASE_TRANSFORMS]
    if len(cases) > 1 or len(cases) + sum(w in _OTHER_TRANSFORMS for w in words) != len(words):
        return False, None
    return True, (cases[0] if cases else 0)


def _parse_display(value: str) -> tuple[bool, Display]:
    """Map a ``display`` value to (valid, (kind, makes its children blocks))."""
    single = _DISPLAY_SINGLE.get(value)
    if single is not None:
        return True, single
    if value in _CSS_WIDE:
        # initial/unset compute to inline; inherit/revert are rare enough to read as "not set".
        return True, ((INLINE, False) if value in ("initial", "unset") else None)
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
    return True, ((BLOCK if block else INLINE), inner in ("flex", "grid"))


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
