"""What makes a citation, whatever the document's kind (docs/guides/documents.md#citation-forms):
quotation marks and what may stand between a quote and its link, attribution lines, ``cite``
values, text directives, and the collector that numbers a file's citations and its TC140s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.inputs.documents.locate import Source
from tracecite.matching import normalise
from tracecite.model import DocumentCitation, TextDirective
from tracecite.text_directive import DELIMITER, parse_text_directive

QUOTE_MARKS = {"“": "”", '"': '"', "«": "»", "„": "“"}
"""Opening quotation marks and the mark that closes each."""

QUOTE_ENTITIES = ("&quot;", "&ldquo;", "&laquo;", "&bdquo;", "&#")
"""How quotation marks may be written as character references (``&#…;`` for any of them)."""

MIN_WORDS = 4
"""Fewer words in quotation marks are scare quotes, not a citation."""

_BETWEEN = re.compile(r"[ \t\n]*(?:,[ \t\n]*)?(?:\([ \t\n]*)?")
"""What may stand between a closing quotation mark and its link: spaces, one comma, one ``(``."""

ATTRIBUTION_DASHES = ("—", "―", "--")
"""How an attribution line starts (``-- `` is ``--`` and a space)."""
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f]")
"""What ``str.isspace`` says is a space (``\\s`` of a str pattern is the same set), or a
control character."""


def quotation_pairs(text: str, ignored: Callable[[int], bool] = lambda at: False,
                    ) -> Iterator[tuple[int, int]]:
    """The (opening, closing) offsets of each quotation in ``text``, left to right; a pair is
    used up whole (its closing mark opens nothing). A mark at an offset ``ignored`` says (in
    code, escaped) is text, not a delimiter."""
    at = 0
    size = len(text)
    while at < size:
        opening = -1
        for mark in QUOTE_MARKS:
            found = _next_mark(text, mark, at, ignored)
            if found != -1 and (opening == -1 or found < opening):
                opening = found
        if opening == -1:
            return
        closing = _next_mark(text, QUOTE_MARKS[text[opening]], opening + 1, ignored)
        if closing == -1:
            at = opening + 1
            continue
        yield opening, closing
        at = closing + 1


def _next_mark(text: str, mark: str, at: int, ignored: Callable[[int], bool]) -> int:
    found = text.find(mark, at)
    while found != -1 and ignored(found):
        found = text.find(mark, found + 1)
    return found


def enough_words(quote: str) -> bool:
    """Whether a quotation is long enough to be a citation (:data:`MIN_WORDS`)."""
    return len(quote.split(None, MIN_WORDS)) >= MIN_WORDS


def only_between(text: str) -> bool:
    """Whether ``text`` (between a closing mark and a link) is only what may stand there."""
    return _BETWEEN.fullmatch(text) is not None


def is_attribution(text: str) -> bool:
    """Whether a paragraph's rendered text starts as an attribution line does."""
    return text.lstrip().startswith(ATTRIBUTION_DASHES)


def is_same_document(url: str) -> bool:
    """A link to a heading of the same document: no source."""
    return url.startswith("#") and not url.startswith("#" + DELIMITER)


def cite_problem(value: str) -> str | None:
    """Why a ``cite`` attribute is not a URL, or None when it is one."""
    value = value.strip()
    if not value:
        return "the cite attribute is empty"
    if _SPACE_OR_CONTROL.search(value) is not None:
        return "the cite attribute holds spaces: it is not a URL"
    if _SCHEME.match(value) or "/" in value or "." in value or value.startswith("#"):
        return None
    return "the cite attribute is not a URL (no scheme, no path)"


@dataclass(frozen=True)
class Place:
    """Where a citation is: ``offset`` of its quote's first character in the source (or, for a
    quote whose characters are not the source's, ``line_column``, 1-based); ``first``, the
    1-based line it starts on (what an ignore comment stands before); ``lines``, every 1-based
    line of it and of its link."""

    offset: int
    first: int
    lines: frozenset[int]
    line_column: tuple[int, int] | None = None


@dataclass(frozen=True)
class _Found:
    form: str
    quote: str
    url: str
    place: Place
    directive: TextDirective | None
    claim: str | None


class Collector:
    """Gathers a file's citations and broken forms; numbers them in source order at the end."""

    def __init__(self, path: str, source: Source, forms: frozenset[str]) -> None:
        self.path = path
        self.source = source
        self.forms = forms
        self._found: list[_Found] = []
        self._directives: dict[str, TextDirective | None] = {}
        self._urls: dict[str, str] = {}  # one string for each URL however often it is cited
        self.problems: list[Finding] = []

    def problem(self, offset: int, message: str, code: Code = Code.DOC_CITATION_INVALID) -> None:
        """A broken form (TC140 unless told) at ``offset`` of the source."""
        line, column = self.source.position(offset)
        self.problems.append(Finding(code, message, file=self.path, line=line, column=column))

    def directive(self, url: str, offset: int) -> tuple[bool, TextDirective | None]:
        """The link's text directive; (False, None) after a TC140 for one that does not
        decode."""
        if url in self._directives:
            return True, self._directives[url]
        if DELIMITER not in url:
            return True, None
        try:
            found = self._directives[url] = parse_text_directive(url)
            return True, found
        except ValueError as exc:
            self.problem(offset, f"the link's text fragment does not decode: {exc}")
            return False, None

    def add(self, form: str, quote: str, url: str, place: Place, *,
            claim: str | None = None) -> bool:
        """Keep a citation at ``place``. True when its link is taken: a citation kept, or one
        that fails for its text directive alone (a TC140: its link must give no second one as
        a ``fragment``). False when it is none: not a form asked for, an empty quote, a
        same-document link."""
        if form not in self.forms or is_same_document(url):
            return False
        quote = normalise(quote)
        if not quote or not url:
            return False
        ok, directive = self.directive(url, place.offset)
        if ok:
            url = self._urls.setdefault(url, url)
            self._found.append(_Found(form, quote, url, place, directive, claim))
        return True

    def citations(self) -> tuple[DocumentCitation, ...]:
        """Every citation kept, in source order, numbered from 1."""
        out = []
        position = self.source.position
        ordered = sorted(self._found, key=lambda f: (f.place.first, f.place.offset))
        for ordinal, found in enumerate(ordered, 1):
            place = found.place
            line, column = place.line_column or position(place.offset)
            lines = place.lines | {line}
            out.append(DocumentCitation(
                file=self.path, ordinal=ordinal, form=found.form, quote=found.quote,
                url=found.url, line=line, column=column, lines=tuple(sorted(lines)),
                directive=found.directive, claim=found.claim,
                ignored=self.source.ignored(place.first),
            ))
        return tuple(out)
