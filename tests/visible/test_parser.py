"""The bounded parser builds the tree html5lib builds (below the depth cap)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import html5lib
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracecite.visible import MAX_FORMATTING, visible_text
from tracecite.visible.parser import BoundedParser

_TAGS = (
    "a",
    "b",
    "i",
    "p",
    "div",
    "span",
    "table",
    "tr",
    "td",
    "th",
    "tbody",
    "caption",
    "colgroup",
    "col",
    "select",
    "option",
    "optgroup",
    "li",
    "ul",
    "dd",
    "dt",
    "h1",
    "h2",
    "form",
    "button",
    "template",
    "svg",
    "math",
    "mi",
    "mtext",
    "foreignObject",
    "title",
    "desc",
    "textarea",
    "script",
    "style",
    "noscript",
    "iframe",
    "frameset",
    "frame",
    "html",
    "body",
    "head",
    "font",
    "nobr",
    "applet",
    "object",
    "marquee",
    "pre",
    "listing",
    "br",
    "hr",
    "img",
    "input",
    "image",
    "plaintext",
    "xmp",
    "noembed",
    "rb",
    "rt",
    "rp",
    "ruby",
    "details",
    "summary",
    "dialog",
)
_PIECES = st.one_of(
    st.sampled_from(_TAGS).map(lambda tag: f"<{tag}>"),
    st.sampled_from(_TAGS).map(lambda tag: f"</{tag}>"),
    st.sampled_from(
        ["x", " ", "&amp;", "<!--c-->", "<!DOCTYPE html>", "\n", "<![CDATA[z]]>", "<p hidden>"]
    ),
)


def _dump(root: ET.Element) -> list[str]:
    out: list[str] = []
    stack: list[ET.Element | str] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        out.append(f"<{item.tag!r} {sorted(item.attrib.items())}>{item.text!r}")
        stack.append(f"</>{item.tail!r}")
        stack.extend(reversed(item))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_tree_is_the_same_as_html5libs(page: str) -> None:
    stock = html5lib.parse(page, treebuilder="etree", namespaceHTMLElements=False)
    assert _dump(BoundedParser().parse(page)) == _dump(stock)
    visible_text(page)  # and never raises


# --- Formatting elements and foster parenting -------------------------------------------------


def test_noahs_ark_keeps_three_equal_formatting_elements() -> None:
    parser = BoundedParser()
    parser.parse("<b>" * 1000 + "x")
    assert len(parser.tree.activeFormattingElements) == 3
    parser.parse("".join(f"<b id={i % 7}>" for i in range(1000)) + "x")
    assert len(parser.tree.activeFormattingElements) == 3 * 7


@pytest.mark.parametrize(
    "page",
    [
        "<p><b>x<p>y" * 40,  # Noah's Ark, then three <b> re-opened in every paragraph
        "<p>" + "".join(f"<i class={i}>" for i in range(MAX_FORMATTING)) + "</p>x" * 3,
        "<table><tr><td><b><font color=red>a<td>b</table>c" * 20,  # markers
        "<a><b><i><s><u><em><p>x</a>" * 30,  # the adoption agency, with clones
    ],
)
def test_formatting_elements_within_the_limits_give_html5libs_tree(page: str) -> None:
    stock = html5lib.parse(page, treebuilder="etree", namespaceHTMLElements=False)
    assert _dump(BoundedParser().parse(page)) == _dump(stock)


@pytest.mark.parametrize(
    "page",
    [
        "<table>a<b>x</b>b<tr><td>c</table>d",
        "<div>0<table>x<p>y</p>z<tr><td>w</td></tr>v</table>u</div>",
        "<table>" + "a<br>" * 50 + "<tr><td>c" + "<table>b<i>x</i>" * 5,
        "<p>first<table><b>stray<i>nested</b>after</i><tr><td>cell</table>",
    ],
)
def test_foster_parenting_gives_html5libs_tree(page: str) -> None:
    stock = html5lib.parse(page, treebuilder="etree", namespaceHTMLElements=False)
    assert _dump(BoundedParser().parse(page)) == _dump(stock)
