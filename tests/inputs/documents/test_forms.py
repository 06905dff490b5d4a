"""The inline, fragment and cite forms, ignore comments and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inputs.documents.helpers import citations, read
from tracecite.codes import Code
from tracecite.model import TextDirective


def test_inline_with_a_link(tmp_path: Path) -> None:
    [found] = citations(tmp_path, 'Intro line.\nHe wrote “the *quick* brown &amp; fox”, '
                                  "[S](https://e.org/a).\n")
    assert (found.form, found.quote, found.url) == ("inline", "the quick brown & fox",
                                                    "https://e.org/a")
    assert (found.line, found.column) == (2, 11)
    assert found.lines == (2,)


@pytest.mark.parametrize("text", [
    '"one two three four" [S](https://e.org)', "«one two three four» ([S](https://e.org))",
    "„one two three four“ [S](https://e.org)", '"one two three four" <https://e.org>',
    '"one two\nthree four" [S](https://e.org)',
])
def test_inline_marks(tmp_path: Path, text: str) -> None:
    [found] = citations(tmp_path, text + "\n")
    assert found.quote == "one two three four"
    assert found.url == "https://e.org"


@pytest.mark.parametrize("text", [
    '"three words only" [S](https://e.org)',
    '"one two three four" and then [S](https://e.org)',
    '`"one two three four" [S](https://e.org)`',
    '    "one two three four" [S](https://e.org)',
    '<!-- "one two three four" [S](https://e.org) -->',
    '"one two three four" [S](#heading)',
    '"one two three four"',
])
def test_inline_not_citations(tmp_path: Path, text: str) -> None:
    assert citations(tmp_path, text + "\n") == []


def test_inline_reference_link_and_footnote(tmp_path: Path) -> None:
    text = ('A "one two three four" [S][ref] and "five six seven eight"[^n].\n\n'
            "[ref]: https://e.org/r\n\n[^n]: See [F](https://e.org/f) and [G](https://g.org).\n")
    first, second = citations(tmp_path, text)
    assert (first.url, first.lines) == ("https://e.org/r", (1, 3))
    assert (second.url, second.quote) == ("https://e.org/f", "five six seven eight")
    assert second.lines == (1, 5)


def test_fragment(tmp_path: Path) -> None:
    text = "See [here](https://e.org/p#:~:text=pre-,quick%20brown,lazy,-dog).\n"
    [found] = citations(tmp_path, text)
    assert found.form == "fragment"
    assert found.quote == "quick brown"
    assert found.directive == TextDirective("quick brown", "lazy", "pre", "dog")
    assert (found.line, found.column) == (1, text.index("pre-") + 1)


def test_inline_link_with_a_directive_is_one_citation(tmp_path: Path) -> None:
    [found] = citations(tmp_path, '"one two three four" [S](https://e.org/#:~:text=one)\n')
    assert found.form == "inline"
    assert found.directive == TextDirective("one")


def test_bad_fragment_is_tc140(tmp_path: Path) -> None:
    document = read(tmp_path, "Line.\n\nSee [x](https://e.org/p#:~:text=a%ZZ).\n")
    assert document.citations == ()
    [problem] = document.problems
    assert (problem.code, problem.line) == (Code.DOC_CITATION_INVALID, 3)


def test_cite_in_markdown(tmp_path: Path) -> None:
    text = ('Para with <q cite="https://e.org/q">a quoted *bit*</q>.\n\n'
            '<blockquote cite="https://e.org/b">\n<p>Block &amp; text</p>\n</blockquote>\n')
    first, second = citations(tmp_path, text)
    assert (first.form, first.quote, first.url) == ("cite", "a quoted bit", "https://e.org/q")
    assert (first.line, first.column) == (1, text.index("a quoted") + 1)
    assert (second.quote, second.url, second.line) == ("Block & text", "https://e.org/b", 4)


@pytest.mark.parametrize("value", ["", "John Smith", "Wikipedia"])
def test_cite_not_a_url_is_tc140(tmp_path: Path, value: str) -> None:
    document = read(tmp_path, f'<blockquote cite="{value}">Words</blockquote>\n')
    assert [p.code for p in document.problems] == [Code.DOC_CITATION_INVALID]


def test_html_file(tmp_path: Path) -> None:
    text = ("<!doctype html><html><body>\n<!-- <q cite='https://no.org'>x</q> -->\n"
            "<p>He said <q cite='https://e.org/q'>quoted &amp; words</q>.</p>\n"
            "<blockquote cite='../local.md'><p>One.</p><p>Two.</p></blockquote>\n"
            "<a href='https://e.org/p#:~:text=frag'>f</a>\n</body></html>\n")
    q, block, fragment = citations(tmp_path, text, "page.html")
    assert (q.quote, q.url, q.line, q.column) == ("quoted & words", "https://e.org/q", 3,
                                                  text.split("\n")[2].index("quoted") + 1)
    assert (block.quote, block.url, block.line) == ("One. Two.", "../local.md", 4)
    assert (fragment.form, fragment.quote, fragment.line) == ("fragment", "frag", 5)


def test_ignore_comment(tmp_path: Path) -> None:
    text = ('<!-- tracecite: ignore -->\n"one two three four" [S](https://e.org)\n\n'
            '"five six seven eight" [S](https://e.org)\n')
    document = read(tmp_path, text)
    assert [c.ignored for c in document.citations] == [True, False]
    assert document.skipped == 1


def test_not_utf8(tmp_path: Path) -> None:
    document = read(tmp_path, b"ok\nab\xff\n")
    [problem] = document.problems
    assert (problem.code, problem.line, problem.column) == (Code.INPUT_NOT_UTF8, 2, 3)


def test_unreadable(tmp_path: Path) -> None:
    from tracecite.inputs.documents import read_document
    [problem] = read_document(str(tmp_path / "missing.md")).problems
    assert problem.code is Code.INPUT_UNREADABLE


def test_ordinals_follow_the_source(tmp_path: Path) -> None:
    text = ('"one two three four" [S](https://e.org)\n\n> Quote.\n>\n> — [S](https://e.org)\n\n'
            "```tracecite\nclaim: c\nquote: q\nurl: https://e.org\n```\n")
    found = citations(tmp_path, text)
    assert [(c.ordinal, c.form) for c in found] == [(1, "inline"), (2, "blockquote"),
                                                   (3, "notes")]


def test_rendered_text(tmp_path: Path) -> None:
    from tracecite.inputs.documents import rendered_text
    text = "# T\n\nThe *quick* &amp; [fox](u).\n"
    assert rendered_text(text, "markdown") == "T\nThe quick & fox."
