"""Findings and the report of one run: what was found, where, and the exit code it implies.

A finding locates a problem by file, line, column, record/claim/citation index, source id and URI.
It never carries a quote, a claim or source content (docs/reference/reports.md): messages are
written by TraceCite from fixed templates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tracecite.codes import Code
from tracecite.report_writer import report_dict

if TYPE_CHECKING:
    from tracecite.model import DocumentCitation

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_FINDINGS = 2
EXIT_INTERNAL = 3


@dataclass(frozen=True)
class Diagnosis:
    """Why a quote was not found, in offsets, counts and names only
    (docs/reference/reports.md#near-misses): never a substring of the quote or the source.

    ``kinds`` is drawn from :data:`DIAGNOSIS_KINDS`, in that order; the other members are None
    where they do not apply.
    """

    kinds: tuple[str, ...]
    quote_chars: int | None = None
    matched_chars: int | None = None
    first_difference: int | None = None
    characters: tuple[str, ...] | None = None
    """Code points involved, as ``"U+2019 RIGHT SINGLE QUOTATION MARK"`` (typography,
    invisible)."""
    where: str | None = None
    """Where a ``hidden`` quote is in the markup: script, style, attribute, head,
    hidden-element, comment, template; for a PDF, the pages of what was found (``page 3``,
    ``pages 3-4``)."""
    cut_short: str | None = None
    """Why the diagnosis stopped before it was done (``time`` or ``memory``: its bound per
    missed quote); None when it is complete. A diagnosis cut short holds what it measured
    until then (docs/reference/reports.md#near-misses)."""


DIAGNOSIS_KINDS = ("case", "typography", "invisible", "wrapped", "ellipsis", "boundary",
                   "layout", "hidden", "script-rendered", "partial", "none")
"""Every kind of near miss, in the order of preference of docs/reference/reports.md#near-misses."""


@dataclass(frozen=True, slots=True)
class ArchiveCopy:
    """What the Internet Archive holds of a source that failed live
    (docs/web-over-time.md#archived-copies): the snapshot looked at, its 14-digit timestamp, and
    whether the quote is in it."""

    url: str
    timestamp: str
    found: bool


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem, located; ``message`` is TraceCite's own words, never input text."""

    code: Code
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    record: int | None = None
    claim: int | None = None
    citation: int | None = None
    source_id: str | None = None
    uri: str | None = None
    status: int | None = None
    final_url: str | None = None
    """Where the source's redirects ended, when it was redirected (docs/reference/fetching.md)."""
    attempts: int | None = None
    """How many requests were sent for the source, 1 included: on every finding about a web
    source, None for files (docs/web-over-time.md#retries, docs/reference/reports.md)."""
    cached: bool | None = None
    """True when the verdict came from the cache without a request
    (docs/web-over-time.md#the-cache)."""
    failures: int | None = None
    """Consecutive runs the source has failed in, with ``fail_after``
    (docs/web-over-time.md#flaky-sources)."""
    fail_after: int | None = None
    diagnosis: Diagnosis | None = None
    """Why a quote was not found (TC202, TC210, TC211; docs/reference/reports.md#near-misses)."""
    archive: ArchiveCopy | None = None
    """An archived copy of a source that failed live, when one was looked up
    (docs/web-over-time.md#archived-copies)."""
    warned: bool = False
    """Made a warning by the run's settings (``warn``, or a flaky source deferred): reported,
    never failing the run (docs/web-over-time.md#warnings-and-skips)."""

    @property
    def exit(self) -> int:
        """The exit code this finding alone would give (0 for a warning)."""
        return EXIT_OK if self.warned else self.code.exit

    @property
    def severity(self) -> str:
        """``warning`` for a finding that never fails a run, else ``error``."""
        return "warning" if self.exit == EXIT_OK else "error"

    def sort_key(self) -> tuple[int, str, int, int, int, int, str]:
        """Input errors first, then by file and position: the order people fix things in."""
        return (
            0 if self.code.exit == EXIT_INPUT else 1,
            self.file or "",
            self.line or 0,
            self.column or 0,
            self.claim or self.record or 0,
            self.citation or 0,
            self.code.code,
        )


@dataclass(frozen=True)
class Counts:
    """What one kind of check did with its quotes (docs/reference/reports.md, schema 2): every field
    a count.

    ``checked`` = ``matched`` + ``not_found`` + ``unavailable``; the other fields count quotes
    that were not checked (``skipped``, ``unchanged``, ``interrupted``) or how the verdicts came
    (``cached``, ``retried``).
    """

    checked: int = 0
    matched: int = 0
    not_found: int = 0
    unavailable: int = 0
    skipped: int = 0
    cached: int = 0
    unchanged: int = 0
    retried: int = 0
    interrupted: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, name) + getattr(other, name) for name in _COUNT_NAMES))

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in _COUNT_NAMES)

    @classmethod
    def total(cls, many: Iterable[Counts]) -> Counts:
        """The sum of ``many``, field by field, in one pass (a run of 2,000 traces adds
        2,000 of them: added pairwise, that took 15 ms)."""
        sums = [0] * len(_COUNT_NAMES)
        for counts in many:
            for i, name in enumerate(_COUNT_NAMES):
                sums[i] += getattr(counts, name)
        return cls(*sums)

    def as_dict(self) -> dict[str, int]:
        """The counts by name, in declaration order."""
        return dataclasses.asdict(self)


_COUNT_NAMES = tuple(f.name for f in dataclasses.fields(Counts))

CHECK_KINDS = ("captured", "live", "files")
"""The kinds of check a summary counts apart: against captured content, live web pages, and
local files (docs/reference/reports.md, schema 2)."""


@dataclass(frozen=True)
class Summary:
    """What a run read and, per kind of check, what it verified.

    A quote checked against its capture and again live counts once in ``captured`` and once in
    ``live``: never as two quotes of one kind.
    """

    inputs: int = 0
    records: int = 0
    citations: int = 0
    captured: Counts = field(default_factory=Counts)
    live: Counts = field(default_factory=Counts)
    files: Counts = field(default_factory=Counts)
    runs: int = 0
    """``import``: the runs written as traces (docs/guides/importers.md)."""
    not_importable: int = 0
    """``import``: citations that cite a span of the answer, not a quote
    (docs/guides/importers.md)."""
    uncited: int = 0
    """``import``: runs whose answer cites nothing, so not written (nothing to verify)."""
    ignored_blocks: int = 0
    """``import``: blocks of a kind the importer does not know that nothing cites, left out."""
    refused: int = 0
    """``import``: runs that could not be imported (TC107, or TC108 with
    ``--skip-unsupported``)."""
    skipped: int = 0
    """``import``: runs that are no runs (an errored sample or batch entry, TC108)."""
    document_citations: int = 0
    """The citations read in Markdown and HTML documents (docs/guides/documents.md)."""

    def __add__(self, other: Summary) -> Summary:
        return Summary(
            **{f.name: getattr(self, f.name) + getattr(other, f.name)
               for f in dataclasses.fields(self)}
        )

    def kinds(self) -> dict[str, Counts]:
        """The counts of each kind of check, by its JSON name."""
        return {kind: getattr(self, kind) for kind in CHECK_KINDS}


@dataclass(frozen=True)
class Changes:
    """What ``compare`` found, as stable URIs in sorted order."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunDigests:
    """What a run read and how it was set to judge it (docs/reference/reports.md#the-run): the
    shards of one run share both, so ``merge`` can tell them from another run's."""

    inputs_digest: str
    """SHA-256 (hex) of the sorted input paths, each with its contents' SHA-256."""
    options_digest: str
    """SHA-256 (hex) of the options that decide verdicts (docs/web-over-time.md#the-cache)."""


@dataclass(frozen=True, slots=True)
class ListedCitation:
    """One citation of a document's listing (``check --docs``, docs/reference/reports.md): where
    it is, its form and its source link. Never its quote: a text directive is only said to be
    there (it holds the quote's words), and ``source`` is the link without it."""

    record: int
    """The citation's 1-based place among its file's citations (a finding's ``record``)."""
    line: int
    column: int
    form: str
    source: str
    directive: bool
    ignored: bool
    """A ``<!-- tracecite: ignore -->`` line stands before it (counted skipped)."""

    @classmethod
    def of(cls, citation: DocumentCitation) -> ListedCitation:
        """How ``citation`` is listed."""
        from tracecite.text_directive import without_directive

        return cls(citation.ordinal, citation.line, citation.column, citation.form,
                   without_directive(citation.url), citation.directive is not None,
                   citation.ignored)


@dataclass(frozen=True)
class ListedDocument:
    """A document's citations as ``check --docs`` lists them. ``citations`` are the run's own
    records (each made a :class:`ListedCitation` only as it is written, so a listing costs no
    memory per citation beyond them) or, in a report read back, the listed ones."""

    file: str
    citations: tuple[DocumentCitation | ListedCitation, ...] = ()

    def listed(self) -> Iterator[ListedCitation]:
        """Each citation as it is listed, one at a time, in the file's order."""
        for citation in self.citations:
            yield citation if isinstance(citation, ListedCitation) else ListedCitation.of(
                citation)


@dataclass(frozen=True)
class Report:
    """Everything one command found; reporters turn it into text."""

    command: str
    findings: tuple[Finding, ...] = ()
    summary: Summary = field(default_factory=Summary)
    changes: Changes | None = None
    stopped_by: int | None = None
    """The signal that stopped the run (SIGINT, SIGTERM): the report says what finished."""
    stage: str | None = None
    """The hook stage that ran (``offline``, ``online``, ``all``); None for other commands."""
    notices: tuple[str, ...] = ()
    """Lines about the run as a whole, in TraceCite's words (never input text), shown beside
    the findings: e.g. that no source host resolved (docs/hook.md#checking-only-what-changed)."""
    shard: tuple[int, int] | None = None
    """Shard K of N of a sharded run, ``(K, N)`` (docs/guides/scale.md); None: unsharded, or every
    shard merged."""
    run: RunDigests | None = None
    """The run's inputs and options digests (docs/reference/reports.md#the-run); None for a
    report made before its inputs were read (a usage error), or read from an older report."""
    documents: tuple[ListedDocument, ...] | None = None
    """``check --docs``: each document's citations, in input order
    (docs/reference/reports.md#the-documents-listing); None when the run lists no documents."""

    @property
    def exit_code(self) -> int:
        """128 + the signal for a stopped run; else 3 over everything, then 1 over 2 over 0
        (docs/reference/commands.md)."""
        if self.stopped_by is not None:
            return 128 + self.stopped_by
        return exit_code_of(self.findings)

    @property
    def errors(self) -> int:
        """How many findings are errors (they fail the run)."""
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        """How many findings are warnings (reported, never failing the run)."""
        return len(self.findings) - self.errors

    def sorted_findings(self) -> list[Finding]:
        """Findings in the order reporters show them."""
        return sorted(self.findings, key=Finding.sort_key)

    def to_json(self) -> dict[str, Any]:
        """The report as the JSON object of ``--json`` (docs/reference/reports.md), a dict of plain
        JSON values (``json.dumps`` it for the text); :func:`tracecite.report_reader.read_report`
        reads it back."""
        return report_dict(self)


def exit_code_of(findings: Iterable[Finding]) -> int:
    """The exit code for a set of findings: 3 > 1 > 2 > 0."""
    exits = {f.exit for f in findings}
    for code in (EXIT_INTERNAL, EXIT_INPUT, EXIT_FINDINGS):
        if code in exits:
            return code
    return EXIT_OK


def warned(findings: Iterable[Finding], codes: Sequence[str]) -> tuple[Finding, ...]:
    """The findings, those with a code in ``codes`` (``--warn``) made warnings
    (docs/web-over-time.md#warnings-and-skips)."""
    if not codes:
        return tuple(findings)
    return tuple(dataclasses.replace(f, warned=True) if f.code.code in codes else f
                 for f in findings)
