"""Hostile markup: what parsing a page may cost (SECURITY.md, "Parsing a page costs more than
fetching it").

Each family of hostile markup that once cost html5lib seconds, minutes or gigabytes at the 2 MiB
cap is parsed here at 64 KiB, where it is quick either way, and must end in the outcome that
bounds it at any size: a tree the parser nested no deeper than Chromium's cap, or a
``ParseLimitError`` naming the limit (SECURITY.md gives the figures at 2 MiB; the time budget
stops what is left). The command line's side (a page past a limit is TC318) is
tests/hardening/test_parse_hostile.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.visible.conftest import CANARY, depths, distinct
from tracecite.visible import DEFAULT_BUDGET, MAX_DEPTH, ParseLimitError, visible_text
from tracecite.visible.parser import BoundedParser

SIZE = 64 * 1024
FORMATTING = "formatting elements"
NODES = "elements and comments"


def fill(unit: str, head: str = "") -> str:
    """``head``, then ``unit`` repeated up to SIZE characters, then the canary."""
    return head + unit * ((SIZE - len(head)) // len(unit)) + CANARY


@dataclass(frozen=True)
class Family:
    id: str
    page: Callable[[], str]
    limit: str | None  # None: parses; else the words of the ParseLimitError it must raise
    capped: bool = True  # the tree is at most MAX_DEPTH deep (not what the adoption agency moves)


FAMILIES: tuple[Family, ...] = (
    Family("unclosed-div", lambda: fill("<div>"), None),
    Family("unclosed-span", lambda: fill("<span>"), None),
    Family("unclosed-b", lambda: fill("<b>"), None),  # Noah's Ark: 3 stay active
    Family("unclosed-a", lambda: fill("<a>"), None),  # each <a> runs the adoption agency
    Family("unclosed-p", lambda: fill("<p>"), None),
    Family("unclosed-li", lambda: fill("<ul><li>"), None),
    Family("unclosed-table", lambda: fill("<table>"), None),
    Family("unclosed-svg", lambda: fill("<svg>"), None),
    Family("unclosed-nobr", lambda: fill("<nobr>"), None),
    Family("select-option", lambda: fill("<select><option>"), None),
    Family("b-i-misnested", lambda: fill("<b><i></b></i>"), None),
    Family("b-i-misnested-text", lambda: fill("<b><i>x</b>y"), None),
    Family("a-div", lambda: fill("<a><div>"), None, capped=False),  # as deep in Chromium
    Family("font-div", lambda: fill("<font><div>"), None),
    Family("paragraphs-reopening-b", lambda: fill("<p><b>x<p>y"), None),
    Family("foster-parented", lambda: fill("a<br>", head="<table>"), None),
    Family("foster-parented-b", lambda: fill("<b>x", head="<table>"), None),
    Family("comments", lambda: fill("<!---->"), None),
    Family("entities", lambda: fill("&amp;", head="<p>"), None),
    Family("comment-dashes", lambda: fill("-a", head="<!--"), None),
    Family("many-attributes", lambda: fill(" a", head="<p") + ">", None),
    Family("table-resets", lambda: fill("<table></table>", head="<span>" * 2000), None),
    Family("nested-cells", lambda: fill("<table><td>"), FORMATTING),  # a marker per cell
    Family("distinct-formatting", lambda: fill("x", head="<p>" + distinct("b", 5000)),
           FORMATTING),
    Family("formatting-churn", lambda: fill("<i></i>", head="<p>" + distinct("b", 99)), None),
    Family("reopened-formatting",
           lambda: fill("<p>x</p>", head="<p>" + distinct("i", 90) + "</p>"), NODES),
)


def test_family_ids_are_unique() -> None:
    assert len({family.id for family in FAMILIES}) == len(FAMILIES)


SLOW_FAMILIES = frozenset({"reopened-formatting", "many-attributes"})
"""The families that take over ~2 s to parse even at 64 KiB (marked slow)."""


@pytest.mark.parametrize("family", [
    pytest.param(family, id=family.id,
                 marks=[pytest.mark.slow] if family.id in SLOW_FAMILIES else [])
    for family in FAMILIES])
def test_hostile_markup_is_bounded(family: Family) -> None:
    page = family.page()
    assert SIZE <= len(page) <= SIZE + 100
    if family.limit is None:
        depth = max(depths(BoundedParser(DEFAULT_BUDGET).parse(page)).values())
        assert depth <= MAX_DEPTH or not family.capped
        return
    # A budget no shared, loaded machine reaches: the structural limit under test must stop the
    # parse, never the clock.
    with pytest.raises(ParseLimitError, match=family.limit) as raised:
        visible_text(page, budget=600)
    assert CANARY not in str(raised.value)


def test_a_quadratic_corner_stops_at_the_budget() -> None:
    # html5lib finds where to foster-parent by copying the parent's children: quadratic. Four
    # times the size above costs seconds; the budget stops it long before. (lexbor has no such
    # corner: its budget is tested in test_lexbor.py.)
    page = "<table>" + "a<br>" * (4 * SIZE // 5)
    with pytest.raises(ParseLimitError, match=r"more than 0\.05 s to parse"):
        visible_text(page, budget=0.05, parser="html5lib")
