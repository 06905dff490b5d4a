"""A PDF from a real typesetter (tests/pdf/typeset/README.md: groff, two columns, hyphenated
line ends, ligatures, a running header), against the sentences of an independent engine's
reading of it (poppler's pdftotext, committed): TraceCite finds every one, and none altered."""

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
