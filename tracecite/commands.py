"""The commands, as plain functions from inputs and options to a :class:`Report`.

Each one first reads every input; if any has a format error, it stops there (SPEC §3: nothing
is fetched or read when an input is bad) and the report carries those errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.checks.compare import compare_traces
from tracecite.checks.evidence import EvidenceScan, scan_with_evidence
from tracecite.checks.live import Progress, run_live_checks
from tracecite.checks.quotes import QuoteCheck
from tracecite.codes import Code
from tracecite.errors import UsageError
from tracecite.findings import EXIT_INPUT, Finding, Report, Summary
from tracecite.inputs.notes import read_notes
from tracecite.inputs.trace import scan_trace

if TYPE_CHECKING:  # the fetcher imports urllib3, which offline commands never need
    from tracecite.fetch.fetcher import FetchOptions, PinnedFetcher

TRACE_SUFFIX = ".jsonl"


def is_trace(path: str) -> bool:
    """Traces are ``.jsonl`` files; anything else is read as notes (SPEC §3)."""
    return path.lower().endswith(TRACE_SUFFIX)


@dataclass(frozen=True)
class LiveOptions:
    """What the live commands need besides their inputs."""

    fetch: FetchOptions
    concurrency: int = 8
    root: str = "."
    progress: Progress | None = None


def _fetcher(options: FetchOptions) -> PinnedFetcher:
    """The run's fetcher; a ``--ca-cert`` file that holds no usable certificate is TC100."""
    from tracecite.fetch.fetcher import PinnedFetcher

    try:
        return PinnedFetcher(options)
    except ValueError as exc:  # the only thing the constructor checks is the CA bundle
        raise UsageError(str(exc)) from None


def _has_input_errors(findings: Sequence[Finding]) -> bool:
    return any(f.exit == EXIT_INPUT for f in findings)


def _read_traces(paths: Sequence[str], *, evidence: bool,
                 keep_uris: bool = True) -> list[EvidenceScan]:
    """Validate each trace and, with ``evidence``, check its quotes against its captures."""
    out = []
    for path in paths:
        if evidence:
            out.append(scan_with_evidence(path, keep_uris=keep_uris))
        else:
            out.append(EvidenceScan(scan_trace(path), (), Summary(), {}))
    return out


def run_check(paths: Sequence[str], *, evidence: bool) -> Report:
    """Offline: notes format, trace structure and, with ``evidence``, every quote in its
    captured content."""
    findings: list[Finding] = []
    summary = Summary(inputs=len(paths))
    for notes in (read_notes(p) for p in paths if not is_trace(p)):
        findings.extend(notes.findings)
        summary += Summary(records=notes.record_count)
    traces = [p for p in paths if is_trace(p)]
    for result in _read_traces(traces, evidence=evidence, keep_uris=False):
        findings.extend((*result.scan.findings, *result.findings))
        summary += Summary(citations=len(result.scan.citations)) + result.summary
    return Report("check", tuple(findings), summary)


def run_compare(old: str, new: str) -> Report:
    """Compare two traces' captured contents by stable URI (TC400–TC402)."""
    findings, changes = compare_traces(old, new)
    return Report("compare", tuple(findings), Summary(inputs=2), changes)


def run_verify_notes(paths: Sequence[str], options: LiveOptions) -> Report:
    """Fetch each notes URL once; every quote must be in its page's visible text (TC210)."""
    from tracecite.checks.web import WebLoader, url_key

    notes = [read_notes(p) for p in paths]
    findings = [f for n in notes for f in n.findings]
    summary = Summary(inputs=len(paths), records=sum(n.record_count for n in notes))
    if _has_input_errors(findings):
        return Report("verify-notes", tuple(findings), summary)
    checks = [QuoteCheck.from_note(r) for n in notes for r in n.records]
    with _fetcher(options.fetch) as fetcher:
        found, counts = run_live_checks(
            checks, WebLoader(fetcher), key=url_key, concurrency=options.concurrency,
            not_found=(Code.QUOTE_NOT_ON_PAGE, "the page's visible text"),
            progress=options.progress,
        )
    return Report("verify-notes", tuple(findings + found), summary + counts)


# What a browser strips around a URL (WHATWG: C0 controls and space). A cited URI that is
# http(s) once stripped is checked (and refused, TC300, for the junk), never skipped: an agent
# must not dodge the live check with a leading space.
_URL_JUNK = "".join(chr(c) for c in range(0x21))


def _is_web(uri: str) -> bool:
    return uri.strip(_URL_JUNK).split(":", 1)[0].lower() in ("http", "https")


def _run_traces_live(command: str, paths: Sequence[str], options: LiveOptions) -> Report:
    """Evidence first, then each cited source of the command's kind checked as it is now."""
    from tracecite.checks.files import FileLoader, is_file_uri

    findings: list[Finding] = []
    summary = Summary(inputs=len(paths))
    web = command == "verify-urls"
    wanted = _is_web if web else is_file_uri
    results = _read_traces(paths, evidence=True)
    for result in results:
        findings.extend(result.scan.findings)
        summary += Summary(citations=len(result.scan.citations))
    if _has_input_errors(findings):
        return Report(command, tuple(findings), summary)
    checks: list[QuoteCheck] = []
    for result in results:
        findings.extend(result.findings)
        if _has_input_errors(result.findings):
            continue  # the trace changed under us: its URIs cannot be trusted
        for citation in result.scan.citations:
            uri = result.uris[citation.source_id]
            if wanted(uri):
                checks.append(QuoteCheck.from_citation(citation, uri))
            else:
                summary += Summary(skipped=1)
    if web:
        from tracecite.checks.web import WebLoader, url_key

        with _fetcher(options.fetch) as fetcher:
            found, counts = run_live_checks(
                checks, WebLoader(fetcher), key=url_key, concurrency=options.concurrency,
                not_found=(Code.QUOTE_NOT_ON_PAGE, "the page's visible text"),
                progress=options.progress,
            )
    else:
        loader = FileLoader(options.root, options.fetch.max_bytes)
        found, counts = run_live_checks(
            checks, loader, concurrency=options.concurrency,
            not_found=(Code.QUOTE_NOT_IN_FILE, "the file"), progress=options.progress,
        )
    # The live pass checks quotes a second time; the summary counts the live verdicts.
    live = Summary(checked=counts.checked, matched=counts.matched, mismatched=counts.mismatched,
                   unavailable=counts.unavailable, fetched=counts.fetched)
    base = Summary(inputs=summary.inputs, citations=summary.citations, skipped=summary.skipped)
    return Report(command, tuple(findings + found), base + live)


def run_verify_urls(paths: Sequence[str], options: LiveOptions) -> Report:
    """Evidence check, then every cited http(s) source re-fetched and matched (TC210)."""
    return _run_traces_live("verify-urls", paths, options)


def run_verify_files(paths: Sequence[str], options: LiveOptions) -> Report:
    """Evidence check, then every cited ``file:`` source re-read under the root (TC211)."""
    return _run_traces_live("verify-files", paths, options)
