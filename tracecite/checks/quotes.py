"""A quote to check against a live source, wherever it came from (a note or a citation)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tracecite.checks.kinds import SourceKind
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.findings import Diagnosis, Finding
from tracecite.matching import normalise
from tracecite.model import Citation, NoteRecord

_THERE = {SourceKind.WEB: "on the page", SourceKind.FILE: "in the file"}
"""Where a diagnosis phrase says a quote was looked for, by kind of source."""


@dataclass(frozen=True)
class LoadInfo:
    """How a source was loaded, for its findings: where its redirects ended (None: it was
    not redirected) and how many requests it took."""

    final_url: str | None = None
    attempts: int = 1


@dataclass(frozen=True)
class QuoteCheck:
    """A normalised quote, the source it must be in, and where to report a problem."""

    quote: str
    target: str
    file: str
    line: int
    record: int | None = None
    claim: int | None = None
    citation: int | None = None
    source_id: str | None = None
    quote_line: int | None = None
    """Where a quote that is not in its source is to be fixed, when that is not ``line``."""
    captured_at: str | None = None
    """When a trace captured the source, as 14 UTC digits (``YYYYMMDDhhmmss``): the moment
    an archived copy is looked for near (SPEC §8.7)."""
    column: int | None = None
    """Where a citation's ``quote`` value starts in its answer line, when it is known."""

    @classmethod
    def from_note(cls, record: NoteRecord) -> QuoteCheck:
        """The check a notes record asks for: a source that cannot be loaded points at its
        ``url:`` line, a quote not found at its ``quote:`` line, the line to fix (SPEC §8.3)."""
        return cls(normalise(record.quote), record.url, record.file, record.url_line,
                   record=record.index, quote_line=record.quote_line)

    @classmethod
    def from_citation(cls, citation: Citation, uri: str, captured_at: str | None = None
                      ) -> QuoteCheck:
        """The check a trace citation asks for against its source's URI (``captured_at``:
        when the trace captured the source, if it says)."""
        return cls(citation.quote, uri, citation.file, citation.line, claim=citation.claim,
                   citation=citation.citation, source_id=citation.source_id,
                   captured_at=captured_at, column=citation.column)

    def not_found(self, kind: SourceKind, info: LoadInfo | None = None, *,
                  diagnosis: Diagnosis | None = None) -> Finding:
        """The finding for a quote that is not in its source, of that kind (TC210, TC211);
        ``info`` says how the source was loaded (where its redirects ended, the attempts);
        ``diagnosis``, why the quote is not there (SPEC §8.1), also said in the message."""
        info = info or LoadInfo()
        message = f"quote is not in {kind.source_name}"
        if info.final_url is not None:
            message += f" (the URL redirected to {info.final_url})"
        if diagnosis is not None:
            from tracecite.checks.diagnosis import phrase

            message += f"; {phrase(diagnosis, _THERE[kind])}"
        finding = self._finding(kind.not_found, message, final_url=info.final_url,
                                attempts=info.attempts if info.attempts > 1 else None,
                                line=self.quote_line)
        return replace(finding, diagnosis=diagnosis) if diagnosis is not None else finding

    def unavailable(self, error: FetchError) -> Finding:
        """The finding for a source that could not be fetched or read."""
        message = error.detail
        if error.final_url is not None:
            message += f" (the URL redirected to {error.final_url})"
        return self._finding(error.code, message, status=error.status,
                             final_url=error.final_url,
                             attempts=error.attempts if error.attempts > 1 else None)

    def _finding(self, code: Code, message: str, *, status: int | None = None,
                 final_url: str | None = None, attempts: int | None = None,
                 line: int | None = None) -> Finding:
        return Finding(code, message, file=self.file, line=line or self.line, record=self.record,
                       claim=self.claim, citation=self.citation, source_id=self.source_id,
                       uri=self.target, status=status, final_url=final_url, attempts=attempts,
                       column=self.column)
