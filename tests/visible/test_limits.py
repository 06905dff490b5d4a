"""The limits of a parse: Chromium's depth cap, the formatting, node and time limits."""

from __future__ import annotations

import time

import pytest

from tests.visible.conftest import depths, shown
from tracecite.fetch.limits import MAX_TIMEOUT
from tracecite.visible import (
    DEFAULT_BUDGET,
    MAX_DEPTH,
    MAX_FORMATTING,
    ParseLimitError,
    tree_builder,
    visible_text,
)
from tracecite.visible.parser import BoundedParser

# --- Depth ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("open_tag", "close_tag", "depth"),
    [
        ("<div>", "</div>", 100_000),
        ("<span>", "</span>", 100_000),
        ("<b>", "</b>", 100_000),
        ("<a><div>", "", 30_000),  # the adoption agency on every <a>
    ],
)
@pytest.mark.slow
def test_deep_nesting_neither_crashes_nor_crawls(open_tag: str, close_tag: str, depth: int) -> None:
    page = open_tag * depth + "deepest" + close_tag * depth + "<p>after</p>"
    start = time.perf_counter()
    text = shown(page)
    elapsed = time.perf_counter() - start
    assert "deepest" in text
    assert text.endswith("after")
    # Linear work takes a few seconds; html5lib's own quadratic scans took minutes here.
    assert elapsed < 60


@pytest.mark.slow
def test_deep_hidden_nesting_hides_everything_inside() -> None:
    page = "<div style='display:none'>" + "<div>" * 100_000 + "SECRET" + "<p>ok"
    assert "SECRET" not in shown(page)


def test_nesting_stops_at_chromiums_depth_and_deeper_elements_become_siblings() -> None:
    # <html> <body> div1 div2 ...: div k is inserted while k + 1 elements are open, so from
    # div 512 on (more than MAX_DEPTH open) each goes to the parent of the current node.
    extra = 10
    root = BoundedParser().parse("<div>" * (MAX_DEPTH + extra) + "deepest")
    levels = depths(root)
    assert max(levels.values()) == MAX_DEPTH
    divs = list(root.iter("div"))
    assert len(divs) == MAX_DEPTH + extra  # every element is kept
    last = divs[-1]
    assert last.text == "deepest"
    parent = next(node for node in levels if last in list(node))
    assert parent is divs[MAX_DEPTH - 3]  # div 510, one level above the cap
    assert list(parent) == divs[MAX_DEPTH - 2:]


def test_elements_past_the_depth_cap_keep_their_content_and_end_tags() -> None:
    deep = "<div>" * (MAX_DEPTH + 100)
    page = deep + "<span hidden>secret</span> shown" + "</div>" * 200 + "<p>after"
    assert shown(page) == "shown after"
    closed = deep + "<div style='display:none'>gone</div><b>bold</b>" + "</div>" * 612 + "<p>end"
    assert shown(closed) == "bold end"
    # Text after some of the end tags goes into the element they leave current, an earlier
    # sibling in the flattened tree: Chromium's DOM has "end" before "bold" too.
    assert shown(deep + "<b>bold</b>" + "</div>" * 50 + "end") == "end bold"


def test_past_the_depth_cap_a_child_element_leaves_its_hidden_parent_as_in_chromium() -> None:
    # Chromium attaches the <i> and the <p> beside the hidden elements, so their text shows.
    deep = "<div>" * MAX_DEPTH
    assert shown(deep + "<span hidden>secret <i>flattened</i></span>") == "flattened"
    assert shown(deep + "<div hidden>hidden text<p>shown</p></div>") == "shown"


# --- Formatting elements, nodes, time ---------------------------------------------------------


def test_more_formatting_elements_than_the_limit_stop_the_parse() -> None:
    distinct = ["<p>", *(f"<b id={i}>" for i in range(MAX_FORMATTING)), "x"]
    assert shown("".join(distinct)) == "x"
    with pytest.raises(ParseLimitError, match=f"more than {MAX_FORMATTING} formatting"):
        visible_text("".join(distinct) + "<b id=last>SECRET")
    # Scope markers (open cells, captions, objects) count: 101 nested cells.
    cells = "<table><tr><td>" * (MAX_FORMATTING + 1)
    with pytest.raises(ParseLimitError, match="formatting elements"):
        visible_text(cells)


def test_more_nodes_than_the_limit_stop_the_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_builder, "MAX_NODES", 1000)
    # <html>, <head> and <body> count too.
    assert shown("<span>x</span>" * 997) == "x" * 997
    with pytest.raises(ParseLimitError, match="more than 1000 elements and comments"):
        visible_text("<span>x</span>" * 998)
    with pytest.raises(ParseLimitError, match="elements and comments"):
        visible_text("<!-- c -->" * 1000)
    # Re-opened formatting elements count: 20 unclosed <b>s, then paragraphs re-open them.
    reopened = "<p>" + "".join(f"<b id={i}>" for i in range(20)) + "</p>" + "<p>x</p>" * 60
    with pytest.raises(ParseLimitError, match="elements and comments"):
        visible_text(reopened)


def test_the_parse_stops_at_its_time_budget() -> None:
    page = "<p>SECRET words</p>" * 100
    with pytest.raises(ParseLimitError) as raised:
        visible_text(page, budget=0)
    assert str(raised.value) == "the page's markup takes more than 0 s to parse"
    assert "SECRET" in shown(page)  # the default budget is ample


def test_the_default_budget_is_the_deadline_per_source() -> None:
    # The package keeps its own copy so that it needs no fetcher; the two must not drift.
    assert DEFAULT_BUDGET == MAX_TIMEOUT
