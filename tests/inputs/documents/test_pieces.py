"""Parsing only the pieces that can hold a citation finds what parsing the whole document finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tracecite.inputs.documents.chunks import pieces
from tracecite.inputs.documents.forms import Collector
from tracecite.inputs.documents.locate import Source
from tracecite.inputs.documents.markdown import read_markdown
from tracecite.model import DOCUMENT_FORMS

_BLOCKS = st.sampled_from([
    "Plain prose without marks.", '"one two three four" [S](https://e.org/a)',
    "> Quoted words.\n>\n> — [S](https://e.org/b)", "- item\n- item two", "```", "~~~~", "```",
    "  ```", "<!--", "-->", "<pre>", "</pre>", "<script>", "</script>", "<div>", "</div>",
    "<?php", "?>", "    indented code", '  continued "five six seven eight" [S](u)',
    "[r]: https://e.org/r", '"nine ten eleven twelve" [S][r]', "[^n]: see [F](https://e.org/f)",
    '"thirteen fourteen fifteen sixteen"[^n]', "```tracecite\nclaim: c\nquote: q\nurl: u\n```",
    "| a | b |\n|---|---|\n| c | d |", "See [x](https://e.org/p#:~:text=frag).",
    '<q cite="https://e.org/q">quoted here</q>', "Title\n=====", "1. one\n\n   two",
    "<!-- tracecite: ignore -->", "    > indented quote", "> lazy\ncontinued",
    '<blockquote cite="https://e.org/c">', "</blockquote>", "Words inside it.",
])


def _found(text: str, whole: bool) -> list[tuple[object, ...]]:
    source = Source(text)
    collector = Collector("d.md", source, frozenset(DOCUMENT_FORMS))
    read_markdown(source, collector, whole=whole)
    return [(c.form, c.quote, c.url, c.line, c.column, c.lines, c.ignored)
            for c in collector.citations()] + [
        (p.code, p.line, p.column) for p in collector.problems]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_BLOCKS, st.sampled_from(["\n", "\n\n", "\n\n\n", "\r\n\r\n"])),
                max_size=14))
def test_pieces_find_what_the_whole_finds(blocks: list[tuple[str, str]]) -> None:
    text = "".join(block + sep for block, sep in blocks)
    assert _found(text, whole=False) == _found(text, whole=True)


def test_prose_is_not_parsed() -> None:
    text = "Prose.\n\n" * 100 + '"one two three four" [S](https://e.org)\n\n' + "More.\n\n" * 100
    [(start, end)] = pieces(text)
    assert text[start:end] == '"one two three four" [S](https://e.org)\n\n'
    assert pieces("Only prose here.\n\nAnd more.\n") == []


def test_a_fence_keeps_its_blank_lines() -> None:
    text = 'Prose.\n\n```\ncode\n\n"one two three four" [S](https://e.org)\n```\n\nAfter.\n'
    [(start, end)] = pieces(text)
    assert text[start:end].startswith("```") and text[start:end].endswith("```\n\n")


def test_a_cite_block_opened_after_a_close_quotes_what_follows() -> None:
    text = '</blockquote>\n<blockquote cite="https://e.org/c">\n\nPlain prose without marks.\n'
    assert _found(text, whole=False) == _found(text, whole=True) != []


def test_a_close_in_a_fence_does_not_end_a_cite_block() -> None:
    text = ('<blockquote cite="https://e.org/c">\n\n```\n</blockquote>\n'
            "```tracecite\nclaim: c\nquote: q\nurl: u\n```\n\nPlain prose without marks.\n")
    assert _found(text, whole=False) == _found(text, whole=True) != []


def test_a_fence_line_inside_an_html_block_opens_nothing() -> None:
    # The first ``` is the HTML block's text: the second opens a fence holding the quote.
    text = '</pre>\n```\n\n```\n\n"one two three four" [S](https://e.org/a)\n'
    assert _found(text, whole=False) == _found(text, whole=True) == []
    text = ("<div>\n```tracecite\nclaim: c\n\nquote: q\n```\n\n"
            "As it says, “one two three four” ([guide](https://e.org/a)).\n")
    assert _found(text, whole=False) == _found(text, whole=True) == []


def test_a_fence_closed_outside_its_list_item_opens_another() -> None:
    # The ``` at the first column ends the list item: it opens a fence holding the quote.
    text = '- item\n- item two\n  ```\n```\n\n"one two three four" [S](https://e.org/a)\n'
    assert _found(text, whole=False) == _found(text, whole=True) == []


def test_any_raw_end_tag_ends_a_raw_html_block() -> None:
    # </script> ends the <pre> block: the ``` after it opens a fence holding the quote.
    text = '<pre>\n</script>\n```\n</pre>\n\n"one two three four" [S](https://e.org/a)\n'
    assert _found(text, whole=False) == _found(text, whole=True) == []


def test_a_line_indented_less_ends_a_list_items_fence() -> None:
    text = ('- item\n- item two\n  ```\nPlain prose without marks.\n  ```\n\n'
            '"one two three four" [S](https://e.org/a)\n')
    assert _found(text, whole=False) == _found(text, whole=True) == []


def test_a_pre_line_inside_an_html_block_opens_nothing() -> None:
    text = '</blockquote>\n<pre>\n\n```\n</pre>\n\n"one two three four" [S](https://e.org/a)\n'
    assert _found(text, whole=False) == _found(text, whole=True) == []
