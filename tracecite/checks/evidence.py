"""Evidence mode (SPEC §2): every quote must be in the captured content of its source.

Traces end with their answer, so :func:`scan_with_evidence` reads the last line first, learns
which quotes to expect from which source, and tests each while its source streams by in the one
validating pass: no content is kept, and the file is decoded once. When the answer is elsewhere,
or cites what the forecast did not foresee, :func:`check_evidence` reads just the lines holding
cited sources again, each once, in file order.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from tracecite.codes import Code
from tracecite.findings import Finding, Summary
from tracecite.inputs.jsonl import visit_claims
from tracecite.inputs.sources import TraceChangedError, read_sources_at
from tracecite.inputs.trace import TraceScan, scan_trace
from tracecite.matching import MatchText, normalise
from tracecite.model import Citation, SourceRef

TRACE_CHANGED = "the trace changed or became unreadable while it was checked"

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


def check_evidence(scan: TraceScan) -> tuple[list[Finding], Summary]:
    """TC200/TC201 for an answer without claims or citations, TC202 for each quote not found,
    reading the lines that hold cited sources again, each once, in file order."""
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
        misses = _check_lines(scan.path, jobs)
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


def _final_answer_quotes(path: str) -> dict[str, tuple[str, ...]] | None:
    """The quotes of the answer on the trace's last line, by source id, if that is where it is.

    Traces end with their answer, so reading the last line first lets the one validating pass
    test each quote while its source streams by. Whatever this finds is only a forecast: the
    validating pass decides what the answer is, and anything it did not foresee is checked the
    slow way.
    """
    wanted: dict[str, list[str]] = defaultdict(list)

    def collect(claim: Any) -> None:
        citations = claim.get("citations") if isinstance(claim, dict) else None
        for citation in citations if isinstance(citations, list) else ():
            if isinstance(citation, dict):
                source_id, quote = citation.get("source_id"), citation.get("quote")
                if isinstance(source_id, str) and isinstance(quote, str):
                    # Interned: the validator's citations then share these strings.
                    wanted[sys.intern(source_id)].append(sys.intern(normalise(quote)))

    try:
        with open(path, "rb") as handle:
            line = _last_line(handle)
        event = visit_claims(line, collect)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(event, dict) or event.get("type") != "answer":
        return None
    # Tuples: a few quotes per source, and a tuple costs a fifth of a set.
    return {source_id: tuple(dict.fromkeys(quotes)) for source_id, quotes in wanted.items()}


def _last_line(handle: BinaryIO, block: int = 1 << 16) -> bytes:
    """The last non-blank line of a file, read backwards from its end in blocks."""
    position = handle.seek(0, os.SEEK_END)
    blocks: list[bytes] = []
    seen_text = False
    while position > 0:
        step = min(block, position)
        position -= step
        handle.seek(position)
        data = handle.read(step)
        if not seen_text:
            data = data.rstrip()
            seen_text = bool(data)
        cut = data.rfind(b"\n") if seen_text else -1
        if cut != -1:
            blocks.append(data[cut + 1:])
            break
        blocks.append(data)
    blocks.reverse()
    return b"".join(blocks).strip()


class _QuoteForecast:
    """A source sink that tests the forecast quotes of each source as it streams by.

    It keeps what is needed afterwards and little else: which sources were tested, the quotes
    not found, and URIs — of every tested source only when ``keep_uris`` (the live checks need
    them), else of the sources with a quote missing (for the findings).
    """

    def __init__(self, wanted: dict[str, tuple[str, ...]], *, keep_uris: bool = True) -> None:
        self.wanted = wanted
        self.keep_uris = keep_uris
        self.tested: set[str] = set()
        self.missed: set[tuple[str, str]] = set()
        self.uris: dict[str, str] = {}

    def __call__(self, ref: SourceRef, content: str) -> None:
        quotes = self.wanted.get(ref.id)
        if not quotes or ref.id in self.tested:
            return
        text = MatchText(content)
        self.tested.add(ref.id)
        missed = [(ref.id, q) for q in quotes if not text.contains(q)]
        if missed or self.keep_uris:
            self.uris[ref.id] = ref.uri
        self.missed.update(missed)

    def foresaw(self, citation: Citation) -> bool:
        """Whether this citation's quote was tested against its source."""
        return (citation.source_id in self.tested
                and citation.quote in self.wanted[citation.source_id])


@dataclass(frozen=True)
class EvidenceScan:
    """A validated trace and, if it is valid, its evidence verdicts."""

    scan: TraceScan
    findings: tuple[Finding, ...]
    summary: Summary
    uris: Mapping[str, str]
    """The URI of every cited source."""


def scan_with_evidence(path: str, *, keep_uris: bool = True) -> EvidenceScan:
    """Validate a trace and check its evidence, in one pass over the file when its answer is
    on the last line (the usual case), else in a second pass over the cited lines.

    ``keep_uris``: whether :attr:`EvidenceScan.uris` must name every cited source (the live
    checks need that) or only those with a quote not found.
    """
    wanted = _final_answer_quotes(path)
    forecast = _QuoteForecast(wanted, keep_uris=keep_uris) if wanted else None
    scan = scan_trace(path, sink=forecast)
    try:
        return _evidence(scan, forecast)
    finally:
        scan.sources.close()


def _evidence(scan: TraceScan, forecast: _QuoteForecast | None) -> EvidenceScan:
    path = scan.path
    if not scan.valid:
        return EvidenceScan(scan, (), Summary(), {})
    if forecast is None or not all(forecast.foresaw(c) for c in scan.citations):
        findings, summary = check_evidence(scan)
        if any(f.code is Code.INPUT_UNREADABLE for f in findings):
            return EvidenceScan(scan, tuple(findings), summary, {})  # one TC101 says it all
        try:
            uris = scan.sources.uris(c.source_id for c in scan.citations)
        except (TraceChangedError, OSError):
            return EvidenceScan(scan, (*findings, Finding(Code.INPUT_UNREADABLE, TRACE_CHANGED,
                                                            file=path)), summary, {})
        return EvidenceScan(scan, tuple(findings), summary, uris)
    findings = _claim_findings(scan)
    missed = [c for c in scan.citations if (c.source_id, c.quote) in forecast.missed]
    findings.extend(not_found(c, Code.QUOTE_NOT_IN_CAPTURE, "quote is not in the captured content",
                              forecast.uris[c.source_id]) for c in missed)
    checked = len(scan.citations)
    summary = Summary(checked=checked, matched=checked - len(missed), mismatched=len(missed))
    return EvidenceScan(scan, tuple(findings), summary, forecast.uris)
