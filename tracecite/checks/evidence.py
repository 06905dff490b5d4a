"""Evidence mode (SPEC §2): every quote must be in the captured content of its source.

The validator has already streamed the trace and noted where each source is. Here the lines
holding cited sources are read again and their quotes tested, in order of position in the file.
On a large trace that work is split over worker processes, one per core: it is JSON decoding and
normalising, all CPU, and the batches are independent.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from tracecite.codes import Code
from tracecite.findings import Finding, Summary
from tracecite.inputs.events import Event, chunk_bounds, count_lines, read_events
from tracecite.inputs.jsonl import loads
from tracecite.inputs.sources import TraceChangedError, read_sources_at
from tracecite.inputs.trace import TraceScan, scan_trace
from tracecite.matching import MatchText, normalise
from tracecite.model import Citation, SourceRef

TRACE_CHANGED = "the trace changed or became unreadable while it was checked"

PARALLEL_FROM_BYTES = 8 * 1024 * 1024
"""Below this trace size, starting worker processes costs more than it saves."""

# One line: its offset, and for each cited source on it the quotes to test.
_LineJob = tuple[int, dict[str, list[str]]]
# A source with quotes not found: offset, source id, URI, positions of the missing quotes.
_Miss = tuple[int, str, str, list[int]]


def _check_lines(path: str, jobs: Sequence[_LineJob]) -> list[_Miss]:
    """Test the quotes of a batch of lines; a plain function so a worker process can run it."""
    misses: list[_Miss] = []
    with open(path, "rb") as handle:
        for offset, by_source in jobs:
            found = read_sources_at(handle, offset)
            for source_id, quotes in by_source.items():
                if source_id not in found:
                    raise TraceChangedError("the trace changed while it was being checked")
                uri, content = found[source_id]
                text = MatchText(content)
                missing = [i for i, quote in enumerate(quotes) if not text.contains(quote)]
                if missing:
                    misses.append((offset, source_id, uri, missing))
    return misses


def _batches(jobs: list[_LineJob], count: int) -> list[list[_LineJob]]:
    size = -(-len(jobs) // count)
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


def _run(path: str, jobs: list[_LineJob], workers: int) -> list[_Miss]:
    if workers < 2 or len(jobs) < 2:
        return _check_lines(path, jobs)
    # fork is cheapest, and safe while this is the only thread; otherwise start clean workers.
    methods = multiprocessing.get_all_start_methods()
    method = ("fork" if "fork" in methods and threading.active_count() == 1
              else "forkserver" if "forkserver" in methods else "spawn")
    context = multiprocessing.get_context(method)
    from concurrent.futures import ProcessPoolExecutor

    # A few batches per worker, so one slow batch does not leave a core idle at the end.
    batches = _batches(jobs, workers * 4)
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        results = pool.map(_check_lines, [path] * len(batches), batches)
        return [miss for result in results for miss in result]


def _workers_for(path: str, workers: int | None) -> int:
    if workers is not None:
        return workers
    try:
        large = os.path.getsize(path) >= PARALLEL_FROM_BYTES
    except OSError:
        large = False
    return min(os.cpu_count() or 1, 8) if large else 1


def _claim_findings(scan: TraceScan) -> list[Finding]:
    """TC200 for an answer without claims, TC201 for each claim without citations."""
    findings: list[Finding] = []
    line = scan.answer_line
    if line is not None and not scan.citations_per_claim:
        findings.append(Finding(Code.EVIDENCE_NO_CLAIMS, "the answer has no claims",
                                file=scan.path, line=line))
    for claim, count in enumerate(scan.citations_per_claim, start=1):
        if count == 0:
            findings.append(Finding(Code.EVIDENCE_UNCITED_CLAIM, f"claim {claim} has no citations",
                                    file=scan.path, line=line, claim=claim))
    return findings


def check_evidence(scan: TraceScan, *, workers: int | None = None) -> tuple[list[Finding], Summary]:
    """TC200/TC201 for an answer without claims or citations, TC202 for each quote not found.

    ``workers``: processes to test quotes in (default: one per core for large traces).
    """
    findings = _claim_findings(scan)
    # offset → source id → the citations to test against that source, in answer order.
    by_line: dict[int, dict[str, list[Citation]]] = defaultdict(lambda: defaultdict(list))
    for citation in scan.citations:
        by_line[scan.sources.offset(citation.source_id)][citation.source_id].append(citation)
    jobs: list[_LineJob] = [
        (offset, {sid: [c.quote for c in cites] for sid, cites in sources.items()})
        for offset, sources in sorted(by_line.items())
    ]
    try:
        misses = _run(scan.path, jobs, _workers_for(scan.path, workers))
    except (TraceChangedError, OSError):
        findings.append(Finding(Code.INPUT_UNREADABLE, TRACE_CHANGED, file=scan.path))
        return findings, Summary()
    for offset, source_id, uri, missing in misses:
        cites = by_line[offset][source_id]
        findings.extend(not_found(cites[i], Code.QUOTE_NOT_IN_CAPTURE,
                                  "quote is not in the captured content", uri) for i in missing)
    checked = len(scan.citations)
    mismatched = sum(len(m[3]) for m in misses)
    return findings, Summary(checked=checked, matched=checked - mismatched, mismatched=mismatched)


def not_found(citation: Citation, code: Code, message: str, uri: str | None) -> Finding:
    """A quote-not-found finding located at its citation."""
    return Finding(
        code, message,
        file=citation.file, line=citation.line, claim=citation.claim,
        citation=citation.citation, source_id=citation.source_id, uri=uri,
    )


def _final_answer_quotes(path: str) -> dict[str, set[str]] | None:
    """The quotes of the answer on the trace's last line, by source id, if that is where it is.

    Traces end with their answer, so reading the last line first lets the one validating pass
    test each quote while its source streams by. Whatever this finds is only a forecast: the
    validating pass decides what the answer is, and anything it did not foresee is checked the
    slow way.
    """
    try:
        with open(path, "rb") as handle:
            line = _last_line(handle)
        event = loads(line)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(event, dict) or event.get("type") != "answer":
        return None
    wanted: dict[str, set[str]] = defaultdict(set)
    claims = event.get("claims")
    for claim in claims if isinstance(claims, list) else ():
        citations = claim.get("citations") if isinstance(claim, dict) else None
        for citation in citations if isinstance(citations, list) else ():
            if isinstance(citation, dict):
                source_id, quote = citation.get("source_id"), citation.get("quote")
                if isinstance(source_id, str) and isinstance(quote, str):
                    wanted[source_id].add(normalise(quote))
    return wanted


def _last_line(handle: BinaryIO, block: int = 1 << 16) -> bytes:
    """The last non-blank line of a file, read backwards from its end."""
    end = handle.seek(0, os.SEEK_END)
    tail = b""
    position = end
    while position > 0:
        step = min(block, position)
        position -= step
        handle.seek(position)
        tail = handle.read(step) + tail
        stripped = tail.rstrip()
        cut = stripped.rfind(b"\n")
        if cut != -1:
            return stripped[cut + 1:]
    return tail.strip()


class _QuoteForecast:
    """A source sink that tests the forecast quotes of each source as it streams by."""

    def __init__(self, wanted: dict[str, set[str]]) -> None:
        self.wanted = wanted
        self.found: dict[tuple[str, str], bool] = {}
        self.uris: dict[str, str] = {}

    def __call__(self, ref: SourceRef, content: str) -> None:
        quotes = self.wanted.get(ref.id)
        if not quotes:
            return
        text = MatchText(content)
        self.uris[ref.id] = ref.uri
        for quote in quotes:
            self.found[(ref.id, quote)] = text.contains(quote)


@dataclass(frozen=True)
class EvidenceScan:
    """A validated trace and, if it is valid, its evidence verdicts."""

    scan: TraceScan
    findings: tuple[Finding, ...]
    summary: Summary
    uris: Mapping[str, str]
    """The URI of every cited source."""


# The forecast a forked worker tests quotes with: set just before the workers are forked.
_WORKER_FORECAST: _QuoteForecast | None = None


def _decode_chunk(
    path: str, start: int, end: int
) -> tuple[list[Event], int, dict[tuple[str, str], bool], dict[str, str]]:
    """Decode one byte range in a worker: its events with source contents dropped (they are
    large and the validator only needs their type), the forecast verdicts, and the line count."""
    forecast = _QuoteForecast(_WORKER_FORECAST.wanted if _WORKER_FORECAST else {})
    events: list[Event] = []
    with open(path, "rb") as handle:
        for line, offset, value in read_events(handle, start, end):
            if isinstance(value, dict) and value.get("type") == "tool_result":
                sources = value.get("sources")
                for source in sources if isinstance(sources, list) else ():
                    if isinstance(source, dict) and isinstance(source.get("content"), str):
                        source_id, uri = source.get("id"), source.get("uri")
                        if isinstance(source_id, str) and isinstance(uri, str):
                            forecast(SourceRef(source_id, uri, line), source["content"])
                        source["content"] = ""
            events.append((line, offset, value))
        lines = count_lines(handle, start, end)
    return events, lines, forecast.found, forecast.uris


def _parallel_events(path: str, forecast: _QuoteForecast, workers: int) -> Iterator[Event]:
    """The trace's events, decoded by forked workers in byte ranges, in file order; the
    workers' quote verdicts are merged into ``forecast``."""
    global _WORKER_FORECAST
    from concurrent.futures import ProcessPoolExecutor

    bounds = chunk_bounds(path, workers * 4)
    _WORKER_FORECAST = forecast
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            results = pool.map(_decode_chunk, [path] * len(bounds),
                               [b[0] for b in bounds], [b[1] for b in bounds])
            first_line = 0
            for events, lines, found, uris in results:
                forecast.found.update(found)
                forecast.uris.update(uris)
                for line, offset, value in events:
                    yield first_line + line, offset, value
                first_line += lines
    finally:
        _WORKER_FORECAST = None


def _can_fork() -> bool:
    # fork is cheap and shares the forecast without pickling; it is only safe single-threaded.
    return ("fork" in multiprocessing.get_all_start_methods()
            and threading.active_count() == 1)


def scan_with_evidence(path: str, *, workers: int | None = None) -> EvidenceScan:
    """Validate a trace and check its evidence, in one pass over the file when its answer is
    on the last line (the usual case), else in a second pass over the cited lines.

    A large trace is decoded by one worker process per core (``workers`` overrides).
    """
    wanted = _final_answer_quotes(path)
    forecast = _QuoteForecast(wanted) if wanted else None
    count = _workers_for(path, workers)
    if forecast is not None and count > 1 and _can_fork():
        scan = scan_trace(path, events=_parallel_events(path, forecast, count))
    else:
        scan = scan_trace(path, sink=forecast)
    try:
        return _evidence(scan, forecast, workers)
    finally:
        scan.sources.close()


def _evidence(scan: TraceScan, forecast: _QuoteForecast | None,
              workers: int | None) -> EvidenceScan:
    path = scan.path
    if not scan.valid:
        return EvidenceScan(scan, (), Summary(), {})
    if forecast is None or any((c.source_id, c.quote) not in forecast.found
                               for c in scan.citations):
        findings, summary = check_evidence(scan, workers=workers)
        if any(f.code is Code.INPUT_UNREADABLE for f in findings):
            return EvidenceScan(scan, tuple(findings), summary, {})  # one TC101 says it all
        try:
            uris = scan.sources.uris(c.source_id for c in scan.citations)
        except (TraceChangedError, OSError):
            return EvidenceScan(scan, (*findings, Finding(Code.INPUT_UNREADABLE, TRACE_CHANGED,
                                                            file=path)), summary, {})
        return EvidenceScan(scan, tuple(findings), summary, uris)
    findings = _claim_findings(scan)
    missed = [c for c in scan.citations if not forecast.found[(c.source_id, c.quote)]]
    findings.extend(not_found(c, Code.QUOTE_NOT_IN_CAPTURE, "quote is not in the captured content",
                              forecast.uris[c.source_id]) for c in missed)
    checked = len(scan.citations)
    summary = Summary(checked=checked, matched=checked - len(missed), mismatched=len(missed))
    return EvidenceScan(scan, tuple(findings), summary, forecast.uris)
