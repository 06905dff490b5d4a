"""PDFs from real typesetters (tests/pdf/typeset/README.md), against the sentences of an
independent engine's reading of them (poppler's pdftotext, committed): the project's article
(groff, two columns, hyphenated line ends, ligatures, a running header), where TraceCite finds
every one, and a third-party manual (pdfTeX), where it finds every one but those the two
engines read in another order; none altered, in either."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.pdf.conftest import files_trace, need_engine
from tracecite.checks.parse_pool import match_pages
from tracecite.pdf.reader import PdfReader

HERE = Path(__file__).with_name("typeset")
ORACLE = (HERE / "article.oracle.txt").read_text(encoding="utf-8").splitlines()


def _altered(sentence: str) -> str:
    words = sentence.split()
    words[len(words) // 2] = "nothing" if words[len(words) // 2] != "nothing" else "all"
    return " ".join(words)


@pytest.fixture(scope="module")
def raw_pages() -> tuple[str, ...]:
    need_engine()
    with PdfReader(1) as reader:
        return reader.raw_pages((HERE / "article.pdf").read_bytes())


def test_every_oracle_sentence_is_found_and_none_altered(raw_pages: tuple[str, ...]) -> None:
    assert len(ORACLE) == 12 and len(raw_pages) == 2
    assert match_pages(raw_pages, ORACLE) == [True] * len(ORACLE)
    assert not any(v is True for v in match_pages(raw_pages, [_altered(s) for s in ORACLE]))


def test_hyphenated_line_ends_were_marked_by_the_engine(raw_pages: tuple[str, ...]) -> None:
    # What the rules rely on: PDFium marks the typesetter's hyphenated line ends.
    assert sum(page.count("\ufffe") for page in raw_pages) >= 5


def test_through_verify_files(cli: Cli, tmp_path: Path) -> None:
    need_engine()
    cited = [("file:article.pdf", s) for s in ORACLE] + [("file:article.pdf", _altered(ORACLE[2]))]
    trace = files_trace(tmp_path / "t.jsonl", cited)
    report = cli("verify-files", trace, "--root", HERE, "--json").json()
    assert report["summary"]["files"]["matched"] == len(ORACLE)
    assert [(f["code"], f["citation"]) for f in report["findings"]] == [("TC211", len(ORACLE) + 1)]
    assert report["findings"][0]["diagnosis"]["where"] == "page 1"


MANUAL = (HERE / "libtasn1.oracle.txt").read_text(encoding="utf-8").splitlines()
READ_IN_ANOTHER_ORDER = frozenset({
    6, 351, 352,  # the dot leaders of the contents and of the two indexes
    34, 40,  # code examples laid out in columns
    228,  # the appendix's first line, which pdftotext reads after the page number
    # The function reference: each signature's right-margin "[Function]" label, and the page
    # headers that pdftotext reads into the sentence after them.
    41, 50, 55, 57, 60, 62, 63, 64, 67, 70, 73, 90, 110, 130, 133, 135, 139, 148, 150, 155, 159,
    161, 163, 171, 183, 187, 198, 214, 219,
})
"""The oracle lines (from 1) of the manual that PDFium and pdftotext read in another order."""


def test_a_third_party_manual_matches_the_oracle_but_where_the_engines_order_differ() -> None:
    need_engine()
    with PdfReader(1) as reader:
        pages = reader.raw_pages((HERE / "libtasn1.pdf").read_bytes())
    assert len(MANUAL) == 352 and len(pages) == 36
    verdicts = match_pages(pages, MANUAL)
    missed = {n for n, verdict in enumerate(verdicts, 1) if verdict is not True}
    assert missed <= READ_IN_ANOTHER_ORDER  # every other sentence is found
    assert len(MANUAL) - len(missed) >= 317
    assert not any(v is True for v in match_pages(pages, [_altered(s) for s in MANUAL]))
