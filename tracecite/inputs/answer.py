"""A trace's answer: its claims checked for structure, and read first when it is on the last line.

Traces end with their answer. Reading that line before the rest tells the evidence check which
quotes to test while the sources stream by, so no source's content is kept. The answer is then
decoded only this once: the validator, reaching the last line, makes sure it is still the same
bytes (a digest of the file's tail) and takes the checked answer instead of decoding it again.
Only where a claim cites a source does the answer's check need the rest of the trace; that part
waits for the validator (:meth:`AnswerDraft` keeps the source ids).
"""

from __future__ import annotations

import hashlib
import os
import sys
from array import array
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.inputs.checker import MISSING, FieldChecker, json_type_of
from tracecite.inputs.files import open_input
from tracecite.inputs.jsonl import line_text, quote_positions, visit_claims
from tracecite.inputs.long_lines import LONG_LINE, event_type
from tracecite.matching import normalise
from tracecite.model import Citations

_CHUNK = 1 << 20  # bytes read at a time when digesting the tail
_BLOCK = 1 << 16  # bytes read at a time when looking back for the last line


class AnswerDraft(FieldChecker):
    """An answer's claims, checked for structure before the answer's line is known.

    Its findings have ``line=None``; each citation keeps its claim and citation numbers, source
    id and normalised quote (``None`` if the quote field is bad) in columns, which are compact,
    until the validator resolves the source ids against the sources it has seen.
    """

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.per_claim: list[int] = []
        self.claim_numbers = array("I")
        self.citation_numbers = array("I")
        self.source_ids: list[str] = []
        self.quotes: list[str | None] = []

    def add_claims(self, claims: list[Any]) -> None:
        """Check each element of an answer's ``claims`` list."""
        for claim in claims:
            self.add_claim(claim)

    def add_claim(self, claim: Any) -> None:
        """Check the next element of the ``claims`` list."""
        c = len(self.per_claim) + 1
        if type(claim) is dict:
            # The usual case, without building a location for findings that will not happen.
            citations = claim.get("citations")
            if type(citations) is list and type(claim.get("text")) is str:
                self.per_claim.append(len(citations))
                # _add_citation's usual case inline: this runs for every citation.
                claims, numbers = self.claim_numbers, self.citation_numbers
                source_ids, quotes, intern = self.source_ids, self.quotes, sys.intern
                for n, citation in enumerate(citations, start=1):
                    if type(citation) is dict:
                        source_id, quote = citation.get("source_id"), citation.get("quote")
                        if (type(source_id) is str and type(quote) is str and quote
                                and source_id.strip() and (quote := normalise(quote))):
                            claims.append(c)
                            numbers.append(n)
                            source_ids.append(intern(source_id))
                            quotes.append(quote)
                            continue
                    self._add_citation(citation, c, n)
                return
        where = f"claims[{c}]"
        if not isinstance(claim, dict):
            self.problem(Code.TRACE_WRONG_TYPE,
                         f"{where} must be an object, not {json_type_of(claim)}", None, claim=c)
            self.per_claim.append(0)
            return
        self.field(claim, "text", str, None, where, claim=c)
        citations = self.field(claim, "citations", list, None, where, claim=c)
        if citations is MISSING:
            self.per_claim.append(0)
            return
        self.per_claim.append(len(citations))
        for n, citation in enumerate(citations, start=1):
            self._add_citation(citation, c, n)

    def _add_citation(self, citation: Any, c: int, n: int) -> None:
        if type(citation) is dict:
            # The usual case, without building a location for findings that will not happen.
            source_id, quote = citation.get("source_id"), citation.get("quote")
            if type(source_id) is str and type(quote) is str and source_id.strip() and quote:
                quote = normalise(quote)
                if quote:
                    # _keep inline. Interned: one string per id, shared with the source index.
                    self.claim_numbers.append(c)
                    self.citation_numbers.append(n)
                    self.source_ids.append(sys.intern(source_id))
                    self.quotes.append(quote)
                    return
        where = f"claims[{c}].citations[{n}]"
        if not isinstance(citation, dict):
            self.problem(Code.TRACE_WRONG_TYPE,
                         f"{where} must be an object, not {json_type_of(citation)}", None,
                         claim=c, citation=n)
            return
        source_id = self.non_empty_field(citation, "source_id", None, where, claim=c, citation=n)
        quote = self.non_empty_field(citation, "quote", None, where, claim=c, citation=n)
        if source_id is not MISSING:
            self._keep(c, n, sys.intern(source_id),
                       None if quote is MISSING else normalise(quote))

    def citations(self, file: str, line: int, keep: list[int]) -> Citations:
        """The citations at positions ``keep`` (those with a quote and a known source), placed
        on the answer's line. The columns are shared, not copied, when every one is kept."""
        if len(keep) == len(self.source_ids):
            quotes = cast(list[str], self.quotes)  # every quote is there
            return Citations(file, line, self.claim_numbers, self.citation_numbers,
                             self.source_ids, quotes)
        return Citations(
            file, line, array("I", (self.claim_numbers[k] for k in keep)),
            array("I", (self.citation_numbers[k] for k in keep)),
            [self.source_ids[k] for k in keep], [cast(str, self.quotes[k]) for k in keep],
        )

    def _keep(self, c: int, n: int, source_id: str, quote: str | None) -> None:
        self.claim_numbers.append(c)
        self.citation_numbers.append(n)
        self.source_ids.append(source_id)
        self.quotes.append(quote)


@dataclass(frozen=True)
class PreparedAnswer:
    """The answer on a trace's last line, decoded and checked ahead of the rest of the file."""

    offset: int
    """Where the line starts."""
    digest: bytes
    """Of the file from ``offset`` to its end, when it was read."""
    fields: dict[str, Any]
    """The answer event without its claims."""
    draft: AnswerDraft


def tail_digest(handle: BinaryIO, offset: int, *, head: bytes = b"") -> bytes:
    """A digest of an open file from ``offset`` to its end, read in chunks; ``head``: the bytes
    at ``offset`` already in hand, which are not read again."""
    digest = hashlib.blake2b(head, digest_size=16)
    handle.seek(offset + len(head))
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
    return digest.digest()


def read_final_answer(path: str, handle: BinaryIO) -> PreparedAnswer | None:
    """The answer on the last non-blank line of an open trace, or ``None`` if that line is not
    an answer event in plain JSON (the validator then reads the whole file the usual way).

    The line is decoded claim by claim, never built whole; the handle is left at offset 0.
    """
    try:
        return _read_final_answer(path, handle)
    finally:
        handle.seek(0)


def _read_final_answer(path: str, handle: BinaryIO) -> PreparedAnswer | None:
    try:
        start, end = _last_line_span(handle)
        # A last line too long to hold is looked at first: if it is not the answer (a tool
        # result of millions of sources), it is never read whole here.
        if end - start >= LONG_LINE and event_type(handle, start) != "answer":
            return None
        handle.seek(start)
        line = handle.read(end - start)
        # Of all that follows the line's start (blank lines too, but never kept whole).
        digest = tail_digest(handle, start, head=line)
        text = line_text(line)
        del line  # the text is all that is needed now
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    draft = AnswerDraft(path)
    try:
        event = visit_claims(text, draft.add_claim)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("type") != "answer":
        return None
    return PreparedAnswer(start, digest, event, draft)


def quote_columns(path: str, offset: int, wanted: Collection[tuple[int, int]]
                  ) -> dict[tuple[int, int], int]:
    """The column of each wanted citation's ``quote`` value in the answer line at byte
    ``offset`` of a trace, by ``(claim, citation)``: 1-based, in characters, as every column
    TraceCite reports (SARIF's ``unicodeCodePoints``), at the value's opening quotation mark.

    The line is read again, once, and walked only down to the wanted citations, so findings
    pay for their columns and a run without findings pays nothing. A citation whose column
    cannot be found (the file changed, or the line cannot be read) is left out.
    """
    if not wanted:
        return {}
    opened = open_input(path)
    if isinstance(opened, Finding):
        return {}
    try:
        with opened:
            opened.seek(offset)
            text = opened.readline().decode("utf-8")
        return {where: i + 1 for where, i in quote_positions(text, wanted).items()}
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}


def _last_line_span(handle: BinaryIO) -> tuple[int, int]:
    """Where the last non-blank line of a file starts, and where its last non-blank byte
    ends, found reading back from the file's end; ``(0, 0)`` for a blank file."""
    position = handle.seek(0, os.SEEK_END)
    end: int | None = None
    while position > 0:
        step = min(_BLOCK, position)
        position -= step
        handle.seek(position)
        data = handle.read(step)
        if end is None:
            # Blank as jsonlines sees it: only ASCII whitespace (what bytes.rstrip strips).
            data = data.rstrip()
            if not data:
                continue
            end = position + len(data)
        cut = data.rfind(b"\n")
        if cut != -1:
            return position + cut + 1, end
    return 0, end or 0
