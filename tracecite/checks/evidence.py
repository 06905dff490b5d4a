"""Evidence mode (SPEC §2): every quote must be in the captured content of its source.

Traces end with their answer, so :func:`scan_with_evidence` reads the last line first, learns
which quotes to expect from which source, and tests each while its source streams by in the one
validating pass: no content is kept, and the file is decoded once. When the answer is elsewhere
(or the last line changed between the two reads), :func:`check_evidence` reads just the lines
holding cited sources again, each once, in file order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.findings import Finding, Summary
from tracecite.inputs.answer import AnswerDraft, read_final_answer
from tracecite.inputs.files import open_input
from tracecite.inputs.sources import TraceChangedError, read_sources_at
from tracecite.inputs.trace import TraceScan, scan_open_trace, unreadable_trace
from tracecite.matching import MatchText
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


class _QuoteTester:
    """A source sink that tests the quotes of the answer read ahead as each source streams by.

    It keeps what is needed afterwards and little else: the quotes not found, and URIs — of
    every tested source only when ``keep_uris`` (the live checks need them), else of the
    sources with a quote missing (for the findings). A source's quotes are dropped once tested.
    """

    def __init__(self, draft: AnswerDraft, *, keep_uris: bool = True) -> None:
        wanted: dict[str, list[str]] = defaultdict(list)
        for source_id, quote in zip(draft.source_ids, draft.quotes, strict=True):
            if quote is not None:
                wanted[source_id].append(quote)
        # Tuples, without repeats: a few quotes per source, and a tuple costs a fifth of a set.
        self.wanted = {source_id: tuple(dict.fromkeys(q)) for source_id, q in wanted.items()}
        self.keep_uris = keep_uris
        self.missed: set[tuple[str, str]] = set()
        self.uris: dict[str, str] = {}

    def __call__(self, ref: SourceRef, content: str) -> None:
        quotes = self.wanted.pop(ref.id, None)  # the validator hands each id over once
        if not quotes:
            return
        text = MatchText(content)
        missed = [(ref.id, q) for q in quotes if not text.contains(q)]
        if missed or self.keep_uris:
            self.uris[ref.id] = ref.uri
        self.missed.update(missed)


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
    opened = open_input(path)
    if isinstance(opened, Finding):
        return EvidenceScan(unreadable_trace(path, opened), (), Summary(), {})
    with opened:
        answer = read_final_answer(path, opened)
        tester = _QuoteTester(answer.draft, keep_uris=keep_uris) if answer else None
        scan = scan_open_trace(path, opened, sink=tester, answer=answer)
    try:
        return _evidence(scan, tester)
    finally:
        scan.sources.close()


def _evidence(scan: TraceScan, tester: _QuoteTester | None) -> EvidenceScan:
    path = scan.path
    if not scan.valid:
        return EvidenceScan(scan, (), Summary(), {})
    if tester is None or not scan.answer_read_ahead:
        findings, summary = check_evidence(scan)
        if any(f.code is Code.INPUT_UNREADABLE for f in findings):
            return EvidenceScan(scan, tuple(findings), summary, {})  # one TC101 says it all
        try:
            uris = scan.sources.uris(c.source_id for c in scan.citations)
        except (TraceChangedError, OSError):
            return EvidenceScan(scan, (*findings, Finding(Code.INPUT_UNREADABLE, TRACE_CHANGED,
                                                            file=path)), summary, {})
        return EvidenceScan(scan, tuple(findings), summary, uris)
    # The answer is the one read ahead, and the trace is valid, so every cited source was
    # seen, and tested, as it streamed by.
    findings = _claim_findings(scan)
    missed = [c for c in scan.citations if (c.source_id, c.quote) in tester.missed]
    findings.extend(not_found(c, Code.QUOTE_NOT_IN_CAPTURE, "quote is not in the captured content",
                              tester.uris[c.source_id]) for c in missed)
    checked = len(scan.citations)
    summary = Summary(checked=checked, matched=checked - len(missed), mismatched=len(missed))
    return EvidenceScan(scan, tuple(findings), summary, tester.uris)
