"""Why a quote was not found: the near-miss diagnosis of SPEC §8.1.

A :class:`Diagnoser` is made for one source whose quote missed, from the normalised text (or
texts) the quote was matched against (:func:`tracecite.matching.normalise`) and, for an HTML
page, the parsed tree (:class:`HtmlPage`). It folds the text lazily, each fold once, and shares
the folds among every missed quote of the source. Pure functions of strings: no I/O.

The kinds, in the order of preference of SPEC §8.1:

- the *text folds* ``case``, ``typography`` (:data:`TYPOGRAPHY`) and ``invisible`` (Unicode
  category Cf removed), each applied to both sides, and the *quote transforms* ``wrapped`` (the
  quotation marks around the quote dropped) and ``ellipsis`` (the parts around each ``...``,
  ``…``, ``[...]`` or ``[…]`` found in order), and ``boundary`` (spaces ignored on both sides,
  which finds words that a block, cell or ``<br>`` separates on the page, or that an inline
  join runs together). The smallest combination of these that finds the quote is the diagnosis
  (fewest kinds first, then the earliest kinds); every one of them only ever finds more, so when
  the combination of all that apply misses, none is tried further;
- ``hidden`` (HTML): found, spaces ignored, in the text of the page's ``script``, ``style`` or
  ``template`` elements, its comments, its attribute values, its ``head``, or, for
  ``hidden-element``, in the text of its ``body`` that the browser does not show;
- ``script-rendered`` (HTML): the visible text is under 1,000 characters while the text of the
  page's script elements is at least half of its markup;
- ``partial`` and ``none``: the longest run (below) is at least half of the quote, or not.

The longest run: the quote is cut from its start into greedy runs. A run starts at an offset
and takes the longest stretch of the quote from there that occurs on the page as one piece
(found by extending it one character at a time, from its leftmost occurrence onwards, so
each run costs at most one scan of the text); the next run starts at the character where the
run stopped (one further on after a character found nowhere). The longest of these runs (the
first of equal ones) is reported: ``matched_chars`` is its length and ``first_difference`` the
0-based offset in the normalised quote of the first character after it (``quote_chars`` when
it reaches the quote's end), so ``first_difference - matched_chars`` is where it starts.

For ``typography`` and ``invisible``, ``characters`` names the code points involved: those of
the fold in the quote, and those in the stretch of the page where the folded quote was found.
A diagnosis holds kinds, counts, offsets and code point names only: never a substring of the
quote or of the source (SPEC §5).
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.findings import Diagnosis

if TYPE_CHECKING:  # the tree is html5lib's, built before a diagnosis is asked for
    import xml.etree.ElementTree as ET

__all__ = [
    "SCRIPT_RENDERED_TEXT",
    "TYPOGRAPHY",
    "Diagnoser",
    "HtmlPage",
    "phrase",
]

TYPOGRAPHY: dict[str, str] = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u2033", '"'),
    **dict.fromkeys("\u2013\u2014\u2012\u2212\u2011", "-"),
    "\u2026": "...",
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
}
"""The typographic variants folded on both sides (SPEC §8.1), each to its plain form."""

SCRIPT_RENDERED_TEXT = 1000
"""A page whose visible text is shorter than this, and mostly scripts, is script-rendered."""

_TEXT_FOLDS = ("case", "typography", "invisible")
_STEPS = ("case", "typography", "invisible", "wrapped", "ellipsis", "boundary")
_WHERE = ("script", "style", "template", "comment", "attribute", "head", "hidden-element")
"""Where a hidden quote may be, the most specific first (a script in the head is a script)."""

_TYPOGRAPHY_RE = re.compile("[" + "".join(TYPOGRAPHY) + "]")
_MARKS = frozenset("'\"\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u2033\u00ab\u00bb"
                   "\u2039\u203a")
"""Quotation marks a quote may be wrapped in: those folded by ``typography``, and guillemets."""
_ELLIPSIS_RE = re.compile(r"\[ ?(?:\.\.\.|\u2026) ?\]|\.\.\.|\u2026")
_CHUNK = 1024
"""Texts are folded in chunks of this many characters, so an offset in a fold can be traced
back to the text (every fold maps each character on its own)."""


_ASCII_RUNS = re.compile("[\x00-\x7f]+")


def _distinct(text: str) -> frozenset[str]:
    """The distinct non-ASCII characters of ``text`` (every character the folds change but
    case is one of them)."""
    return frozenset() if text.isascii() else frozenset(_ASCII_RUNS.sub("", text))


def _remover(characters: frozenset[str]) -> re.Pattern[str] | None:
    """A pattern for the format characters (category Cf) among ``characters``, or None."""
    found = sorted(c for c in characters if unicodedata.category(c) == "Cf")
    return re.compile("[" + re.escape("".join(found)) + "]") if found else None


def _typography(match: re.Match[str]) -> str:
    return TYPOGRAPHY[match.group()]


def _fold(text: str, folds: frozenset[str], joined: bool,
          invisible: re.Pattern[str] | None = None) -> str:
    """``text`` with the text folds applied (``invisible``: the format characters it has, the
    ones to remove), and without spaces when ``joined``; every step maps each character on
    its own, whatever is around it."""
    if "case" in folds:
        # lower() would give a final sigma its own form, by context: one sigma for all.
        text = text.lower().replace("\u03c2", "\u03c3")
    if not text.isascii():  # (an O(1) question) neither fold changes ASCII
        if "typography" in folds:
            text = _TYPOGRAPHY_RE.sub(_typography, text)
        if "invisible" in folds and invisible is not None:
            text = invisible.sub("", text)
    if joined:
        text = text.replace(" ", "")
    return text


@dataclass(frozen=True)
class _Folded:
    """A text folded chunk by chunk: the fold and where each chunk of the text starts in it."""

    text: str
    starts: list[int]


@dataclass(frozen=True)
class HtmlPage:
    """What the diagnosis reads of an HTML page besides its visible text: the tree the
    visible-text pass built (never parsed again) and the length of the markup."""

    root: ET.Element
    markup_chars: int


@dataclass(frozen=True)
class _Found:
    """A combination that finds the quote: its kinds, and the stretches of the fold it took."""

    steps: tuple[str, ...]
    text_index: int
    spans: list[tuple[int, int]]


class Diagnoser:
    """Diagnoses the quotes that missed one source, sharing its folds among them.

    ``texts``: the normalised texts the quotes were matched against (one, or a JSON body's raw
    text and its string values joined); ``page``: the parsed page, for HTML.
    """

    def __init__(self, texts: Sequence[str], page: HtmlPage | None = None) -> None:
        self._texts = list(texts)
        self._page = page
        self._folded: dict[tuple[int, frozenset[str], bool], _Folded] = {}
        self._distincts: dict[int, frozenset[str]] = {}
        self._removers: dict[int, re.Pattern[str] | None] = {}
        self._hidden: dict[str, str] | None = None
        self._scripts = 0

    # -- the whole diagnosis ------------------------------------------------------------------

    def diagnose(self, quote: str) -> Diagnosis:
        """The diagnosis of one normalised quote that is not in the texts."""
        chars = len(quote)
        found = self._smallest_fold(quote)
        if found is not None:
            return Diagnosis(found.steps, quote_chars=chars,
                             characters=self._characters(quote, found))
        if self._page is not None:
            where = self._where_hidden(quote)
            rendered = self._script_rendered()
            kinds = (("hidden",) if where else ()) + (("script-rendered",) if rendered else ())
            if kinds:
                return Diagnosis(kinds, quote_chars=chars, where=where)
        matched, end = self.longest_run(quote)
        if matched and 2 * matched >= chars:
            return Diagnosis(("partial",), quote_chars=chars, matched_chars=matched,
                             first_difference=end)
        return Diagnosis(("none",), quote_chars=chars)

    # -- folds and quote transforms -----------------------------------------------------------

    def _applies(self, step: str, quote: str) -> bool:
        """Whether ``step`` can change anything for ``quote`` on these texts."""
        if step == "case":
            return quote.lower() != quote.upper() or any(
                t.lower() != t for t in self._texts)
        if step == "typography":
            return bool(_TYPOGRAPHY_RE.search(quote)) or any(
                not self._distinct(i).isdisjoint(TYPOGRAPHY) for i in range(len(self._texts)))
        if step == "invisible":
            return _remover(_distinct(quote)) is not None or any(
                self._invisible(i) is not None for i in range(len(self._texts)))
        if step == "wrapped":
            return _unwrapped(quote) is not None
        if step == "ellipsis":
            return bool(_ELLIPSIS_RE.search(quote))
        return " " in quote or any(" " in t for t in self._texts)

    def _distinct(self, index: int) -> frozenset[str]:
        distinct = self._distincts.get(index)
        if distinct is None:
            distinct = self._distincts[index] = _distinct(self._texts[index])
        return distinct

    def _invisible(self, index: int) -> re.Pattern[str] | None:
        if index not in self._removers:
            self._removers[index] = _remover(self._distinct(index))
        return self._removers[index]

    def _smallest_fold(self, quote: str) -> _Found | None:
        """The smallest combination of folds and transforms that finds the quote, or None.

        Each step only ever finds more, so the combination of every step that applies is tried
        first: when it misses, no smaller one is tried. At most 2^6 combinations in all."""
        steps = [s for s in _STEPS if self._applies(s, quote)]
        if not steps or self._find(quote, tuple(steps)) is None:
            return None
        for size in range(1, len(steps) + 1):
            for combination in itertools.combinations(steps, size):
                found = self._find(quote, combination)
                if found is not None:
                    return found
        return None  # not reached: the largest combination was found above

    def _find(self, quote: str, steps: tuple[str, ...]) -> _Found | None:
        folds = frozenset(s for s in steps if s in _TEXT_FOLDS)
        joined = "boundary" in steps
        q = _fold(quote, folds, False, _remover(_distinct(quote))).strip()
        if "wrapped" in steps:
            unwrapped = _unwrapped(q)
            if unwrapped is None:
                return None
            q = unwrapped
        parts = ([p.strip() for p in _ELLIPSIS_RE.split(q)] if "ellipsis" in steps else [q])
        if joined:
            parts = [p.replace(" ", "") for p in parts]
        parts = [p for p in parts if p]
        if not parts:
            return None
        for index in range(len(self._texts)):
            spans = _in_order(self._fold_text(index, folds, joined).text, parts)
            if spans is not None:
                return _Found(steps, index, spans)
        return None

    def _fold_text(self, index: int, folds: frozenset[str], joined: bool) -> _Folded:
        """Text ``index`` folded, once per source: folds that change nothing in it are left
        out, so the combinations that differ only by them share one fold."""
        if "typography" in folds and self._distinct(index).isdisjoint(TYPOGRAPHY):
            folds -= {"typography"}
        invisible = self._invisible(index)
        if invisible is None:
            folds -= {"invisible"}
        key = (index, folds, joined)
        folded = self._folded.get(key)
        if folded is None:
            text = self._texts[index]
            pieces = [_fold(text[i:i + _CHUNK], folds, joined, invisible)
                      for i in range(0, len(text), _CHUNK)]
            starts = [0, *itertools.accumulate(len(p) for p in pieces)][:-1] or [0]
            folded = self._folded[key] = _Folded("".join(pieces), starts)
        return folded

    def _characters(self, quote: str, found: _Found) -> tuple[str, ...] | None:
        """The code points of the fold in the quote and in the stretch of the page found."""
        wanted: list[Callable[[str], bool]] = []
        if "typography" in found.steps:
            wanted.append(TYPOGRAPHY.__contains__)
        if "invisible" in found.steps:
            wanted.append(lambda c: unicodedata.category(c) == "Cf")
        if not wanted:
            return None
        seen = set(quote)
        folds = frozenset(s for s in found.steps if s in _TEXT_FOLDS)
        joined = "boundary" in found.steps
        text = self._texts[found.text_index]
        folded = self._fold_text(found.text_index, folds, joined)
        invisible = self._invisible(found.text_index)
        for start, end in found.spans:
            seen.update(_original(text, folded, start, end, folds, joined, invisible))
        return tuple(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip()
                     for c in sorted(seen) if any(w(c) for w in wanted))

    # -- the markup of an HTML page -----------------------------------------------------------

    def _where_hidden(self, quote: str) -> str | None:
        """Where in the markup the quote is (spaces ignored), if it is there."""
        if self._hidden is None:
            self._hidden = self._hidden_texts()
        q = quote.replace(" ", "")
        for where in _WHERE:
            if q in self._hidden[where]:
                return where
        return None

    def _hidden_texts(self) -> dict[str, str]:
        """The text of each place in the markup, NFC, without whitespace; separate pieces are
        kept apart by a NUL (which no normalised quote of a page contains)."""
        import xml.etree.ElementTree as ET

        assert self._page is not None
        root = self._page.root
        pieces: dict[str, list[str]] = {where: [] for where in _WHERE}
        scripts = 0
        for name in ("script", "style", "template"):
            for element in root.iter(name):
                text = "".join(element.itertext())
                if name == "script":
                    scripts += len(text)
                pieces[name].append(text)
        self._scripts = scripts
        pieces["comment"] = [c.text or "" for c in root.iter(ET.Comment)]  # type: ignore[arg-type]
        attribute = pieces["attribute"]
        for element in root.iter():
            if element.items():
                attribute.extend(element.attrib.values())
        for name, where in (("head", "head"), ("body", "hidden-element")):
            for element in root.iter(name):
                pieces[where].append("".join(element.itertext()))
        return {where: "".join(unicodedata.normalize("NFC", "\x00".join(texts)).split())
                for where, texts in pieces.items()}

    def _script_rendered(self) -> bool:
        """Whether the page is probably rendered by scripts (see the module docstring)."""
        assert self._page is not None
        if self._texts and len(self._texts[0]) >= SCRIPT_RENDERED_TEXT:
            return False
        if self._hidden is None:
            self._hidden = self._hidden_texts()
        return 2 * self._scripts >= max(1, self._page.markup_chars)

    # -- the longest run ----------------------------------------------------------------------

    def longest_run(self, quote: str) -> tuple[int, int]:
        """``(matched_chars, first_difference)`` of the longest greedy run of the quote in one
        of the texts as it is (module docstring), when it is at least half of the quote;
        ``(0, 0)`` when there is none that long (runs that could not be are not looked for)."""
        best = (0, 0)
        at_least = (len(quote) + 1) // 2
        for text in self._texts:
            run = _longest_run(quote, text, max(at_least, best[0] + 1))
            if run[0] > best[0]:
                best = run
        return best


def _unwrapped(quote: str) -> str | None:
    """The quote without the quotation marks around it, or None when it has none."""
    if len(quote) > 2 and quote[0] in _MARKS and quote[-1] in _MARKS:
        inner = quote[1:-1].strip()
        return inner or None
    return None


def _in_order(text: str, parts: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where each part is in ``text``, each after the one before, or None."""
    spans: list[tuple[int, int]] = []
    position = 0
    for part in parts:
        start = text.find(part, position)
        if start < 0:
            return None
        position = start + len(part)
        spans.append((start, position))
    return spans


def _original(text: str, folded: _Folded, start: int, end: int, folds: frozenset[str],
              joined: bool, invisible: re.Pattern[str] | None) -> set[str]:
    """The characters of ``text`` that the stretch ``start:end`` of its fold comes from."""
    first = max(0, bisect.bisect_right(folded.starts, start) - 1)
    last = max(0, bisect.bisect_right(folded.starts, max(start, end - 1)) - 1)
    offset = folded.starts[first]
    out: set[str] = set()
    for char in text[first * _CHUNK:(last + 1) * _CHUNK]:
        width = len(_fold(char, folds, joined, invisible))
        if (offset + width > start and offset < end) or (width == 0 and start < offset < end):
            out.add(char)
        offset += width
        if offset >= end and width:
            break
    return out


def _longest_run(quote: str, text: str, at_least: int) -> tuple[int, int]:
    """The longest greedy run of ``quote`` in ``text`` that is ``at_least`` long: (its length,
    the offset after it), or (0, 0). Runs that start too late to be that long are not looked
    for; each run looked for costs at most one scan of the text."""
    n = len(quote)
    if at_least > n:
        return 0, 0
    # A run of at least 2k - 1 characters holds a whole block quote[j*k:(j+1)*k]: when no
    # block is in the text, no run is that long, and a few scans tell (the usual "none").
    k = max(1, (at_least + 1) // 2)
    if not any(quote[j:j + k] in text for j in range(0, n - k + 1, k)):
        return 0, 0
    best_length, best_end = 0, 0
    i = 0
    while n - i >= max(at_least, best_length + 1):
        position = text.find(quote[i])
        if position < 0:
            i += 1
            continue
        length = 1
        # Extend the run; its leftmost occurrence only moves right, so the run scans the text
        # at most once.
        while i + length < n:
            if text.startswith(quote[i + length], position + length):
                length += 1
                continue
            position = text.find(quote[i:i + length + 1], position + 1)
            if position < 0:
                break
            length += 1
        if length >= at_least and length > best_length:
            best_length, best_end = length, i + length
        i += length
    return best_length, best_end


# -- the phrase in a finding's message --------------------------------------------------------

_FOLD_WORDS = {
    "case": "when case is ignored",
    "typography": "after folding typographic quotes, dashes, ellipses and ligatures",
    "invisible": "after removing invisible format characters",
    "wrapped": "without the quotation marks around the quote",
    "ellipsis": "when the parts around its ellipsis are looked for in order",
    "boundary": "when spaces between blocks, cells and lines are ignored (words the page "
                "separates or joins differently)",
}
_WHERE_WORDS = {
    "script": "inside a script element",
    "style": "inside a style element",
    "template": "inside a template element",
    "comment": "inside a comment",
    "attribute": "in an attribute value",
    "head": "in the document head",
    "hidden-element": "inside an element that is hidden",
}


def phrase(diagnosis: Diagnosis, there: str = "in the source") -> str:
    """The diagnosis in TraceCite's own words, for a finding's message: kinds, counts, offsets
    and code point names only. ``there`` says where it was looked for ("on the page")."""
    kinds = diagnosis.kinds
    total = diagnosis.quote_chars or 0
    if "partial" in kinds or "none" in kinds:
        matched = diagnosis.matched_chars or 0
        end = diagnosis.first_difference or 0
        if "none" in kinds:
            return f"nothing close is {there} (no run of half the quote's {total} characters)"
        if end == matched:
            return f"the first {matched} of {total} characters are {there}; " \
                   f"it differs from offset {end}"
        return f"{matched} of {total} characters are {there} as one run, from offset " \
               f"{end - matched} to {end}"
    said: list[str] = []
    if "hidden" in kinds:
        said.append(f"it is in the markup {_WHERE_WORDS.get(diagnosis.where or '', '')}, "
                    f"which a browser does not show")
    if "script-rendered" in kinds:
        said.append("the page is probably rendered by JavaScript, which TraceCite does not run")
    folds = [_FOLD_WORDS[k] for k in kinds if k in _FOLD_WORDS]
    if folds:
        words = folds[0] if len(folds) == 1 else ", ".join(folds[:-1]) + " and " + folds[-1]
        text = f"it is there {words}"
        if diagnosis.characters:
            text += f" ({', '.join(diagnosis.characters)})"
        said.append(text)
    return "; ".join(said)
