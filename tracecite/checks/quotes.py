"""A quote to check against a live source, wherever it came from (a note or a citation), and
the checks of a run kept in columns (:class:`QuoteChecks`).

A notes file can hold hundreds of thousands of records: the live run reads each check's target
and quote by index from the records themselves, and a :class:`QuoteCheck` is made only for a
quote that gets a finding.
"""

from __future__ import annotations

from abc import abstractmethod
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import overload

from tracecite.checks.kinds import SourceKind
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.findings import Diagnosis, Finding
from tracecite.matching import normalise
from tracecite.model import Citation, NoteRecord, NoteRecords

_THERE = {SourceKind.WEB: "on the page", SourceKind.FILE: "in the file"}
"""Where a diagnosis phrase says a quote was looked for, by kind of source."""


@dataclass(frozen=True)
class LoadInfo:
    """How a source was loaded, for its findings: where its redirects ended (None: it was
    not redirected) and how many requests it took."""

    final_url: str | None = None
    attempts: int = 1


@dataclass(frozen=True)
class QuoteCheck:
    """A normalised quote, the source it must be in, and where to report a problem."""

    quote: str
    target: str
    file: str
    line: int
    record: int | None = None
    claim: int | None = None
    citation: int | None = None
    source_id: str | None = None
    quote_line: int | None = None
    """Where a quote that is not in its source is to be fixed, when that is not ``line``."""
    captured_at: str | None = None
    """When a trace captured the source, as 14 UTC digits (``YYYYMMDDhhmmss``): the moment
    an archived copy is looked for near (docs/web-over-time.md#archived-copies)."""
    column: int | None = None
    """Where a citation's ``quote`` value starts in its answer line, when it is known."""

    @classmethod
    def from_note(cls, record: NoteRecord) -> QuoteCheck:
        """The check a notes record asks for: a source that cannot be loaded points at its ``url:``
        line, a quote not found at its ``quote:`` line, the line to fix
        (docs/reference/reports.md#locations)."""
        return cls(normalise(record.quote), _fetched(record.url), record.file, record.url_line,
                   record=record.index, quote_line=record.quote_line)

    @classmethod
    def from_citation(cls, citation: Citation, uri: str, captured_at: str | None = None
                      ) -> QuoteCheck:
        """The check a trace citation asks for against its source's URI (``captured_at``:
        when the trace captured the source, if it says)."""
        return cls(citation.quote, uri, citation.file, citation.line, claim=citation.claim,
                   citation=citation.citation, source_id=citation.source_id,
                   captured_at=captured_at, column=citation.column)

    def not_found(self, kind: SourceKind, info: LoadInfo | None = None, *,
                  diagnosis: Diagnosis | None = None) -> Finding:
        """The finding for a quote that is not in its source, of that kind (TC210, TC211); ``info``
        says how the source was loaded (where its redirects ended, the attempts); ``diagnosis``, why
        the quote is not there (docs/reference/reports.md#near-misses), also said in the message."""
        info = info or LoadInfo()
        message = f"quote is not in {kind.source_name}"
        if info.final_url is not None:
            message += f" (the URL redirected to {info.final_url})"
        if diagnosis is not None:
            from tracecite.checks.diagnosis import phrase

            message += f"; {phrase(diagnosis, _THERE[kind])}"
        finding = self._finding(kind.not_found, message, final_url=info.final_url,
                                attempts=_attempts(kind, info.attempts), line=self.quote_line)
        return replace(finding, diagnosis=diagnosis) if diagnosis is not None else finding

    def unavailable(self, error: FetchError, kind: SourceKind = SourceKind.WEB) -> Finding:
        """The finding for a source of that kind that could not be fetched or read."""
        message = error.detail
        if error.final_url is not None:
            message += f" (the URL redirected to {error.final_url})"
        return self._finding(error.code, message, status=error.status,
                             final_url=error.final_url, attempts=_attempts(kind, error.attempts))

    def _finding(self, code: Code, message: str, *, status: int | None = None,
                 final_url: str | None = None, attempts: int | None = None,
                 line: int | None = None) -> Finding:
        return Finding(code, message, file=self.file, line=line or self.line, record=self.record,
                       claim=self.claim, citation=self.citation, source_id=self.source_id,
                       uri=self.target, status=status, final_url=final_url, attempts=attempts,
                       column=self.column)


def _fetched(url: str) -> str:
    """The URL a notes record's page is fetched (and reported) by: without a text directive,
    whose words are the quote's and never appear in a report (docs/guides/documents.md)."""
    if ":~:" not in url:
        return url
    from tracecite.text_directive import without_directive

    return without_directive(url)


def _attempts(kind: SourceKind, attempts: int) -> int | None:
    """A finding's ``attempts``: on every finding about a web source, 1 included, so that a
    report tells one request from "not a web source" (docs/reference/reports.md); None for
    files, which take no request."""
    return attempts if kind is SourceKind.WEB else None


class QuoteChecks(Sequence[QuoteCheck]):
    """The checks of a live run, read by index: :meth:`target` and :meth:`quote` say what the
    run groups and matches without making a :class:`QuoteCheck`; indexing makes one (for a
    finding). The kinds below keep nothing per check beyond what their inputs already hold."""

    __slots__ = ()

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def check(self, index: int) -> QuoteCheck:
        """The check at ``index`` (0 to ``len - 1``), made now."""

    def target(self, index: int) -> str:
        """The source the quote at ``index`` must be in."""
        return self.check(index).target

    def quote(self, index: int) -> str:
        """The normalised quote at ``index``."""
        return self.check(index).quote

    def quotes(self, indexes: Iterable[int]) -> list[str]:
        """The normalised quotes at ``indexes``, read now (a source's group)."""
        return [self.quote(i) for i in indexes]

    @overload
    def __getitem__(self, index: int) -> QuoteCheck: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[QuoteCheck]: ...

    def __getitem__(self, index: int | slice) -> QuoteCheck | Sequence[QuoteCheck]:
        if isinstance(index, slice):
            return [self.check(i) for i in range(*index.indices(len(self)))]
        return self.check(range(len(self))[index])  # negative indexes; IndexError past the end

    def where(self, keep: Callable[[str], bool]) -> QuoteChecks:
        """The checks whose target ``keep`` accepts, in order (four bytes each)."""
        return _Chosen(self, array("I", (i for i in range(len(self)) if keep(self.target(i)))))


def as_checks(checks: Sequence[QuoteCheck]) -> QuoteChecks:
    """``checks`` as :class:`QuoteChecks` (a list of checks is read as it is)."""
    return checks if isinstance(checks, QuoteChecks) else CheckList(checks)


class CheckList(QuoteChecks):
    """Checks made beforehand, one object each (a trace's citations: a few per answer)."""

    __slots__ = ("_checks",)

    def __init__(self, checks: Sequence[QuoteCheck]) -> None:
        self._checks = checks

    def __len__(self) -> int:
        return len(self._checks)

    def check(self, index: int) -> QuoteCheck:
        """The check at ``index``."""
        return self._checks[index]


class NoteChecks(QuoteChecks):
    """The checks of notes records (:meth:`QuoteCheck.from_note`), read from the records'
    columns: a quote is decoded and normalised each time it is read, never kept."""

    __slots__ = ("_columns", "_records")

    def __init__(self, records: Sequence[NoteRecord]) -> None:
        self._records = records
        self._columns = records if isinstance(records, NoteRecords) else None

    def __len__(self) -> int:
        return len(self._records)

    def check(self, index: int) -> QuoteCheck:
        """The check of record ``index`` (0-based, in the file's order)."""
        return QuoteCheck.from_note(self._records[index])

    def target(self, index: int) -> str:
        """The URL of record ``index`` (without a text directive)."""
        if self._columns is not None:
            return _fetched(self._columns.url(index))
        return _fetched(self._records[index].url)

    def quote(self, index: int) -> str:
        """The normalised quote of record ``index``."""
        if self._columns is not None:
            return normalise(self._columns.quote(index))
        return normalise(self._records[index].quote)


class JoinedChecks(QuoteChecks):
    """Several runs' worth of checks one after the other (notes files, then citations)."""

    __slots__ = ("_ends", "_parts")

    def __init__(self, parts: Sequence[QuoteChecks]) -> None:
        self._parts = [p for p in parts if len(p)]
        self._ends: list[int] = []
        total = 0
        for part in self._parts:
            total += len(part)
            self._ends.append(total)

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _where(self, index: int) -> tuple[QuoteChecks, int]:
        n = bisect_right(self._ends, index)
        return self._parts[n], index - (self._ends[n - 1] if n else 0)

    def check(self, index: int) -> QuoteCheck:
        """The check at ``index`` of all the parts together."""
        part, i = self._where(index)
        return part.check(i)

    def target(self, index: int) -> str:
        """The target of the check at ``index``."""
        part, i = self._where(index)
        return part.target(i)

    def quote(self, index: int) -> str:
        """The quote of the check at ``index``."""
        part, i = self._where(index)
        return part.quote(i)


class _Chosen(QuoteChecks):
    """Some of a run's checks, by their indexes (:meth:`QuoteChecks.where`)."""

    __slots__ = ("_base", "_indexes")

    def __init__(self, base: QuoteChecks, indexes: array[int]) -> None:
        self._base = base
        self._indexes = indexes

    def __len__(self) -> int:
        return len(self._indexes)

    def check(self, index: int) -> QuoteCheck:
        """The ``index``-th check chosen."""
        return self._base.check(self._indexes[index])

    def target(self, index: int) -> str:
        """Its target."""
        return self._base.target(self._indexes[index])

    def quote(self, index: int) -> str:
        """Its quote."""
        return self._base.quote(self._indexes[index])
