"""``text-transform: capitalize`` as Chromium applies it, and so as ``innerText`` shows it.

CSS Text 3 puts "the first typographic letter unit of each word" in titlecase and leaves what a
word is to the browser. Chromium (the corpus oracle) splits the text into words by Unicode's
word boundaries (UAX #29, through ICU), with the character before the text (that of the text
before it in the same block, or a space) as context, and title-cases the first character of
each word by its simple mapping. So, like Chromium:

- a word starts after a space, a hyphen, a slash, a bracket or any other punctuation:
  ``foo-bar (baz)`` is ``Foo-Bar (Baz)``;
- an apostrophe, a full stop or a colon between letters, and a comma, a full stop or an
  apostrophe between digits, stay inside a word: ``don't``, ``l'homme``, ``e.g.``, ``1,000th``
  give ``Don't``, ``L'homme``, ``E.g.``, ``1,000th``;
- letters and digits together are one word, so a word starting with a digit has no letter put
  in titlecase: ``3rd`` stays ``3rd``, ``x2y`` is ``X2y``;
- combining marks and format characters (the soft hyphen among them) belong to the character
  before them: ``co\\u00adop`` is one word;
- text that continues a word begun before it is not capitalized: ``foo<span
  style="text-transform:capitalize">bar</span>`` is ``foobar``;
- a no-break space separates words, and stays a no-break space;
- the simple titlecase mapping of one character: ``ß`` stays ``ß`` (not ``Ss``), ``ǆ`` becomes
  ``ǅ``; as Chromium works on UTF-16 code units, a letter outside the Basic Multilingual Plane
  (Deseret, Adlam, …) is not changed.

Simplifications (no page in the corpus needs more): dictionary-based word breaking of
ideographs and Thai is not done (none of them has case), and a replaced element (an image) or
an inline block between two texts does not end a word here, where it does in Chromium.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["Capitalized", "capitalize"]


class Capitalized(str):
    """A text to capitalize once the text before it is known (when it is emitted)."""

    __slots__ = ()


# UAX #29 word-break classes of the characters that matter here.
_MID_LETTER: Final = frozenset(":\u00b7\u0387\u055f\u05f4\u2027\ufe13\ufe55\uff1a")
_MID_NUM_LET: Final = frozenset(".'\u2018\u2019\u2024\ufe52\uff07\uff0e")
_MID_NUM: Final = frozenset(
    ",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b")
_EXTEND_CATEGORIES: Final = frozenset(("Mn", "Me", "Mc", "Cf"))
_NOT_EXTEND: Final = frozenset("\u200b")  # a zero-width space is a boundary, not a format mark


# In ASCII text (no marks, no format characters), a lower-case letter starts a word unless a
# letter, digit or "_" is before it, or a letter and a ".", ":" or "'" are.
_ASCII_WORD_START: Final = re.compile(r"(?<![A-Za-z0-9_])(?<![A-Za-z][.:'])[a-z]")


def capitalize(text: str, out: list[str] | None = None) -> str:
    """``text`` capitalized as Chromium does it after the text already in ``out``."""
    previous = " "
    if out:
        for piece in reversed(out):
            if piece:
                previous = piece[-1]
                break
    if text.isascii():
        # The same rules as below, at the speed of a regular expression.
        context = previous if previous.isascii() else ("a" if _is_word(previous) else " ")
        return _ASCII_WORD_START.sub(_upper, context + text)[1:]
    return _capitalize(text, previous)


def _upper(match: re.Match[str]) -> str:
    return match.group().upper()


def _capitalize(text: str, previous: str) -> str:
    """`capitalize`, one character at a time, after the character ``previous``."""
    result: list[str] = []
    # The last two characters that are not combining or format marks, before this one.
    before, last = " ", _word_char(previous)
    for char in text:
        if _is_extend(char):
            result.append(char)
            continue
        if not _continues_word(before, last, char) and ord(char) <= 0xFFFF:
            titled = char.title()
            if len(titled) == 1:
                char = titled
        result.append(char)
        before, last = last, char
    return "".join(result)


def _word_char(char: str) -> str:
    """A no-break space counts as a space for word boundaries (as Chromium reads it)."""
    return " " if char == "\u00a0" else char


def _is_extend(char: str) -> bool:
    """UAX #29 Extend, Format or ZWJ: the character joins the one before it."""
    if char.isascii():
        return False
    return unicodedata.category(char) in _EXTEND_CATEGORIES and char not in _NOT_EXTEND


def _is_letter(char: str) -> bool:
    """ALetter or Hebrew_Letter, near enough: a letter."""
    return char.isalpha()


def _is_word(char: str) -> bool:
    """ALetter, Hebrew_Letter, Numeric, Katakana or ExtendNumLet (the connector ``_``)."""
    return char.isalnum() or char == "_" or unicodedata.category(char) == "Pc"


def _continues_word(before: str, last: str, char: str) -> bool:
    """Whether there is no word boundary between ``last`` (after ``before``) and ``char``."""
    if _is_word(last) and _is_word(char):
        return True  # WB5, WB8-WB10, WB13a/b
    if (last in _MID_LETTER or last in _MID_NUM_LET) and _is_letter(before) and _is_letter(char):
        return True  # WB6/WB7: don't, e.g.
    # WB11/WB12: 1,000
    return (last in _MID_NUM or last in _MID_NUM_LET) and before.isdigit() and char.isdigit()
