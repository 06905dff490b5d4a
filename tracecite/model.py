"""The records TraceCite checks, as read from notes files and traces.

These hold quotes and claims in memory for matching; nothing here is ever printed.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

NOTE_FIELDS = ("claim", "quote", "url")

TRACE_SUFFIX = ".jsonl"


def is_trace(path: str) -> bool:
    """Traces are ``.jsonl`` files; anything else is read as notes (docs/reference/commands.md)."""
    return path.lower().endswith(TRACE_SUFFIX)


DOCUMENT_SUFFIXES: dict[str, str] = {".md": "markdown", ".markdown": "markdown",
                                     ".html": "html", ".htm": "html", ".xhtml": "html"}
"""The one table of document names (case ignored) and the kind each is read as, a document's
and a local source's alike: Markdown, or HTML matched on its visible text
(docs/reference/commands.md)."""


def document_kind(path: str) -> str | None:
    """``markdown`` or ``html`` by the name's suffix (:data:`DOCUMENT_SUFFIXES`), None for
    neither."""
    dot = path.rfind(".")
    return DOCUMENT_SUFFIXES.get(path[dot:].lower()) if dot != -1 else None


@dataclass(frozen=True)
class NoteRecord:
    """One ``claim:``/``quote:``/``url:`` record of a notes file (1-based ``index`` and lines);
    ``claim`` is None when the reader was told not to keep claims (no check reads them)."""

    file: str
    index: int
    line: int
    claim: str | None
    quote: str
    url: str
    quote_line: int
    url_line: int
    claim_line: int

    @property
    def field_lines(self) -> tuple[int, int, int]:
        """The lines of its three fields: a change to one of them changes the record; a
        separator or a comment between them does not (docs/hook.md#checking-only-what-changed)."""
        return self.claim_line, self.quote_line, self.url_line


DOCUMENT_FORMS = ("blockquote", "cite", "inline", "fragment", "notes")
"""The citation forms of a document, in the order they are named in
``document_forms``."""


@dataclass(frozen=True)
class TextDirective:
    """A URL's text directive (``#:~:text=[prefix-,]start[,end][,-suffix]``), percent-decoded: the
    page must hold ``start`` (and, after it, ``end``), with ``prefix`` just before and ``suffix``
    just after when they are given."""

    start: str
    end: str | None = None
    prefix: str | None = None
    suffix: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentCitation:
    """One citation of a Markdown or HTML document.

    ``quote`` is the rendered text (emphasis markers dropped, entities decoded, soft breaks as
    spaces); ``url`` the source link as written (a reference link resolved), relative or absolute,
    possibly with a text directive; ``line`` and ``column`` (1-based, columns in characters of the
    source line as the file has it) locate the quote's first character; ``lines`` are every line
    of the citation and of its link, which is what makes it changed in a pull request;
    ``ordinal`` is its 1-based place among the file's citations (a finding's ``record``).
    ``directive`` is the link's text directive, when it has one; ``claim`` the claim of a
    ``notes`` record. ``ignored``: a ``<!-- tracecite: ignore -->`` line stands before it."""

    file: str
    ordinal: int
    form: str
    quote: str
    url: str
    line: int
    column: int
    lines: tuple[int, ...]
    directive: TextDirective | None = None
    claim: str | None = None
    ignored: bool = False


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation of a trace's answer: claim and citation are 1-based indexes; ``column``:
    where its ``quote`` value starts in the answer line (1-based, in characters), when it has
    been looked up (:meth:`tracecite.inputs.trace.TraceScan.located`)."""

    file: str
    line: int
    claim: int
    citation: int
    source_id: str
    quote: str
    column: int | None = None


class Citations(Sequence[Citation]):
    """The citations of one answer, kept in columns: a :class:`Citation` is made each time one
    is read. An answer can hold a hundred thousand citations, and columns take far less memory
    than as many objects."""

    __slots__ = ("_citation_numbers", "_claim_numbers", "_file", "_line", "_quotes",
                 "_source_ids")

    def __init__(self, file: str, line: int, claim_numbers: array[int],
                 citation_numbers: array[int], source_ids: list[str], quotes: list[str]) -> None:
        if not len(claim_numbers) == len(citation_numbers) == len(source_ids) == len(quotes):
            raise ValueError("the columns differ in length")
        self._file = file
        self._line = line
        self._claim_numbers = claim_numbers
        self._citation_numbers = citation_numbers
        self._source_ids = source_ids
        self._quotes = quotes

    def __len__(self) -> int:
        return len(self._source_ids)

    @overload
    def __getitem__(self, index: int) -> Citation: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Citation]: ...

    def __getitem__(self, index: int | slice) -> Citation | Sequence[Citation]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return Citation(self._file, self._line, self._claim_numbers[index],
                        self._citation_numbers[index], self._source_ids[index],
                        self._quotes[index])

    def __iter__(self) -> Iterator[Citation]:
        file, line = self._file, self._line
        for columns in zip(self._claim_numbers, self._citation_numbers, self._source_ids,
                           self._quotes, strict=True):
            yield Citation(file, line, *columns)


class NoteRecords(Sequence[NoteRecord]):
    """The well-formed records of one notes file, kept in columns: a :class:`NoteRecord` is
    made each time one is read. A notes file can hold hundreds of thousands of short records,
    and columns (the quotes one blob, the URLs shared, the claims left out when no check
    needs them) take a fraction of the memory of as many objects. Equal to any sequence of
    the same records. Some of them (:meth:`subset`: a shard's, a diff's) share the columns
    of all."""

    __slots__ = ("_chosen", "_claims", "_file", "_lines", "_quote_ends", "_quotes", "_urls")

    def __init__(self, file: str, *, claims: bool = True) -> None:
        self._file = file
        # Per record: index, line, claim line, quote line, url line.
        self._lines: array[int] = array("I")
        # The quotes, UTF-8, one after another (no object each), and where each ends.
        self._quotes = bytearray()
        self._quote_ends: array[int] = array("q")
        self._urls: list[str] = []
        self._claims: list[str] | None = [] if claims else None
        # A subset's records: where each is in the columns (None: every record, in order).
        self._chosen: array[int] | None = None

    def append(self, index: int, line: int, fields: Mapping[str, tuple[str, int]]) -> None:
        """Add a record from its fields (name → (value, line)); the reader's only write."""
        if self._chosen is not None:
            raise ValueError("a subset of records shares its columns: nothing is added to it")
        (claim, claim_line), (quote, quote_line) = fields["claim"], fields["quote"]
        url, url_line = fields["url"]
        self._lines.extend((index, line, claim_line, quote_line, url_line))
        self._quotes += quote.encode("utf-8", "surrogatepass")
        self._quote_ends.append(len(self._quotes))
        self._urls.append(sys.intern(url))  # a few URLs cited by many records: one string each
        if self._claims is not None:
            self._claims.append(claim)

    def __len__(self) -> int:
        return len(self._urls) if self._chosen is None else len(self._chosen)

    def _column(self, index: int) -> int:
        """Where record ``index`` (negative: from the end) is in the columns; IndexError past
        the end."""
        if self._chosen is not None:
            return self._chosen[index]
        if 0 <= index < len(self._urls):
            return index
        return range(len(self._urls))[index]

    def _quote_at(self, column: int) -> str:
        start = self._quote_ends[column - 1] if column else 0
        return self._quotes[start:self._quote_ends[column]].decode("utf-8", "surrogatepass")

    @overload
    def __getitem__(self, index: int) -> NoteRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NoteRecord]: ...

    def __getitem__(self, index: int | slice) -> NoteRecord | Sequence[NoteRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        at = self._column(index)
        number, line, claim_line, quote_line, url_line = self._lines[5 * at:5 * at + 5]
        claim = None if self._claims is None else self._claims[at]
        return NoteRecord(self._file, number, line, claim, self._quote_at(at), self._urls[at],
                          quote_line=quote_line, url_line=url_line, claim_line=claim_line)

    def __iter__(self) -> Iterator[NoteRecord]:
        return (self[i] for i in range(len(self)))

    def url(self, index: int) -> str:
        """The URL of record ``index`` (0-based), without making the record."""
        return self._urls[self._column(index)]

    def quote(self, index: int) -> str:
        """The quote of record ``index`` (0-based), as written, without making the record."""
        return self._quote_at(self._column(index))

    def field_lines(self, index: int) -> tuple[int, int, int]:
        """The lines of record ``index``'s claim, quote and url, as
        :attr:`NoteRecord.field_lines`, without making the record."""
        at = 5 * self._column(index)
        return self._lines[at + 2], self._lines[at + 3], self._lines[at + 4]

    def subset(self, indexes: Iterable[int]) -> NoteRecords:
        """The records at ``indexes`` (0-based, in the order given), sharing these records'
        columns: four bytes a record chosen."""
        chosen = NoteRecords.__new__(NoteRecords)
        chosen._file, chosen._lines, chosen._claims = self._file, self._lines, self._claims
        chosen._quotes, chosen._quote_ends, chosen._urls = (self._quotes, self._quote_ends,
                                                            self._urls)
        chosen._chosen = array("I", (self._column(i) for i in indexes))
        return chosen

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]
