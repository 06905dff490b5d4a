"""What an importer makes of one run of a vendor transcript, and the trace it is written as.

An importer reads a vendor's file and yields :class:`ImportedRun` records; :func:`trace_lines`
writes each as a trace (docs/guides/traces.md) that ``tracecite check`` accepts. Anything an
importer cannot map is :class:`Unsupported` (TC107), raised with the file, the line where known and
the JSON path of the element: nothing is guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.errors import TraceCiteError
from tracecite.findings import Finding

UNWRITABLE = re.compile("[\ud800-\udfff]")
"""Lone surrogates: JSON can spell them (``"\\ud800"``), UTF-8 cannot, so a trace holding one
cannot be written."""

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, fallback: str) -> str:
    """``text`` as a file name: each run of characters other than ASCII letters, digits,
    ``.``, ``_`` and ``-`` made one ``-``, no dot or dash at either end; ``fallback`` when
    nothing is left."""
    return _UNSAFE_NAME.sub("-", text).strip(".-") or fallback


@dataclass(frozen=True)
class ImportedSource:
    """A source the run saw: ``content`` is the text it captured, or None when the vendor gives
    none back (web search results: docs/guides/traces.md's ``content: null``)."""

    id: str
    uri: str
    content: str | None
    captured_at: str | None = None
    """When the source was read, an RFC 3339 date (docs/web-over-time.md#archived-copies), where the
    vendor says."""
    error: str | None = None
    """Why every read of it failed: a source the answer cites though the run never read it has
    ``content`` None and this (docs/guides/importers.md); ``check --evidence`` makes its citations
    TC204."""
    title: str | None = None
    """The title the vendor gives it (metadata, never its ``uri``)."""


@dataclass(frozen=True)
class ImportedCall:
    """A tool call and its result; ``ok`` False: the call failed and captured nothing. Sources
    the request itself carried (documents, search results) are the result of a call of the
    importer's own naming."""

    call_id: str
    tool: str
    ok: bool
    sources: tuple[ImportedSource, ...] = ()


@dataclass(frozen=True)
class ImportedCitation:
    """A verbatim quote of a source, as the vendor extracted it."""

    source_id: str
    quote: str


@dataclass(frozen=True)
class ImportedClaim:
    """A cited passage of the final answer."""

    text: str
    citations: tuple[ImportedCitation, ...]


@dataclass(frozen=True)
class ImportedRun:
    """One run of a transcript: ``name`` is the stem of the file it is written to (unique among the
    runs of one import, safe as a file name); ``not_importable`` counts the citations that cite a
    span of the answer rather than quote a source (docs/guides/importers.md), never turned into
    quotes."""

    run_id: str
    name: str
    calls: tuple[ImportedCall, ...]
    claims: tuple[ImportedClaim, ...]
    not_importable: int = 0
    ignored_blocks: int = 0
    """Blocks the importer does not know that nothing cites (new vendor block types): left out,
    counted in the import summary."""
    @property
    def cited(self) -> bool:
        """Whether the answer cites anything: a run that cites nothing has nothing to verify, so it
        is counted (``uncited``) and not written."""
        return any(claim.citations for claim in self.claims)


@dataclass(frozen=True)
class RefusedRun:
    """A run of a transcript that cannot be imported (TC107, or TC108 with
    ``--skip-unsupported``): ``label`` names it (``sample 3 epoch 1``, ``exchange 12``) and
    ``finding`` says what was expected and what to save instead. The other runs are written."""

    label: str
    finding: Finding


@dataclass(frozen=True)
class SkippedRun:
    """A run that is no run: a sample that ended in an error, an errored or canceled batch entry.
    ``finding`` is its TC108 warning, naming it."""

    label: str
    finding: Finding


RunOutcome = ImportedRun | RefusedRun | SkippedRun
"""What an importer yields for each run of a file, in file order."""


class Unsupported(TraceCiteError):
    """An element of a transcript that cannot be imported (TC107): ``json_path`` locates it,
    as ``$.response.content[3].citations[0]``."""

    def __init__(self, file: str, json_path: str, what: str, *, line: int | None = None) -> None:
        super().__init__(Finding(Code.IMPORT_UNSUPPORTED, f"{what} at {json_path}",
                                 file=file, line=line))
        self.json_path = json_path


def trace_lines(run: ImportedRun) -> Iterator[str]:
    """The run as trace lines (docs/guides/traces.md), each a JSON object without its newline: every
    tool call, then its result, then the one answer."""
    for call in run.calls:
        yield _line({"type": "tool_call", "run_id": run.run_id, "call_id": call.call_id,
                     "tool": call.tool})
        result: dict[str, object] = {"type": "tool_result", "run_id": run.run_id,
                                     "call_id": call.call_id, "ok": call.ok}
        if call.ok:
            result["sources"] = [_source(s) for s in call.sources]
        yield _line(result)
    yield _line({"type": "answer", "run_id": run.run_id, "claims": [
        {"text": claim.text,
         "citations": [{"source_id": c.source_id, "quote": c.quote} for c in claim.citations]}
        for claim in run.claims
    ]})


def _source(source: ImportedSource) -> dict[str, object]:
    out: dict[str, object] = {"id": source.id, "uri": source.uri, "content": source.content}
    if source.captured_at is not None:
        out["captured_at"] = source.captured_at
    if source.title is not None:
        out["title"] = source.title
    if source.error is not None:
        out["error"] = source.error
    return out


def _line(event: dict[str, object]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))
