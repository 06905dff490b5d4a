"""The inputs of a run, read once: notes parsed, traces validated and (if asked) their evidence
checked (docs/reference/commands.md: nothing is fetched or read when an input is bad). The checks
that follow work on :class:`Inputs`, never on the files again; a notes record's field lines say
which records a diff touches (docs/hook.md#checking-only-what-changed), and so do a document
citation's lines (docs/guides/documents.md)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from tracecite.findings import EXIT_INPUT, Counts, Finding, Summary
from tracecite.inputs.notes import NotesFile, read_notes
from tracecite.model import DOCUMENT_FORMS, Citation, NoteRecord, NoteRecords, is_trace

if TYPE_CHECKING:  # imported where used: `check` needs none of them (see tests/test_startup.py)
    from tracecite.checks.documents import DocumentChecks
    from tracecite.checks.evidence import EvidenceScan
    from tracecite.inputs.documents import DocumentFile

NOTES, TRACE, DOCUMENT = "notes", "trace", "document"
"""What an input is read as (:func:`read_input`)."""


def has_input_errors(findings: Sequence[Finding]) -> bool:
    """Whether any finding is an input error (exit 1): then nothing is fetched or read."""
    return any(f.exit == EXIT_INPUT for f in findings)


@dataclass(frozen=True)
class Inputs:
    """Every input, read once: notes parsed, traces validated and (if asked) their evidence
    checked. The checks that follow work on this, never on the files again."""

    notes: tuple[NotesFile, ...] = ()
    traces: tuple[EvidenceScan, ...] = ()
    documents: tuple[DocumentFile, ...] = ()
    shard: tuple[int, int] | None = None
    """The live checks' shard K of N (see :meth:`in_shard`); None: every source."""
    stopped_by: int | None = None
    """The signal that stopped the reading (None: every input was read); then these are the
    inputs read before it (docs/design/concurrency.md#partial-results)."""
    digests: tuple[tuple[str, str], ...] = ()
    """``(path, SHA-256)`` of each input read, hashed while it was read (for the run's digest,
    docs/reference/reports.md#the-run)."""
    documented: DocumentChecks | None = None
    """The documents' citations as checks, their links resolved once for every live check of
    the run (:meth:`with_document_checks`); None: not resolved yet."""

    def format_findings(self) -> list[Finding]:
        """Notes format, trace structure and documents' broken citations (TC140), in the
        inputs' order by kind."""
        return [*(f for n in self.notes for f in n.findings),
                *(f for t in self.traces for f in t.scan.findings),
                *(f for d in self.documents for f in d.problems)]

    def evidence_findings(self) -> list[Finding]:
        """Quotes not found in their captured content (none if evidence was not checked)."""
        return [f for t in self.traces for f in t.findings]

    def summary(self) -> Summary:
        """What was read (inputs, notes records, trace citations) and the evidence verdicts."""
        return Summary(inputs=len(self.notes) + len(self.traces) + len(self.documents),
                       records=sum(n.record_count for n in self.notes),
                       citations=sum(t.scan.citation_count for t in self.traces),
                       captured=Counts.total(t.summary for t in self.traces),
                       document_citations=sum(len(d.citations) for d in self.documents))

    def changed_only(self, lines: Mapping[str, Sequence[tuple[int, int]]] | None
                     ) -> tuple[Inputs, int]:
        """These inputs with only the notes records that have a field line in ``lines`` (by
        notes path; a file not in it keeps every record), and the document citations with a
        line of their own or of their link there, and how many were left out."""
        if not lines:
            return self, 0
        kept_documents: list[DocumentFile] = []
        for document in self.documents:
            ranges = lines.get(document.file)
            if ranges is not None:
                touched = partial(_touched, [first for first, _ in ranges], ranges)
                document = replace(document, citations=tuple(
                    c for c in document.citations if touched(c.lines)))
            kept_documents.append(document)
        kept_notes: list[NotesFile] = []
        for notes in self.notes:
            ranges = lines.get(notes.path)
            if ranges is not None:
                notes = replace(notes, records=_records_where(
                    notes.records, partial(_record_touched, [first for first, _ in ranges],
                                           ranges)))
            kept_notes.append(notes)
        left_out = (sum(len(n.records) for n in self.notes)
                    - sum(len(n.records) for n in kept_notes)
                    + sum(len(d.citations) for d in self.documents)
                    - sum(len(d.citations) for d in kept_documents))
        return (replace(self, notes=tuple(kept_notes), documents=tuple(kept_documents)),
                left_out)

    def with_document_checks(self, root: str) -> Inputs:
        """These inputs with their documents' citations made into checks once, links resolved
        against ``root`` (after :meth:`in_shard` and :meth:`changed_only`, which choose the
        citations): every live check of the run takes its kind's from them."""
        if not self.documents or self.documented is not None:
            return self
        return replace(self, documented=self.documents_checks(root))

    def documents_checks(self, root: str) -> DocumentChecks:
        """The documents' citations as checks: as :meth:`with_document_checks` resolved them,
        else resolved now against ``root``."""
        if self.documented is not None:
            return self.documented
        from tracecite.checks.documents import document_checks

        return document_checks(self.documents, root)

    def in_shard(self, shard: tuple[int, int] | None) -> Inputs:
        """These inputs as shard ``(K, N)`` of the live checks sees them (docs/guides/scale.md):
        only the notes records and citations whose source is in the shard, by
        :func:`tracecite.checks.shards.shard_of`. Records of other shards are not even counted
        ``unchanged``: each shard counts its own sources, so the shards' summaries add up to the
        unsharded run's."""
        if shard is None:
            return self
        from tracecite.checks.shards import in_shard

        shard_of: dict[str, bool] = {}  # each distinct URL hashed once

        def in_this_shard(url: str) -> bool:
            kept = shard_of.get(url)
            if kept is None:
                kept = shard_of[url] = in_shard(url, shard)
            return kept

        notes = tuple(replace(n, records=_records_where(
            n.records, lambda lines, url: in_this_shard(url))) for n in self.notes)
        documents = self.documents
        if documents:
            from tracecite.checks.documents import shard_key

            documents = tuple(replace(d, citations=tuple(
                c for c in d.citations if in_this_shard(shard_key(c.url))))
                for d in documents)
        return replace(self, notes=notes, documents=documents, shard=shard)

    def located(self, findings: Sequence[Finding]) -> list[Finding]:
        """Live findings, those about a trace's citation with the column of its quote (
        docs/reference/reports.md#locations): a trace's answer line is read again once, after every
        live check, and walked only down to the citations that got a finding."""
        wanted: dict[str, set[tuple[int, int]]] = {}
        for f in findings:
            if f.file is not None and f.claim is not None and f.citation is not None:
                wanted.setdefault(f.file, set()).add((f.claim, f.citation))
        columns: dict[tuple[str, int, int], int] = {}
        for trace in self.traces:
            keys = wanted.get(trace.scan.path)
            if not keys:
                continue
            chosen = (c for c in trace.scan.citations if (c.claim, c.citation) in keys)
            for c in trace.scan.located(chosen):
                if c.column is not None:
                    columns[(trace.scan.path, c.claim, c.citation)] = c.column
        if not columns:
            return list(findings)
        return [replace(f, column=columns[key])
                if (key := (f.file or "", f.claim or 0, f.citation or 0)) in columns else f
                for f in findings]

    def cited(self) -> Iterator[tuple[Citation, str, str | None]]:
        """Each citation with its source's URI and when it was captured (if the trace says),
        in the traces whose URIs can be trusted."""
        for trace in self.traces:
            if has_input_errors(trace.findings):
                continue  # the trace changed under us: its URIs cannot be trusted
            captured_at = trace.scan.captured_at
            citations: Iterable[Citation] = trace.scan.citations
            if self.shard is not None:
                from tracecite.checks.shards import in_shard

                # Each source hashed once, however many citations cite it.
                kept = {sid: in_shard(uri, self.shard) for sid, uri in trace.uris.items()}
                citations = (c for c in citations if kept[c.source_id])
            for citation in citations:
                yield (citation, trace.uris[citation.source_id],
                       captured_at.get(citation.source_id))


def _records_where(records: Sequence[NoteRecord],
                   keep: Callable[[tuple[int, int, int], str], bool]) -> Sequence[NoteRecord]:
    """The records that ``keep`` accepts, given each one's field lines and URL: read from the
    columns of :class:`NoteRecords` and kept as a subset of them (docs/guides/scale.md: memory)."""
    if isinstance(records, NoteRecords):
        return records.subset(i for i in range(len(records))
                              if keep(records.field_lines(i), records.url(i)))
    return tuple(r for r in records if keep(r.field_lines, r.url))


def _touched(starts: Sequence[int], ranges: Sequence[tuple[int, int]],
             lines: Iterable[int]) -> bool:
    """Whether one of ``lines`` (a record's field lines, a citation's lines) is in the sorted,
    disjoint ``ranges``."""
    return any(_in_ranges(line, starts, ranges) for line in lines)


def _record_touched(starts: Sequence[int], ranges: Sequence[tuple[int, int]],
                    lines: tuple[int, int, int], url: str) -> bool:
    """:func:`_touched` of a notes record, as :func:`_records_where` asks."""
    return _touched(starts, ranges, lines)


def _in_ranges(line: int, starts: Sequence[int], ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether ``line`` is in one of the sorted, disjoint ``ranges`` (``starts``: their
    first lines)."""
    i = bisect_right(starts, line) - 1
    return i >= 0 and line <= ranges[i][1]


def read_inputs(notes: Sequence[str], traces: Sequence[str], *, evidence: bool,
                keep_uris: bool, jobs: int | None = 1, documents: Sequence[str] = (),
                forms: Sequence[str] = DOCUMENT_FORMS, method: str | None = None) -> Inputs:
    """Read each input once: notes parsed, traces validated and, with ``evidence``, their quotes
    checked against their captures. ``keep_uris``: keep every cited source's URI and the citations,
    which the live checks need. ``jobs``: processes to read them in (this one included) when there
    are enough (None: one per core; 1: here alone), the result the same either way
    (docs/guides/scale.md). ``documents``: Markdown and HTML documents, their citations read in
    the ``forms`` (docs/guides/documents.md). A stop signal ends the reading: the inputs read
    before it come back, with the signal as their ``stopped_by``. ``method``: how the ``jobs``
    workers start (:func:`~tracecite.jobs.read_in_order`)."""
    from tracecite.jobs import file_size, read_in_order

    given = [*((path, NOTES) for path in notes), *((path, TRACE) for path in traces),
             *((path, DOCUMENT) for path in documents)]
    read = partial(_read_and_digest, evidence=evidence, keep_uris=keep_uris, forms=tuple(forms))
    if traces:
        # The trace readers, imported here, once: forked workers then have them (each worker
        # importing them again cost about 20 ms of a 0.9 s run).
        import tracecite.checks.evidence  # noqa: F401
    if documents:
        # The same for the documents' parser, markdown-it-py and its plugins.
        from tracecite.inputs.documents import read_document  # noqa: F401
    results = read_in_order(read, given, jobs=jobs, size=lambda item: file_size(item[0]),
                            method=method)
    done = sorted(results.done)
    read_ones = results.results()
    return replace(_assembled([(given[i][1], read) for i, (read, _) in zip(done, read_ones,
                                                                         strict=True)]),
                   stopped_by=results.stopped_by,
                   digests=tuple((given[i][0], digest)
                                 for i, (_, digest) in zip(done, read_ones, strict=True)))


def _read_and_digest(given: tuple[str, str], *, evidence: bool, keep_uris: bool,
                     forms: tuple[str, ...]
                     ) -> tuple[NotesFile | EvidenceScan | DocumentFile, str]:
    """:func:`read_input`, and the file's SHA-256, hashed meanwhile in the process that reads
    it (in a worker of ``--jobs`` too), instead of once more after the run."""
    from tracecite.inputs.files import digest_alongside

    digest = digest_alongside(given[0])
    return read_input(given, evidence=evidence, keep_uris=keep_uris, forms=forms), digest()


def read_input(given: tuple[str, str], *, evidence: bool, keep_uris: bool,
               forms: tuple[str, ...] = DOCUMENT_FORMS
               ) -> NotesFile | EvidenceScan | DocumentFile:
    """One input, ``(path, what it is read as)`` (:data:`NOTES`, :data:`TRACE` or
    :data:`DOCUMENT`), read as :func:`read_inputs` reads each; a trace's source index (where
    each source is in the file) is dropped once read, and so are its citations (but for their
    number) unless ``keep_uris`` says live checks follow."""
    path, kind = given
    if kind == DOCUMENT:
        from tracecite.inputs.documents import read_document

        return read_document(path, forms=frozenset(forms), display=path)
    if kind == NOTES:
        # The format check keeps no records, the live checks no claims (docs/guides/scale.md:
        # memory).
        return read_notes(path, records=keep_uris, claims=False)
    # Here, not above: a run of notes alone needs none of the trace readers.
    from tracecite.checks.evidence import EvidenceScan, scan_with_evidence
    from tracecite.inputs.sources import SourceIndex
    from tracecite.inputs.trace import scan_trace

    if evidence:
        checked = scan_with_evidence(path, keep_uris=keep_uris)
    else:
        checked = EvidenceScan(scan_trace(path), (), Counts(), {})
    scan = replace(checked.scan, sources=SourceIndex())
    return replace(checked, scan=scan if keep_uris else scan.without_citations())


def _assembled(results: Sequence[tuple[str, NotesFile | EvidenceScan | DocumentFile]]
               ) -> Inputs:
    """The inputs read, each ``(what it was read as, what was read)``, by kind."""
    return Inputs(tuple(r for kind, r in results if kind == NOTES),  # type: ignore[misc]
                  tuple(r for kind, r in results if kind == TRACE),  # type: ignore[misc]
                  tuple(r for kind, r in results if kind == DOCUMENT))  # type: ignore[misc]


def split_inputs(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """Notes and traces: ``.jsonl`` files are traces, anything else notes
    (docs/reference/commands.md)."""
    return [p for p in paths if not is_trace(p)], [p for p in paths if is_trace(p)]

