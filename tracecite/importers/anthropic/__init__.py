"""The Anthropic importer (docs/guides/importers.md#anthropic): Messages API exchanges as people
save them, one run each.

A file holds JSON (one object or a list of them) or JSONL (one per line: findings then name the
line), and each object is one of:

- an exchange ``{"request": {...}, "response": {...}}``, the request as sent and the response as
  received, or ``{"params": {...}, "message": {...}}``;
- a response alone, a ``Message`` as the SDK saves it (``model_dump_json()``, ``to_json()``):
  what it cites must be in the response (web search, web fetch); a citation of a request's
  document or search result says to save the pair;
- a Message Batches result line ``{"custom_id", "result": {"type": "succeeded", "message"}}``,
  with the request's ``params`` or without; an errored, canceled or expired entry is a
  :class:`~tracecite.importers.model.SkippedRun` (TC108), not a run;
- a raw stream event (``message_start`` … ``message_stop``): consecutive events are one
  exchange, accumulated into its message as the SDK's accumulator does (``text_delta``,
  ``citations_delta``). Its JSON paths are those of the accumulated message, at the line of its
  ``message_start``.

An exchange that cannot be imported is a :class:`~tracecite.importers.model.RefusedRun`
naming it (``exchange 3``) while the others are read; a file that holds no exchange or is no
JSON is :class:`~tracecite.importers.model.Unsupported` (TC107) as a whole. What becomes what
inside an exchange: :mod:`tracecite.importers.anthropic.exchange`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from tracecite.codes import Code
from tracecite.errors import TraceCiteError
from tracecite.findings import Finding
from tracecite.importers.anthropic.exchange import (
    IDENTIFIER,
    REQUEST_CALL,
    SAVE_PAIR,
    Exchange,
)
from tracecite.importers.model import (
    RefusedRun,
    RunOutcome,
    SkippedRun,
    Unsupported,
    safe_name,
)
from tracecite.inputs.checker import json_type_of
from tracecite.inputs.files import decode_utf8, open_input, unreadable

__all__ = ["REQUEST_CALL", "read_runs"]

STREAM_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta",
                           "content_block_stop", "message_delta", "message_stop", "ping"})
"""The events of a Messages API stream (an ``error`` event ends one)."""

EXPECTED = ("expected an exchange {request, response}, a Message (model_dump_json or to_json), "
            "a Message Batches result line {custom_id, result} or stream events; "
            f"{SAVE_PAIR}")

_CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
"""A batch entry's ``custom_id`` as the API allows it: safe to name in a message."""

Item = tuple[Callable[[], Any], str, "int | None"]
"""One JSON value of the file, decoded when called, with its JSON path and line (JSONL)."""


def read_runs(path: Path, display: str) -> Iterator[RunOutcome]:
    """The outcome of each exchange of the Anthropic transcript at ``path``, in file order;
    ``display`` names the file in findings. Raises :class:`Unsupported` (TC107) for a file that
    holds no exchange and :class:`TraceCiteError` (TC101, TC102) for one it cannot read.

    JSONL is read a line at a time (memory holds one exchange, however long the file); a JSON
    document is read whole, as it must be to be parsed."""
    opened = open_input(str(path))
    if isinstance(opened, Finding):
        raise TraceCiteError(dataclasses.replace(opened, file=display))
    stem = safe_name(path.name.rsplit(".", 1)[0], "exchange")
    with opened:
        items, listed = _exchanges(_Lines(opened, display), display)
        reader = _Reader(display, stem, listed)
        for item in items:
            yield from reader.item(*item)
        yield from reader.cut()


class _Reader:
    """The exchanges of one file, numbered as they come; a stream's events are gathered until
    its ``message_stop``."""

    def __init__(self, file: str, stem: str, listed: bool) -> None:
        self.file = file
        self.stem = stem
        self.listed = listed
        self.number = 0
        self.stream: _Stream | None = None

    def next(self) -> tuple[str, str]:
        """The next exchange's label and name."""
        self.number += 1
        name = f"{self.stem}-{self.number}" if self.listed else self.stem
        return f"exchange {self.number}", name

    def item(self, decode: Callable[[], Any], where: str, line: int | None
             ) -> Iterator[RunOutcome]:
        try:
            value = decode()
        except Unsupported as exc:
            if self.stream is not None:
                self.stream.failed = self.stream.failed or exc.finding
                return
            yield RefusedRun(self.next()[0], exc.finding)
            return
        kind = value.get("type") if isinstance(value, dict) else None
        if isinstance(kind, str) and (kind in STREAM_EVENTS or (
                self.stream is not None and kind == "error")):
            if kind == "ping" and self.stream is None:
                return
            restart = kind == "message_start" and self.stream is not None and (
                self.stream.started or self.stream.failed is not None)
            if self.stream is None or restart:
                yield from self.cut()
                self.stream = _Stream(self.file, *self.next(), line)
            if self.stream.add(value, where, line):
                yield self.stream.outcome()
                self.stream = None
            return
        yield from self.cut()
        label, name = self.next()
        try:
            yield self.one(value, where, line, label, name)
        except Unsupported as exc:
            yield RefusedRun(label, exc.finding)

    def cut(self) -> Iterator[RunOutcome]:
        """The stream being read, if any, ended before its ``message_stop``."""
        if self.stream is not None:
            stream, self.stream = self.stream, None
            yield RefusedRun(stream.label, stream.failed or Finding(
                Code.IMPORT_UNSUPPORTED, "the stream ends before its message_stop: expected "
                "every event from message_start to message_stop; save the whole stream",
                file=self.file, line=stream.line))

    def one(self, value: Any, where: str, line: int | None, label: str, name: str
            ) -> RunOutcome:
        """The outcome of one JSON object that is not a stream event."""
        exchange = Exchange(self.file, line)
        if not isinstance(value, dict):
            exchange.fail(where, f"{EXPECTED}, not {json_type_of(value)}")
        if "request" in value or "response" in value:
            request = value.get("request")
            if request is not None:
                request = exchange.object(request, f"{where}.request")
            return exchange.run(request, f"{where}.request",
                                exchange.get(value, "response", dict, where),
                                f"{where}.response", name)
        if "custom_id" in value and "result" in value:
            return self.batch(exchange, value, where, label, name)
        if "params" in value and "message" in value:
            return exchange.run(exchange.object(value["params"], f"{where}.params"),
                                f"{where}.params", value["message"], f"{where}.message", name)
        if value.get("type") in ("message", "error"):
            return exchange.run(None, where, value, where, name)
        exchange.fail(where, EXPECTED)

    def batch(self, exchange: Exchange, value: dict[str, Any], where: str, label: str,
              name: str) -> RunOutcome:
        """A Message Batches result line: its run, or a skip when it holds no message."""
        custom_id = value.get("custom_id")
        if isinstance(custom_id, str) and _CUSTOM_ID.match(custom_id):
            # Named by it, as the batch's requests were: results come in any order.
            label, name = f"{label} (custom_id {custom_id})", f"{self.stem}-{custom_id}"
        rpath = f"{where}.result"
        result = exchange.get(value, "result", dict, where)
        kind = exchange.text(result, "type", rpath)
        if kind == "succeeded":
            params = value.get("params")
            request = None if params is None else exchange.object(params, f"{where}.params")
            try:
                return exchange.run(request, f"{where}.params", result.get("message"),
                                    f"{rpath}.message", name)
            except Unsupported as exc:
                return RefusedRun(label, exc.finding)
        if kind in ("errored", "canceled", "expired"):
            error = result.get("error")
            inner = error.get("error") if isinstance(error, dict) else None
            why = inner.get("type") if isinstance(inner, dict) else None
            named = f" ({why})" if isinstance(why, str) and IDENTIFIER.match(why) else ""
            return SkippedRun(label, Finding(
                Code.IMPORT_SKIPPED, f"{label}: the batch entry {kind}{named}: it holds no "
                "message to import", file=self.file, line=exchange.line))
        exchange.unknown(kind, f"{rpath}.type", "batch result",
                         ("succeeded", "errored", "canceled", "expired"))


class _Stream:
    """A stream's events accumulated into its message, as the SDK's accumulator does."""

    def __init__(self, file: str, label: str, name: str, line: int | None) -> None:
        self.file = file
        self.label = label
        self.name = name
        self.line = line
        self.message: dict[str, Any] | None = None
        self.failed: Finding | None = None

    @property
    def started(self) -> bool:
        return self.message is not None

    def add(self, event: dict[str, Any], where: str, line: int | None) -> bool:
        """Take one event; whether it ended the stream (``message_stop``)."""
        if self.failed is not None:
            return bool(event["type"] == "message_stop")
        try:
            return self.take(Exchange(self.file, line), event, where)
        except Unsupported as exc:
            self.failed = exc.finding
            return False

    def take(self, check: Exchange, event: dict[str, Any], where: str) -> bool:
        kind = event["type"]
        if kind == "error":
            check.fail(f"{where}.type", "the stream ended in an API error: expected "
                                        "message_stop; save the stream of a request that "
                                        "succeeded")
        if kind == "message_start":
            self.line = check.line
            # Shallow copies: each event is decoded afresh and read once, and a delta replaces
            # a block's members rather than changing them in place.
            self.message = dict(check.get(event, "message", dict, where))
            self.message["content"] = list(check.get(self.message, "content", list,
                                                     f"{where}.message"))
            return False
        if self.message is None:
            if kind in ("ping",):
                return False
            check.fail(f"{where}.type", "a stream event before message_start: expected the "
                                        "stream from its message_start; save the whole stream")
        content: list[Any] = self.message["content"]
        if kind == "content_block_start":
            content.append(dict(check.get(event, "content_block", dict, where)))
        elif kind == "content_block_delta":
            number = check.index(event, "index", where)
            if number >= len(content):
                check.fail(f"{where}.index", "a delta of no block started")
            self.delta(check, check.object(content[number], f"{where}.index"),
                       check.get(event, "delta", dict, where), f"{where}.delta")
        return bool(kind == "message_stop")

    def delta(self, check: Exchange, block: dict[str, Any], delta: dict[str, Any],
              where: str) -> None:
        """Apply one ``content_block_delta`` to its block."""
        kind = check.text(delta, "type", where)
        text_block = block.get("type") == "text"
        if kind == "text_delta" and text_block:
            block["text"] = str(block.get("text") or "") + check.text(delta, "text", where)
        elif kind == "citations_delta" and text_block:
            citation = check.get(delta, "citation", dict, where)
            started = check.get(block, "citations", list, where, required=False) or []
            block["citations"] = [*started, citation]
        elif text_block and kind not in ("text_delta", "citations_delta"):
            check.unknown(kind, f"{where}.type", "text block delta",
                          ("text_delta", "citations_delta"))
        # Deltas of other blocks (tool input, thinking, compaction) hold nothing a citation
        # needs: the SDK folds them into their block, and so they are left there.

    def outcome(self) -> RunOutcome:
        if self.failed is not None:
            return RefusedRun(self.label, self.failed)
        assert self.message is not None
        exchange = Exchange(self.file, self.line)
        try:
            return exchange.run(None, "$", self.message, "$.message", self.name)
        except Unsupported as exc:
            return RefusedRun(self.label, exc.finding)


class _Lines:
    """The lines of an open file, decoded one at a time (TC102 at the first that is not UTF-8),
    numbered from 1."""

    def __init__(self, opened: BinaryIO, display: str) -> None:
        self.opened = opened
        self.display = display

    def __iter__(self) -> Iterator[tuple[int, str]]:
        number = 0
        try:
            for raw in self.opened:
                number += 1
                text = decode_utf8(raw, self.display)
                if isinstance(text, Finding):
                    raise TraceCiteError(dataclasses.replace(text, line=number))
                yield number, text.removeprefix("\ufeff") if number == 1 else text
        except OSError as exc:
            raise TraceCiteError(unreadable(self.display, exc)) from None


def _exchanges(lines: _Lines, display: str) -> tuple[Iterable[Item], bool]:
    """The JSON values of a file, each with its JSON path and line (JSONL only), and whether
    the file lists them (a list or JSONL: their runs are numbered). A file whose first line is
    a JSON object and that has more is JSONL, decoded a line at a time as the runs are read (a
    bad line is refused when it is reached); any other file is one JSON document."""
    each = iter(lines)
    head: list[str] = []  # the lines read so far, blank ones included
    first = _next_filled(each, head)
    if first is None:
        raise Unsupported(display, "$", "the file holds no exchange")
    value = _parsed(first[1])
    if isinstance(value, dict):
        second = _next_filled(each, head)
        if second is None:  # one object on one line: the document, decoded already
            return [(functools.partial(_itself, value), "$", None)], False
        rest = (item for item in each if item[1].strip())
        return itertools.chain(
            [(functools.partial(_itself, value), "$", first[0])],
            ((functools.partial(_jsonl_line, line, n, display), "$", n)
             for n, line in itertools.chain((second,), rest))), True
    head += (line for _, line in each)  # a document's lines: it is parsed whole
    return _document("".join(head), display)


def _next_filled(each: Iterator[tuple[int, str]], head: list[str]) -> tuple[int, str] | None:
    """The next line that is not blank, every line read kept in ``head``."""
    for number, line in each:
        head.append(line)
        if line.strip():
            return number, line
    return None


def _document(text: str, display: str) -> tuple[Iterable[Item], bool]:
    try:
        document = json.loads(text)
    except RecursionError:
        raise Unsupported(display, "$", "JSON nested too deeply") from None
    except ValueError as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise Unsupported(display, "$", "not valid JSON", line=line) from None
    if isinstance(document, dict):
        return [(functools.partial(_itself, document), "$", None)], False
    if isinstance(document, list):
        if not document:
            raise Unsupported(display, "$", "the file holds no exchange")
        return [(functools.partial(_itself, item), f"$[{i}]", None)
                for i, item in enumerate(document)], True
    raise Unsupported(display, "$", f"{EXPECTED}, not {json_type_of(document)}")


def _itself(value: Any) -> Any:
    return value


def _parsed(line: str) -> object:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _jsonl_line(line: str, number: int, display: str) -> Any:
    try:
        return json.loads(line)
    except RecursionError:
        raise Unsupported(display, "$", "JSON nested too deeply", line=number) from None
    except ValueError:
        raise Unsupported(display, "$", "not valid JSON", line=number) from None
