"""Visible text against the Chromium oracle of the shared corpus (corpus/README.md).

Three measures over the 130 real pages of ``shared/corpus/readability``:

* recall: every oracle sentence of 25+ characters (split exactly as the README does) must be in
  the extracted text, except the 8 that only CSS can produce (listed below with the reason);
* false accepts: text that html5lib puts only inside invisible containers (script, style, head,
  template, comments, attribute values, ``hidden``, inline ``display:none``, …), that the oracle
  does not show and that appears nowhere else on the page, must never be in the extracted text;
* block boundaries: the last words of one oracle line joined to the first words of the next by a
  space must be found; glued without the space they must (almost) never be the only form found.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path

import html5lib
import pytest

from tests.visible.conftest import norm
from tracecite.visible import lexbor, visible_text

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "readability"
# Every test here reads one measure of all the pages, seconds per parser: all of them are slow.
pytestmark = pytest.mark.slow

# The oracle sentences that no html5lib extraction without a CSS engine can produce
# (corpus/README.md, "known exceptions"). Keyed by page; each entry is the sentence's start.
KNOWN_EXCEPTIONS: dict[str, tuple[str, ...]] = {
    # text-transform: uppercase on "Meer informatie" / "Ik snap het"
    "links-in-tables": ("Als je deze site gebruikt, ga je akkoord",),
    # text-transform: uppercase on "on MSN"
    "msn": ("The Washington Post On MSN",),
    # navbox <li>s made inline by CSS: the oracle glues the items, a person sees separators
    "wikipedia-4": (
        "Chronology protection conjectureClosed timelike curve",
        "Grandfather paradoxCausal loop",
        "Alternative futureAlternate historyMany-worlds interpretation",
        "Butterfly effectDeterminismEternalism",
        "Alcubierre metricBTZ black holeGödel metric",
    ),
    # Chromium's innerText drops the space of "Firefox<span> »</span>"
    "yahoo-3": ("Try Yahoo News on Firefox»",),
}
TOTAL_SENTENCES = 13_977  # corpus/README.md
RECALL_FLOOR = 13_969  # all but the known exceptions: 99.94 %
JOIN_FLOOR = 0.990  # measured 21,432 / 21,625 = 99.11 %; every miss comes from page CSS
MISSING_BOUNDARY_CEILING = 0.004  # measured 59 / 21,625 = 0.27 %, all from page CSS

def sentences(text: str, min_len: int = 25) -> Iterator[str]:
    """The README's sentence splitter: lines first, then sentence ends."""
    for line in text.split("\n"):
        for part in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“‘(\[])", norm(line)):
            if len(part.strip()) >= min_len:
                yield part.strip()


def boundary_pairs(oracle: str, words: int = 3) -> Iterator[tuple[str, str]]:
    """(end of one oracle line or cell, start of the next), a few words each."""
    pieces = [piece for piece in (norm(p) for p in re.split(r"[\n\t]", oracle)) if piece]
    for left, right in itertools.pairwise(pieces):
        yield " ".join(left.split(" ")[-words:]), " ".join(right.split(" ")[:words])


# --- An independent, deliberately plain account of what is invisible -------------------------

_SVG = "{http://www.w3.org/2000/svg}"
_MATHML = "{http://www.w3.org/1998/Math/MathML}"
_INVISIBLE_TAGS = frozenset(
    (
        "head",
        "script",
        "style",
        "template",
        "title",
        "textarea",
        "noembed",
        "noframes",
        "iframe",
        "video",
        "audio",
        "datalist",
        "param",
    )
) | {_SVG + "title", _SVG + "desc", _SVG + "metadata", _MATHML + "annotation"}
_STYLE_HIDES = re.compile(r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)", re.I)


def _hides(element: ET.Element) -> bool:
    tag = element.tag
    attrib = element.attrib
    return (
        tag in _INVISIBLE_TAGS
        or tag == _MATHML + "annotation-xml"
        or ("hidden" in attrib and not tag.startswith("{"))
        or bool(_STYLE_HIDES.search(attrib.get("style", "")))
        or (tag == "dialog" and "open" not in attrib)
    )


def invisible_and_visible(html: str) -> tuple[list[str], tuple[str, str]]:
    """Texts only in invisible containers (plus comments and attribute values), and the rest."""
    root = html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False)
    hidden: list[str] = []
    shown: list[str] = []
    stack: list[str | tuple[ET.Element, bool]] = [(root, False)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            shown.append(item)
            continue
        element, inside_hidden = item
        if not isinstance(element.tag, str):
            hidden.append(element.text or "")  # a comment
            continue
        hidden.extend(element.attrib.values())
        hides = inside_hidden or _hides(element)
        if hides and not inside_hidden:
            hidden.append("".join(element.itertext()))
        closed_details = element.tag == "details" and "open" not in element.attrib
        if not hides and not closed_details:
            shown.append(element.text or "")
        for child in reversed(element):
            if child.tail and not hides and not closed_details:
                stack.append(child.tail)
            stack.append((child, hides or (closed_details and child.tag != "summary")))
    # The rest, joined both with and without spaces: a run found either way is not hidden-only.
    return hidden, (norm(" ".join(shown)), norm("".join(shown)))


# --- Per page ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PageResult:
    """The three measures for one page."""

    name: str
    sentences: int
    missing: tuple[str, ...]
    pairs: int
    joined: int
    missing_boundaries: int  # found only glued: a boundary that the extraction lost
    false_accept_candidates: int
    false_accepts: tuple[str, ...]
    seconds: float
    size: int
    digest: str  # of the text as extracted: the two parsers must give the same


def measure(name: str) -> PageResult:
    """Run the extraction on one page and measure it against its oracle."""
    html = (CORPUS / f"{name}.html").read_bytes().decode("utf-8")
    oracle = (CORPUS / f"{name}.innertext.txt").read_text(encoding="utf-8")
    start = time.perf_counter()
    raw = visible_text(html)
    seconds = time.perf_counter() - start
    visible = norm(raw)

    expected = list(sentences(oracle))
    missing = tuple(s for s in expected if s not in visible)
    pairs = list(boundary_pairs(oracle))
    joined = sum(f"{left} {right}" in visible for left, right in pairs)
    lost = sum(
        f"{left}{right}" in visible and f"{left} {right}" not in visible for left, right in pairs
    )

    # Hidden-only text the oracle does not show either; of those, any in our output is a false
    # accept unless the same words are also in the page's ordinary text (then it is not
    # hidden-only). The cheap tests run first: the ordinary text can be a megabyte.
    flat_oracle = norm(oracle)
    hidden, shown_forms = invisible_and_visible(html)
    candidates = {s for text in hidden for s in sentences(text) if s not in flat_oracle}
    accepted = sorted(
        s for s in candidates if s in visible and not any(s in form for form in shown_forms)
    )
    return PageResult(
        name=name,
        sentences=len(expected),
        missing=missing,
        pairs=len(pairs),
        joined=joined,
        missing_boundaries=lost,
        false_accept_candidates=len(candidates),
        false_accepts=tuple(accepted),
        seconds=seconds,
        size=len(html.encode("utf-8")),
        digest=hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest(),
    )


def digest(name: str, parser: str) -> str:
    """The digest of one page's text from ``parser``."""
    html = (CORPUS / f"{name}.html").read_bytes().decode("utf-8")
    text = visible_text(html, parser=parser)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_DIGESTS: dict[str, dict[str, str]] = {}
"""Each parser's digests, by page, as the results of its run recorded them."""


@pytest.fixture(scope="module")
def results(html_parser: str) -> list[PageResult]:
    """Measure every page once, on two processes where fork is available."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}: it ships in ../shared, beside the project")
    names = sorted(path.name.removesuffix(".html") for path in CORPUS.glob("*.html"))
    if "fork" in get_all_start_methods() and sys.platform == "linux":
        with ProcessPoolExecutor(2, mp_context=get_context("fork")) as pool:
            measured = list(pool.map(measure, names))
    else:
        measured = [measure(name) for name in names]
    _DIGESTS[html_parser] = {r.name: r.digest for r in measured}
    return measured


def _is_known_exception(page: str, sentence: str) -> bool:
    return any(sentence.startswith(start) for start in KNOWN_EXCEPTIONS.get(page, ()))


def test_corpus_is_complete(results: list[PageResult]) -> None:
    assert len(results) == 130
    assert sum(r.sentences for r in results) == TOTAL_SENTENCES


def test_every_sentence_is_found_except_the_css_ones(results: list[PageResult]) -> None:
    unexpected = [
        (r.name, s) for r in results for s in r.missing if not _is_known_exception(r.name, s)
    ]
    assert unexpected == []
    found = sum(r.sentences - len(r.missing) for r in results)
    assert found >= RECALL_FLOOR


def test_known_exceptions_are_still_exceptions(results: list[PageResult]) -> None:
    # If one starts passing, the list (and the README's count) should be revisited.
    by_name = {r.name: r for r in results}
    for page, starts in KNOWN_EXCEPTIONS.items():
        missing = by_name[page].missing
        for start in starts:
            assert any(s.startswith(start) for s in missing), (page, start)


def test_no_invisible_text_is_accepted(results: list[PageResult]) -> None:
    assert sum(r.false_accept_candidates for r in results) > 50_000  # the measure has teeth
    assert [(r.name, s) for r in results for s in r.false_accepts] == []


def test_block_boundaries_separate_words(results: list[PageResult]) -> None:
    pairs = sum(r.pairs for r in results)
    assert sum(r.joined for r in results) / pairs >= JOIN_FLOOR
    assert sum(r.missing_boundaries for r in results) / pairs <= MISSING_BOUNDARY_CEILING


def test_both_parsers_give_the_same_text(results: list[PageResult], html_parser: str) -> None:
    if not lexbor.available():
        pytest.skip("selectolax is not installed (pip install 'tracecite[fast]')")
    other = "lexbor" if html_parser == "html5lib" else "html5lib"
    theirs = _DIGESTS.get(other) or {r.name: digest(r.name, other) for r in results}
    assert {r.name: r.digest for r in results} == theirs
