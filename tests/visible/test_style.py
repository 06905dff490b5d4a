"""Inline style: what ``display`` and ``visibility`` declarations do to the text."""

from __future__ import annotations

import pytest

from tests.visible.conftest import shown
from tracecite.visible.style import (
    BLOCK,
    CAPITALIZE,
    CELL,
    INLINE,
    LOWERCASE,
    NONE,
    ROW,
    UPPERCASE,
    inline_style,
)


def test_inline_display_overrides_the_hidden_attribute_as_in_css() -> None:
    # [hidden] is a UA-stylesheet rule; an author's inline display wins over it.
    assert shown("<p hidden style='display:block'>shown</p>") == "shown"
    assert shown("<p hidden style='display:none'>SECRET</p>") == ""


@pytest.mark.parametrize(
    "style",
    [
        "display:none",
        "display: none;",
        "DISPLAY : NONE",
        "  display\t:\n none  ",
        "display:none !important",
        "display: none!IMPORTANT",
        "display:none ! important",
        "color: red; display: none",
        "display:none;color:red",
        "/* hide */display:/* really */none",
        "display:block; display:none",
        "display:none !important; display:block",
        "display:none; display:nonsense",
        "display:none; display:",
        "font-family: 'a;b'; display: none",
        "background: url(data:image/png;base64,AAAA); display: none",
        "visibility:hidden",
        "VISIBILITY: Hidden !important",
        "visibility: collapse",
        "visibility:visible; visibility:hidden",
        "visibility:hidden !important; visibility:visible",
    ],
)
def test_inline_style_that_hides(style: str) -> None:
    assert shown(f'<p>a<span style="{style}">SECRET</span>b</p>') == "ab"


@pytest.mark.parametrize(
    "style",
    [
        "",
        "display:block",
        "display:none; display:block",
        "display: nonsense",
        "display: none-ish",
        "xdisplay: none",
        "display-x: none",
        "content: 'display:none'",
        'font-family: "a;display:none"',
        "--var: none; display: inline",
        "visibility:hidden; visibility:visible",
        "visibility: hiddenx",
        "color: red",
        "display:-moz-inline-box",
    ],
)
def test_inline_style_that_does_not_hide(style: str) -> None:
    assert "shown" in shown(f'<p>a<span style="{style}">shown</span>b</p>')


def test_visibility_hidden_can_be_undone_by_a_descendant() -> None:
    page = (
        "<div style='visibility:hidden'>SECRET<p>SECRET<span style='visibility:visible'>"
        "shown</span>SECRET</p>SECRET</div>"
    )
    assert shown(page) == "shown"


def test_visibility_inherit_follows_the_parent() -> None:
    page = "<div style='visibility:hidden'><span style='visibility:inherit'>SECRET</span></div>"
    assert shown(page) == ""


def test_display_none_cannot_be_undone_by_a_descendant() -> None:
    page = (
        "<div style='display:none'><p style='display:block'>SECRET</p>"
        "<span style='visibility:visible'>SECRET</span></div>ok"
    )
    assert shown(page) == "ok"


def test_a_hidden_br_does_not_break() -> None:
    assert shown("a<br style='display:none'>b") == "ab"


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("color: red", (None, None)),
        ("display: none", ((NONE, False), None)),
        ("display: flex", ((BLOCK, True), None)),
        ("display: inline-grid", ((INLINE, True), None)),
        ("display: table-row; visibility: collapse", ((ROW, False), False)),
        ("display: table-cell !important; display: block", ((CELL, False), None)),
        ("display: inline list-item", ((INLINE, False), None)),
        ("display: ruby", ((INLINE, False), None)),
        ("display: inherit; visibility: inherit", (None, None)),
        ("display: initial; visibility: initial", ((INLINE, False), True)),
        ("display: list-item grid", (None, None)),  # invalid: ignored
        ("visibility: hidden; visibility: bogus", (None, False)),
    ],
)
def test_a_declaration_block_gives_its_display_and_visibility(
    style: str, expected: tuple[object, object],
) -> None:
    assert inline_style(style)[:2] == expected


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("color: red", None),
        ("transform: rotate(3deg)", None),
        ("text-transform: uppercase", UPPERCASE),
        ("TEXT-TRANSFORM:LOWERCASE", LOWERCASE),
        ("text-transform: /* c */ capitalize", CAPITALIZE),
        ("text-transform: none", 0),
        ("text-transform: initial", 0),
        ("text-transform: math-auto", 0),
        ("text-transform: full-width", 0),  # valid, and no case: it resets an inherited one
        ("text-transform: full-width uppercase full-size-kana", UPPERCASE),
        ("text-transform: inherit", None),
        ("text-transform: unset", None),
        ("text-transform: uppercase lowercase", None),  # invalid: ignored
        ("text-transform: bogus; color: red", None),
        ("text-transform: uppercase; text-transform: bogus", UPPERCASE),
        ("text-transform: uppercase !important; text-transform: none", UPPERCASE),
        ("text-transform: uppercase; text-transform: none", 0),
        ("display: none; text-transform: lowercase", LOWERCASE),
    ],
)
def test_a_declaration_block_gives_its_text_transform(style: str, expected: int | None) -> None:
    assert inline_style(style)[2] == expected
