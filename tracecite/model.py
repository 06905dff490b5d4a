"""The records TraceCite checks, as read from notes files and traces.

These hold quotes and claims in memory for matching; nothing here is ever printed.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

NOTE_FIELDS = ("claim", "quote", "url")

TRACE_SUFFIX = ".jsonl"


def is_trace(path: str) -> bool:
    """Traces are ``.jsonl`` files; anything else is read as notes (SPEC §3)."""
    return path.lower().endswith(TRACE_SUFFIX)


@dataclass(frozen=True)
class NoteRecord:
    """One ``claim:``/``quote:``/``url:`` record of a notes file (1-based ``index`` and lines)."""

    file: str
    index: int
    line: int
    claim: str
    quote: str
    url: str
    quote_line: int
    url_line: int
    claim_line: int

    @property
    def field_lines(self) -> tuple[int, int, int]:
        """The lines of its three fields: a change to one of them changes the record; a
        separator or a comment between them does not (SPEC §8.6)."""
        return self.claim_line, self.quote_line, self.url_line


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


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A captured source, without its content (which stays on disk until it is needed)."""

    id: str
    uri: str
    line: int


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
