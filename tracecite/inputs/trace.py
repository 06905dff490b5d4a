"""Agent traces (SPEC §1.2): one JSON event per line, validated while streaming.

The file is read once, line by line; no event is kept after it is checked. What the checks need
later stays: the answer's citations (small), and where each source is (:class:`SourceIndex`),
so the evidence check can read just the cited ones again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.inputs.events import Event, LineError, read_events
from tracecite.inputs.files import open_input
from tracecite.inputs.sources import SourceIndex
from tracecite.matching import normalise
from tracecite.model import Citation, SourceRef

SourceSink = Callable[[SourceRef, str], None]
"""Called with every valid source and its captured content, in trace order."""


@dataclass(frozen=True)
class TraceScan:
    """A validated trace: format findings, the answer's citations, and the sources seen."""

    path: str
    findings: tuple[Finding, ...]
    citations: tuple[Citation, ...]
    citations_per_claim: tuple[int, ...]
    answer_line: int | None
    sources: SourceIndex

    @property
    def valid(self) -> bool:
        """Whether the trace had no format findings."""
        return not self.findings


_MISSING = object()


class _Scanner:
    """Checks the events of one trace in order; state that later events depend on."""

    def __init__(self, path: str, store: SourceIndex, sink: SourceSink | None) -> None:
        self.path = path
        self.store = store
        self.sink = sink
        self.findings: list[Finding] = []
        self.run_id: str | None = None
        self.calls: set[str] = set()
        self.results: set[str] = set()
        self.citations: list[Citation] = []
        self.per_claim: list[int] = []
        self.answer_line: int | None = None
        self.last_line = 0
        self.offset = 0  # byte offset of the line in hand

    def problem(self, code: Code, message: str, line: int, **where: Any) -> None:
        self.findings.append(Finding(code, message, file=self.path, line=line, **where))

    def field(
        self, obj: dict[str, Any], name: str, kind: type | tuple[type, ...], line: int,
        where: str, *, required: bool = True, non_empty: bool = False, **loc: Any,
    ) -> Any:
        """The value of a field of the right JSON type, or _MISSING after a finding."""
        value: Any = obj.get(name, _MISSING)
        # The common case, first and cheap: this runs for every field of every event.
        if type(value) is kind and not (non_empty and not cast(str, value).strip()):
            return value
        label = f"{where}.{name}" if where else name
        if value is _MISSING:
            if required:
                self.problem(Code.TRACE_MISSING_FIELD, f"field {label} is missing", line, **loc)
            return _MISSING
        # bool is a subclass of int in Python; JSON keeps them apart.
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
            self.problem(
                Code.TRACE_WRONG_TYPE,
                f"field {label} must be {_json_type_name(kind)}, not {_json_type_of(value)}",
                line, **loc,
            )
            return _MISSING
        if non_empty and isinstance(value, str) and not value.strip():
            self.problem(Code.TRACE_WRONG_TYPE, f"field {label} must not be empty", line, **loc)
            return _MISSING
        return value

    def event(self, obj: dict[str, Any], line: int) -> None:
        kind = self.field(obj, "type", str, line, "")
        run_id = self.field(obj, "run_id", str, line, "", non_empty=True)
        if isinstance(run_id, str):
            if self.run_id is None:
                self.run_id = run_id
            elif run_id != self.run_id:
                self.problem(
                    Code.TRACE_RUN_ID_MISMATCH, "run_id differs from the first event's", line
                )
        if kind == "tool_call":
            self.tool_call(obj, line)
        elif kind == "tool_result":
            self.tool_result(obj, line)
        elif kind == "answer":
            self.answer(obj, line)

    def tool_call(self, obj: dict[str, Any], line: int) -> None:
        call_id = self.field(obj, "call_id", str, line, "", non_empty=True)
        self.field(obj, "tool", str, line, "", non_empty=True)
        if isinstance(call_id, str):
            if call_id in self.calls:
                self.problem(Code.TRACE_DUPLICATE_CALL_ID, "call_id used by an earlier tool_call",
                             line)
            self.calls.add(call_id)

    def tool_result(self, obj: dict[str, Any], line: int) -> None:
        call_id = self.field(obj, "call_id", str, line, "", non_empty=True)
        ok = self.field(obj, "ok", bool, line, "")
        if isinstance(call_id, str):
            if call_id not in self.calls:
                self.problem(Code.TRACE_UNKNOWN_CALL_ID, "call_id of no earlier tool_call", line)
            elif call_id in self.results:
                self.problem(Code.TRACE_DUPLICATE_RESULT,
                             "a second tool_result for the same call", line)
            self.results.add(call_id)
        if ok is False:
            sources = obj.get("sources")
            if sources is None or sources == []:
                return
            if isinstance(sources, list):
                self.problem(Code.TRACE_FAILED_RESULT_HAS_SOURCES,
                             "a result with ok:false has sources", line)
            else:
                self.problem(Code.TRACE_WRONG_TYPE,
                             f"field sources must be a list or null, not {_json_type_of(sources)}",
                             line)
            return
        if ok is not True:
            return
        sources = self.field(obj, "sources", list, line, "")
        if sources is _MISSING:
            return
        for number, source in enumerate(sources, start=1):
            self.source(source, line, f"sources[{number}]")

    def source(self, source: Any, line: int, where: str) -> None:
        if not isinstance(source, dict):
            self.problem(Code.TRACE_WRONG_TYPE,
                         f"{where} must be an object, not {_json_type_of(source)}", line)
            return
        source_id = self.field(source, "id", str, line, where, non_empty=True)
        uri = self.field(source, "uri", str, line, where, non_empty=True)
        content = self.field(source, "content", str, line, where)
        if source_id is _MISSING:
            return
        if source_id in self.store:
            self.problem(Code.TRACE_DUPLICATE_SOURCE_ID, f"{where}.id is used by an earlier source",
                         line, source_id=source_id)
            return
        if uri is _MISSING or content is _MISSING:
            return
        self.store.add(source_id, line, self.offset)
        if self.sink is not None:
            self.sink(SourceRef(source_id, uri, line), content)

    def answer(self, obj: dict[str, Any], line: int) -> None:
        if self.answer_line is not None:
            self.problem(Code.TRACE_ANSWER_COUNT,
                         f"a second answer (the first is on line {self.answer_line})", line)
            return
        self.answer_line = line
        claims = self.field(obj, "claims", list, line, "")
        if claims is _MISSING:
            return
        for c, claim in enumerate(claims, start=1):
            where = f"claims[{c}]"
            if not isinstance(claim, dict):
                self.problem(Code.TRACE_WRONG_TYPE,
                             f"{where} must be an object, not {_json_type_of(claim)}", line,
                             claim=c)
                self.per_claim.append(0)
                continue
            self.field(claim, "text", str, line, where, claim=c)
            citations = self.field(claim, "citations", list, line, where, claim=c)
            if citations is _MISSING:
                self.per_claim.append(0)
                continue
            self.per_claim.append(len(citations))
            for n, citation in enumerate(citations, start=1):
                self.citation(citation, line, c, n)

    def citation(self, citation: Any, line: int, c: int, n: int) -> None:
        where = f"claims[{c}].citations[{n}]"
        loc: dict[str, Any] = {"claim": c, "citation": n}
        if not isinstance(citation, dict):
            self.problem(Code.TRACE_WRONG_TYPE,
                         f"{where} must be an object, not {_json_type_of(citation)}", line, **loc)
            return
        source_id = self.field(citation, "source_id", str, line, where, non_empty=True, **loc)
        quote = self.field(citation, "quote", str, line, where, non_empty=True, **loc)
        if source_id is _MISSING:
            return
        if source_id not in self.store:
            self.problem(Code.TRACE_UNKNOWN_SOURCE_ID, f"{where}.source_id names no earlier source",
                         line, source_id=source_id, **loc)
            return
        if quote is not _MISSING:
            # Interned, so the evidence forecast and these citations share one copy of each.
            self.citations.append(Citation(self.path, line, c, n, sys.intern(source_id),
                                           sys.intern(normalise(quote))))

    def finish(self) -> None:
        unreadable = any(f.code is Code.INPUT_UNREADABLE for f in self.findings)
        if self.answer_line is None and not unreadable:  # a failed read says enough
            self.problem(Code.TRACE_ANSWER_COUNT, "the trace has no answer event",
                         max(self.last_line, 1))


def scan_trace(path: str, *, sink: SourceSink | None = None) -> TraceScan:
    """Validate a trace file while streaming it; see :class:`TraceScan`.

    ``sink`` sees each valid source and its content as it goes by (the evidence forecast tests
    quotes with it, ``compare`` hashes contents).
    """
    store = SourceIndex(path)
    scanner = _Scanner(path, store, sink)
    opened = open_input(path)
    if isinstance(opened, Finding):
        return TraceScan(path, (opened,), (), (), None, store)
    with opened:
        _consume(scanner, read_events(opened))
    scanner.finish()
    return TraceScan(
        path=path,
        findings=tuple(scanner.findings),
        citations=tuple(scanner.citations),
        citations_per_claim=tuple(scanner.per_claim),
        answer_line=scanner.answer_line,
        sources=store,
    )


def _consume(scanner: _Scanner, events: Iterable[Event]) -> None:
    for line, offset, value in events:
        scanner.last_line = line
        scanner.offset = offset
        if isinstance(value, dict):
            scanner.event(value, line)
        elif isinstance(value, LineError):
            scanner.problem(value.code, value.message, line)
        else:
            scanner.problem(Code.TRACE_NOT_OBJECT,
                            f"line is JSON {_json_type_of(value)}, not an object", line)


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


_JSON_NAMES: dict[type, str] = {
    str: "a string", bool: "a boolean", list: "a list", dict: "an object",
    int: "a number", float: "a number", type(None): "null",
}


def _json_type_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(dict.fromkeys(_JSON_NAMES[k] for k in _as_tuple(kind)))


def _json_type_of(value: Any) -> str:
    for kind in (bool, str, list, dict, int, float, type(None)):
        if isinstance(value, kind):
            return _JSON_NAMES[kind]
    return type(value).__name__
