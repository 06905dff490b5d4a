"""The run plan: which inputs a run reads as notes and traces, whether their quotes are checked
against their captures, and which live checks follow (docs/reference/commands.md). Every command
and every hook stage is one :class:`Plan`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tracecite.checks.kinds import SourceKind


@dataclass(frozen=True)
class Plan:
    """What one run does with its inputs."""

    command: str
    evidence: bool = False
    """Check every quote against its source's captured content."""
    live: tuple[SourceKind, ...] = ()
    """The sources checked as they are now, in this order: web pages (notes URLs and traces'
    http(s) sources) and traces' ``file:`` sources."""
    list_documents: bool = False
    """Say in the report's notices which citations each document holds (``check``)."""
    trace_files: bool = True
    """Whether the check of ``file:`` sources reads traces' too (the hook's reads only its
    documents' local sources unless ``verify_files`` asks, docs/hook.md)."""
    stage: str | None = None
    """The hook stage this plan is (None: a command of its own)."""
    changed_lines: Mapping[str, Sequence[tuple[int, int]]] | None = None
    """Live checks of notes only for the records with a field line in these ranges (first, last),
    by notes path, and of documents only for the citations with a line there; a file not in it
    is checked whole. The records left out are counted ``unchanged``
    (docs/hook.md#checking-only-what-changed: a pull request checks what it changes)."""

