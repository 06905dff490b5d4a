"""Text directives: parsing, percent-decoding, the URL to fetch and matching a page's text."""

from __future__ import annotations

import pytest

from tracecite.model import TextDirective
from tracecite.text_directive import directive_found, parse_text_directive, without_directive


@pytest.mark.parametrize(("url", "expected"), [
    ("https://e.org/p#:~:text=hello%20world", TextDirective("hello world")),
    ("https://e.org/p#:~:text=a,b", TextDirective("a", end="b")),
    ("https://e.org/p#:~:text=pre-,start,-suf", TextDirective("start", prefix="pre", suffix="suf")),
    ("https://e.org/p#:~:text=pre-,s,e,-suf", TextDirective("s", "e", "pre", "suf")),
    ("https://e.org/p#:~:text=a%2Cb%2Dc%26d", TextDirective("a,b-c&d")),
    ("https://e.org/p#:~:text=caf%C3%A9", TextDirective("café")),
    ("https://e.org/p#sec:~:text=x&text=y", TextDirective("x")),
    ("https://e.org/p#:~:other=1&text=x", TextDirective("x")),
])
def test_parses(url: str, expected: TextDirective) -> None:
    assert parse_text_directive(url) == expected


@pytest.mark.parametrize("url", ["https://e.org/p", "https://e.org/p#sec", "https://e.org/p#:~:other=1",
                                 "https://e.org/p?q=:~:text=x"])
def test_no_directive(url: str) -> None:
    assert parse_text_directive(url) is None


@pytest.mark.parametrize("url", [
    "https://e.org/p#:~:text=", "https://e.org/p#:~:text=a,,b", "https://e.org/p#:~:text=a,b,c",
    "https://e.org/p#:~:text=pre-", "https://e.org/p#:~:text=-suf", "https://e.org/p#:~:text=%ZZ",
    "https://e.org/p#:~:text=%C3", "https://e.org/p#:~:text=a%", "https://e.org/p#:~:text=%20",
    "https://e.org/p#:~:text=a,b,c,d,e",
])
def test_bad_directives_raise_with_a_reason(url: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_text_directive(url)
    assert str(raised.value)


@pytest.mark.parametrize(("url", "fetched"), [
    ("https://e.org/p#:~:text=x", "https://e.org/p"),
    ("https://e.org/p#intro:~:text=x", "https://e.org/p#intro"),
    ("https://e.org/p#intro", "https://e.org/p#intro"),
    ("https://e.org/p?a=1", "https://e.org/p?a=1"),
])
def test_without_directive(url: str, fetched: str) -> None:
    assert without_directive(url) == fetched


PAGE = "The  quick brown\n fox jumps over the lazy dog. The end."


@pytest.mark.parametrize(("directive", "found"), [
    (TextDirective("quick brown fox"), True),
    (TextDirective("quick brown cat"), False),
    (TextDirective("quick", end="lazy dog"), True),
    (TextDirective("lazy", end="quick"), False),
    (TextDirective("quick", prefix="The"), True),
    (TextDirective("quick", prefix="A"), False),
    (TextDirective("brown", prefix="The"), False),  # "quick" stands between
    (TextDirective("fox", suffix="jumps"), True),
    (TextDirective("fox", suffix="over"), False),
    (TextDirective("quick", end="dog", suffix=". The end"), True),
    (TextDirective("quick", end="dog", suffix="cat"), False),
    (TextDirective("The", end="end", prefix="dog."), True),  # the second "The"
    (TextDirective("the", suffix="end"), False),  # case is kept
])
def test_found(directive: TextDirective, found: bool) -> None:
    assert directive_found(PAGE, directive) is found


def test_found_after_a_first_occurrence_without_its_suffix() -> None:
    assert directive_found("a b. a c.", TextDirective("a", suffix="c"))
    assert directive_found("x a y end. a end z", TextDirective("a", end="end", suffix="z"))


def test_surrogate_is_a_reason() -> None:
    with pytest.raises(ValueError):
        parse_text_directive("https://e.org/#:~:text=%41\ud800")
