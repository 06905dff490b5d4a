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


@pytest.mark.parametrize(("comment", "ignored"), [
    ("  <!--tracecite:ignore-->  ", True), ("<!-- tracecite: ignore --> and text", False),
    ("<!-- tracecite: check -->", False),
])
def test_ignore_comment_alone_on_its_line(tmp_path: Path, comment: str, ignored: bool) -> None:
    [found] = read(tmp_path, f'{comment}\n"one two three four" [S](https://e.org)\n').citations
    assert found.ignored is ignored


def test_file_and_relative_links_are_sources(tmp_path: Path) -> None:
    text = ('"one two three four" [S](file:docs/a.md), "five six seven eight" [T](../b.html)\n\n'
            "> Words.\n>\n> — [U](<docs/my file.md>)\n")
    assert [c.url for c in citations(tmp_path, text)] == ["file:docs/a.md", "../b.html",
                                                         "docs/my file.md"]


def test_cite_block_around_markdown(tmp_path: Path) -> None:
    text = ('Intro.\n\n<blockquote cite="https://e.org/b">\n\nThe *first* paragraph.\n\n'
            "The second one.\n\n</blockquote>\n\nAfter.\n")
    [found] = citations(tmp_path, text)
    assert (found.form, found.quote, found.url) == ("cite", "The first paragraph. The second one.",
                                                    "https://e.org/b")
    assert (found.line, found.column) == (5, 1)
    assert found.lines == tuple(range(3, 10))


def test_fragment_in_raw_html(tmp_path: Path) -> None:
    text = '<p>See <a href="https://e.org/p#:~:text=frag%20two">this</a>.</p>\n'
    [found] = citations(tmp_path, text)
    assert (found.form, found.quote, found.column) == ("fragment", "frag two",
                                                       text.index("frag") + 1)


def test_a_quote_in_link_text_is_not_followed_by_the_next_link(tmp_path: Path) -> None:
    assert citations(tmp_path, '[“one two three four”](https://a.org) [x](https://b.org)\n') == []


def test_quotation_marks_as_entities_and_escaped(tmp_path: Path) -> None:
    first, second = citations(tmp_path, 'x &ldquo;one two three four&rdquo; [S](https://e.org)\n\n'
                                        'y "five \\"six\\" seven eight" [T](https://e.org)\n')
    assert (first.quote, first.column) == ("one two three four", 10)
    assert second.quote == 'five "six" seven eight'


def test_html_script_text_holds_no_elements(tmp_path: Path) -> None:
    text = ("<html><head><title>a <q> b</title><script>var s = '<q cite=\"x\">';</script></head>"
            "<body>\n<q cite='https://e.org/q'>quoted words</q>\n</body></html>\n")
    [found] = citations(tmp_path, text, "page.htm")
    column = text.split("\n")[1].index("quoted") + 1
    assert (found.quote, found.line, found.column) == ("quoted words", 2, column)


def test_inline_q_with_a_cite_that_is_no_url(tmp_path: Path) -> None:
    document = read(tmp_path, 'Line.\n\nHe <q cite="Ann Smith">said so</q>.\n')
    assert [(p.code, p.line, p.column) for p in document.problems] == [
        (Code.DOC_CITATION_INVALID, 3, 4)]


def test_rendered_text_of_a_path_and_of_html(tmp_path: Path) -> None:
    from tracecite.inputs.documents import rendered_text
    path = tmp_path / "a.md"
    path.write_text("> *Quoted* words\n\n```\ncode\n```\n", encoding="utf-8")
    assert rendered_text(path) == "Quoted words\ncode\n"
    assert rendered_text("a.md") == "a.md"  # a str is text, never a file name
    assert rendered_text("<p>a <b>b</b></p>", "html").strip() == "a b"
    with pytest.raises(ValueError):
        rendered_text(tmp_path / "missing.md")


def test_lines_of_an_inline_citation_over_several_lines(tmp_path: Path) -> None:
    text = ('Intro.\n\nIt says "one two\nthree four\nfive" [the\nsource][r] here.\n\n'
            '[r]: https://e.org/r\n\nAnd "six seven eight nine"[^n].\n\n[^n]: [F](https://f.org)\n')
    first, second = citations(tmp_path, text)
    assert first.lines == (3, 4, 5, 6, 8)
    assert second.lines == (10, 12)


def test_cite_in_raw_html_inside_a_block_quote(tmp_path: Path) -> None:
    text = 'Text.\n\n> <blockquote cite="https://e.org/b">Quoted words</blockquote>\n'
    [found] = citations(tmp_path, text)
    assert (found.line, found.column) == (3, text.split("\n")[2].index("Quoted") + 1)


def test_inline_columns_count_tabs_and_crlf_as_written(tmp_path: Path) -> None:
    text = 'Intro.\r\n\r\na\tb\t"one two three four" [S](https://e.org)\r\n'
    [found] = citations(tmp_path, text)
    assert (found.line, found.column) == (3, 6)


def test_a_footnote_whose_first_link_is_a_heading_is_no_source(tmp_path: Path) -> None:
    text = 'A "one two three four"[^n].\n\n[^n]: [see](#below) and [x](https://e.org)\n'
    assert citations(tmp_path, text) == []


@pytest.mark.parametrize("text", [
    '"one two three four" [S](https://e.org/p#:~:text=a%ZZ)\n',
    "> One two three four.\n>\n> — [S](https://e.org/p#:~:text=a%ZZ)\n",
])
def test_a_bad_directive_after_a_quote_is_one_tc140(tmp_path: Path, text: str) -> None:
    # The quote's citation fails for its directive alone: its link is taken, so the link
    # gives no second TC140 as a fragment.
    document = read(tmp_path, text)
    assert document.citations == ()
    assert [p.code for p in document.problems] == [Code.DOC_CITATION_INVALID]


def test_misnested_links_in_html_are_one_citation_each(tmp_path: Path) -> None:
    # The HTML parser's adoption agency copies the <a> into each block it was open across.
    text = ("<!doctype html><html><body>\n"
            "<p><a href='https://e.org/p#:~:text=frag'><b>one</p><p>two</b></a></p>\n"
            "</body></html>\n")
    [found] = citations(tmp_path, text, "page.html")
    assert (found.form, found.quote, found.line) == ("fragment", "frag", 2)


def test_xhtml_is_html_for_documents_and_their_local_sources(tmp_path: Path) -> None:
    from tracecite.checks.documents import markdown_targets
    from tracecite.checks.quotes import QuoteCheck
    from tracecite.inputs.documents import kind_of

    assert [kind_of(n) for n in ("a.xhtml", "b.XHTML", "c.htm", "d.MD", "e.txt")] == [
        "html", "html", "html", "markdown", None]
    # Read as HTML, Markdown's link syntax in its text is no link (as Markdown it would be).
    text = '<html><body>\n\n"one two three four" [S](https://e.org/a)\n\n</body></html>\n'
    assert citations(tmp_path, text, "page.xhtml") == []
    assert len(citations(tmp_path, text, "page.md")) == 1
    checks = [QuoteCheck("q", target, "d.md", 1) for target in
              ("file:a.xhtml", "file:b.MD", "file:c.markdown#part", "file:d.txt")]
    assert markdown_targets(checks) == {"file:b.MD", "file:c.markdown#part"}
