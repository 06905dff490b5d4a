"""The commands, as plain functions from inputs and options to a :class:`Report`.

Each one first reads every input; if any has a format error, it stops there (SPEC §3: nothing
is fetched or read when an input is bad) and the report carries those errors. Reading
(:func:`read_inputs`) and the live checks of what was read (:func:`check_pages_live`,
:func:`check_traces_live`) are separate steps, so ``hook`` can read each input once, however
many checks it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tracecite.checks.evidence import EvidenceScan, scan_with_evidence
from tracecite.checks.kinds import SourceKind as LiveKind
from tracecite.errors import UsageError
from tracecite.fetch.limits import DEFAULT_CONCURRENCY
from tracecite.findings import EXIT_INPUT, Counts, Finding, Report, Summary
from tracecite.inputs.notes import NotesFile, read_notes
from tracecite.inputs.trace import scan_trace
from tracecite.model import Citation

if TYPE_CHECKING:  # imported where used: `check` needs none of them (see tests/test_startup.py)
    from tracecite.checks.live import Progress
    from tracecite.checks.quotes import QuoteCheck
    from tracecite.fetch.fetcher import PinnedFetcher
    from tracecite.fetch.options import FetchOptions

TRACE_SUFFIX = ".jsonl"


def is_trace(path: str) -> bool:
    """Traces are ``.jsonl`` files; anything else is read as notes (SPEC §3)."""
    return path.lower().endswith(TRACE_SUFFIX)


@dataclass(frozen=True)
class LiveOptions:
    """What the live commands need besides their inputs."""

    fetch: FetchOptions
    concurrency: int = DEFAULT_CONCURRENCY
    root: str = "."
    progress: Progress | None = None


def _fetcher(options: FetchOptions) -> PinnedFetcher:
    """The run's fetcher; a ``--ca-cert`` file that holds no usable certificate is TC100."""
    from tracecite.fetch.fetcher import PinnedFetcher

    try:
        return PinnedFetcher(options)
    except ValueError as exc:  # the only thing the constructor checks is the CA bundle
        raise UsageError(str(exc)) from None


def has_input_errors(findings: Sequence[Finding]) -> bool:
    """Whether any finding is an input error (exit 1): then nothing is fetched or read."""
    return any(f.exit == EXIT_INPUT for f in findings)


@dataclass(frozen=True)
class Inputs:
    """Every input, read once: notes parsed, traces validated and (if asked) their evidence
    checked. The checks that follow work on this, never on the files again."""

    notes: tuple[NotesFile, ...] = ()
    traces: tuple[EvidenceScan, ...] = ()

    def format_findings(self) -> list[Finding]:
        """Notes format and trace structure findings."""
        return [*(f for n in self.notes for f in n.findings),
                *(f for t in self.traces for f in t.scan.findings)]

    def evidence_findings(self) -> list[Finding]:
        """Quotes not found in their captured content (none if evidence was not checked)."""
        return [f for t in self.traces for f in t.findings]

    def counts(self) -> Summary:
        """What was read: inputs, notes records and trace citations."""
        return Summary(inputs=len(self.notes) + len(self.traces),
                       records=sum(n.record_count for n in self.notes),
                       citations=sum(len(t.scan.citations) for t in self.traces))

    def evidence_counts(self) -> Summary:
        """The evidence verdicts' counts."""
        return sum((t.summary for t in self.traces), Summary())


def _read_traces(paths: Sequence[str], *, evidence: bool,
                 keep_uris: bool) -> tuple[EvidenceScan, ...]:
    """Validate each trace and, with ``evidence``, check its quotes against its captures."""
    if evidence:
        return tuple(scan_with_evidence(p, keep_uris=keep_uris) for p in paths)
    return tuple(EvidenceScan(scan_trace(p), (), Summary(), {}) for p in paths)


def read_inputs(paths: Sequence[str], *, evidence: bool, keep_uris: bool) -> Inputs:
    """Read each input once: traces (``.jsonl``) validated and, with ``evidence``, their quotes
    checked against their captures; anything else parsed as notes. ``keep_uris``: keep every
    cited source's URI, which the live checks of traces need."""
    return Inputs(tuple(read_notes(p) for p in paths if not is_trace(p)),
                  _read_traces([p for p in paths if is_trace(p)], evidence=evidence,
                               keep_uris=keep_uris))


def run_check(paths: Sequence[str], *, evidence: bool) -> Report:
    """Offline: notes format, trace structure and, with ``evidence``, every quote in its
    captured content."""
    inputs = read_inputs(paths, evidence=evidence, keep_uris=False)
    return Report("check", (*inputs.format_findings(), *inputs.evidence_findings()),
                  inputs.counts() + inputs.evidence_counts())


def run_compare(old: str, new: str) -> Report:
    """Compare two traces' captured contents by stable URI (TC400–TC402)."""
    from tracecite.checks.compare import compare_traces

    findings, changes = compare_traces(old, new)
    return Report("compare", tuple(findings), Summary(inputs=2), changes)


def run_verify_notes(paths: Sequence[str], options: LiveOptions) -> Report:
    """Fetch each notes URL once; every quote must be in its page's visible text (TC210)."""
    inputs = Inputs(notes=tuple(read_notes(p) for p in paths))
    findings = inputs.format_findings()
    if has_input_errors(findings):
        return Report("verify-notes", tuple(findings), inputs.counts())
    found, live = check_pages_live(inputs.notes, (), options)
    return Report("verify-notes", (*findings, *found), inputs.counts() + live)


def check_pages_live(notes: Sequence[NotesFile], traces: Sequence[EvidenceScan],
                     options: LiveOptions) -> tuple[list[Finding], Summary]:
    """Fetch each page that notes records or the traces' http(s) sources cite, once however
    many of them cite it; each quote must be in its visible text (TC210). The live verdicts'
    counts come with the findings."""
    from tracecite.checks.quotes import QuoteCheck

    checks = [QuoteCheck.from_note(r) for n in notes for r in n.records]
    checks += _trace_checks(traces, "web")
    return _check_pages(checks, options)


SourceKind = Literal["web", "file"]
"""What a live check of traces re-reads: http(s) pages, or ``file:`` sources on disk."""

_KINDS: dict[SourceKind, LiveKind] = {"web": LiveKind.WEB, "file": LiveKind.FILE}

LIVE_COMMAND: dict[SourceKind, str] = {name: kind.command for name, kind in _KINDS.items()}
"""The command that checks each kind of cited source as it is now."""


def _is_kind(kind: SourceKind) -> Callable[[str], bool]:
    return _KINDS[kind].takes


def _live_summary(counts: Counts) -> Summary:
    """A live run's counts in the summary of today's reports."""
    return Summary(checked=counts.checked, matched=counts.matched, mismatched=counts.not_found,
                   unavailable=counts.unavailable)


def _cited(traces: Sequence[EvidenceScan]) -> Iterator[tuple[Citation, str]]:
    """Each citation with its source's URI, in the traces whose URIs can be trusted."""
    for trace in traces:
        if has_input_errors(trace.findings):
            continue  # the trace changed under us: its URIs cannot be trusted
        for citation in trace.scan.citations:
            yield citation, trace.uris[citation.source_id]


def check_traces_live(traces: Sequence[EvidenceScan], kind: SourceKind, options: LiveOptions
                      ) -> tuple[list[Finding], Summary]:
    """Check each cited source of ``kind`` as it is now, in traces already read (well formed,
    evidence checked, URIs kept: see :func:`read_inputs`). The captured content plays no part.
    Returns the live findings and the live verdicts' counts; the citations of other kinds are
    left for :func:`count_skipped`."""
    if kind == "web":
        return check_pages_live((), traces, options)
    from tracecite.checks.files import FileLoader
    from tracecite.checks.live import LiveRun

    result = LiveRun(FileLoader(options.root, options.fetch.max_bytes),
                     concurrency=options.concurrency, parse_budget=options.fetch.timeout,
                     progress=options.progress).check(_trace_checks(traces, kind))
    return list(result.findings), _live_summary(result.counts)


def _trace_checks(traces: Sequence[EvidenceScan], kind: SourceKind) -> list[QuoteCheck]:
    from tracecite.checks.quotes import QuoteCheck

    wanted = _is_kind(kind)
    return [QuoteCheck.from_citation(c, uri) for c, uri in _cited(traces) if wanted(uri)]


def count_skipped(traces: Sequence[EvidenceScan], kinds: Collection[SourceKind]) -> int:
    """How many citations no live check of ``kinds`` takes (SPEC §3: counted, not failures)."""
    tests = [_is_kind(kind) for kind in kinds]
    return sum(1 for _, uri in _cited(traces) if not any(test(uri) for test in tests))


def _check_pages(checks: Sequence[QuoteCheck], options: LiveOptions
                 ) -> tuple[list[Finding], Summary]:
    """Fetch each distinct page once; each quote must be in its visible text (TC210)."""
    from tracecite.checks.live import LiveRun
    from tracecite.checks.web import WebLoader

    with _fetcher(options.fetch) as fetcher:
        result = LiveRun(WebLoader(fetcher), concurrency=options.concurrency,
                         parse_budget=options.fetch.timeout,
                         progress=options.progress).check(checks)
    return list(result.findings), _live_summary(result.counts)


def _run_traces_live(kind: SourceKind, paths: Sequence[str], options: LiveOptions) -> Report:
    """Evidence first, then each cited source of ``kind`` checked as it is now."""
    command = LIVE_COMMAND[kind]
    inputs = Inputs(traces=_read_traces(paths, evidence=True, keep_uris=True))
    findings = inputs.format_findings()
    if has_input_errors(findings):
        return Report(command, tuple(findings), inputs.counts())
    findings += inputs.evidence_findings()
    found, live = check_traces_live(inputs.traces, kind, options)
    # The live pass checks quotes a second time; the summary counts the live verdicts.
    skipped = Summary(skipped=count_skipped(inputs.traces, (kind,)))
    return Report(command, (*findings, *found), inputs.counts() + skipped + live)


def run_verify_urls(paths: Sequence[str], options: LiveOptions) -> Report:
    """Evidence check, then every cited http(s) source re-fetched and matched (TC210)."""
    return _run_traces_live("web", paths, options)


def run_verify_files(paths: Sequence[str], options: LiveOptions) -> Report:
    """Evidence check, then every cited ``file:`` source re-read under the root (TC211)."""
    return _run_traces_live("file", paths, options)
