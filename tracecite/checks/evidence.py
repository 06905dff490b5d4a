"""Evidence mode (SPEC §2): every quote must be in the captured content of its source."""

from __future__ import annotations

from collections import defaultdict

from tracecite.codes import Code
from tracecite.findings import Finding, Summary
from tracecite.inputs.trace import TraceScan
from tracecite.matching import MatchText
from tracecite.model import Citation


def check_evidence(scan: TraceScan) -> tuple[list[Finding], Summary]:
    """TC200/TC201 for an answer without claims or citations, TC202 for each quote not found."""
    findings: list[Finding] = []
    line = scan.answer_line
    if line is not None and not scan.citations_per_claim:
        findings.append(Finding(Code.EVIDENCE_NO_CLAIMS, "the answer has no claims",
                                file=scan.path, line=line))
    for claim, count in enumerate(scan.citations_per_claim, start=1):
        if count == 0:
            findings.append(Finding(Code.EVIDENCE_UNCITED_CLAIM, f"claim {claim} has no citations",
                                    file=scan.path, line=line, claim=claim))
    by_source: dict[str, list[Citation]] = defaultdict(list)
    for citation in scan.citations:
        by_source[citation.source_id].append(citation)
    matched = 0
    # Read each cited source once, in spool order, and test all of its quotes against it.
    for source_id in scan.sources.in_spool_order(set(by_source)):
        text = MatchText(scan.sources.content(source_id))
        uri = scan.sources.ref(source_id).uri
        for citation in by_source[source_id]:
            if text.contains(citation.quote):
                matched += 1
            else:
                findings.append(not_found(citation, Code.QUOTE_NOT_IN_CAPTURE,
                                          "quote is not in the captured content", uri))
    checked = len(scan.citations)
    summary = Summary(checked=checked, matched=matched,
                      mismatched=checked - matched)
    return findings, summary


def not_found(citation: Citation, code: Code, message: str, uri: str | None) -> Finding:
    """A quote-not-found finding located at its citation."""
    return Finding(
        code, message,
        file=citation.file, line=citation.line, claim=citation.claim,
        citation=citation.citation, source_id=citation.source_id, uri=uri,
    )
