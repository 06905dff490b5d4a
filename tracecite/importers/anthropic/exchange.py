"""One Messages API exchange, its request (or none) and its response, read into one run
(docs/guides/importers.md#anthropic); the package's ``__init__`` finds the exchanges of a file.

Every problem is raised at once as :class:`~tracecite.importers.model.Unsupported` (TC107) with
the element's JSON path, which the reader turns into a refusal of this exchange alone. No
message repeats input text: a block's type is named only when it is a plain identifier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NoReturn

from tracecite.checks.compare import stable_uri
from tracecite.importers.model import (
    UNWRITABLE,
    ImportedCall,
    ImportedCitation,
    ImportedClaim,
    ImportedRun,
    ImportedSource,
    Unsupported,
)
from tracecite.inputs.captured import captured_at_of
from tracecite.inputs.checker import json_type_of

REQUEST_CALL = "request-documents"
"""The tool of the call whose result holds the documents and search results that the request's
own messages carry."""

IDENTIFIER = re.compile(r"[a-z_0-9]{1,40}\Z")
"""A type name that a message may repeat: anything else may be input text."""
_FILE_ID = re.compile(r"[A-Za-z0-9_-]{1,200}\Z")

SAVE_PAIR = "save {request, response}"
"""What to save instead of a response alone when what it cites is in the request."""

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
_CITATIONS = ("char_location", "content_block_location", "page_location",
              "search_result_location", "web_search_result_location")
"""The citation types of the Messages API."""
_SEPARATORS = ("", " ", "\n")
"""How the API may join a document's blocks in a multi-block ``cited_text``: concatenated, as it
documents, unless the exchange's own citations show a space or a newline (docs/guides/
importers.md#anthropic)."""


@dataclass
class _Call:
    """A tool call being put together: its result may come later in the exchange."""

    call_id: str
    tool: str
    ok: bool | None = None
    sources: list[str] = field(default_factory=list)  # ids of sources, built at the end


@dataclass
class _Source:
    """A source being put together: a document's or a search result's blocks are joined only
    once the citations have shown how the API joins them."""

    id: str
    uri: str
    blocks: list[str] | None  # None: no text in the transcript (content null)
    kind: str  # "text", "custom", "search", "file", "pdf", "web"
    title: str | None = None
    captured_at: str | None = None
    separator: str | None = None
    pdf: str | None = None  # a base64 PDF document's data, decoded once a citation needs it
    pages: tuple[str, ...] | None = None

    def imported(self) -> ImportedSource:
        content = None if self.blocks is None else (self.separator or "").join(self.blocks)
        return ImportedSource(self.id, self.uri, content, captured_at=self.captured_at,
                              title=self.title)


class Exchange:
    """One exchange read into a run: ``request`` None for a response saved alone."""

    def __init__(self, file: str, line: int | None) -> None:
        self.file = file
        self.line = line
        self.calls: dict[str, _Call] = {}
        self.sources: dict[str, _Source] = {}
        self.request_sources: list[str] = []
        self.documents: list[_Source] = []  # by document_index
        self.search_results: list[_Source] = []  # by search_result_index
        self.web_results: dict[str, str] = {}
        self.fetched: dict[str, str] = {}  # stable URI → the source of its fetched document
        self.ignored = 0
        self.web_count = 0
        self.with_request = True

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
            self.fail(path, f"wrong JSON type ({json_type_of(value)}; expected "
                            f"{_json_kind(kind)})")
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

    def unknown(self, kind: str, where: str, what: str = "block",
                known: tuple[str, ...] = ()) -> NoReturn:
        """Stop at a type not known here, saying which are (``known``) where that helps."""
        named = f"'{kind}'" if IDENTIFIER.match(kind) else ""
        expected = f": expected {_one_of(known)}" if known else ""
        self.fail(where, f"unknown {what} type {named}".rstrip() + expected)

    def ignore(self, block: dict[str, Any], where: str, kind: str) -> None:
        """A block of a kind not known here: left out and counted, unless it holds citations
        (then what it cites cannot be known)."""
        if block.get("citations"):
            named = f"'{kind}' " if IDENTIFIER.match(kind) else ""
            self.fail(f"{where}.citations", f"citations in a block of a kind TraceCite does "
                                            f"not know ({named}block); expected them in text "
                                            "blocks")
        self.ignored += 1

    # ---- the exchange ------------------------------------------------------------------

    def run(self, request: dict[str, Any] | None, qpath: str, response: Any, rpath: str,
            name: str) -> ImportedRun:
        """The run of the exchange: ``request`` at ``qpath`` (None: a response saved alone)
        and ``response`` at ``rpath``, written as ``name``."""
        response = self.object(response, rpath)
        kind = response.get("type")
        if kind is not None and kind != "message":
            self.fail(f"{rpath}.type", "the response is not a message (an API error?): "
                                       "expected the Message the API returned")
        if response.get("role", "assistant") != "assistant":
            self.fail(f"{rpath}.role", "the response is not an assistant message")
        final: list[tuple[dict[str, Any], str]] = []
        if request is None:
            self.with_request = False
        else:
            final = self.request(request, qpath)
        response_blocks = self.blocks(self.get(response, "content", list, rpath),
                                      f"{rpath}.content")
        self.message(response_blocks, assistant=True)
        final += [(b, p) for b, p, _ in response_blocks]
        claims = tuple(claim for claim in (self.claim(b, p) for b, p in final
                                           if b["type"] == "text") if claim is not None)
        run_id = response.get("id")
        if not isinstance(run_id, str) or not run_id.strip() or UNWRITABLE.search(run_id):
            run_id = name
        calls = [self.call(REQUEST_CALL, REQUEST_CALL, True, self.request_sources)
                 ] if self.request_sources else []
        calls += [self.call(c.call_id, c.tool, bool(c.ok), c.sources)
                  for c in self.calls.values()]
        return ImportedRun(run_id, name, tuple(calls), claims, ignored_blocks=self.ignored)

    def call(self, call_id: str, tool: str, ok: bool, ids: list[str]) -> ImportedCall:
        return ImportedCall(call_id, tool, ok, tuple(self.sources[i].imported() for i in ids))

    def request(self, request: dict[str, Any], where: str) -> list[tuple[dict[str, Any], str]]:
        """Take the request's messages; the blocks of its last message when that is an
        assistant turn the response continues."""
        final: list[tuple[dict[str, Any], str]] = []
        messages = self.get(self.object(request, where), "messages", list, where)
        for i, raw in enumerate(messages):
            path = f"{where}.messages[{i}]"
            message = self.object(raw, path)
            role = self.text(message, "role", path)
            if role not in ("user", "assistant", "system"):
                self.fail(f"{path}.role", "unknown role: expected user or assistant")
            content = self.get(message, "content", (list, str), path)
            if isinstance(content, str):
                final = []
                continue
            blocks = self.blocks(content, f"{path}.content")
            self.message(blocks, assistant=role == "assistant")
            final = [(b, p) for b, p, _ in blocks] if role == "assistant" else []
        return final

    def message(self, blocks: list[tuple[dict[str, Any], str, str]], *, assistant: bool) -> None:
        """Take the sources and tool calls of one message's blocks."""
        for block, where, kind in blocks:
            if kind == "text":
                self.get(block, "text", str, where)
            elif kind in _IGNORED:
                continue
            elif kind == "document" and not assistant:
                self.request_sources += self.document(block, where)
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
                self.ignore(block, where, kind)

    def result_of(self, block: dict[str, Any], where: str) -> _Call:
        """The call a result block answers, which must have had no result yet."""
        call = self.calls.get(self.text(block, "tool_use_id", where))
        if call is None:
            self.fail(f"{where}.tool_use_id", "a result for no earlier tool call: expected the "
                                              "tool_use it answers before it")
        if call.ok is not None:
            self.fail(f"{where}.tool_use_id", "a second result for one tool call")
        return call

    def add(self, source: _Source) -> str:
        self.sources[source.id] = source
        return source.id

    # ---- sources -----------------------------------------------------------------------

    def document(self, block: dict[str, Any], where: str, *, url: str | None = None,
                 captured_at: str | None = None) -> list[str]:
        """A document block, counted in ``document_index``: the id of its source, none for a
        PDF (whose pages become sources only where a page_location citation names them:
        :meth:`cited_pages`)."""
        source = self.get(block, "source", dict, where)
        spath = f"{where}.source"
        kind = self.text(source, "type", spath)
        number = len(self.documents)
        uri = url or f"document:{number}"
        blocks: list[str] | None
        pdf: str | None = None
        if kind == "text":
            blocks, shape = [self.text(source, "data", spath)], "text"
        elif kind == "content":
            inner = self.get(source, "content", (list, str), spath)
            # A plain string is one block: its citations are content_block_location.
            blocks = [inner] if isinstance(inner, str) else self.block_texts(
                inner, f"{spath}.content")
            shape = "custom"
        elif kind == "file":
            file_id = self.text(source, "file_id", spath)
            if not _FILE_ID.match(file_id):
                self.fail(f"{spath}.file_id", "expected a Files API file id")
            blocks, shape, uri = None, "file", f"anthropic-file:{file_id}"
        elif kind in ("base64", "url"):
            blocks, shape = None, "pdf"
            if kind == "url" and url is None:
                uri = self.text(source, "url", spath) or uri
            # Decoded only if cited: a PDF nothing cites never stops the exchange.
            data = source.get("data")
            pdf = (data if isinstance(data, str) else "") if kind == "base64" else None
        else:
            self.unknown(kind, f"{spath}.type", "document source",
                         ("text", "content", "file", "base64", "url"))
        title = self.get(block, "title", str, where, required=False)
        self.get(block, "context", str, where, required=False)  # metadata: never a uri
        made = _Source(f"document-{number}", uri, blocks, shape, title=title,
                       captured_at=captured_at, pdf=pdf)
        self.documents.append(made)
        self.sources[made.id] = made
        return [] if shape == "pdf" else [made.id]

    def pdf_bytes(self, document: _Source, number: int, where: str) -> bytes:
        """A cited base64 PDF document's bytes."""
        import base64
        import binascii

        try:
            return base64.b64decode(document.pdf or "", validate=True)
        except (binascii.Error, ValueError):
            self.fail(where, f"the cited PDF document (document_index {number}) is not base64")

    def cited_pages(self, document: _Source, number: int, span: tuple[int, int],
                    where: str) -> str:
        """The source of the pages a page_location citation names (``start_page_number``
        inclusive, ``end_page_number`` exclusive, 1-based): their text alone, read from the
        PDF document (docs/guides/pdf.md#for-importers); its id and uri name the pages."""
        from tracecite.pdf.reader import PdfError, pdf_pages

        if document.pdf is None:
            self.fail(where, f"a citation of a PDF document by URL (document_index {number}): "
                             "its text is not in the exchange; send the PDF as base64 or text")
        if document.pages is None:
            try:
                document.pages = pdf_pages(self.pdf_bytes(document, number, where))
            except PdfError as error:
                self.fail(where, f"the cited PDF document (document_index {number}) cannot "
                                 f"be read: {error.reason}")
        first, end = span
        if not 1 <= first < end <= len(document.pages) + 1:
            self.fail(where, f"pages {first} to {end - 1} are not in the PDF document "
                             f"(document_index {number}), which has {len(document.pages)}")
        named = f"page {first}" if end - first == 1 else f"pages {first}-{end - 1}"
        source_id = f"{document.id}-{named.replace(' ', '-')}"
        if source_id not in self.sources:
            self.add(_Source(source_id, f"{document.uri}#{named.replace(' ', '=')}",
                             ["\n".join(document.pages[first - 1:end - 1])], "text",
                             title=document.title, captured_at=document.captured_at))
            self.request_sources.append(source_id)
        return source_id

    def block_texts(self, value: Any, where: str, *, images: bool = True) -> list[str]:
        """The text of each text block (images skipped where ``images``)."""
        texts = []
        for block, path, kind in self.blocks(value, where):
            if kind == "text":
                texts.append(self.text(block, "text", path))
            elif not (images and kind == "image"):
                self.unknown(kind, f"{path}.type", known=("text",) + (("image",) if images
                                                                      else ()))
        return texts

    def search_result(self, block: dict[str, Any], where: str) -> str:
        """A search_result block as a source, counted in ``search_result_index``: its id."""
        uri = self.text(block, "source", where)
        if not uri.strip():
            self.fail(f"{where}.source", "an empty source")
        texts = self.block_texts(self.get(block, "content", list, where), f"{where}.content",
                                 images=False)
        title = self.get(block, "title", str, where, required=False)
        made = _Source(f"search-result-{len(self.search_results)}", uri, texts, "search",
                       title=title)
        self.search_results.append(made)
        return self.add(made)

    def tool_result(self, block: dict[str, Any], where: str) -> None:
        call = self.result_of(block, where)
        failed = self.get(block, "is_error", bool, where, required=False) is True
        content = block.get("content")
        sources: list[str] = []
        if content is not None and not isinstance(content, str):
            for inner, path, kind in self.blocks(content, f"{where}.content"):
                if kind == "document":
                    sources += self.document(inner, path)
                elif kind == "search_result":
                    sources.append(self.search_result(inner, path))
                elif kind == "text":
                    self.get(inner, "text", str, path)
                elif kind not in ("image", "tool_reference"):
                    self.ignore(inner, path, kind)
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
            self.unknown(kind, f"{rpath}.type", "web fetch result",
                         ("web_fetch_result", "web_fetch_tool_result_error"))
        url = self.text(result, "url", rpath)
        if not url.strip():
            self.fail(f"{rpath}.url", "an empty url")
        # docs/web-over-time.md#archived-copies
        captured_at = captured_at_of(self.get(result, "retrieved_at", str, rpath,
                                              required=False))
        document = self.get(result, "content", dict, rpath)
        call.ok = True
        for source_id in self.document(document, f"{rpath}.content", url=url,
                                       captured_at=captured_at):
            call.sources.append(source_id)
            if self.sources[source_id].blocks is not None:
                self.fetched.setdefault(stable_uri(url), source_id)

    def web_search(self, block: dict[str, Any], where: str) -> None:
        call = self.result_of(block, where)
        content = block.get("content")
        cpath = f"{where}.content"
        if isinstance(content, dict):
            kind = self.text(content, "type", cpath)
            if kind != "web_search_tool_result_error":
                self.unknown(kind, f"{cpath}.type", "web search result",
                             ("web_search_tool_result_error",))
            call.ok = False
            return
        call.ok = True
        for result, path, kind in self.blocks(self.get(block, "content", list, where), cpath):
            if kind != "web_search_result":
                self.unknown(kind, f"{path}.type", "web search result",
                             ("web_search_result",))
            url = self.text(result, "url", path)
            if not url.strip():
                self.fail(f"{path}.url", "an empty url")
            title = self.get(result, "title", str, path, required=False)
            self.web_count += 1
            source_id = self.add(_Source(f"web-search-{self.web_count}", url, None, "web",
                                         title=title))
            self.web_results.setdefault(url, source_id)
            call.sources.append(source_id)

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
            quote = self.quote(citation, path)
            cited.append(ImportedCitation(self.cited_source(citation, path, quote), quote))
        return ImportedClaim(text, tuple(cited))

    def quote(self, citation: dict[str, Any], where: str) -> str:
        quote = self.text(citation, "cited_text", where)
        quote = quote.removesuffix("...").rstrip()
        if not quote.strip():
            self.fail(f"{where}.cited_text", "an empty cited_text")
        return quote

    def cited_source(self, citation: dict[str, Any], where: str, quote: str) -> str:
        """The id of the source a citation names."""
        kind = self.text(citation, "type", where)
        if kind in ("char_location", "content_block_location", "page_location"):
            return self.cited_document(citation, where, kind, quote)
        if kind == "search_result_location":
            number = self.index(citation, "search_result_index", where)
            span = self.span(citation, where, "start_block_index", "end_block_index")
            named = self.text(citation, "source", where)
            if not self.with_request:
                self.fail(where, "a response without its request: cited search results need "
                                 f"the request; {SAVE_PAIR}")
            if number >= len(self.search_results):
                self.fail(f"{where}.search_result_index", self.missing("search result"))
            result = self.search_results[number]
            if named != result.uri:
                self.fail(f"{where}.source", "not the source of the search result it indexes")
            self.joined_by(result, span, quote)
            return result.id
        if kind == "web_search_result_location":
            url = self.text(citation, "url", where)
            # A page the exchange also fetched whole is checked against that text.
            found = self.fetched.get(stable_uri(url)) or self.web_results.get(url)
            if found is None:
                self.fail(f"{where}.url", "no web search result or fetched page has this url")
            return found
        self.unknown(kind, f"{where}.type", "citation", _CITATIONS)

    def cited_document(self, citation: dict[str, Any], where: str, kind: str,
                       quote: str) -> str:
        number = self.index(citation, "document_index", where)
        first, last = {"char_location": ("start_char_index", "end_char_index"),
                       "content_block_location": ("start_block_index", "end_block_index"),
                       "page_location": ("start_page_number", "end_page_number")}[kind]
        span = self.span(citation, where, first, last)
        if not self.with_request:
            self.fail(where, f"a response without its request: cited documents need the "
                             f"request; {SAVE_PAIR}")
        if number >= len(self.documents):
            self.fail(f"{where}.document_index", self.missing("document"))
        document = self.documents[number]
        if document.kind == "pdf":
            if kind != "page_location":
                self.fail(where, f"a {kind} citation of a PDF document: expected page_location")
            return self.cited_pages(document, number, span, where)
        if document.kind == "file":
            return document.id  # no text in the transcript: checked live or not at all
        expected = {"text": "char_location", "custom": "content_block_location"}
        if kind != expected.get(document.kind, "char_location"):
            what = {"custom": "custom-content", "text": "plain text"}.get(document.kind,
                                                                          "fetched")
            self.fail(where, f"a {kind} citation of a {what} document: expected "
                             f"{expected.get(document.kind, 'char_location')}")
        if kind == "content_block_location":
            self.joined_by(document, span, quote)
        return document.id

    def span(self, citation: dict[str, Any], where: str, first: str, last: str
             ) -> tuple[int, int]:
        return self.index(citation, first, where), self.index(citation, last, where)

    def missing(self, what: str) -> str:
        """The words for an index that names nothing, and the likely why when blocks of kinds
        not known here were left out."""
        said = f"no {what} has this index"
        if self.ignored:
            said += (f" (the exchange has {self.ignored} blocks of kinds TraceCite does not "
                     "know, left out: it may be one of them)")
        return said

    def joined_by(self, source: _Source, span: tuple[int, int], quote: str) -> None:
        """Learn the separator of ``source``'s blocks from a citation of several of them: the
        one that makes the quote their text."""
        start, end = span
        if source.separator is not None or source.blocks is None or end - start < 2:
            return
        cited = source.blocks[start:end]
        for separator in _SEPARATORS:
            if separator.join(cited).rstrip() == quote:
                source.separator = separator
                return


def _one_of(names: tuple[str, ...]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


_KINDS = {dict: "an object", list: "a list", str: "a string", int: "an integer",
          bool: "a boolean"}


def _json_kind(kind: type | tuple[type, ...]) -> str:
    """What a field of JSON type ``kind`` must be, in words."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return _one_of(tuple(_KINDS.get(k, k.__name__) for k in kinds))
