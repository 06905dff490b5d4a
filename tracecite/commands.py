"""The commands, as plain functions from inputs and :class:`~tracecite.settings.Settings` to a
:class:`Report`, all assembled by one :func:`run_checks`.

Every command and every hook stage is a :class:`Plan`: which inputs are notes and which are traces,
whether quotes are checked against their captures, and which live checks follow. The inputs are read
once, first; if any has a format error the run stops there (docs/reference/commands.md: nothing is
fetched or read when an input is bad). The summary counts each kind of check apart
(docs/reference/reports.md): the same inputs give the same numbers whichever command or stage reads
them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from tracecite.checks.kinds import SourceKind
from tracecite.errors import UsageError
from tracecite.findings import EXIT_INPUT, Counts, Finding, Report, Summary, warned
from tracecite.inputs.directories import expand_directories
from tracecite.inputs.notes import NotesFile, read_notes
from tracecite.model import Citation, NoteRecord, NoteRecords, is_trace
from tracecite.stops import Stopped

if TYPE_CHECKING:  # imported where used: `check` needs none of them (see tests/test_startup.py)
    from tracecite.cache import SqliteCache
    from tracecite.checks.evidence import EvidenceScan
    from tracecite.checks.live.records import LiveResult, Loader
    from tracecite.checks.quotes import QuoteChecks
    from tracecite.settings import Settings


@dataclass(frozen=True)
class Plan:
    """What one run does with its inputs."""

    command: str
    evidence: bool = False
    """Check every quote against its source's captured content."""
    live: tuple[SourceKind, ...] = ()
    """The sources checked as they are now, in this order: web pages (notes URLs and traces'
    http(s) sources) and traces' ``file:`` sources."""
    stage: str | None = None
    """The hook stage this plan is (None: a command of its own)."""
    changed_lines: Mapping[str, Sequence[tuple[int, int]]] | None = None
    """Live checks of notes only for the records with a field line in these ranges (first, last), by
    notes path; a notes file not in it is checked whole. The records left out are counted
    ``unchanged`` (docs/hook.md#checking-only-what-changed: a pull request checks what it
    changes)."""


class LiveStopped(Stopped):
    """A live check stopped by a signal, with the findings and counts of what finished."""

    def __init__(self, signum: int, findings: list[Finding], counts: Counts) -> None:
        super().__init__(signum)
        self.findings = findings
        self.counts = counts


def has_input_errors(findings: Sequence[Finding]) -> bool:
    """Whether any finding is an input error (exit 1): then nothing is fetched or read."""
    return any(f.exit == EXIT_INPUT for f in findings)


@dataclass(frozen=True)
class Inputs:
    """Every input, read once: notes parsed, traces validated and (if asked) their evidence
    checked. The checks that follow work on this, never on the files again."""

    notes: tuple[NotesFile, ...] = ()
    traces: tuple[EvidenceScan, ...] = ()
    shard: tuple[int, int] | None = None
    """The live checks' shard K of N (see :meth:`in_shard`); None: every source."""

    def format_findings(self) -> list[Finding]:
        """Notes format and trace structure findings."""
        return [*(f for n in self.notes for f in n.findings),
                *(f for t in self.traces for f in t.scan.findings)]

    def evidence_findings(self) -> list[Finding]:
        """Quotes not found in their captured content (none if evidence was not checked)."""
        return [f for t in self.traces for f in t.findings]

    def summary(self) -> Summary:
        """What was read (inputs, notes records, trace citations) and the evidence verdicts."""
        return Summary(inputs=len(self.notes) + len(self.traces),
                       records=sum(n.record_count for n in self.notes),
                       citations=sum(t.scan.citation_count for t in self.traces),
                       captured=Counts.total(t.summary for t in self.traces))

    def changed_only(self, lines: Mapping[str, Sequence[tuple[int, int]]] | None
                     ) -> tuple[Inputs, int]:
        """These inputs with only the notes records that have a field line in ``lines`` (by
        notes path; a file not in it keeps every record), and how many records were left
        out."""
        if not lines:
            return self, 0
        kept_notes: list[NotesFile] = []
        for notes in self.notes:
            ranges = lines.get(notes.path)
            if ranges is not None:
                starts = [first for first, _ in ranges]
                notes = replace(notes, records=_records_where(
                    notes.records, partial(_touched, starts, ranges)))
            kept_notes.append(notes)
        left_out = sum(len(n.records) for n in self.notes) - sum(len(n.records)
                                                                 for n in kept_notes)
        return replace(self, notes=tuple(kept_notes)), left_out

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

        def in_this_shard(lines: tuple[int, int, int], url: str) -> bool:
            kept = shard_of.get(url)
            if kept is None:
                kept = shard_of[url] = in_shard(url, shard)
            return kept

        notes = tuple(replace(n, records=_records_where(n.records, in_this_shard))
                      for n in self.notes)
        return Inputs(notes, self.traces, shard)

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
             lines: tuple[int, int, int], url: str) -> bool:
    """Whether a record with these field lines has one in the sorted, disjoint ``ranges``."""
    return any(_in_ranges(line, starts, ranges) for line in lines)


def _in_ranges(line: int, starts: Sequence[int], ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether ``line`` is in one of the sorted, disjoint ``ranges`` (``starts``: their
    first lines)."""
    i = bisect_right(starts, line) - 1
    return i >= 0 and line <= ranges[i][1]


class InputsStopped(Stopped):
    """Reading the inputs was stopped by a signal; ``inputs``: those read before it."""

    def __init__(self, signum: int, inputs: Inputs) -> None:
        super().__init__(signum)
        self.inputs = inputs


def read_inputs(notes: Sequence[str], traces: Sequence[str], *, evidence: bool,
                keep_uris: bool, jobs: int | None = 1) -> Inputs:
    """Read each input once: notes parsed, traces validated and, with ``evidence``, their quotes
    checked against their captures. ``keep_uris``: keep every cited source's URI and the citations,
    which the live checks need. ``jobs``: processes to read them in (this one included) when there
    are enough (None: one per core; 1: here alone), the result the same either way
    (docs/guides/scale.md). A stop signal raises :class:`InputsStopped` with the inputs read before
    it."""
    from tracecite.jobs import file_size, read_in_order

    given = [*((path, False) for path in notes), *((path, True) for path in traces)]
    read = partial(read_input, evidence=evidence, keep_uris=keep_uris)
    if traces:
        # The trace readers, imported here, once: forked workers then have them (each worker
        # importing them again cost about 20 ms of a 0.9 s run).
        import tracecite.checks.evidence  # noqa: F401
    results = read_in_order(read, given, jobs=jobs, size=lambda item: file_size(item[0]))
    if results.stopped_by is not None:
        raise InputsStopped(results.stopped_by, _assembled(results.results()))
    return _assembled(results.results())


def read_input(given: tuple[str, bool], *, evidence: bool, keep_uris: bool
               ) -> NotesFile | EvidenceScan:
    """One input, ``(path, whether it is a trace)``, read as :func:`read_inputs` reads each;
    a trace's source index (where each source is in the file) is dropped once read, and so
    are its citations (but for their number) unless ``keep_uris`` says live checks follow."""
    path, trace = given
    if not trace:
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


def _assembled(results: Sequence[NotesFile | EvidenceScan]) -> Inputs:
    return Inputs(tuple(r for r in results if isinstance(r, NotesFile)),
                  tuple(r for r in results if not isinstance(r, NotesFile)))


def split_inputs(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """Notes and traces: ``.jsonl`` files are traces, anything else notes
    (docs/reference/commands.md)."""
    return [p for p in paths if not is_trace(p)], [p for p in paths if is_trace(p)]


def run_checks(plan: Plan, notes: Sequence[str], traces: Sequence[str],
               settings: Settings, *, unread: Sequence[Finding] = ()) -> Report:
    """The one report assembly: read every input, stop on a format error, then the evidence
    and the live checks the plan asks for; each kind of check counted apart. ``unread``:
    input errors found before reading (a directory that selects no file), reported first."""
    stopped_by: int | None = None  # the signal that stopped the run (docs/reference/commands.md)
    try:
        inputs = read_inputs(notes, traces, evidence=plan.evidence, keep_uris=bool(plan.live),
                             jobs=settings.jobs)
    except InputsStopped as stop:  # what was read is reported; nothing is fetched
        inputs, stopped_by = stop.inputs, stop.signum
    findings = [*unread, *inputs.format_findings(), *inputs.evidence_findings()]
    summary = inputs.summary()
    if not offline_shard(settings):
        # Offline findings and counts are shard 1's (docs/guides/scale.md), so merged shards count
        # them once; the input errors that stop every shard are reported by each (merge drops the
        # duplicates), so no shard passes having checked nothing.
        findings = [f for f in findings if f.exit == EXIT_INPUT]
        summary = Summary()
    # nothing is fetched (docs/reference/commands.md)
    if stopped_by is not None or has_input_errors(findings):
        return Report(plan.command, warned(findings, settings.warn), summary,
                      stopped_by=stopped_by, stage=plan.stage)
    # Only this shard's sources (docs/guides/scale.md), then only the records a diff touches
    # (docs/hook.md#checking-only-what-changed).
    inputs, unchanged = inputs.in_shard(settings.shard).changed_only(plan.changed_lines)
    live_findings: list[Finding] = []
    for kind in plan.live:
        if kind is SourceKind.FILE and not inputs.traces:
            continue  # only traces cite file: sources
        if stopped_by is None:
            try:
                found, counts = _check_live(inputs, settings, kind, _label(plan.command, kind))
            except LiveStopped as stop:
                found, counts, stopped_by = stop.findings, stop.counts, stop.signum
            live_findings += found
        else:  # stopped before this check began: each of its quotes is interrupted
            checks, skipped = _live_checks(inputs, kind, settings)
            counts = Counts(skipped=skipped, interrupted=len(checks))
        if kind is SourceKind.WEB:
            counts += Counts(unchanged=unchanged)
        summary += Summary(live=counts) if kind is SourceKind.WEB else Summary(files=counts)
    findings += inputs.located(live_findings)
    return Report(plan.command, warned(findings, settings.warn), summary,
                  stopped_by=stopped_by, stage=plan.stage)


def offline_shard(settings: Settings) -> bool:
    """Whether this run reports the offline findings: an unsharded run, or shard 1 (
    docs/guides/scale.md)."""
    return settings.shard is None or settings.shard[0] == 1


def _label(command: str, kind: SourceKind) -> str:
    """What the progress bar calls a live check: the command, or the hook's stage of it."""
    if command != "hook":
        return command
    return "fetching pages" if kind is SourceKind.WEB else kind.command


def _live_checks(inputs: Inputs, kind: SourceKind, settings: Settings
                 ) -> tuple[QuoteChecks, int]:
    """The quotes to check against sources of ``kind``, and how many are skipped: citations of other
    kinds, and web pages that ``skip_urls`` match (docs/reference/commands.md,
    docs/web-over-time.md#warnings-and-skips). Notes records are read from their columns
    (docs/guides/scale.md: memory), citations made into checks one by one."""
    from tracecite.checks.quotes import CheckList, JoinedChecks, NoteChecks, QuoteCheck

    parts: list[QuoteChecks] = ([NoteChecks(n.records) for n in inputs.notes]
                                if kind is SourceKind.WEB else [])
    cited: list[QuoteCheck] = []
    skipped = 0
    for citation, uri, captured_at in inputs.cited():
        if kind.takes(uri):
            cited.append(QuoteCheck.from_citation(citation, uri, captured_at))
        else:
            skipped += 1
    parts.append(CheckList(cited))
    checks: QuoteChecks = JoinedChecks(parts)
    if kind is SourceKind.WEB and settings.skip_urls:
        from tracecite.checks.skip_urls import skips, url_glob

        globs = [url_glob(pattern) for pattern in settings.skip_urls]
        kept = checks.where(lambda target: not skips(target, globs))
        skipped += len(checks) - len(kept)
        checks = kept
    return checks, skipped


def _check_live(inputs: Inputs, settings: Settings, kind: SourceKind, label: str
                ) -> tuple[list[Finding], Counts]:
    """Check each quote against its source of ``kind`` as it is now, each distinct source loaded
    once however many records or citations cite it (a page that notes and traces both cite is
    fetched once). Skipped sources are counted (docs/reference/commands.md,
    docs/web-over-time.md#warnings-and-skips); web verdicts go through the cache
    (docs/web-over-time.md#the-cache). A check stopped by a signal raises :class:`LiveStopped` with
    what it found before."""
    from tracecite.checks.live.run import LiveRun
    from tracecite.progress import progress_for

    checks, skipped = _live_checks(inputs, kind, settings)
    progress = progress_for(enabled=settings.progress, label=label)
    cache = _cache(settings) if kind is SourceKind.WEB else None
    try:
        with _loader(kind, settings) as loader:
            result = LiveRun(loader, concurrency=settings.concurrency,
                             parse_budget=settings.timeout, progress=progress
                             ).check(checks, cache)
            if settings.archive and result.stopped_by is None:
                result = _with_archive(result, checks, loader, settings)
    finally:
        if cache is not None:
            cache.close()  # what the run learnt is written, stopped or not
    findings = [*(cache.warnings if cache is not None else []), *result.findings]
    counts = result.counts + Counts(skipped=skipped)
    if result.stopped_by is not None:
        raise LiveStopped(result.stopped_by, findings, counts)
    return findings, counts


def _with_archive(result: LiveResult, checks: QuoteChecks, loader: Loader,
                  settings: Settings) -> LiveResult:
    """The result, its findings about pages that changed or are gone with what the Internet Archive
    holds of them (docs/web-over-time.md#archived-copies); web pages only. A stop during the lookups
    keeps what they found and stops the run."""
    from tracecite.checks.web import WebLoader

    if not isinstance(loader, WebLoader):
        return result
    from tracecite.checks.archive import with_archive

    failed = [checks[i] for i in result.failed]  # the checks of the findings only
    archived = with_archive(result.findings, failed, loader.fetcher, budget=settings.timeout)
    return replace(result, findings=archived.findings, stopped_by=archived.stopped_by)


def _cache(settings: Settings) -> SqliteCache | None:
    """The run's cache of web verdicts, when one is set (a problem with it is a warning)."""
    if settings.cache is None:
        return None
    from tracecite.cache import SqliteCache

    return SqliteCache(settings.cache, max_age=settings.cache_max_age,
                       fail_after=settings.fail_after)


@contextmanager
def _loader(kind: SourceKind, settings: Settings) -> Iterator[Loader]:
    """The loader of ``kind``: pages through the run's fetcher (closed afterwards), or files
    under the root."""
    if kind is SourceKind.FILE:
        from tracecite.checks.files import FileLoader

        yield FileLoader(settings.root, settings.max_bytes)
        return
    from tracecite.checks.web import WebLoader
    from tracecite.fetch.fetcher import PinnedFetcher
    from tracecite.fetch.retry import RetryPolicy

    try:
        fetcher = PinnedFetcher(settings.fetch_options())
    except ValueError as exc:  # the only thing the constructor checks is the CA bundle
        raise UsageError(str(exc)) from None
    with fetcher:
        yield WebLoader(fetcher, RetryPolicy(settings.retries, settings.max_retry_wait))


# ---- the commands -----------------------------------------------------------------------------

def run_check(paths: Sequence[str], settings: Settings) -> Report:
    """Offline: notes format, trace structure and, with ``settings.evidence``, every quote in
    its captured content. A directory stands for the files under it that the globs select."""
    given = expand_directories(paths)
    return run_checks(Plan("check", evidence=settings.evidence), *split_inputs(given.paths),
                      settings, unread=given.findings)


def run_verify_notes(paths: Sequence[str], settings: Settings) -> Report:
    """Fetch each notes URL once; every quote must be in its page's visible text (TC210). A
    directory stands for the files under it that the notes globs select."""
    given = expand_directories(paths, traces=False)
    return run_checks(Plan("verify-notes", live=(SourceKind.WEB,)), given.paths, (), settings,
                      unread=given.findings)


def run_verify_urls(paths: Sequence[str], settings: Settings) -> Report:
    """Evidence check, then every cited http(s) source re-fetched and matched (TC210). A
    directory stands for the files under it that the traces globs select."""
    given = expand_directories(paths, notes=False)
    return run_checks(Plan("verify-urls", evidence=True, live=(SourceKind.WEB,)), (),
                      given.paths, settings, unread=given.findings)


def run_verify_files(paths: Sequence[str], settings: Settings) -> Report:
    """Evidence check, then every cited ``file:`` source re-read under the root (TC211). A
    directory stands for the files under it that the traces globs select."""
    given = expand_directories(paths, notes=False)
    return run_checks(Plan("verify-files", evidence=True, live=(SourceKind.FILE,)), (),
                      given.paths, settings, unread=given.findings)


def run_compare(old: str, new: str, settings: Settings) -> Report:
    """Compare two traces' captured contents by stable URI (TC400–TC402)."""
    from tracecite.checks.compare import compare_traces

    findings, changes = compare_traces(old, new)
    return Report("compare", warned(findings, settings.warn), Summary(inputs=2), changes)
