"""Bad and hostile documents: bounded time, a finding instead of a traceback."""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.inputs.documents.helpers import read
from tracecite.codes import Code
from tracecite.inputs.documents import parse_document


def test_deep_nesting_is_reported(tmp_path: Path) -> None:
    document = read(tmp_path, "Fine.\n\n" + ">" * 100_000 + " deep\n>\n> — [S](https://e.org)\n")
    assert [(p.code, p.line) for p in document.problems] == [(Code.DOC_CITATION_INVALID, 3)]


def test_a_huge_paragraph_is_reported_not_parsed(tmp_path: Path) -> None:
    text = "[" * 100_000 + '"one two three four"' + "]" * 100_000 + "\n"
    started = time.monotonic()
    document = read(tmp_path, text)
    assert time.monotonic() - started < 2
    assert [p.code for p in document.problems] == [Code.DOC_CITATION_INVALID]


def test_ten_megabytes_of_nested_block_quotes(tmp_path: Path) -> None:
    text = (">" * 100_000 + " quoted words\n>\n> — [S](https://e.org)\n\n") * 100
    assert len(text) > 10_000_000
    started = time.monotonic()
    document = read(tmp_path, text)
    assert time.monotonic() - started < 30
    assert document.problems
    assert {p.code for p in document.problems} == {Code.DOC_CITATION_INVALID}


_PIECES = st.sampled_from(['"', "“", "”", "«", "»", "„", ">", "[", "]", "(", ")", "<", "</q>",
                           '<q cite="x">', "<blockquote cite=>", "*", "_", "`", "```", "~~~",
                           "tracecite", "\n", "\r\n", "\t", " ", "—", "--", "#:~:text=", "%",
                           "%2C", ",", "-", "[^1]", "[^1]: ", "[r]: ", "https://e.org",
                           "<!-- tracecite: ignore -->", "&amp;", "\\", "word", "\ufeff", "|"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=60), st.booleans())
def test_never_raises(pieces: list[str], html: bool) -> None:
    document = parse_document("".join(pieces), "x", kind="html" if html else "markdown")
    for citation in document.citations:
        assert citation.line >= 1 and citation.column >= 1
        assert citation.quote
    for problem in document.problems:
        assert problem.line is not None and problem.column is not None


def test_nested_lists_beyond_the_parsers_depth_are_reported(tmp_path: Path) -> None:
    text = "".join("  " * i + '- a "one two three four" [S](https://e.org)\n' for i in range(30))
    document = read(tmp_path, text)
    assert 0 < len(document.citations) < 30
    [problem] = document.problems
    assert problem.code is Code.DOC_CITATION_INVALID
    assert problem.line == len(document.citations)


def test_deep_quote_lines_are_left_out_quickly(tmp_path: Path) -> None:
    deep = ">" * 100 + ' "one two three four" [a](https://e.org)\n'
    text = '"five six seven eight" [b](https://e.org)\n\n' + deep * 20_000
    started = time.monotonic()
    document = read(tmp_path, text)
    assert time.monotonic() - started < 5
    assert [c.quote for c in document.citations] == ["five six seven eight"]
    assert [(p.code, p.line) for p in document.problems] == [(Code.DOC_CITATION_INVALID, 3)]
