"""The one matching rule (docs/reference/matching.md), used for captured content, web pages and
local files.

A quote matches a text when, after both are normalised (Unicode NFC, every run of
``str.isspace`` whitespace to one space, ends stripped), the quote is a substring of the text.
Case and punctuation are kept.
"""

from __future__ import annotations

import hashlib
import unicodedata


def normalise(text: str) -> str:
    """NFC, then whitespace runs (``str.isspace``, so no-break space too) to one space, stripped."""
    # Printable ASCII is NFC and its only whitespace is the space: with no two spaces together
    # and none at either end it is normalised already (most quotes are), and this finds out
    # without the copies below.
    if (text.isascii() and text.isprintable() and "  " not in text
            and text[:1] != " " and text[-1:] != " "):
        return text
    # str.split() with no argument splits on exactly the str.isspace() characters.
    return " ".join(unicodedata.normalize("NFC", text).split())


def digest(text: str) -> str:
    """The SHA-256 (hex) of the normalised text: what the cache keeps of pages and quotes."""
    # surrogatepass: inputs holding a lone surrogate are refused, but a digest never fails.
    return hashlib.sha256(normalise(text).encode("utf-8", "surrogatepass")).hexdigest()


def found_as_is(text: str, normalised_quote: str, start: int) -> bool:
    """Whether a normalised quote found in a text not normalised (at ``start``, where
    ``text.find`` found it) is sure to be in the normalised text too; if not, the text must
    be looked at more closely (:class:`MatchText`).

    A normalised quote has no leading, trailing or repeated whitespace, so if it occurs in the
    raw text it still occurs once the text's whitespace collapses, unless normalising to NFC
    changes the text across the match's edges (a mark after it composing with its last letter,
    say). ASCII at both edges rules that out: an ASCII character starts a new NFC segment and
    never composes with what precedes it. This saves normalising most sources whole.
    """
    end = start + len(normalised_quote)
    return normalised_quote[:1] < "\x80" and (end == len(text) or text[end] < "\x80")


class MatchText:
    """A text prepared once for many quote look-ups."""

    __slots__ = ("_normalised", "_raw", "_raw_is_nfc")

    def __init__(self, text: str) -> None:
        self._raw = text
        self._raw_is_nfc: bool | None = None  # worked out only if a look-up needs it
        self._normalised: str | None = None

    def contains(self, normalised_quote: str) -> bool:
        """Whether an already normalised quote occurs in the normalised text."""
        raw = self._raw
        start = raw.find(normalised_quote)
        if start != -1 and found_as_is(raw, normalised_quote, start):
            return True
        # Otherwise an NFC text rules it out too.
        if self._normalised is None:
            if self._raw_is_nfc is None:
                self._raw_is_nfc = unicodedata.is_normalized("NFC", raw)
            if self._raw_is_nfc:
                # Normalising an NFC text only collapses its whitespace: the quote is there
                # as it is, or with whitespace runs between its words. Looking for that is
                # cheaper than normalising the whole text for each source.
                if start != -1:
                    return True
                found = _across_whitespace(raw, normalised_quote)
                if found is not None:
                    return found
            self._normalised = normalise(raw)
        return normalised_quote in self._normalised


_MOST_TRIES = 64
"""Places where a quote's first word is tried before the text is normalised whole instead."""


def _across_whitespace(text: str, quote: str) -> bool | None:
    """Whether a normalised ``quote`` is in the normalised ``text``, an NFC text in which it
    is not found as it is, or None after :data:`_MOST_TRIES` places (then normalise).

    In the normalised text the quote's first word ends a word of the text, its middle words
    are words of the text and its last word starts one, each after a run of whitespace.
    """
    first, space, rest = quote.partition(" ")
    if not space:
        return False  # one word, not in the text: the text's words are not changed
    words = rest.split(" ")
    size = len(text)
    i = text.find(first)
    for _ in range(_MOST_TRIES):
        if i == -1:
            return False
        j = i + len(first)
        for word in words:
            if j == size or not text[j].isspace():
                break
            j += 1
            while j < size and text[j].isspace():
                j += 1
            if not text.startswith(word, j):
                break
            j += len(word)
        else:
            return True
        i = text.find(first, i + 1)
    return None

