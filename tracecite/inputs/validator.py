"""The rules of a trace's events (docs/guides/traces.md), checked in order as the file streams by.

No event is kept after it is checked. What the checks need later stays: the answer's citations
(in columns), and where each source is (:class:`~tracecite.inputs.sources.SourceIndex`), so
the cited lines can be read again. An answer read ahead from the last line
(:mod:`tracecite.inputs.answer`) comes checked for structure; the validator places its findings
and looks up the sources it cites. The file itself is the reader's
(:func:`~tracecite.inputs.trace.read_trace`): it is handed in open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, BinaryIO

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.inputs.answer import AnswerDraft, PreparedAnswer, quote_columns
from tracecite.inputs.captured import CAPTURED_AT_FORMAT, wayback_timestamp
from tracecite.inputs.checker import MISSING, FieldChecker, json_type_of
from tracecite.inputs.events import Event, LineError, read_events
from tracecite.inputs.long_lines import CHANGED, LineChangedError
from tracecite.inputs.sources import IdTable, SourceIndex
from tracecite.model import Citation

SourceSink = Callable[[str, str, int, str | None], None]
"""Called with every valid source as ``(id, uri, line, content)``, in trace order: the content
None for a source whose content was not captured (``"content": null``, docs/guides/traces.md's
extension). Plain values, not a record: this runs for every source of a trace of any size.
Each call follows its source's entry in the trace's :class:`SourceIndex`, so the k-th call is
the index's k-th source (``compare`` finds a capture's line again by that number)."""


class TraceValidator(FieldChecker):
    """Checks the events of one trace in order; state that later events depend on, and what
    the reader keeps of it: findings, citations, claims' citation counts, the answer's line."""

    def __init__(self, path: str, store: SourceIndex, sink: SourceSink | None) -> None:
        super().__init__(path)
        self.store = store
        self.sink = sink
        self.run_id: str | None = None
        # The call ids, and per call whether its tool_result came (compact: a million calls).
        self.calls = IdTable()
        self.answered = bytearray()
        self.citations: Sequence[Citation] = ()
        self.per_claim: list[int] = []
        self.answer_line: int | None = None
        self.answer_offset: int | None = None
        self.answer_read_ahead = False
        self.last_line = 0
        self.offset = 0  # byte offset of the line in hand
        # source id → when it was captured (14 UTC digits), for the sources that say so.
        self.captured_at: dict[str, str] = {}
        # Sources with ``content: null`` and an ``error``: every read of them failed.
        self.unread: set[str] = set()

    def event(self, obj: dict[str, Any], line: int, draft: AnswerDraft | None = None) -> None:
        """Check one event; ``draft``: its claims, already checked (an answer read ahead)."""
        kind = obj.get("type")
        run_id = obj.get("run_id")
        # The usual case first, without a call per field: a type, and the first event's run_id
        # (not empty, or it would not be kept).
        if type(kind) is not str or run_id is None or run_id != self.run_id:
            kind = self.field(obj, "type", str, line, "")
            run_id = self.non_empty_field(obj, "run_id", line, "")
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
            self.answer(obj, line, draft)

    def tool_call(self, obj: dict[str, Any], line: int) -> None:
        """Check a ``tool_call``: its call id is new."""
        call_id, tool = obj.get("call_id"), obj.get("tool")
        if type(call_id) is str and type(tool) is str and call_id.strip() and tool.strip():
            pass  # the usual case, as the checks below would find it
        else:
            call_id = self.non_empty_field(obj, "call_id", line, "")
            self.non_empty_field(obj, "tool", line, "")
        if isinstance(call_id, str):
            if self.calls.add(call_id):
                self.answered.append(False)
            else:
                self.problem(Code.TRACE_DUPLICATE_CALL_ID, "call_id used by an earlier tool_call",
                             line)

    def tool_result(self, obj: dict[str, Any], line: int) -> None:
        """Check a ``tool_result`` and note its sources."""
        call_id, ok = obj.get("call_id"), obj.get("ok")
        if type(call_id) is str and type(ok) is bool and call_id.strip():
            pass  # the usual case, as the checks below would find it
        else:
            call_id = self.non_empty_field(obj, "call_id", line, "")
            ok = self.field(obj, "ok", bool, line, "")
        if isinstance(call_id, str):
            number = self.calls.number(call_id)
            if number < 0:
                self.problem(Code.TRACE_UNKNOWN_CALL_ID, "call_id of no earlier tool_call", line)
            elif self.answered[number]:
                self.problem(Code.TRACE_DUPLICATE_RESULT,
                             "a second tool_result for the same call", line)
            else:
                self.answered[number] = True
        if ok is False:
            sources = obj.get("sources")
            if sources is None or sources == []:
                return
            if isinstance(sources, list):
                self.problem(Code.TRACE_FAILED_RESULT_HAS_SOURCES,
                             "a result with ok:false has sources", line)
            else:
                self.problem(Code.TRACE_WRONG_TYPE,
                             f"field sources must be a list or null, not {json_type_of(sources)}",
                             line)
            return
        if ok is not True:
            return
        sources = self.field(obj, "sources", list, line, "")
        if sources is MISSING:
            return
        store, sink = self.store, self.sink
        for number, source in enumerate(sources, start=1):
            # The usual case inline: this runs for every source of a trace of any size.
            if type(source) is dict:
                source_id, uri, content = source.get("id"), source.get("uri"), source.get("content")
                if (type(source_id) is str and type(uri) is str
                        and (type(content) is str
                             or (content is None and "content" in source))  # null: uncaptured
                        and source_id.strip() and uri.strip()
                        and store.add(source_id, self.offset)):  # False: an earlier id
                    if sink is not None:
                        sink(source_id, uri, line, content)
                    if "captured_at" in source:
                        self.captured(source, source_id, line, f"sources[{number}]")
                    if "error" in source:
                        self.read_error(source, source_id, line, f"sources[{number}]")
                    continue
            self.source(source, line, f"sources[{number}]")

    def source(self, source: Any, line: int, where: str) -> None:
        """Check a source that is not the plain valid kind, reporting what is wrong."""
        if not isinstance(source, dict):
            self.problem(Code.TRACE_WRONG_TYPE,
                         f"{where} must be an object, not {json_type_of(source)}", line)
            return
        source_id = self.non_empty_field(source, "id", line, where)
        uri = self.non_empty_field(source, "uri", line, where)
        content = self.content(source, line, where)
        if source_id is MISSING:
            return
        if source_id in self.store:
            self.problem(Code.TRACE_DUPLICATE_SOURCE_ID, f"{where}.id is used by an earlier source",
                         line, source_id=source_id)
            return
        if "captured_at" in source:
            self.captured(source, source_id, line, where)
        if "error" in source:
            self.read_error(source, source_id, line, where)
        if uri is MISSING or content is MISSING:
            return
        self.store.add(source_id, self.offset)
        if self.sink is not None:
            self.sink(source_id, uri, line, content)

    def content(self, source: dict[str, Any], line: int, where: str) -> Any:
        """A source's ``content``: a string, None when it was not captured (null), or
        :data:`MISSING` after a finding (absent, or any other JSON type)."""
        value = source.get("content", MISSING)
        if value is None or type(value) is str:
            return value
        if value is MISSING:
            return self.field(source, "content", str, line, where)
        self.problem(Code.TRACE_WRONG_TYPE, f"field {where}.content must be a string or null, "
                                            f"not {json_type_of(value)}", line)
        return MISSING

    def captured(self, source: dict[str, Any], source_id: str, line: int, where: str) -> None:
        """Check a source's optional ``captured_at`` (null: not known) and keep it."""
        value = source["captured_at"]
        if value is None:
            return
        if not isinstance(value, str):
            self.problem(Code.TRACE_WRONG_TYPE, f"field {where}.captured_at must be a string, "
                                                f"not {json_type_of(value)}", line)
            return
        timestamp = wayback_timestamp(value)
        if timestamp is None:  # the value itself is not shown: it is input text
            self.problem(Code.TRACE_WRONG_TYPE,
                         f"field {where}.captured_at must be {CAPTURED_AT_FORMAT}", line)
            return
        self.captured_at[source_id] = timestamp

    def read_error(self, source: dict[str, Any], source_id: str, line: int, where: str) -> None:
        """Check a source's optional ``error`` (why every read of it failed; null: none) and
        note a source without content that has one (docs/guides/traces.md)."""
        if (self.optional_string(source, "error", line, where) is not None
                and source.get("content") is None):
            self.unread.add(source_id)

    def optional_string(self, source: dict[str, Any], key: str, line: int,
                        where: str) -> str | None:
        """A source's optional field that is a string or null (None); anything else is TC123
        and None."""
        value = source[key]
        if value is None or isinstance(value, str):
            return value
        self.problem(Code.TRACE_WRONG_TYPE, f"field {where}.{key} must be a string or null, "
                                            f"not {json_type_of(value)}", line)
        return None

    def answer(self, obj: dict[str, Any], line: int, draft: AnswerDraft | None) -> None:
        """Check the answer (``draft``: its claims, if read ahead) and keep its citations."""
        if self.answer_line is not None:
            self.problem(Code.TRACE_ANSWER_COUNT,
                         f"a second answer (the first is on line {self.answer_line})", line)
            return
        self.answer_line = line
        self.answer_offset = self.offset
        self.answer_read_ahead = draft is not None
        claims = self.field(obj, "claims", list, line, "")
        if claims is MISSING:
            return
        if draft is None:
            draft = AnswerDraft(self.path)
            draft.add_claims(claims)
        self.per_claim = draft.per_claim
        # The claims' findings, placed on this line, then each cited source looked up.
        found = [replace(f, line=line) for f in draft.findings]
        unknown = self.store.unknown(draft.source_ids)  # all at once: one call, not one each
        keep = [k for k, quote in enumerate(draft.quotes) if quote is not None]
        if unknown:
            keep = [k for k in keep if k not in unknown]
        for k in sorted(unknown):
            c, n = draft.claim_numbers[k], draft.citation_numbers[k]
            found.append(Finding(
                Code.TRACE_UNKNOWN_SOURCE_ID,
                f"claims[{c}].citations[{n}].source_id names no earlier source",
                file=self.path, line=line, claim=c, citation=n, source_id=draft.source_ids[k],
            ))
        found = self._with_columns(found)
        # In claim and citation order, as one pass over the decoded answer would find them.
        found.sort(key=lambda f: (f.claim or 0, f.citation or 0))
        self.findings.extend(found)
        self.citations = draft.citations(self.path, line, keep)

    def _with_columns(self, found: list[Finding]) -> list[Finding]:
        """The answer's findings about a source id, each with its citation's ``quote`` column
        (docs/reference/reports.md#locations), looked up in the answer line (read again, and only
        when there are any)."""
        def where(f: Finding) -> tuple[int, int]:
            return f.claim or 0, f.citation or 0

        unknown = {where(f) for f in found if f.code is Code.TRACE_UNKNOWN_SOURCE_ID}
        if not unknown or self.answer_offset is None:
            return found
        columns = quote_columns(self.path, self.answer_offset, unknown)
        return [replace(f, column=columns.get(where(f)))
                if f.code is Code.TRACE_UNKNOWN_SOURCE_ID else f for f in found]

    def finish(self) -> None:
        """After the last event: a trace without an answer is a finding."""
        unreadable = any(f.code is Code.INPUT_UNREADABLE for f in self.findings)
        if self.answer_line is None and not unreadable:  # a failed read says enough
            self.problem(Code.TRACE_ANSWER_COUNT, "the trace has no answer event",
                         max(self.last_line, 1))


def validate(path: str, handle: BinaryIO, store: SourceIndex, *, sink: SourceSink | None = None,
             answer: PreparedAnswer | None = None) -> TraceValidator:
    """Check every event of a trace open at its start, noting each valid source in ``store``.

    ``sink`` sees each valid source and its content as it goes by; ``answer``: the trace's
    last line, read ahead (:func:`~tracecite.inputs.answer.read_final_answer`), which is then
    not decoded again if it is still what the file holds.
    """
    validator = TraceValidator(path, store, sink)
    _consume(validator, read_events(handle, answer))
    validator.finish()
    return validator


def _consume(validator: TraceValidator, events: Iterable[Event]) -> None:
    for line, offset, value in events:
        validator.last_line = line
        validator.offset = offset
        if isinstance(value, dict):
            try:
                validator.event(value, line)
            except LineChangedError:  # a long line's array, read again (inputs.long_lines)
                validator.problem(Code.INPUT_UNREADABLE, CHANGED, line)
        elif isinstance(value, PreparedAnswer):
            validator.event(value.fields, line, value.draft)
        elif isinstance(value, LineError):
            validator.problem(value.code, value.message, line)
        else:
            validator.problem(Code.TRACE_NOT_OBJECT,
                              f"line is JSON {json_type_of(value)}, not an object", line)
