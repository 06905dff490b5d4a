"""The Anthropic importer (docs/guides/importers.md): Messages API exchanges, each the request as
sent and the response as received, turned into one run each.

A file holds one exchange ``{"request": {...}, "response": {...}}``, a JSON list of them, or
JSONL of them (one per line: findings then name the line). What becomes what:

- Sources. ``document`` blocks of the request (a plain text source, or a custom ``content``
  source of text blocks, joined by newlines), and the document of each ``web_fetch_tool_result``
  (``uri`` = the fetched ``url``; a request document's ``uri`` is its ``context``, else its
  ``title``, else ``document:N``). ``search_result`` blocks, in the request's messages or in a
  ``tool_result`` (``uri`` = their ``source``, content = their text blocks joined by newlines).
  The results of a ``web_search_tool_result``, with ``content: null``: only encrypted content
  comes back, so their quotes are checked live (docs/guides/traces.md).
- Tool calls. ``tool_use`` and ``server_tool_use`` blocks are tool calls; a ``tool_result`` (in the
    next user message) or a server tool's result block is the call's result. A call the transcript
    holds no result of is written with ``ok: false``: it captured nothing. The documents and search
    results of the request's own messages are the result of one call of the importer's naming,
    ``request-documents``, so every source sits in a tool result (docs/guides/traces.md).
- Claims. Every ``text`` block with citations of the final assistant message: the response's
  content, continuing the request's last message when that is an assistant turn (a prefilled or
  paused turn). Each citation's quote is its ``cited_text`` without a trailing ``...`` (web search
  quotes are cut short so) and without trailing whitespace (the API trims it). Earlier assistant
  turns are history: their sources count, their citations are not claims.
- Indexes. ``document_index`` counts every document block of the exchange in order, fetched
  documents included: those of the request (its messages in order, tool results and earlier
  fetches included), then those the response fetched, in the response's order. (The web fetch
  documentation's example cites the one document fetched as ``document_index: 0``.)
  ``search_result_index`` counts ``search_result`` blocks apart; ``web_search_result_location``
  citations name their result by ``url``.

Nothing is guessed: PDF (base64, URL or file) documents and ``page_location`` citations (no PDF
text extraction), unknown block or citation types, missing fields, fields of the wrong JSON type,
indexes out of range, text that cannot be written as UTF-8 (lone surrogates) and malformed JSON
are :class:`~tracecite.importers.model.Unsupported` (TC107) with the element's JSON path. No
message repeats input text: a block's type is named only when it is a plain identifier.
``thinking`` and ``redacted_thinking`` blocks, images and uncited text blocks are ignored.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from tracecite.errors import TraceCiteError
from tracecite.findings import Finding
from tracecite.importers.model import (
    UNWRITABLE,
    ImportedCall,
    ImportedCitation,
    ImportedClaim,
    ImportedRun,
    ImportedSource,
    RefusedRun,
    RunOutcome,
    Unsupported,
    safe_name,
)
from tracecite.inputs.captured import wayback_timestamp
from tracecite.inputs.checker import json_type_of
from tracecite.inputs.files import read_text

REQUEST_CALL = "request-documents"
"""The tool of the call whose result holds the documents and search results that the request's
own messages carry."""

_IDENTIFIER = re.compile(r"[a-z_0-9]{1,40}\Z")

_IGNORED = frozenset({"image", "thinking", "redacted_thinking", "container_upload",
                      "mid_conv_system"})
"""Blocks that are neither sources, tool calls nor claims."""
_OTHER_SERVER_RESULTS = frozenset({"code_execution_tool_result",
                                   "bash_code_execution_tool_result",
                                   "text_editor_code_execution_tool_result",
                                   "tool_search_tool_result"})
"""Results of server tools that capture no source: they only close their call."""
_PLACED = frozenset({"document", "search_result", "tool_use", "server_tool_use", "tool_result",
                     "web_fetch_tool_result", "web_search_tool_result", *_OTHER_SERVER_RESULTS})
"""Blocks that belong in messages of one role only."""


@dataclass
class _Call:
    """A tool call being put together: its result may come later in the exchange."""

    call_id: str
    tool: str
    ok: bool | None = None
    sources: list[ImportedSource] = field(default_factory=list)


@dataclass(frozen=True)
class _Document:
    """A document block, by its place in ``document_index``: its source id and whether it is
    text (``char_location`` citations) or custom content (``content_block_location``)."""

    source_id: str
    custom: bool


@dataclass(frozen=True)
class _SearchResult:
    source_id: str
    source: str


def read_runs(path: Path, display: str) -> Iterator[RunOutcome]:
    """The runs of the Anthropic transcript at ``path``, one per exchange, in file order;
    ``display`` names the file in findings. Raises :class:`Unsupported` (TC107) for anything it
    cannot import and :class:`TraceCiteError` (TC101, TC102) for a file it cannot read."""
    text = read_text(str(path))
    if isinstance(text, Finding):
        raise TraceCiteError(dataclasses.replace(text, file=display))
    stem = safe_name(path.name.rsplit(".", 1)[0], "exchange")
    exchanges, listed = _exchanges(text.removeprefix("\ufeff"), display)
    for number, (value, where, line) in enumerate(exchanges, start=1):
        name = f"{stem}-{number}" if listed else stem
        try:
            yield _Exchange(display, line).run(value(), where, name)
        except Unsupported as exc:
            yield RefusedRun(f"exchange {number}", exc.finding)


def _itself(value: Any) -> Any:
    return value


def _exchanges(text: str, display: str
               ) -> tuple[Iterable[tuple[Callable[[], Any], str, int | None]], bool]:
    """The exchanges of a file, each with its JSON path and line (JSONL only), and whether the
    file lists them (a list or JSONL: their runs are numbered). JSONL lines are decoded one at
    a time, as the runs are read: a bad line is raised when it is reached."""
    filled = _filled_lines(text)
    first = next(filled, None)
    if first is None:
        raise Unsupported(display, "$", "the file holds no exchange")
    try:
        document = json.loads(text)
    except RecursionError:
        raise Unsupported(display, "$", "JSON nested too deeply") from None
    except ValueError as exc:
        second = next(filled, None)
        if second is not None and isinstance(_parsed(first[1]), dict):
            return ((functools.partial(_jsonl_line, line, n, display), "$", n)
                    for n, line in itertools.chain((first, second), filled)), True
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise Unsupported(display, "$", "not valid JSON", line=line) from None
    if isinstance(document, dict):
        return [(lambda: document, "$", None)], False
    if isinstance(document, list):
        if not document:
            raise Unsupported(display, "$", "the file holds no exchange")
        return [(functools.partial(_itself, item), f"$[{i}]", None)
                for i, item in enumerate(document)], True
    raise Unsupported(display, "$", f"an exchange must be a JSON object or a list of them, "
                                    f"not {json_type_of(document)}")


def _filled_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines of ``text`` (split at LF) that are not blank, with their numbers from 1, one at
    a time (a list of them would hold the file twice)."""
    start, number = 0, 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        number += 1
        line = text[start:end]
        if line.strip():
            yield number, line
        start = end + 1


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


class _Exchange:
    """One exchange read into a run; every problem is raised at once as TC107."""

    def __init__(self, file: str, line: int | None) -> None:
        self.file = file
        self.line = line
        self.calls: dict[str, _Call] = {}
        self.request_sources: list[ImportedSource] = []
        self.documents: list[_Document] = []
        self.search_results: list[_SearchResult] = []
        self.web_results: dict[str, str] = {}
        self.source_count = 0

    # ---- checked access ----------------------------------------------------------------

    def fail(self, where: str, what: str) -> NoReturn:
        """Stop: the element at ``where`` cannot be imported."""
        raise Unsupported(self.file, where, what, line=self.line)

    def object(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, f"expected a JSON object, not {json_type_of(value)}")
        return value

    def get(self, obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str,
            *, required: bool = True) -> Any:
        """``obj[key]`` of JSON type ``kind`` (None when absent or null and not required)."""
        value = obj.get(key)
        path = f"{where}.{key}"
        if value is None:
            if required:
                self.fail(path, "a required field is missing")
            return None
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            self.fail(path, f"wrong JSON type ({json_type_of(value)})")
        if isinstance(value, str) and UNWRITABLE.search(value):
            self.fail(path, "a string that cannot be written as UTF-8 (a lone surrogate)")
        return value

    def text(self, obj: dict[str, Any], key: str, where: str) -> str:
        value: str = self.get(obj, key, str, where)
        return value

    def index(self, obj: dict[str, Any], key: str, where: str) -> int:
        value: int = self.get(obj, key, int, where)
        if value < 0:
            self.fail(f"{where}.{key}", "a negative index")
        return value

    def blocks(self, value: Any, where: str) -> list[tuple[dict[str, Any], str, str]]:
        """A list of content blocks, each with its path and its ``type``."""
        if not isinstance(value, list):
            self.fail(where, f"content must be a list of blocks, not {json_type_of(value)}")
        out = []
        for i, item in enumerate(value):
            path = f"{where}[{i}]"
            block = self.object(item, path)
            out.append((block, path, self.text(block, "type", path)))
        return out

    def unknown(self, kind: str, where: str, what: str = "block") -> NoReturn:
        named = f"'{kind}'" if _IDENTIFIER.match(kind) else ""
        self.fail(where, f"unknown {what} type {named}".rstrip())

    # ---- the exchange ------------------------------------------------------------------

    def run(self, value: Any, where: str, name: str) -> ImportedRun:
        """The run of the exchange ``value`` at ``where``, written as ``name``."""
        exchange = self.object(value, where)
        request = self.object(self.get(exchange, "request", dict, where), f"{where}.request")
        response = self.get(exchange, "response", dict, where)
        rpath = f"{where}.response"
        kind = response.get("type")
        if kind is not None and kind != "message":
            self.fail(f"{rpath}.type", "the response is not a message (an API error?)")
        if response.get("role", "assistant") != "assistant":
            self.fail(f"{rpath}.role", "the response is not an assistant message")
        messages = self.get(request, "messages", list, f"{where}.request")
        final: list[tuple[dict[str, Any], str]] = []
        for i, raw in enumerate(messages):
            path = f"{where}.request.messages[{i}]"
            message = self.object(raw, path)
            role = self.text(message, "role", path)
            if role not in ("user", "assistant", "system"):
                self.fail(f"{path}.role", "unknown role")
            content = message.get("content")
            if isinstance(content, str):
                if UNWRITABLE.search(content):
                    self.fail(f"{path}.content", "a string that cannot be written as UTF-8")
                final = []
                continue
            blocks = self.blocks(self.get(message, "content", (list, str), path),
                                 f"{path}.content")
            self.message(blocks, assistant=role == "assistant")
            final = [(b, p) for b, p, _ in blocks] if role == "assistant" else []
        response_blocks = self.blocks(self.get(response, "content", list, rpath),
                                      f"{rpath}.content")
        self.message(response_blocks, assistant=True)
        final += [(b, p) for b, p, _ in response_blocks]
        claims = tuple(claim for claim in (self.claim(b, p) for b, p in final
                                           if b["type"] == "text") if claim is not None)
        run_id = response.get("id")
        if not isinstance(run_id, str) or not run_id.strip() or UNWRITABLE.search(run_id):
            run_id = name
        calls = [ImportedCall(REQUEST_CALL, REQUEST_CALL, True, tuple(self.request_sources))
                 ] if self.request_sources else []
        calls += [ImportedCall(c.call_id, c.tool, bool(c.ok), tuple(c.sources))
                  for c in self.calls.values()]
        return ImportedRun(run_id, name, tuple(calls), claims)

    def message(self, blocks: list[tuple[dict[str, Any], str, str]], *, assistant: bool) -> None:
        """Take the sources and tool calls of one message's blocks."""
        for block, where, kind in blocks:
            if kind == "text":
                self.get(block, "text", str, where)
            elif kind in _IGNORED:
                continue
            elif kind == "document" and not assistant:
                self.request_sources.append(self.document(block, where))
            elif kind == "search_result" and not assistant:
                self.request_sources.append(self.search_result(block, where))
            elif kind in ("tool_use", "server_tool_use") and assistant:
                call_id = self.text(block, "id", where)
                tool = self.text(block, "name", where)
                if not call_id.strip() or not tool.strip():
                    self.fail(where, "a tool call without an id or a name")
                if call_id in self.calls or call_id == REQUEST_CALL:
                    self.fail(f"{where}.id", "a second tool call with this id")
                self.calls[call_id] = _Call(call_id, tool)
            elif kind == "tool_result" and not assistant:
                self.tool_result(block, where)
            elif kind == "web_fetch_tool_result" and assistant:
                self.web_fetch(block, where)
            elif kind == "web_search_tool_result" and assistant:
                self.web_search(block, where)
            elif kind in _OTHER_SERVER_RESULTS and assistant:
                call = self.result_of(block, where)
                content = self.object(block.get("content"), f"{where}.content")
                call.ok = not str(content.get("type", "")).endswith("_error")
            elif kind in _PLACED:
                role = "an assistant" if assistant else "a user"
                self.fail(f"{where}.type", f"a '{kind}' block in {role} message")
            else:
                self.unknown(kind, f"{where}.type")

    def result_of(self, block: dict[str, Any], where: str) -> _Call:
        """The call a result block answers, which must have had no result yet."""
        call = self.calls.get(self.text(block, "tool_use_id", where))
        if call is None:
            self.fail(f"{where}.tool_use_id", "a result for no earlier tool call")
        if call.ok is not None:
            self.fail(f"{where}.tool_use_id", "a second result for one tool call")
        return call

    def new_id(self, prefix: str) -> str:
        self.source_count += 1
        return f"{prefix}-{self.source_count}"

    # ---- sources -----------------------------------------------------------------------

    def document(self, block: dict[str, Any], where: str, *, uri: str | None = None,
                 captured_at: str | None = None) -> ImportedSource:
        """A document block as a source, counted in ``document_index``."""
        source = self.get(block, "source", dict, where)
        spath = f"{where}.source"
        kind = self.text(source, "type", spath)
        if kind == "text":
            content = self.text(source, "data", spath)
            custom = False
        elif kind == "content":
            inner = self.get(source, "content", (list, str), spath)
            if isinstance(inner, str):
                content, custom = inner, False
            else:
                content, custom = self.joined_text(inner, f"{spath}.content"), True
        elif kind in ("base64", "url", "file"):
            self.fail(spath, "PDF/base64 document: no PDF text extraction")
        else:
            self.unknown(kind, f"{spath}.type", "document source")
        number = len(self.documents)
        if uri is None:
            context = self.get(block, "context", str, where, required=False)
            title = self.get(block, "title", str, where, required=False)
            uri = next((t for t in (context, title) if t and t.strip()), f"document:{number}")
        source_id = f"document-{number}"
        self.documents.append(_Document(source_id, custom))
        return ImportedSource(source_id, uri, content, captured_at=captured_at)

    def joined_text(self, value: Any, where: str, *, images: bool = True) -> str:
        """Text blocks' text joined by newlines (images skipped where ``images``)."""
        texts = []
        for block, path, kind in self.blocks(value, where):
            if kind == "text":
                texts.append(self.text(block, "text", path))
            elif not (images and kind == "image"):
                self.unknown(kind, f"{path}.type")
        return "\n".join(texts)

    def search_result(self, block: dict[str, Any], where: str) -> ImportedSource:
        """A search_result block as a source, counted in ``search_result_index``."""
        uri = self.text(block, "source", where)
        if not uri.strip():
            self.fail(f"{where}.source", "an empty source")
        content = self.joined_text(self.get(block, "content", list, where), f"{where}.content",
                                   images=False)
        source_id = f"search-result-{len(self.search_results)}"
        self.search_results.append(_SearchResult(source_id, uri))
        return ImportedSource(source_id, uri, content)

    def tool_result(self, block: dict[str, Any], where: str) -> None:
        call = self.result_of(block, where)
        failed = self.get(block, "is_error", bool, where, required=False) is True
        content = block.get("content")
        sources: list[ImportedSource] = []
        if content is not None and not isinstance(content, str):
            for inner, path, kind in self.blocks(content, f"{where}.content"):
                if kind == "document":
                    sources.append(self.document(inner, path))
                elif kind == "search_result":
                    sources.append(self.search_result(inner, path))
                elif kind == "text":
                    self.get(inner, "text", str, path)
                elif kind not in ("image", "tool_reference"):
                    self.unknown(kind, f"{path}.type")
        if failed and sources:
            self.fail(where, "an error result that carries sources")
        call.ok, call.sources = not failed, sources

    def web_fetch(self, block: dict[str, Any], where: str) -> None:
        call = self.result_of(block, where)
        result = self.get(block, "content", dict, where)
        rpath = f"{where}.content"
        kind = self.text(result, "type", rpath)
        if kind == "web_fetch_tool_result_error":
            call.ok = False
            return
        if kind != "web_fetch_result":
            self.unknown(kind, f"{rpath}.type", "web fetch result")
        url = self.text(result, "url", rpath)
        if not url.strip():
            self.fail(f"{rpath}.url", "an empty url")
        retrieved = self.get(result, "retrieved_at", str, rpath, required=False)
        # Kept only as the RFC 3339 date a trace's captured_at must be
        # (docs/web-over-time.md#archived-copies).
        captured_at = retrieved if retrieved and wayback_timestamp(retrieved) else None
        document = self.get(result, "content", dict, rpath)
        call.ok = True
        call.sources.append(self.document(document, f"{rpath}.content", uri=url,
                                          captured_at=captured_at))

    def web_search(self, block: dict[str, Any], where: str) -> None:
        call = self.result_of(block, where)
        content = block.get("content")
        cpath = f"{where}.content"
        if isinstance(content, dict):
            kind = self.text(content, "type", cpath)
            if kind != "web_search_tool_result_error":
                self.unknown(kind, f"{cpath}.type", "web search result")
            call.ok = False
            return
        call.ok = True
        for result, path, kind in self.blocks(self.get(block, "content", list, where), cpath):
            if kind != "web_search_result":
                self.unknown(kind, f"{path}.type", "web search result")
            url = self.text(result, "url", path)
            if not url.strip():
                self.fail(f"{path}.url", "an empty url")
            source_id = self.new_id("web-search")
            self.web_results.setdefault(url, source_id)
            call.sources.append(ImportedSource(source_id, url, None))

    # ---- claims ------------------------------------------------------------------------

    def claim(self, block: dict[str, Any], where: str) -> ImportedClaim | None:
        """A cited text block of the final assistant message as a claim (None: uncited)."""
        text = self.text(block, "text", where)
        citations = self.get(block, "citations", list, where, required=False)
        if not citations:
            return None
        cited = []
        for i, raw in enumerate(citations):
            path = f"{where}.citations[{i}]"
            citation = self.object(raw, path)
            cited.append(ImportedCitation(self.cited_source(citation, path),
                                          self.quote(citation, path)))
        return ImportedClaim(text, tuple(cited))

    def quote(self, citation: dict[str, Any], where: str) -> str:
        quote = self.text(citation, "cited_text", where)
        quote = quote.removesuffix("...").rstrip()
        if not quote.strip():
            self.fail(f"{where}.cited_text", "an empty cited_text")
        return quote

    def cited_source(self, citation: dict[str, Any], where: str) -> str:
        """The id of the source a citation names."""
        kind = self.text(citation, "type", where)
        if kind in ("char_location", "content_block_location"):
            number = self.index(citation, "document_index", where)
            first, last = (("start_char_index", "end_char_index") if kind == "char_location"
                           else ("start_block_index", "end_block_index"))
            self.index(citation, first, where)
            self.index(citation, last, where)
            if number >= len(self.documents):
                self.fail(f"{where}.document_index", "no document has this index")
            document = self.documents[number]
            if document.custom != (kind == "content_block_location"):
                what = "custom-content" if document.custom else "plain text"
                self.fail(where, f"a {kind} citation of a {what} document")
            return document.source_id
        if kind == "search_result_location":
            number = self.index(citation, "search_result_index", where)
            self.index(citation, "start_block_index", where)
            self.index(citation, "end_block_index", where)
            named = self.text(citation, "source", where)
            if number >= len(self.search_results):
                self.fail(f"{where}.search_result_index", "no search result has this index")
            result = self.search_results[number]
            if named != result.source:
                self.fail(f"{where}.source", "not the source of the search result it indexes")
            return result.source_id
        if kind == "web_search_result_location":
            found = self.web_results.get(self.text(citation, "url", where))
            if found is None:
                self.fail(f"{where}.url", "no web search result has this url")
            return found
        if kind == "page_location":
            self.fail(where, "page_location citation of a PDF: no PDF text extraction")
        self.unknown(kind, f"{where}.type", "citation")
