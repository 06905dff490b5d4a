"""Evidence mode (SPEC §2): every quote must be in the captured content of its source.

Traces end with their answer, so :func:`scan_with_evidence` reads the last line first, learns
which quotes to expect from which source, and tests each while its source streams by in the one
validating pass: no content is kept, and the file is decoded once. When the answer is elsewhere
(or the last line changed between the two reads), :func:`check_evidence` reads just the lines
holding cited sources again, each once, in file order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.findings import Counts, Finding
from tracecite.inputs.answer import read_final_answer
from tracecite.inputs.files import open_input
from tracecite.inputs.sources import TraceChangedError, read_sources_at
from tracecite.inputs.trace import TraceScan, scan_open_trace, unreadable_trace
from tracecite.matching import MatchText
from tracecite.model import Citation, SourceRef

TRACE_CHANGED = "the trace changed or became unreadable while it was checked"

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


def check_evidence(scan: TraceScan, *,
                   tester: _QuoteTester | None = None) -> tuple[list[Finding], Counts]:
    """TC200/TC201 for an answer without claims or citations, TC202 for each quote not found,
    reading the lines that hold cited sources again, each once, in file order.

    ``tester`` keeps the verdicts (and, if it was made to, every cited source's URI); by
    default one that keeps the URIs of the sources with a quote missing.
    """
    if tester is None:
        tester = _QuoteTester(_cited(scan), keep_uris=False)
    try:
        _test_again(scan, tester)
    except (TraceChangedError, OSError):
        changed = Finding(Code.INPUT_UNREADABLE, TRACE_CHANGED, file=scan.path)
        return [*_claim_findings(scan), changed], Counts()
    return _verdicts(scan, tester)


def _test_again(scan: TraceScan, tester: _QuoteTester) -> None:
    """Hand ``tester`` every source it waits for, read again from the trace."""
    opened = open_input(scan.path)  # a regular file still, or it changed
    if isinstance(opened, Finding):
        raise TraceChangedError(opened.message)
    with opened:
        for offset in sorted({scan.sources.offset(sid) for sid in tester.wanted}):
            for source_id, (uri, content) in read_sources_at(opened, offset).items():
                tester.test(source_id, uri, content)
    if tester.wanted:  # a cited source was not on its line any more
        raise TraceChangedError("the trace changed while it was being checked")


def _verdicts(scan: TraceScan, tester: _QuoteTester) -> tuple[list[Finding], Counts]:
    """The findings and counts once ``tester`` has seen every cited source."""
    findings = _claim_findings(scan)
    if tester.missed:
        missed = [c for c in scan.citations if (c.source_id, c.quote) in tester.missed]
    else:  # the usual case, without making a Citation of each one to find out
        missed = []
    findings.extend(not_found(c, Code.QUOTE_NOT_IN_CAPTURE, "quote is not in the captured content",
                              tester.uris[c.source_id]) for c in missed)
    checked = len(scan.citations)
    return findings, Counts(checked=checked, matched=checked - len(missed),
                            not_found=len(missed))


def _cited(scan: TraceScan) -> Iterator[tuple[str, str]]:
    return ((c.source_id, c.quote) for c in scan.citations)


def not_found(citation: Citation, code: Code, message: str, uri: str | None) -> Finding:
    """A quote-not-found finding located at its citation."""
    return Finding(
        code, message,
        file=citation.file, line=citation.line, claim=citation.claim,
        citation=citation.citation, source_id=citation.source_id, uri=uri,
    )


class _QuoteTester:
    """Tests the cited quotes of each source as it is handed over: as a source sink while the
    trace streams by (the answer read ahead), or from the lines read again afterwards.

    It keeps what is needed afterwards and little else: the quotes not found, and URIs — of
    every tested source only when ``keep_uris`` (the live checks need them), else of the
    sources with a quote missing (for the findings). A source's quotes are dropped once tested.
    """

    def __init__(self, cited: Iterable[tuple[str, str | None]], *, keep_uris: bool) -> None:
        wanted: dict[str, list[str]] = defaultdict(list)
        for source_id, quote in cited:
            if quote is not None:
                wanted[source_id].append(quote)
        # Tuples, without repeats: a few quotes per source, and a tuple costs a fifth of a set.
        self.wanted = {source_id: tuple(dict.fromkeys(q)) for source_id, q in wanted.items()}
        self.keep_uris = keep_uris
        self.missed: set[tuple[str, str]] = set()
        self.uris: dict[str, str] = {}

    def __call__(self, ref: SourceRef, content: str) -> None:
        self.test(ref.id, ref.uri, content)

    def test(self, source_id: str, uri: str, content: str) -> None:
        """Test the quotes cited from this source, if it is one still waited for."""
        quotes = self.wanted.pop(source_id, None)  # each id is handed over once
        if not quotes:
            return
        text = MatchText(content)
        missed = [(source_id, q) for q in quotes if not text.contains(q)]
        if missed or self.keep_uris:
            self.uris[source_id] = uri
        self.missed.update(missed)


@dataclass(frozen=True)
class EvidenceScan:
    """A validated trace and, if it is valid, its evidence verdicts."""

    scan: TraceScan
    findings: tuple[Finding, ...]
    summary: Counts
    uris: Mapping[str, str]
    """The URI of every cited source (``keep_uris``), or of those with a quote not found."""


def scan_with_evidence(path: str, *, keep_uris: bool = True) -> EvidenceScan:
    """Validate a trace and check its evidence, in one pass over the file when its answer is
    on the last line (the usual case), else in a second pass over the cited lines.

    ``keep_uris``: whether :attr:`EvidenceScan.uris` must name every cited source (the live
    checks need that) or only those with a quote not found.
    """
    opened = open_input(path)
    if isinstance(opened, Finding):
        return EvidenceScan(unreadable_trace(path, opened), (), Counts(), {})
    with opened:
        answer = read_final_answer(path, opened)
        tester = (_QuoteTester(zip(answer.draft.source_ids, answer.draft.quotes, strict=True),
                               keep_uris=keep_uris) if answer else None)
        scan = scan_open_trace(path, opened, sink=tester, answer=answer)
    try:
        return _evidence(scan, tester, keep_uris)
    finally:
        scan.sources.close()


def _evidence(scan: TraceScan, tester: _QuoteTester | None, keep_uris: bool) -> EvidenceScan:
    if not scan.valid:
        return EvidenceScan(scan, (), Counts(), {})
    if tester is not None and scan.answer_read_ahead:
        # The answer is the one read ahead, and the trace is valid, so every cited source was
        # seen, and tested, as it streamed by.
        findings, summary = _verdicts(scan, tester)
    else:
        tester = _QuoteTester(_cited(scan), keep_uris=keep_uris)
        findings, summary = check_evidence(scan, tester=tester)
        if any(f.code is Code.INPUT_UNREADABLE for f in findings):
            return EvidenceScan(scan, tuple(findings), summary, {})  # one TC101 says it all
    return EvidenceScan(scan, tuple(findings), summary, tester.uris)
