"""The ``inline`` form in HTML files (docs/guides/documents.md#citation-forms): a quotation of at
least four words followed at once by an ``<a href>``, read with Markdown's rules, located at the
quote's first character in the HTML source."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inputs.documents.helpers import citations, read
from tracecite.model import TextDirective


def _html(body: str) -> str:
    return f"<!doctype html><html><head><title>t</title></head><body>\n{body}\n</body></html>\n"


def test_inline_with_a_link(tmp_path: Path) -> None:
    text = _html('<p>Intro.</p>\n<p>He wrote “the <em>quick</em> brown &amp; fox”, '
                 '<a href="https://e.org/a">S</a>.</p>')
    [found] = citations(tmp_path, text, "page.html")
    assert (found.form, found.quote, found.url) == ("inline", "the quick brown & fox",
                                                    "https://e.org/a")
    assert (found.line, found.column) == (3, 14)
    assert found.lines == (3,)
    assert found.ordinal == 1


@pytest.mark.parametrize("body", [
    '"one two three four" <a href="https://e.org">S</a>',
    '«one two three four» (<a href="https://e.org">S</a>)',
    '„one two three four“ <a href="https://e.org">S</a>',
    '&ldquo;one two three four&rdquo;, <a href="https://e.org">S</a>',
    '&quot;one two three four&quot; <a href=https://e.org>S</a>',
    '"one two\nthree four" <em><a href="https://e.org">S</a></em>',
    '"one two<br>three four" <a class="x" href="https://e.org">S</a>',
    "<span>\"one two three four\"</span> <a href='https://e.org'>S</a>",
])
def test_inline_marks(tmp_path: Path, body: str) -> None:
    [found] = citations(tmp_path, _html(f"<p>{body}</p>"), "page.html")
    assert (found.form, found.quote, found.url) == ("inline", "one two three four",
                                                    "https://e.org")


@pytest.mark.parametrize("body", [
    '<p>"three words only" <a href="https://e.org">S</a></p>',
    '<p>"one two three four" and then <a href="https://e.org">S</a></p>',
    '<p><code>"one two three four" <a href="https://e.org">S</a></code></p>',
    '<pre>"one two three four" <a href="https://e.org">S</a></pre>',
    '<p><kbd>"one two three four"</kbd> <a href="https://e.org">S</a></p>',
    '<!-- "one two three four" <a href="https://e.org">S</a> -->',
    '<script>var s = \'"one two three four" <a href="https://e.org">S</a>\';</script>',
    '<style>/* "one two three four" <a href="https://e.org">S</a> */</style>',
    '<p>"one two three four" <a href="#heading">S</a></p>',
    '<p>"one two three four" <a name="here">S</a></p>',
    '<p>"one two three four"</p>',
    '<p>"one two three four"</p><p><a href="https://e.org">S</a></p>',
    '<ul><li>"one two three four"</li><li><a href="https://e.org">S</a></li></ul>',
    '<p>"one two three four"<sup id="r">[1]</sup></p><p id="n1"><a href="https://e.org">1</a></p>',
    '<p><a href="https://a.org">"one two three four"</a> <a href="https://e.org">S</a></p>',
    '<p>"one two three four" &nbsp;<a href="https://e.org">S</a></p>',
])
def test_inline_not_citations(tmp_path: Path, body: str) -> None:
    assert citations(tmp_path, _html(body), "page.html") == []


def test_a_taken_cite_holds_no_inline_quote(tmp_path: Path) -> None:
    body = ('<p><q cite="https://q.org">"one two three four" <a href="https://e.org">S</a></q>'
            '</p>\n<blockquote cite="https://b.org"><p>"five six seven eight" '
            '<a href="https://f.org">T</a></p></blockquote>')
    found = citations(tmp_path, _html(body), "page.html")
    assert [(c.form, c.url) for c in found] == [("cite", "https://q.org"),
                                                ("cite", "https://b.org")]
    # Without the cite form, the text is the page's like any other.
    document = read(tmp_path, _html(body), "page.html",
                    forms=frozenset({"inline", "fragment"}))
    assert [(c.form, c.url) for c in document.citations] == [("inline", "https://e.org"),
                                                             ("inline", "https://f.org")]


def test_a_q_without_cite_is_text(tmp_path: Path) -> None:
    body = '<p><q>"one two three four" <a href="https://e.org">S</a></q></p>'
    [found] = citations(tmp_path, _html(body), "page.html")
    assert (found.form, found.url) == ("inline", "https://e.org")


def test_an_inline_link_with_a_directive_is_one_citation(tmp_path: Path) -> None:
    body = ('<p>"one two three four" <a href="https://e.org/p#:~:text=two%20three">S</a> and '
            '<a href="https://e.org/q#:~:text=alone">a highlight</a></p>')
    inline, fragment = citations(tmp_path, _html(body), "page.html")
    assert (inline.form, inline.directive) == ("inline", TextDirective("two three"))
    assert (fragment.form, fragment.quote, fragment.url) == (
        "fragment", "alone", "https://e.org/q#:~:text=alone")


def test_the_lines_run_to_the_links_end_and_columns_are_the_sources(tmp_path: Path) -> None:
    body = ('<p>\tSee “one two\r\nthree four” (<a\r\n  href="https://e.org">the\r\nsource</a>).'
            '</p>')
    [found] = citations(tmp_path, _html(body), "page.html")
    assert (found.line, found.column) == (2, 10)
    assert found.lines == (2, 3, 4, 5)


def test_ignore_comment_and_ordinals_follow_the_source(tmp_path: Path) -> None:
    body = ('<blockquote cite="https://b.org">quoted words</blockquote>\n'
            "<!-- tracecite: ignore -->\n"
            '<p>"one two three four" <a href="https://e.org">S</a></p>\n'
            '<p>"five six seven eight" <a href="https://f.org">T</a></p>')
    document = read(tmp_path, _html(body), "page.html")
    assert [(c.ordinal, c.form, c.ignored) for c in document.citations] == [
        (1, "cite", False), (2, "inline", True), (3, "inline", False)]
    assert document.skipped == 1


def test_markdown_syntax_in_html_is_no_link(tmp_path: Path) -> None:
    text = _html('<p>"one two three four" [S](https://e.org/a)</p>')
    assert citations(tmp_path, text, "page.html") == []


def test_the_inline_form_off_reads_none(tmp_path: Path) -> None:
    body = '<p>"one two three four" <a href="https://e.org/p#:~:text=two">S</a></p>'
    document = read(tmp_path, _html(body), "page.html",
                    forms=frozenset({"cite", "fragment"}))
    assert [c.form for c in document.citations] == ["fragment"]  # the link cites alone


def test_unclosed_and_misnested_markup_never_raises(tmp_path: Path) -> None:
    for body in ('<p>"one two three four" <a href="https://e.org">S', '<p>"one two three four',
                 '<a href="x">"one two three four" <a href="https://e.org">S</a>',
                 '&ldquo;one two three four&rdquo <a href="https://e.org">S</a> &#x;&#99999999;',
                 '<p>"one two three four" <a href="https://e.org" <b>S</a>'):
        read(tmp_path, _html(body), "page.html")
    [found] = citations(tmp_path, _html('<p>"one two three four" <a href="https://e.org">S'),
                        "page.html")
    assert found.lines == (2,)  # the open link ends where its block does


def test_an_html_block_in_markdown_is_unchanged(tmp_path: Path) -> None:
    """Markdown's raw HTML keeps its own forms (cite, fragment): only HTML files read inline
    quotes from their markup."""
    text = '<div>\n"one two three four" <a href="https://e.org">S</a>\n</div>\n'
    assert citations(tmp_path, text, "page.md") == []


def test_a_block_too_long_to_read_for_inline_quotes_is_tc140(tmp_path: Path) -> None:
    from tracecite.codes import Code
    from tracecite.inputs.documents.cite import MAX_BLOCK

    filler = "word " * (MAX_BLOCK // 5)
    body = f'<p>\n{filler}"one two three four" <a href="https://e.org">S</a></p>'
    document = read(tmp_path, _html(body), "page.html")
    assert document.citations == ()
    assert [(p.code, p.line, p.column) for p in document.problems] == [
        (Code.DOC_CITATION_INVALID, 2, 4)]
    assert "not read for inline quotes" in document.problems[0].message
    # Without a link it can cite nothing: no problem to report.
    assert read(tmp_path, _html(f'<p>{filler}"one two three four"</p>'),
                "page.html").problems == ()


def test_a_cite_ends_where_its_own_element_does(tmp_path: Path) -> None:
    body = ('<p><q cite="https://q.org">a <q>b</q> "one two three four" <a href="https://e.org">'
            'S</a></q> "five six seven eight" <a href="https://f.org">T</a></p>')
    found = citations(tmp_path, _html(body), "page.html")
    assert [(c.form, c.url) for c in found] == [("cite", "https://q.org"),
                                                ("inline", "https://f.org")]
