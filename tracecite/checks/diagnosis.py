"""Why a quote was not found: the near-miss diagnosis of docs/reference/reports.md#near-misses.

A :class:`Diagnoser` is made for one source whose quote missed, from the normalised text (or
texts) the quote was matched against (:func:`tracecite.matching.normalise`) and, for an HTML
page, the parsed tree (:class:`HtmlPage`). It folds the text lazily, each fold once, and shares
the folds among every missed quote of the source. Pure functions of strings: no I/O.

The kinds, in the order of preference of docs/reference/reports.md#near-misses:

- the *text folds* ``case``, ``typography`` (:data:`TYPOGRAPHY`) and ``invisible`` (Unicode
  category Cf removed), each applied to both sides, and the *quote transforms* ``wrapped`` (the
  quotation marks around the quote dropped) and ``ellipsis`` (the parts around each ``...``,
  ``…``, ``[...]`` or ``[…]`` found in order), and ``boundary`` (spaces ignored on both sides,
  which finds words that a block, cell or ``<br>`` separates on the page, or that an inline
  join runs together). The smallest combination of these that finds the quote is the diagnosis
  (fewest kinds first, then the earliest kinds), looked for first without ``boundary`` (whose
  fold of the page, without spaces, costs the most) and then with it. Every step only ever
  finds more, so when the combination of all that apply misses, no smaller one is tried;
- ``hidden`` (HTML): found, spaces ignored, in the text of the page's ``script``, ``style`` or
  ``template`` elements, its comments, its attribute values, its ``head``, or, for
  ``hidden-element``, of an element that hides its content (a ``hidden`` attribute, an inline
  style with ``display: none`` or ``visibility: hidden``, a closed ``<dialog>`` or
  ``<details>``, or an element whose content a browser never shows, such as ``<noembed>``,
  ``<iframe>`` or ``<textarea>``), in that order of preference. The tree the visible-text pass
  built is walked once per page, and only for a quote whose longest plain word (ASCII letters
  and digits, which markup writes as they are) is somewhere in the markup;
- ``script-rendered`` (HTML): the visible text is under 1,000 characters while the text of the
  page's script elements is at least half of its markup;
- ``layout`` (PDF): found when the PDF's line and column breaks are joined differently: a
  hyphen at a line's end kept (``well-`` / ``known`` read as ``well-known`` rather than
  ``wellknown``), or the running headers and footers (a page's first or last line that recurs,
  numbers aside, on other pages) left out, so that a sentence across a page break reads on;
- ``partial`` and ``none``: the longest run (below) is at least half of the quote, or not.

For a PDF, ``where`` names the pages (``page 3``, ``pages 3-4``) of what was found: the stretch
of a ``layout`` find, or the longest run; never their text.

The longest run (``partial``): the quote is cut from its start into greedy runs. A run starts
at an offset and takes the longest stretch of the quote from there that occurs in the text as
one piece (found by extending it one character at a time from its leftmost occurrence
onwards, so each run costs at most one scan of the text); the next run starts at the character
where the run stopped (one further on after a character found nowhere). The longest of these
runs (the first of equal ones) is reported: ``matched_chars`` is its length and
``first_difference`` the 0-based offset in the normalised quote of the first character after
it (``quote_chars`` when it reaches the quote's end), so ``first_difference - matched_chars``
is where it starts. Only a run of at least half the quote counts (``none`` has no run, only
``quote_chars``): runs that start too late to be that long are not looked for, and a run that
long holds one of the quote's aligned blocks of a quarter of its length, so when no block is
in the text (the usual ``none``) a few scans tell, whatever the quote's length.

Bounded work: a diagnosis takes at most :data:`TIME_BOUND` seconds and :data:`MEMORY_BOUND`
bytes per missed quote, whatever the quote's and the text's sizes. A step whose copies would
not fit (a fold of the quote or of a text beyond a quarter of the bound; the kept folds of a
source are dropped past half of it) is not taken, and the clock is read between steps and
within the longest run. A diagnosis that skips or stops a step says so in ``cut_short``
(``memory`` or ``time``, the first bound met) and holds what it measured until then: the kinds
found, or the longest run found so far (``partial`` when it is half the quote; no kind when
none is), never a ``none`` it did not establish. The longest run extends a run by comparing
ever longer stretches (at most :data:`_STRETCH` characters) rather than one character at a
time, with the same result.

For ``typography`` and ``invisible``, ``characters`` names the code points involved: those of
the fold in the quote, and those in the stretch of the page where the folded quote was found.
A diagnosis holds kinds, counts, offsets and code point names only: never a substring of the
quote or of the source (docs/reference/reports.md).
"""

from __future__ import annotations

import bisect
import itertools
import re
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.findings import Diagnosis
from tracecite.pdf.layout import layout_pages, page_names, with_starts

if TYPE_CHECKING:  # the tree is html5lib's, built before a diagnosis is asked for
    import xml.etree.ElementTree as ET

__all__ = [
    "MEMORY_BOUND",
    "SCRIPT_RENDERED_TEXT",
    "TIME_BOUND",
    "TYPOGRAPHY",
    "Diagnoser",
    "HtmlPage",
    "PdfPages",
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
"""The typographic variants folded on both sides (docs/reference/reports.md#near-misses), each to
its plain form."""

SCRIPT_RENDERED_TEXT = 1000
"""A page whose visible text is shorter than this, and mostly scripts, is script-rendered."""

TIME_BOUND = 1.0
"""Seconds a diagnosis may take per missed quote (docs/reference/reports.md#near-misses)."""

MEMORY_BOUND = 64 * 1024 * 1024
"""Bytes a diagnosis may allocate per missed quote (docs/reference/reports.md#near-misses)."""

_STRETCH = 1 << 20
"""The longest stretch of the quote compared at once while a run is extended."""


class _Budget:
    """The bounds of one diagnosis: a deadline and a size; ``cut`` names the first one met."""

    __slots__ = ("cut", "deadline", "memory")

    def __init__(self, seconds: float, memory: int) -> None:
        self.deadline = time.monotonic() + seconds
        self.memory = memory
        self.cut: str | None = None

    def late(self) -> bool:
        """Whether the deadline has passed (noted as the cut when it is the first bound)."""
        if time.monotonic() <= self.deadline:
            return False
        self.cut = self.cut or "time"
        return True

    def fits(self, size: int, share: int = 1) -> bool:
        """Whether copies of ``size`` bytes fit in ``1/share`` of the memory bound (noted as
        the cut when not, and it is the first bound)."""
        if size * share <= self.memory:
            return True
        self.cut = self.cut or "memory"
        return False


def _fold_cost(text: str) -> int:
    """Bytes a fold of ``text`` may allocate at once: the new text, and for a text not all
    ASCII its UTF-8 form twice (the ``case`` fold goes through bytes)."""
    size = sys.getsizeof(text)
    return size if text.isascii() else 3 * size + 4 * len(text)


_ASCII_LETTER = re.compile("[A-Za-z]")
_TEXT_FOLDS = ("case", "typography", "invisible")
_STEPS = ("case", "typography", "invisible", "wrapped", "ellipsis", "boundary")
_WHERE = ("script", "style", "template", "comment", "attribute", "head", "hidden-element")
"""Where a hidden quote may be, the most specific first (a script in the head is a script)."""

_MARKS = frozenset("'\"\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u2033\u00ab\u00bb"
                   "\u2039\u203a")
"""Quotation marks a quote may be wrapped in: those folded by ``typography``, and guillemets."""
_PLACES = {"script": "script", "style": "style", "template": "template", "head": "head",
           **dict.fromkeys(("noembed", "noframes", "iframe", "textarea", "datalist", "video",
                            "audio", "canvas", "object", "embed", "meter", "progress", "rp"),
                           "hidden-element")}
"""Elements whose text a browser never shows, by the place a diagnosis names."""
_HIDING_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)", re.I)
_WORD = re.compile("[A-Za-z0-9]{3,}")
_ELLIPSIS_RE = re.compile(r"\[ ?(?:\.\.\.|\u2026) ?\]|\.\.\.|\u2026")
_CHUNK = 1024
"""Texts are folded in chunks of this many characters, so an offset in a fold can be traced
back to the text (every fold maps each character on its own)."""


@dataclass(frozen=True)
class _Changes:
    """The non-ASCII characters of a text that the folds change: those ``case`` lowers (with
    their lower case), the typographic variants, and the format characters."""

    cased: tuple[tuple[str, str], ...]
    typography: tuple[str, ...]
    invisible: tuple[str, ...]
    letters: bool = False
    """Whether a non-ASCII character of the text has a case (lower and upper differ)."""

    @classmethod
    def of(cls, text: str) -> _Changes:
        """Those of ``text``, from the set of its distinct non-ASCII characters (taken through
        UTF-8, where every byte of a non-ASCII character is non-ASCII: one fast pass)."""
        if text.isascii():  # an O(1) question
            return _NO_CHANGES
        # surrogatepass: a lone surrogate is refused with the input, but a diagnosis is a
        # pure function of strings and must not fail on one.
        distinct = set(text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
                       .decode("utf-8", "surrogatepass"))
        cased = ((c, c.lower().replace("\u03c2", "\u03c3")) for c in sorted(distinct))
        return cls(tuple((c, lower) for c, lower in cased if lower != c),
                   tuple(sorted(distinct.intersection(TYPOGRAPHY))),
                   tuple(sorted(c for c in distinct if unicodedata.category(c) == "Cf")),
                   any(c.lower() != c.upper() for c in distinct))


_NO_CHANGES = _Changes((), (), ())
_ASCII_BYTES = bytes(range(128))


def _fold(text: str, folds: frozenset[str], joined: bool, changes: _Changes) -> str:
    """``text`` with the text folds applied (``changes``: the characters of the text they
    change, or more), and without spaces when ``joined``. Every step maps each character on
    its own, whatever is around it, so a text folded in pieces is the fold of the whole."""
    ascii_only = text.isascii()
    if "case" in folds:
        if ascii_only:
            text = text.lower()
        else:
            # bytes.lower() changes only A-Z, which in UTF-8 are never part of another
            # character; str.lower() is many times slower on a text that is not all ASCII.
            text = (text.encode("utf-8", "surrogatepass").lower()
                    .decode("utf-8", "surrogatepass"))
            for char, lower in changes.cased:  # one sigma for all: lower() has two, by context
                text = text.replace(char, lower)
    if not ascii_only:
        if "typography" in folds:
            for char in changes.typography:
                text = text.replace(char, TYPOGRAPHY[char])
        if "invisible" in folds:
            for char in changes.invisible:
                text = text.replace(char, "")
    if joined:
        text = text.replace(" ", "")
    return text


@dataclass(frozen=True)
class _Folded:
    """A text folded in chunks of :data:`_CHUNK` characters: where each chunk starts in the
    fold (to trace an offset in the fold back to the text)."""

    starts: list[int]


@dataclass(frozen=True)
class HtmlPage:
    """What the diagnosis reads of an HTML page besides its visible text: the tree the
    visible-text pass built (never parsed again) and the markup."""

    root: ET.Element
    markup: str


@dataclass(frozen=True)
class PdfPages:
    """What the diagnosis reads of a PDF besides its text: each page's text as the engine gave
    it, before the PDF rules (:func:`tracecite.pdf.text.page_text`), to join its lines in
    other ways (``layout``), and ``pages``, the same with the rules applied (the text matched),
    to name pages."""

    raw: tuple[str, ...]
    pages: tuple[str, ...]


@dataclass(frozen=True)
class _Found:
    """A combination that finds the quote: its kinds, and the stretches of the fold it took."""

    steps: tuple[str, ...]
    text_index: int
    spans: list[tuple[int, int]]


class Diagnoser:
    """Diagnoses the quotes that missed one source, sharing its folds among them.

    ``texts``: the normalised texts the quotes were matched against (one, or a JSON body's raw
    text and its string values joined); ``page``: the parsed page, for HTML; ``seconds`` and
    ``memory``: the bounds of each diagnosis (module docstring).
    """

    def __init__(self, texts: Sequence[str], page: HtmlPage | None = None, *,
                 seconds: float = TIME_BOUND, memory: int = MEMORY_BOUND,
                 pdf: PdfPages | None = None) -> None:
        self._texts = list(texts)
        self._page = page
        self._pdf = pdf
        self._layouts: list[tuple[str, list[tuple[int, int]]]] | None = None
        self._starts: list[tuple[int, int]] | None = None  # where each PDF page starts
        self._seconds = seconds
        self._memory = memory
        self._budget = _Budget(seconds, memory)
        self._kept = 0  # bytes of the folds kept
        self._folded: dict[tuple[int, frozenset[str], bool], str] = {}
        self._chunked: dict[tuple[int, frozenset[str], bool], _Folded] = {}
        self._changes: dict[int, _Changes] = {}
        self._hidden: dict[str, str] | None = None
        self._rendered: bool | None = None

    # -- the whole diagnosis ------------------------------------------------------------------

    def diagnose(self, quote: str) -> Diagnosis:
        """The diagnosis of one normalised quote that is not in the texts, within its bounds
        (module docstring: past them, what was measured so far, and ``cut_short``)."""
        budget = self._budget = _Budget(self._seconds, self._memory)
        chars = len(quote)
        found = self._smallest_fold(quote)
        if found is not None:
            return Diagnosis(found.steps, quote_chars=chars,
                             characters=self._characters(quote, found), cut_short=budget.cut,
                             where=self._pages_of_found(found))
        if self._pdf is not None and not budget.late():
            pages = self._layout(quote)
            if pages is not None:
                return Diagnosis(("layout",), quote_chars=chars, where=pages,
                                 cut_short=budget.cut)
        if self._page is not None and not budget.late():
            where = self._where_hidden(quote)
            rendered = self._script_rendered()
            kinds = (("hidden",) if where else ()) + (("script-rendered",) if rendered else ())
            if kinds:
                return Diagnosis(kinds, quote_chars=chars, where=where, cut_short=budget.cut)
        matched, end, complete = self._longest_run_within(quote)
        if matched and 2 * matched >= chars:
            return Diagnosis(("partial",), quote_chars=chars, matched_chars=matched,
                             first_difference=end, cut_short=budget.cut,
                             where=self._pages_at(quote[end - matched:end]))
        if not complete:  # no run of half the quote found yet: that is not "none"
            return Diagnosis((), quote_chars=chars, cut_short=budget.cut)
        return Diagnosis(("none",), quote_chars=chars, cut_short=budget.cut)

    # -- PDF pages ----------------------------------------------------------------------------

    def _layout(self, quote: str) -> str | None:
        """The pages where the quote is found with the PDF's lines joined another way
        (``layout``), or None."""
        if self._layouts is None:
            assert self._pdf is not None
            if not self._budget.fits(4 * sum(len(p) for p in self._pdf.raw)):
                return None
            self._layouts = [with_starts(pages)
                             for pages in layout_pages(self._pdf.raw, self._pdf.pages)]
        for text, starts in self._layouts:
            at = text.find(quote)
            if at >= 0:
                return page_names(starts, at, at + len(quote))
        return None

    def _pages_of_found(self, found: _Found) -> str | None:
        """For a PDF, the pages of the stretch of its text that a fold found; else None."""
        if self._pdf is None or not found.spans:
            return None
        folds = frozenset(s for s in found.steps if s in _TEXT_FOLDS)
        joined = "boundary" in found.steps
        index = found.text_index
        text, changes = self._texts[index], self._changes_of(index)
        chunks = self._fold_chunks(index, folds, joined)
        start = _offset_in_text(text, chunks, found.spans[0][0], folds, joined, changes)
        end = _offset_in_text(text, chunks, max(0, found.spans[-1][1] - 1), folds, joined,
                              changes)
        return page_names(self._page_starts(), start, end + 1)

    def _pages_at(self, stretch: str) -> str | None:
        """For a PDF, the pages of the first place ``stretch`` (a run of the quote) is in the
        text; else None."""
        if self._pdf is None or not stretch or not self._texts:
            return None
        at = self._texts[0].find(stretch)
        if at < 0:
            return None
        return page_names(self._page_starts(), at, at + len(stretch))

    def _page_starts(self) -> list[tuple[int, int]]:
        """Where each page of the PDF starts in its normalised text: worked out once per
        source, whatever the number of quotes that miss it."""
        if self._starts is None:
            assert self._pdf is not None
            self._starts = with_starts(self._pdf.pages)[1]
        return self._starts

    # -- folds and quote transforms -----------------------------------------------------------

    def _applies(self, step: str, quote: str, changes: _Changes) -> bool:
        """Whether ``step`` can change anything for ``quote`` (which has ``changes``) on these
        texts."""
        indexes = range(len(self._texts))
        if step == "case":  # the quote has a cased letter (found without copying the quote)
            return changes.letters or _ASCII_LETTER.search(quote) is not None
        if step == "typography":
            return bool(changes.typography) or any(self._changes_of(i).typography
                                                   for i in indexes)
        if step == "invisible":
            return bool(changes.invisible) or any(self._changes_of(i).invisible for i in indexes)
        if step == "wrapped":
            return _unwrapped(quote) is not None
        if step == "ellipsis":  # every form of _ELLIPSIS_RE holds one of these
            return "..." in quote or "\u2026" in quote
        return " " in quote or any(" " in t for t in self._texts)

    def _changes_of(self, index: int) -> _Changes:
        """The characters of text ``index`` the folds change (made only for a text whose
        folds fit the bounds: :meth:`_foldable`)."""
        changes = self._changes.get(index)
        if changes is None:
            changes = self._changes[index] = _Changes.of(self._texts[index])
        return changes

    def _smallest_fold(self, quote: str) -> _Found | None:
        """The smallest combination of folds and transforms that finds the quote, or None.

        Each step only ever finds more, so the combination of every step that applies is tried
        first: when it misses, no smaller one is tried. Without boundary, then with it; at
        most 2^6 combinations in all, each a search of a fold made once per source. Only
        when the folds of the quote and of every text fit the bounds; past the deadline, the
        combination found so far (it finds the quote, though a smaller one might)."""
        budget = self._budget
        if not (budget.fits(_fold_cost(quote), 4)
                and all(budget.fits(_fold_cost(t), 4) for t in self._texts)):
            return None
        changes = _Changes.of(quote)
        steps = [s for s in _STEPS if self._applies(s, quote, changes)]
        # Without boundary first: its fold of the text (without spaces) is needed less often.
        # The second pass tries only what the first could not: combinations with boundary.
        passes = [[s for s in steps if s != "boundary"]] + ([steps] if "boundary" in steps else [])
        for part in passes:
            if budget.late():
                return None
            whole = self._find(quote, changes, tuple(part)) if part else None
            if whole is None:
                continue
            second = part is steps
            for size in range(1, len(part) + 1):
                for combination in itertools.combinations(part, size):
                    if second and "boundary" not in combination:
                        continue
                    if budget.late():
                        return whole
                    found = self._find(quote, changes, combination)
                    if found is not None:
                        return found
        return None

    def _find(self, quote: str, changes: _Changes, steps: tuple[str, ...]) -> _Found | None:
        folds = frozenset(s for s in steps if s in _TEXT_FOLDS)
        joined = "boundary" in steps
        q = _fold(quote, folds, False, changes).strip()
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
            spans = _in_order(self._fold_text(index, folds, joined), parts)
            if spans is not None:
                return _Found(steps, index, spans)
        return None

    def _key(self, index: int, folds: frozenset[str], joined: bool
             ) -> tuple[int, frozenset[str], bool]:
        """Folds that change nothing in text ``index`` left out, so that the combinations that
        differ only by them share one fold."""
        changes = self._changes_of(index)
        if not changes.typography:
            folds -= {"typography"}
        if not changes.invisible:
            folds -= {"invisible"}
        return index, folds, joined

    def _fold_text(self, index: int, folds: frozenset[str], joined: bool) -> str:
        """Text ``index`` folded, once per source: each fold is one step from a smaller one
        (the spaces go last, the folds in their order), and every fold is kept."""
        key = self._key(index, folds, joined)
        folds = key[1]
        folded = self._folded.get(key)
        if folded is None:
            last: frozenset[str] = frozenset()
            if joined:
                base, step_joined = self._fold_text(index, folds, False), True
            elif folds:
                step = [f for f in _TEXT_FOLDS if f in folds][-1]
                base = self._fold_text(index, folds - {step}, False)
                last, step_joined = frozenset((step,)), False
            else:
                return self._texts[index]
            cost = _fold_cost(base)
            if 2 * (self._kept + cost) > self._memory:
                # Past half the bound the kept folds are dropped (the base is still held).
                self._folded.clear()
                self._kept = 0
            folded = self._folded[key] = _fold(base, last, step_joined, self._changes_of(index))
            self._kept += sys.getsizeof(folded)
        return folded

    def _fold_chunks(self, index: int, folds: frozenset[str], joined: bool) -> _Folded:
        """Where each chunk of text ``index`` starts in its fold (only for ``characters``)."""
        key = self._key(index, folds, joined)
        chunked = self._chunked.get(key)
        if chunked is None:
            text, changes = self._texts[index], self._changes_of(index)
            lengths = (len(_fold(text[i:i + _CHUNK], key[1], joined, changes))
                       for i in range(0, len(text), _CHUNK))
            chunked = self._chunked[key] = _Folded([0, *itertools.accumulate(lengths)])
        return chunked

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
        chunks = self._fold_chunks(found.text_index, folds, joined)
        changes = self._changes_of(found.text_index)
        for start, end in found.spans:
            seen.update(_original(text, chunks, start, end, folds, joined, changes))
        return tuple(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip()
                     for c in sorted(seen) if any(w(c) for w in wanted))

    # -- the markup of an HTML page -----------------------------------------------------------

    def _where_hidden(self, quote: str) -> str | None:
        """Where in the markup the quote is (spaces ignored), if it is there."""
        assert self._page is not None
        if len(quote) > 3 * len(self._page.markup):
            return None  # longer than the markup's text can be (NFC at most triples it)
        # The longest word, without a list of them all (a quote can have millions).
        longest = max(_WORD.finditer(quote), key=lambda m: m.end() - m.start(), default=None)
        if longest is not None and longest.group() not in self._page.markup:
            # Its longest plain word is nowhere in the markup (a word of ASCII letters and
            # digits is written as it is): no need to walk the tree for it.
            return None
        if self._hidden is None:
            self._hidden = self._hidden_texts()
        q = quote.replace(" ", "")
        for where in _WHERE:
            if q in self._hidden[where]:
                return where
        return None

    def _hidden_texts(self) -> dict[str, str]:
        """The text of each place in the markup, NFC, without whitespace; separate pieces are
        kept apart by a NUL (which no normalised quote of a page contains). One walk of the
        tree, once per page."""
        import xml.etree.ElementTree as ET

        assert self._page is not None
        pieces: dict[str, list[str]] = {where: [] for where in _WHERE}
        attributes = pieces["attribute"]
        places = _PLACES
        comment: object = ET.Comment
        for element in self._page.root.iter():  # a tight loop: a page has 100,000s of them
            tag: object = element.tag
            where = places.get(tag) if isinstance(tag, str) else None
            items = element.items()
            if items:
                attrib = dict(items)
                attributes.extend(attrib.values())
                if where is None and isinstance(tag, str) and _hides(tag, attrib):
                    where = "hidden-element"
            if where is not None:
                pieces[where].append("".join(element.itertext()))
            elif tag is comment:
                pieces["comment"].append(element.text or "")
        pieces["template"].extend(_template_texts(self._page.markup))
        return {where: "".join(unicodedata.normalize("NFC", "\x00".join(texts)).split())
                for where, texts in pieces.items()}

    def _script_rendered(self) -> bool:
        """Whether the page is probably rendered by scripts (see the module docstring)."""
        assert self._page is not None
        if self._texts and len(self._texts[0]) >= SCRIPT_RENDERED_TEXT:
            return False
        if self._rendered is None:
            scripts = sum(len("".join(s.itertext())) for s in self._page.root.iter("script"))
            self._rendered = 2 * scripts >= max(1, len(self._page.markup))
        return self._rendered

    # -- the longest run ----------------------------------------------------------------------

    def longest_run(self, quote: str) -> tuple[int, int]:
        """``(matched_chars, first_difference)`` of the longest greedy run of the quote in one
        of the texts as it is (module docstring), when it is at least half of the quote;
        ``(0, 0)`` when there is none that long (runs that could not be are not looked for).
        Within fresh bounds; past them, the longest found so far."""
        self._budget = _Budget(self._seconds, self._memory)
        return self._longest_run_within(quote)[:2]

    def _longest_run_within(self, quote: str) -> tuple[int, int, bool]:
        """:meth:`longest_run` within the bounds of the diagnosis in hand, and whether it was
        done (False: cut short)."""
        best = (0, 0)
        at_least = (len(quote) + 1) // 2
        for text in self._texts:
            length, end, complete = _longest_run(quote, text, max(at_least, best[0] + 1),
                                                 self._budget)
            if length > best[0]:
                best = length, end
            if not complete:
                return best[0], best[1], False
        return best[0], best[1], True


_TEMPLATE = re.compile(r"<template\b[^>]*>(.*?)(?:</template\s*>|\Z)", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")


def _template_texts(markup: str) -> list[str]:
    """The text of each ``<template>``'s content, read from the markup: the parser drops
    template content before the tree is built (as the standard keeps it out of the page), so
    the tree has none. Roughly, as the tree walk is: tags removed, references decoded."""
    import html

    return [html.unescape(_TAG.sub("", m.group(1))) for m in _TEMPLATE.finditer(markup)]


def _hides(tag: str, attrib: dict[str, str]) -> bool:
    """Whether an element's attributes hide it (``hidden``, an inline style that hides it, a
    closed ``<dialog>`` or ``<details>``): roughly, since only the rendered text decides."""
    if "hidden" in attrib or ("style" in attrib and _HIDING_STYLE.search(attrib["style"])):
        return True
    return (tag == "dialog" or tag == "details") and "open" not in attrib


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
              joined: bool, changes: _Changes) -> set[str]:
    """The characters of ``text`` that the stretch ``start:end`` of its fold comes from."""
    first = max(0, bisect.bisect_right(folded.starts, start) - 1)
    last = max(0, bisect.bisect_right(folded.starts, max(start, end - 1)) - 1)
    offset = folded.starts[first]
    out: set[str] = set()
    for char in text[first * _CHUNK:(last + 1) * _CHUNK]:
        width = len(_fold(char, folds, joined, changes))
        if (offset + width > start and offset < end) or (width == 0 and start < offset < end):
            out.add(char)
        offset += width
        if offset >= end and width:
            break
    return out


def _offset_in_text(text: str, folded: _Folded, position: int, folds: frozenset[str],
                    joined: bool, changes: _Changes) -> int:
    """The offset in ``text`` of the character that ``position`` of its fold comes from."""
    chunk = max(0, bisect.bisect_right(folded.starts, position) - 1)
    offset = folded.starts[chunk]
    for at in range(chunk * _CHUNK, min(len(text), (chunk + 1) * _CHUNK)):
        offset += len(_fold(text[at], folds, joined, changes))
        if offset > position:
            return at
    return min(len(text), (chunk + 1) * _CHUNK) - 1


def _longest_run(quote: str, text: str, at_least: int,
                 budget: _Budget | None = None) -> tuple[int, int, bool]:
    """The longest greedy run of ``quote`` in ``text`` that is ``at_least`` long: (its length,
    the offset after it, whether the search was done), or (0, 0, ...). Runs that start too
    late to be that long are not looked for; each run looked for costs at most one scan of
    the text. Past ``budget``'s bounds: the longest found so far, and False."""
    budget = budget or _Budget(float("inf"), sys.maxsize)
    n = len(quote)
    if at_least > n:
        return 0, 0, True
    # A run of at least 2k - 1 characters holds a whole block quote[j*k:(j+1)*k]: when no
    # block is in the text, no run is that long, and a few scans tell (the usual "none").
    k = max(1, (at_least + 1) // 2)
    width = _width(quote)
    if not budget.fits(k * width):
        return 0, 0, False
    for j in range(0, n - k + 1, k):
        if budget.late():
            return 0, 0, False
        if quote[j:j + k] in text:
            break
    else:
        return 0, 0, True
    best_length, best_end = 0, 0
    i = 0
    while n - i >= max(at_least, best_length + 1):
        if budget.late():
            return best_length, best_end, False
        position = text.find(quote[i])
        if position < 0:
            i += 1
            continue
        length = 1
        # Extend the run; its leftmost occurrence only moves right, so the run scans the text
        # at most once.
        while i + length < n:
            length += _agreeing(quote, i + length, text, position + length)
            if i + length >= n:
                break
            if budget.late() or not budget.fits((length + 1) * width):
                length_now = length
                if length_now >= at_least and length_now > best_length:
                    best_length, best_end = length_now, i + length_now
                return best_length, best_end, False
            position = text.find(quote[i:i + length + 1], position + 1)
            if position < 0:
                break
            length += 1
        if length >= at_least and length > best_length:
            best_length, best_end = length, i + length
        i += length
    return best_length, best_end, True


def _width(text: str) -> int:
    """Bytes per character of ``text`` in memory (1, 2 or 4), from its size."""
    return max(1, round((sys.getsizeof(text) - sys.getsizeof("")) / max(1, len(text))))


def _agreeing(quote: str, start: int, text: str, position: int) -> int:
    """How many characters of ``quote`` from ``start`` are those of ``text`` from
    ``position``: stretches of doubling length are compared (at most :data:`_STRETCH`
    characters, so a copy stays small), and the last one that differs is halved down to
    its first difference. Never more than the quote has left."""
    left = min(len(quote) - start, len(text) - position)
    agreed, step = 0, 1
    while agreed < left:
        size = min(step, left - agreed, _STRETCH)
        at = start + agreed
        if text.startswith(quote[at:at + size], position + agreed):
            agreed += size
            step = min(2 * step, _STRETCH)
            continue
        low, high = 0, size  # the first `low` agree, the first `high` do not
        while high - low > 1:
            middle = (low + high) // 2
            if text.startswith(quote[at:at + middle], position + agreed):
                low = middle
            else:
                high = middle
        return agreed + low
    return agreed


# -- the phrase in a finding's message --------------------------------------------------------

_FOLD_WORDS = {
    "case": "when case is ignored",
    "typography": "after folding typographic quotes, dashes, ellipses and ligatures",
    "invisible": "after removing invisible format characters",
    "wrapped": "without the quotation marks around the quote",
    "ellipsis": "when the parts around its ellipsis are looked for in order",
    "boundary": "when spaces between blocks, cells and lines are ignored (words the page "
                "separates or joins differently)",
    "layout": "when the PDF's line and column breaks are joined differently (a hyphen kept at "
              "a line's end, or running headers and footers left out)",
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
    said = _phrase(diagnosis, there)
    if said and diagnosis.where and diagnosis.where.startswith("page"):
        said += f" ({diagnosis.where} of the PDF)"
    if diagnosis.cut_short is None:
        return said
    bound = _CUT_WORDS.get(diagnosis.cut_short, diagnosis.cut_short)
    cut = f"the diagnosis was cut short ({bound}), so it may not have tried every kind"
    return f"{said}; {cut}" if said else cut


_CUT_WORDS = {"time": "its 1 s per quote passed",
              "memory": "the quote or the text is too large for its 64 MB per quote"}


def _phrase(diagnosis: Diagnosis, there: str) -> str:
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
