"""The records TraceCite checks, as read from notes files and traces.

These hold quotes and claims in memory for matching; nothing here is ever printed.
"""

from __future__ import annotations

from dataclasses import dataclass

NOTE_FIELDS = ("claim", "quote", "url")


@dataclass(frozen=True)
class NoteRecord:
    """One ``claim:``/``quote:``/``url:`` record of a notes file (1-based ``index`` and lines)."""

    file: str
    index: int
    line: int
    claim: str
    quote: str
    url: str
    quote_line: int
    url_line: int


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation of a trace's answer: claim and citation are 1-based indexes."""

    file: str
    line: int
    claim: int
    citation: int
    source_id: str
    quote: str


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A captured source, without its content (which stays on disk until it is needed)."""

    id: str
    uri: str
    line: int
