"""Evidence mode (docs/reference/matching.md): every quote must be in the captured content of its
source.

The trace reader (:func:`~tracecite.inputs.trace.read_trace`) does the reading: it hands this
check's quote tester each cited source, as the trace streams by when its answer is on the last
line (the usual case), else from the cited lines read again. This module only tests the quotes
and turns the verdicts into findings and counts.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from tracecite.checks.kinds import SourceKind
from tracecite.codes import Code
from tracecite.findings import Counts, Diagnosis, Finding
from tracecite.inputs.trace import TraceScan, read_trace
from tracecite.matching import MatchText, found_as_is, normalise
from tracecite.model import Citation


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


def _verdicts(scan: TraceScan, tester: _QuoteTester) -> tuple[list[Finding], Counts]:
    """The findings and counts once ``tester`` has seen every cited source. A citation of a
    source the trace did not capture is TC203 and counted ``skipped``: it was not checked; one
    of a source whose every read failed (an ``error``) is TC204 and counted ``not_found``.

    The citations with a finding are located a batch at a time (:data:`_LOCATED_AT_ONCE`), so
    a million of them never wait as objects, with their columns, beside their findings."""
    findings = _claim_findings(scan)
    missed, uncaptured = tester.missed, tester.uncaptured
    skipped = chosen = 0
    if missed or uncaptured:  # else the usual case, without making a Citation of each one
        batch: list[Citation] = []
        for c in scan.citations:
            if c.source_id in uncaptured or (c.source_id, c.quote) in missed:
                batch.append(c)
                if len(batch) == _LOCATED_AT_ONCE:
                    skipped += _add_verdicts(scan, tester, batch, findings)
                    chosen += len(batch)
                    batch = []
        skipped += _add_verdicts(scan, tester, batch, findings)
        chosen += len(batch)
    checked = len(scan.citations) - skipped
    not_matched = chosen - skipped
    return findings, Counts(checked=checked, matched=checked - not_matched,
                            not_found=not_matched, skipped=skipped)


_LOCATED_AT_ONCE = 1 << 17
"""Citations with a finding located together: each batch reads the answer's line once more."""


def _add_verdicts(scan: TraceScan, tester: _QuoteTester, chosen: list[Citation],
                  findings: list[Finding]) -> int:
    """Add the findings of the ``chosen`` citations, located; how many were not captured."""
    skipped = 0
    missed, uncaptured = tester.missed, tester.uncaptured
    for c in scan.located(chosen):
        uri = tester.uris[c.source_id]
        if c.source_id in scan.unread:  # never read: a failure, not a check left for later
            findings.append(_never_read(c, uri))
        elif c.source_id in uncaptured:
            skipped += 1
            findings.append(_not_captured(c, uri))
        else:
            findings.append(not_found(c, Code.QUOTE_NOT_IN_CAPTURE,
                                      "quote is not in the captured content", uri,
                                      missed[(c.source_id, c.quote)]))
    return skipped


def _not_captured(citation: Citation, uri: str) -> Finding:
    """TC203 for a citation of a source with ``"content": null``: a warning that names the
    command that can verify it (docs/guides/traces.md's extension)."""
    how = next((f"verify it live with tracecite {kind.command}" for kind in SourceKind
                if kind.takes(uri)),
               "no command of TraceCite can verify it (its URI is neither http(s) nor file:)")
    return Finding(
        Code.SOURCE_NOT_CAPTURED,
        f"the trace captured no content for this source (content is null), so the quote "
        f"was not checked against it; {how}",
        file=citation.file, line=citation.line, column=citation.column, claim=citation.claim,
        citation=citation.citation, source_id=citation.source_id, uri=uri,
    )


def _never_read(citation: Citation, uri: str) -> Finding:
    """TC204 for a citation of a source whose every read failed (``"content": null`` with an
    ``"error"``, docs/guides/traces.md): the agent cites what it never read. The error itself
    is not shown: it is the tool's text."""
    return Finding(
        Code.CITES_UNREAD_SOURCE,
        "the agent tried to read this source and every read failed (the source has an error "
        "and no content), so it cites what it never read",
        file=citation.file, line=citation.line, column=citation.column, claim=citation.claim,
        citation=citation.citation, source_id=citation.source_id, uri=uri,
    )


def not_found(citation: Citation, code: Code, message: str, uri: str | None,
              diagnosis: Diagnosis | None = None) -> Finding:
    """A quote-not-found finding located at its citation; ``diagnosis``
    (docs/reference/reports.md#near-misses) goes on it and its phrase at the end of the message."""
    if diagnosis is not None:
        message = _with_phrase(message, diagnosis)
    return Finding(
        code, message,
        file=citation.file, line=citation.line, column=citation.column, claim=citation.claim,
        citation=citation.citation, source_id=citation.source_id, uri=uri,
        diagnosis=diagnosis,
    )


@functools.lru_cache(maxsize=4096)
def _with_phrase(message: str, diagnosis: Diagnosis) -> str:
    """``message`` and the diagnosis' phrase: one string for each message and diagnosis,
    shared by every finding that has them (a million quotes missed have few distinct
    diagnoses, and each message would otherwise be a string of its own)."""
    from tracecite.checks.diagnosis import phrase

    return f"{message}; {phrase(diagnosis, 'in the captured content')}"


class _QuoteTester:
    """Tests the cited quotes of each source as the trace reader hands it over (a
    :class:`~tracecite.inputs.trace.QuoteTester`).

    It keeps what is needed afterwards and little else: the quotes not found with their diagnoses
    (docs/reference/reports.md#near-misses, worked out only for them, once per source), the cited
    sources whose content was not captured, and URIs — of every tested source only when
    ``keep_uris`` (the live checks need them), else of the sources with a finding. A source's quotes
    are dropped once tested.
    """

    def __init__(self, *, keep_uris: bool) -> None:
        self.keep_uris = keep_uris
        self.wanted: dict[str, tuple[str, ...]] = {}
        self.missed: dict[tuple[str, str], Diagnosis] = {}
        self.uncaptured: set[str] = set()
        self.uris: dict[str, str] = {}
        self._diagnoses: dict[Diagnosis, Diagnosis] = {}  # each distinct one, kept once

    def wait_for(self, quotes: dict[str, tuple[str, ...]]) -> None:
        """Start over, expecting these normalised quotes per source id."""
        self.wanted = quotes
        self.missed = {}
        self.uncaptured = set()
        self.uris = {}

    def test(self, source_id: str, uri: str, content: str | None) -> None:
        """Test the quotes cited from this source, if it is one still waited for; a source
        whose content was not captured (None) is noted, its quotes untested."""
        quotes = self.wanted.pop(source_id, None)  # each id is handed over once
        if not quotes:
            return
        if content is None:
            self.uncaptured.add(source_id)
            self.uris[source_id] = uri
            return
        # Most quotes are found as they are (matching.found_as_is): a MatchText is made only
        # for a source with a quote that is not, which is then looked for again through it.
        text: MatchText | None = None
        missed: list[str] = []
        find = content.find
        for quote in quotes:
            start = find(quote)
            if start != -1 and found_as_is(content, quote, start):
                continue
            if text is None:
                text = MatchText(content)
            if not text.contains(quote):
                missed.append(quote)
        if missed or self.keep_uris:
            self.uris[source_id] = uri
        if missed:
            from tracecite.checks.diagnosis import Diagnoser

            diagnoser = Diagnoser([normalise(content)])  # its folds shared by these quotes
            shared = self._diagnoses.setdefault
            self.missed.update(((source_id, q), shared(d := diagnoser.diagnose(q), d))
                               for q in missed)

    @property
    def waiting(self) -> bool:
        """Whether a cited source has not been tested yet."""
        return bool(self.wanted)


@dataclass(frozen=True)
class EvidenceScan:
    """A validated trace and, if it is valid, its evidence verdicts."""

    scan: TraceScan
    findings: tuple[Finding, ...]
    summary: Counts
    uris: Mapping[str, str]
    """The URI of every cited source (``keep_uris``), or of those with a finding."""


def scan_with_evidence(path: str, *, keep_uris: bool = True) -> EvidenceScan:
    """Validate a trace and check its evidence, in one pass over the file when its answer is
    on the last line (the usual case), else in a second pass over the cited lines.

    ``keep_uris``: whether :attr:`EvidenceScan.uris` must name every cited source (the live
    checks need that) or only those with a quote not found.
    """
    tester = _QuoteTester(keep_uris=keep_uris)
    scan = read_trace(path, tester=tester)
    if not scan.valid:
        return EvidenceScan(scan, (), Counts(), {})
    if scan.reread_error is not None:  # one TC101 says it all
        return EvidenceScan(scan, (*_claim_findings(scan), scan.reread_error), Counts(), {})
    findings, summary = _verdicts(scan, tester)
    return EvidenceScan(scan, tuple(findings), summary, tester.uris)
