"""Plain paragraphs' tokens, made without the inline parser, are the parser's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.token import Token

from tracecite.inputs.documents.markdown import parser
from tracecite.inputs.documents.plain import plain_children

_PARTS = st.sampled_from([
    "word", " ", "  ", "\n", "\n  ", "\t", '"', "“", "”", ",", "(", ")", ".", "[a](https://e.org)",
    "[two words](u)", "[](v)", "[x](y z)", "[x]", "]", "[", "*", "_", "&amp;", "\\", "<", "`",
    "é", "-", "#", ":", "[x](a(b))", "[x](<u>)", "!", "^", "~", "[l](\x01)", "1.", "|",
])


def _shape(tokens: list[Token]) -> list[tuple[object, ...]]:
    return [(t.type, t.content, dict(t.attrs), t.markup) for t in tokens]


@settings(max_examples=600, deadline=None)
@given(st.lists(_PARTS, min_size=1, max_size=20))
def test_plain_tokens_are_the_parsers(parts: list[str]) -> None:
    content = "".join(parts).strip()
    made = plain_children(content)
    if made is None:
        return
    md = parser()
    expected: list[Token] = []
    md.inline.parse(content, md, {}, expected)
    assert _shape(made) == _shape(expected)


def test_plain_and_not() -> None:
    assert plain_children('He said "one two three four" [S](https://e.org).') is not None
    assert plain_children("An *emphasis*.") is None
    assert plain_children("A [reference] link.") is None
