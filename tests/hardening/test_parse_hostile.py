"""Hostile markup: what parsing a page may cost (SECURITY.md, "Parsing a page costs more than
fetching it").

Each family of hostile markup that once cost html5lib seconds, minutes or gigabytes at the 2 MiB
cap is parsed here at 64 KiB, where it is quick either way, and must end in the outcome that
bounds it at any size: a tree the parser nested no deeper than Chromium's cap, or a
``ParseLimitError`` naming the limit (SECURITY.md gives the figures at 2 MiB; the time budget
stops what is left). Then the command line: a page past a limit is a TC318 finding with exit 2,
from the web and from ``verify-files``, and its message quotes nothing from the page.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Cli, cite, source, write_trace
from tests.conftest import answer as answer_event
from tests.conftest import call as call_event
from tests.conftest import claim as claim_event
from tests.conftest import result as result_event
from tests.fetch.servers import Servers, head, send_bytes
from tracecite.fetch.limits import MAX_TIMEOUT
from tracecite.fetch.visible_text import (
    MAX_DEPTH,
    MAX_FORMATTING,
    ParseLimitError,
    _Parser,
    visible_text,
)

SIZE = 64 * 1024
CANARY = "CANARY-7f3e"  # in every page: no message may show it
FORMATTING = "formatting elements"
NODES = "elements and comments"


def fill(unit: str, head: str = "") -> str:
    """``head``, then ``unit`` repeated up to SIZE characters, then the canary."""
    return head + unit * ((SIZE - len(head)) // len(unit)) + CANARY


def distinct(tag: str, count: int) -> str:
    """``count`` open ``tag`` elements with different attributes (Noah's Ark keeps them all)."""
    return "".join(f"<{tag} id={i}>" for i in range(count))


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


def _depth(root: ET.Element) -> int:
    deepest = 0
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node)
    return deepest


@pytest.mark.parametrize("family", FAMILIES, ids=[family.id for family in FAMILIES])
def test_hostile_markup_is_bounded(family: Family) -> None:
    page = family.page()
    assert SIZE <= len(page) <= SIZE + 100
    if family.limit is None:
        depth = _depth(_Parser(MAX_TIMEOUT).parse(page))
        assert depth <= MAX_DEPTH or not family.capped
        return
    with pytest.raises(ParseLimitError, match=family.limit) as raised:
        visible_text(page)
    assert CANARY not in str(raised.value)


def test_a_quadratic_corner_stops_at_the_budget() -> None:
    # html5lib finds where to foster-parent by copying the parent's children: quadratic. Four
    # times the size above costs seconds; the budget stops it long before.
    page = "<table>" + "a<br>" * (4 * SIZE // 5)
    with pytest.raises(ParseLimitError, match=r"more than 0\.05 s to parse"):
        visible_text(page, budget=0.05)


# ---- through the command line ---------------------------------------------------------------

QUOTE = "the quoted words are here"
PAGES = {
    "deep.html": "<div>" * (4 * MAX_DEPTH) + f"<p>{QUOTE}</p>",  # parses: the depth cap
    "soup.html": "<p>" + distinct("b", MAX_FORMATTING + 1) + f"{QUOTE} {CANARY}",
    "fine.html": f"<p>{QUOTE}</p>",
}


def test_verify_files_reports_a_page_past_a_limit_as_tc318(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for name, page in PAGES.items():
        (root / name).write_text(page, encoding="utf-8")
    sources = [source(f"s{i}", f"file:{name}", QUOTE) for i, name in enumerate(PAGES, 1)]
    trace = write_trace(tmp_path / "t.jsonl", [
        call_event(), result_event(sources=sources),
        answer_event([claim_event(citations=[cite(f"s{i}", QUOTE) for i in (1, 2, 3)])]),
    ])
    # Worker processes parse here (the run starts no thread before them).
    run = cli("verify-files", trace, "--root", root, "--json")
    report = run.json()
    assert [(f["code"], f["name"], f["source_id"], f["exit"]) for f in report["findings"]] == [
        ("TC318", "parse-limit", "s2", 2)]
    assert report["exit_code"] == run.exit == 2
    assert report["summary"]["files"]["matched"] == 2
    assert CANARY not in run.out and CANARY not in run.err


def test_verify_notes_reports_a_page_past_a_limit_as_tc318(
    cli: Cli, tmp_path: Path, servers: Servers,
) -> None:
    body = PAGES["soup.html"].encode()
    server = servers.raw(send_bytes(
        head("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                        ("Content-Length", str(len(body)))]) + body))
    notes = tmp_path / "notes.md"
    notes.write_text(f"claim: a claim\nquote: {QUOTE}\nurl: http://example.test/\n",
                     encoding="utf-8")
    for fmt in ("json", "github", "sarif", "console"):
        run = cli("verify-notes", notes, "--format", fmt, "--connect-to",
                  f"example.test:80:127.0.0.1:{server.port}", "--allow-net", "127.0.0.0/8")
        assert run.exit == 2
        assert "TC318" in run.out
        assert CANARY not in run.out and CANARY not in run.err


def test_timeout_bounds_the_parse_too(cli: Cli, tmp_path: Path) -> None:
    """``--timeout`` is the deadline per source: parsing a page gets as long, no longer."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "big.html").write_text("<p>word</p>" * 20_000 + f"<p>{QUOTE}</p>", encoding="utf-8")
    trace = write_trace(tmp_path / "t.jsonl", [
        call_event(), result_event(sources=[source("s1", "file:big.html", QUOTE)]),
        answer_event([claim_event(citations=[cite("s1", QUOTE)])]),
    ])
    assert cli("verify-files", trace, "--root", root).exit == 0
    run = cli("verify-files", trace, "--root", root, "--timeout", "0.001", "--json")
    assert (run.exit, run.codes()) == (2, ["TC318"])
