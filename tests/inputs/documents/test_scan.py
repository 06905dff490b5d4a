"""The scanner gives exactly the citations markdown-it-py gives: its block tokens are the
parser's, its rendered inlines the renderer's, and a document read with it finds what the whole
document parsed by markdown-it-py alone finds."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.token import Token

from tracecite.inputs.documents.chunks import pieces
from tracecite.inputs.documents.forms import Collector
from tracecite.inputs.documents.locate import Source
from tracecite.inputs.documents.markdown import parser, read_markdown
from tracecite.inputs.documents.plain import plain_inline
from tracecite.inputs.documents.rendering import InlineText, render
from tracecite.inputs.documents.scan import block_tokens, blocks
from tracecite.model import DOCUMENT_FORMS

_REPO = Path(__file__).resolve().parents[3]

# The shapes the scanner reads, and perturbations of them that must send a piece to the parser.
_SHAPES = st.sampled_from([
    'As it says, “one two three four” ([guide](https://e.org/a)).',
    '"five six seven eight" [S](https://e.org/b), "nine ten eleven twelve" [T](https://e.org/c)',
    "> quoted words of the page\n>\n> — [The source](https://e.org/d)",
    "> first paragraph here\n> goes on\n>\n> second one\n>\n> -- [S](https://e.org/e)",
    "> quoted words\n>\n> ― [S](https://e.org/f) and [T](https://e.org/g)",
    'Here <q cite="https://e.org/h">quoted words stand here</q> quoted.',
    '<q cite="https://e.org/i">at the start</q> of a line',
    'A <q cite="nourl">bad cite value here</q>.',
    "It says so [here](https://e.org/p#:~:text=quoted%20words).",
    "Broken [here](https://e.org/p#:~:text=%E0%A4%A).",
    "```tracecite\nclaim: c\nquote: the quoted words\nurl: https://e.org/n\n```",
    "```tracecite\nclaim: c\n\nquote: q\n```", "```tracecite\nnot a record\n```",
    '"thirteen fourteen fifteen sixteen" [S][r]', "[r]: https://e.org/r",
    '"seventeen eighteen nineteen twenty"[^n]', "[^n]: see [F](https://e.org/f)",
    "[S](https://e.org/j) starts “this line with a link”", "Plain prose, no marks.",
    '<!-- tracecite: ignore -->', "# Heading", "- item", "1. item", "| a | b |\n|---|---|",
    "    indented", "Title\n=====", '<blockquote cite="https://e.org/k">', "</blockquote>",
    "---", "***", "<div>", "</div>",
])
_PERTURB = st.sampled_from([
    "", "", "", "\n", "\n> ", "\n>", "\n- ", "\n# ", "\n1. ", "\n    ", "\n  ", "  ", " *a*",
    " `c`", " &amp;", " \\", " <b>", "\n---", "\n===", "\n|---|", "\n```", "\n<div>", "\t",
    " [x]", "\n[x]: https://e.org/x", "\u00a0", "\nlazy line", "\n> > nested", "\n>\n>",
    '\n“four more words here” ([S](https://e.org/l))', "\x00", "\n--", "\n— [S](u)",
])
_SEPARATORS = st.sampled_from(["\n", "\n\n", "\n\n\n", "\n \n", "\r\n\r\n"])


def _found(text: str, *, scanner: bool, whole: bool = False) -> list[tuple[object, ...]]:
    """A document's citations and problems, its pieces read with the scanner or by markdown-it
    alone (``whole``: the whole document parsed by markdown-it, not only its pieces; that the
    pieces find what the whole finds is test_pieces')."""
    source = Source(text)
    collector = Collector("d.md", source, frozenset(DOCUMENT_FORMS))
    read_markdown(source, collector, direct=scanner, whole=whole)
    return [(c.ordinal, c.form, c.quote, c.url, c.line, c.column, c.lines, c.ignored,
             c.directive, c.claim) for c in collector.citations()] + [
        (p.code, p.message, p.line, p.column)
        # In the order a document's problems are reported (parse_document).
        for p in sorted(collector.problems, key=lambda f: (f.line or 0, f.column or 0))]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_SHAPES, _PERTURB, _PERTURB, _SEPARATORS), max_size=10))
def test_scanned_documents_find_what_markdown_it_finds(
        blocks: list[tuple[str, str, str, str]]) -> None:
    text = "".join(shape + one + two + sep for shape, one, two, sep in blocks)
    assert _found(text, scanner=True) == _found(text, scanner=False)


def test_every_markdown_file_of_the_project_reads_alike() -> None:
    files = [p for folder in ("tests", "examples") for p in (_REPO / folder).rglob("*")
             if p.suffix in (".md", ".markdown") and p.is_file()]
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        found = _found(text, scanner=True)
        assert found == _found(text, scanner=False, whole=True), path


def _block_shape(tokens: list[Token]) -> list[tuple[object, ...]]:
    return [(t.type, t.level, t.map, t.content, t.info, t.nesting) for t in tokens]


@settings(max_examples=500, deadline=None)
@given(st.tuples(_SHAPES, _PERTURB, _PERTURB), st.integers(0, 3))
def test_block_tokens_are_the_parsers(shape: tuple[str, str, str], first: int) -> None:
    piece = "".join(shape) + "\n\n"
    block = blocks(piece, first)
    if block is None:
        return
    made = block_tokens(block)
    expected = parser().parse("\n" * first + piece, {})
    assert _block_shape(made) == _block_shape(expected)


def _rendered(inline: InlineText) -> tuple[object, ...]:
    return (inline.text, inline.starts, inline.offsets, inline.literal, inline.code,
            [(e.token.type, e.token.content, e.token.attrGet("href"), e.at, e.start, e.end,
              e.close_at, e.reference) for e in inline.events])


_INLINE_PARTS = st.sampled_from([
    "word", " ", "\n", "\n  ", '"', "“", "”", ",", "(", ")", ".", "[a](https://e.org)",
    "[two words](u)", "[](v)", "[x](y z)", "[x]", "]", '<q cite="https://e.org/q">', "</q>",
    '<q cite="a b">', "<q>", "*", "&amp;", "<", "é", "-", "[x](a(b))", "!", "\t",
])


@settings(max_examples=600, deadline=None)
@given(st.lists(_INLINE_PARTS, min_size=1, max_size=20))
def test_plain_inlines_render_as_the_parsers(parts: list[str]) -> None:
    content = "".join(parts).strip()
    made = plain_inline(content, 3)
    if made is None:
        return
    children: list[Token] = []
    parser().inline.parse(content, parser(), {}, children)
    assert _rendered(made) == _rendered(render(children, content, 3))


def test_the_common_shapes_are_scanned() -> None:
    text = ('# T\n\nProse.\n\n“one two three four” ([S](https://e.org/a)).\n\n'
            "> quoted words\n>\n> — [S](https://e.org/b)\n\n"
            'A <q cite="https://e.org/c">x</q> y\n\n'
            "See [x](https://e.org/d#:~:text=w).\n\n```tracecite\nquote: q\n```\n")
    spans = pieces(text, merged=False)
    assert len(spans) == 5
    assert all(blocks(text[start:end], 0) is not None for start, end in spans)
    assert blocks("- “one two three four” [S](https://e.org/a)\n", 0) is None
    assert blocks("> quoted *words*\n>\n> — [S](https://e.org/b)\n", 0) is None
