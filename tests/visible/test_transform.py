"""Tests of text-transform: Chromium's capitalize (the module), and inline text-transform
applied to the visible text, inherited and reset, as ``innerText`` shows it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.visible.conftest import shown
from tracecite.visible import visible_text
from tracecite.visible.transform import _capitalize, capitalize

# --- capitalize -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello world", "Hello World"),
        ("foo-bar (baz) a/b", "Foo-Bar (Baz) A/B"),
        ("don't l'homme it\u2019s", "Don't L'homme It\u2019s"),
        ("e.g. example.com a:b", "E.g. Example.com A:b"),
        ("1,000th 3rd 2.5x x2y", "1,000th 3rd 2.5x X2y"),
        ("'quoted' \"twice\"", "'Quoted' \"Twice\""),
        ("stra\u00dfe \u00dfig", "Stra\u00dfe \u00dfig"),  # simple mapping: ß has no titlecase
        ("\u01c6ungla", "\u01c5ungla"),  # dž: its titlecase form, not its capital
        ("co\u00adop e\u0301t\u00e9", "Co\u00adop E\u0301t\u00e9"),  # marks stay in the word
        ("a\u00a0b", "A\u00a0B"),  # a no-break space separates words and stays
        ("a\u200bb", "A\u200bB"),  # so does a zero-width space
        ("_x ALREADY mIxEd", "_x ALREADY MIxEd"),  # only the first letter changes
        ("\U00010428x", "\U00010428x"),  # outside the BMP: left as Chromium leaves it
        ("\u0432\u0430\u0441\u044f \u03b1\u03b2", "\u0412\u0430\u0441\u044f \u0391\u03b2"),
        ("", ""),
    ],
)
def test_capitalize(text: str, expected: str) -> None:
    assert capitalize(text) == expected


@given(st.text(st.sampled_from("aZ0_ .:',;-\u00a0\u00e9\u0301"), max_size=12),
       st.sampled_from(["", "a", " ", "'", "9", "\u00e9", "\u00a0"]))
def test_capitalize_of_ascii_is_the_same_as_one_character_at_a_time(
    text: str, before: str,
) -> None:
    # capitalize() takes a faster way for ASCII text; _capitalize() is the reference.
    ascii_text = "".join(c for c in text if c.isascii())
    assert capitalize(ascii_text, [before]) == _capitalize(ascii_text, before or " ")


def test_capitalize_continues_the_text_before_it() -> None:
    assert capitalize("bar baz", ["", "foo", ""]) == "bar Baz"
    assert capitalize("bar", ["foo "]) == "Bar"
    assert capitalize("t", ["don'"]) == "T"  # one character of context, as Chromium
    assert capitalize("bar", ["\n"]) == "Bar"


# --- applied to the visible text --------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("<p style='text-transform:uppercase'>stra\u00dfe</p>", "STRASSE"),
        ("<p style='text-transform:lowercase'>\u0391\u0392\u03a3 ABC</p>",
         "\u03b1\u03b2\u03c2 abc"),  # a final sigma at the end of a word
        ("<p style='text-transform:capitalize'>the quick brown fox</p>", "The Quick Brown Fox"),
        # Inherited by descendants and their tails; "none" resets it.
        ("<div style='text-transform:uppercase'>a<p>b<i>c</i>d</p>e</div>f", "A BCD E f"),
        ("<div style='text-transform:uppercase'>a<span style='text-transform:none'>b<b>c</b>"
         "</span>d</div>", "AbcD"),
        ("<div style='text-transform:uppercase'>a<span style='text-transform:lowercase'>BC"
         "</span></div>", "Abc"),
        ("<div style='text-transform:uppercase'><span style='text-transform:inherit'>a</span>"
         "<span style='text-transform:bogus'>b</span></div>", "AB"),
        ("<div style='text-transform:uppercase'><span style='text-transform:full-width'>a</span>"
         "</div>", "a"),
        # Capitalize runs across inline elements, not across a block or <br>.
        ("<p style='text-transform:capitalize'>hello<b>world</b> and <i>more</i></p>",
         "Helloworld And More"),
        ("foo<span style='text-transform:capitalize'>bar baz</span>", "foobar Baz"),
        ("<div style='text-transform:capitalize'>one<br>two<p>three</p></div>", "One Two Three"),
        ("<p>foo</p><p style='text-transform:capitalize'>bar</p>", "foo Bar"),
        # Form controls reset it (UA stylesheet); hidden text is not shown, transformed or not.
        ("<div style='text-transform:uppercase'>a<button>b</button><select><option>c"
         "</select></div>", "Ab c"),
        ("<p style='text-transform:uppercase'>a<span hidden>secret</span></p>", "A"),
        # SVG: a style sets it, the attribute does not (not a presentation attribute).
        ("<svg><text text-transform=uppercase>abc</text>"
         "<text style='text-transform:uppercase'>def</text></svg>", "abc DEF"),
        ("<p style='text-transform:uppercase'><svg><text>in svg</text></svg></p>", "IN SVG"),
        ("<math style='text-transform:uppercase'><mi>x</mi></math>", "X"),
        # Entities are decoded before the case changes.
        ("<p style='text-transform:uppercase'>&eacute;&amp;</p>", "\u00c9&"),
    ],
)
def test_inline_text_transform_is_applied(page: str, expected: str) -> None:
    assert shown(page) == expected


def test_transformed_text_keeps_its_boundaries() -> None:
    raw = visible_text("<table style='text-transform:uppercase'><tr><td>a<td>b</table>")
    assert raw.strip("\n") == "\tA\t\tB\t"
