"""The one matching rule (docs/reference/matching.md): normalisation and substring matching."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracecite.matching import MatchText, normalise


def quote_in(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text`` under the matching rule."""
    return MatchText(text).contains(normalise(quote))

WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004" \
             "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def test_whitespace_list_is_str_isspace() -> None:
    assert all(c.isspace() for c in WHITESPACE)
    assert {chr(i) for i in range(0x110000) if chr(i).isspace()} == set(WHITESPACE)


@pytest.mark.parametrize("text, expected", [
    ("", ""),
    ("   ", ""),
    ("a", "a"),
    ("  a  b  ", "a b"),
    ("a\tb\nc\r\nd", "a b c d"),
    ("a" + WHITESPACE + "b", "a b"),
    ("no\u00a0break\u202fspace", "no break space"),
    ("e\u0301", "\u00e9"),  # NFD to NFC
    ("\u212b", "\u00c5"),  # ANGSTROM SIGN is canonically A WITH RING
    ("\ufb01", "\ufb01"),  # compatibility ligature kept: NFC, not NFKC
    ("Case, Punctuation!", "Case, Punctuation!"),
    ("zero\u200bwidth", "zero\u200bwidth"),  # U+200B is not whitespace
])
def test_normalise(text: str, expected: str) -> None:
    assert normalise(text) == expected


@pytest.mark.parametrize("quote, text", [
    ("caf\u00e9", "un caf\u00e9 noir"),  # NFC in both
    ("cafe\u0301", "un caf\u00e9 noir"),  # NFD quote, NFC text
    ("caf\u00e9", "un cafe\u0301 noir"),  # NFC quote, NFD text
    ("un caf\u00e9", "un\u00a0cafe\u0301"),  # NFD and a no-break space
    ("a b c", "a\n\tb\u3000\u2028c"),
    ("  a  b ", "xa b"),
    ("\u1100\u1161", "\uac00"),  # conjoining jamo compose to the syllable
])
def test_matches(quote: str, text: str) -> None:
    assert quote_in(quote, text)


@pytest.mark.parametrize("quote, text", [
    ("Quick", "the quick fox"),  # case is kept
    ("quick, fox", "quick fox"),  # punctuation is kept
    ("quick fox.", "quick fox"),
    ("\u201cquote\u201d", '"quote"'),  # curly quotes are not straight ones
    ("e", "caf\u00e9"),  # a base letter does not match its composed form
    ("quickfox", "quick fox"),
    ("ﬁ", "fi"),
])
def test_does_not_match(quote: str, text: str) -> None:
    assert not quote_in(quote, text)


def test_match_text_prepares_once() -> None:
    text = MatchText("e\u0301 x  y")
    assert text.contains("\u00e9 x y")
    assert text.contains("x y")


@pytest.mark.parametrize("text, quote, found", [
    ("cafe\u0301 noir", "cafe", False),        # the mark after the match composes with it
    ("cafe\u0301 noir", "caf\u00e9", True),
    ("x cafe noir", "cafe", True),              # ASCII at both edges: no normalising needed
    ("\u0301cafe", "cafe", True),              # a mark before an ASCII letter stays apart
    ("a\u0323\u0301 b", "\u1ea1", True),       # a + dot below compose; the acute stays apart
])
def test_fast_path_edges(text: str, quote: str, found: bool) -> None:
    """Regression guard for the raw-text fast path: it must agree with the definition."""
    assert MatchText(text).contains(normalise(quote)) is found
    assert (normalise(quote) in normalise(text)) is found


# ---- properties -------------------------------------------------------------------------------

# Characters where normalisation has something to do: whitespace of every kind, combining marks,
# precomposed letters, conjoining jamo, compatibility characters and an astral character.
TRICKY = [
    *WHITESPACE[:12],
    "a", "e", "o", "A", "E", "q", ".", ",", "\u00e9", "\u00c5", "\u212b", "\u0301", "\u0308",
    "\u0327", "\u0323", "\u0316", "\u1100", "\u1161", "\u11a8", "\uac00", "\ufb01", "\u0f73",
    "\u0344", "\U0001d15e", "\U0001f600",
]
texts = st.text(st.sampled_from(TRICKY), max_size=30) | st.text(max_size=30)


@settings(max_examples=400, deadline=None)
@given(texts | st.text(st.characters(max_codepoint=127), max_size=30))
def test_normalise_is_its_definition(text: str) -> None:
    assert normalise(text) == " ".join(unicodedata.normalize("NFC", text).split())


@settings(max_examples=400, deadline=None)
@given(texts)
def test_normalise_properties(text: str) -> None:
    out = normalise(text)
    assert normalise(out) == out
    assert out == out.strip(" ")
    assert "  " not in out
    assert all(not c.isspace() or c == " " for c in out)
    assert unicodedata.is_normalized("NFC", out)


@settings(max_examples=400, deadline=None)
@given(texts, st.data())
def test_fast_path_agrees_with_definition(text: str, data: st.DataObject) -> None:
    quote = data.draw(
        st.one_of(
            texts,
            # A slice of the text itself, so that many quotes do occur in it.
            st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(
                lambda ij: text[min(ij):max(ij)]),
        ),
        label="quote",
    )
    expected = normalise(quote) in normalise(text)
    assert MatchText(text).contains(normalise(quote)) == expected
    assert quote_in(quote, text) == expected


# Words of NFC text (composed letters, marks that stay apart) with whitespace runs of every kind
# between them: the texts where a quote is found across whitespace without normalising.
nfc_words = st.text(st.sampled_from(["a", "b", "\u00e9", "\u0301", ".", "\U0001f600"]),
                    min_size=1, max_size=4).filter(lambda w: unicodedata.is_normalized("NFC", w))
spaced_texts = st.lists(st.tuples(nfc_words, st.text(st.sampled_from(WHITESPACE[:12]),
                                                     min_size=1, max_size=3)),
                        max_size=12).map(lambda parts: "".join(w + gap for w, gap in parts))


@settings(max_examples=400, deadline=None)
@given(spaced_texts, st.data())
def test_quotes_across_whitespace_agree_with_definition(text: str, data: st.DataObject) -> None:
    normalised = normalise(text)
    i, j = sorted(data.draw(st.tuples(st.integers(0, len(normalised)),
                                      st.integers(0, len(normalised))), label="slice"))
    quote = data.draw(st.just(normalised[i:j]) | spaced_texts, label="quote")
    expected = normalise(quote) in normalised
    assert MatchText(text).contains(normalise(quote)) == expected


def test_a_quote_whose_first_word_is_everywhere_is_still_found() -> None:
    text = "a " * 200 + "a\u00a0\u00a0b"
    assert MatchText(text).contains("a b")
    assert not MatchText(text).contains("a c")
