"""One sample of an Inspect AI log (one epoch of it) as a run (docs/guides/importers.md#inspect-ai);
the rules are the package's docstring."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from tracecite.importers.eval_archive import Place
from tracecite.importers.inspect.pages import (
    argument_url,
    document_text,
    page_key,
    web_fetch,
)
from tracecite.importers.model import (
    ImportedCall,
    ImportedCitation,
    ImportedClaim,
    ImportedRun,
    ImportedSource,
    Unsupported,
)

_ATTACHMENT = "attachment://"
_ROLES = frozenset({"system", "user", "assistant", "tool"})
_CONTENT_TYPES = frozenset(
    {"text", "reasoning", "image", "audio", "video", "data", "tool_use", "document"})
_CITATION_TYPES = frozenset({"url", "document", "content"})
_UNCAPTURED_CALL = "cited-urls"
_DOCUMENTS_CALL = "documents"
_WORD = re.compile(r"[a-z][a-z_]{0,39}\Z")
_NOT_KEPT = ("save the log with the sample's documents in it (Inspect keeps them in the "
             "messages, or in the sample's attachments)")


@dataclass(frozen=True)
class _Block:
    """A content block of a message: ``text`` None for blocks that are not text."""

    path: str
    text: str | None
    citations: list[object] | None


@dataclass(frozen=True)
class _Citation:
    """A citation's shape: ``quote`` is its string ``cited_text``, None for a span or none;
    ``span`` is true for a span; ``document`` the ``internal.document_index`` it names."""

    kind: str
    url: str | None
    quote: str | None
    span: bool
    document: int | None = None


@dataclass
class _Result:
    ok: bool
    sources: list[ImportedSource]


@dataclass(frozen=True)
class _Document:
    """A document the model was given or fetched, in the order Anthropic's ``document_index``
    counts them: its source, or why the log keeps no text of it."""

    source: ImportedSource | None
    missing: str | None = None
    given: bool = False
    """Whether it is a document the model was given (a source of the ``documents`` call),
    not one it fetched (a source of its fetch)."""


class SampleReader:
    """One sample (one epoch of it) turned into a run."""

    def __init__(self, place: Place, root: str, sample: object) -> None:
        self._place = place
        self._root = root
        self._sample = object_at(sample, place, root)
        self._attachments: dict[str, object] = {}
        self._source_count = 0
        self._calls: dict[str, str] = {}  # call id -> tool
        self._arguments: dict[str, dict[str, object]] = {}
        self._results: dict[str, _Result] = {}
        self._documents: list[_Document] = []
        self._failed: dict[str, str] = {}  # page key -> why its last read failed

    def who(self) -> tuple[int | str, int]:
        """The sample's id and epoch."""
        sample, root = self._sample, self._root
        sample_id = sample.get("id")
        if isinstance(sample_id, bool) or not isinstance(sample_id, (int, str)) or (
                sample_id == ""):
            raise self._error(f"{root}.id", "a sample needs an id (a string or an integer)")
        epoch = sample.get("epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise self._error(f"{root}.epoch", "a sample needs an epoch (an integer)")
        return sample_id, epoch

    @property
    def errored(self) -> bool:
        """Whether the sample ended in an error (its ``error`` set): it has no answer."""
        return self._sample.get("error") is not None

    def run(self, run_id: str, name: str) -> ImportedRun:
        """The sample as a run of this id and file stem."""
        sample, root = self._sample, self._root
        attachments = sample.get("attachments", {})
        if not isinstance(attachments, dict):
            raise self._error(f"{root}.attachments", "expected an object")
        self._attachments = attachments
        messages = sample.get("messages", [])
        if not isinstance(messages, list):
            raise self._error(f"{root}.messages", "expected a list of messages")
        final: tuple[str, object] | None = None
        for index, value in enumerate(messages):
            path = f"{root}.messages[{index}]"
            message = object_at(value, self._place, path)
            role = message.get("role")
            if not isinstance(role, str) or role not in _ROLES:
                raise self._error(f"{path}.role", "a message's role is none of system, user, "
                                                  "assistant, tool" + _named(role))
            if role == "assistant":
                self._tool_calls(message, path)
                final = (path, message.get("content"))
            elif role == "tool":
                self._tool_result(message, path)
            self._content(message.get("content"), f"{path}.content")
        return self._made(run_id, name, final)

    def _made(self, run_id: str, name: str, final: tuple[str, object] | None) -> ImportedRun:
        sources = _Captures(self._failed)
        run_calls: list[ImportedCall] = []
        for call_id, tool in self._calls.items():
            result = self._results.get(call_id)
            if result is None:  # no tool message answers it: it read nothing
                result = _Result(ok=False, sources=[])
                url = argument_url(self._arguments.get(call_id, {}))
                if url is not None:
                    self._failed.setdefault(page_key(url), "the tool call got no result")
            for source in result.sources:
                sources.captured(source)
            run_calls.append(ImportedCall(call_id, tool, result.ok, tuple(result.sources)))
        documents = tuple(d.source for d in self._documents if d.given and d.source is not None)
        if documents:
            run_calls.append(ImportedCall(self._own_call(_DOCUMENTS_CALL), _DOCUMENTS_CALL,
                                          True, documents))
        claims, not_importable = self._claims(final, sources)
        uncited = sources.uncaptured()
        if uncited:
            run_calls.append(ImportedCall(self._own_call(_UNCAPTURED_CALL), _UNCAPTURED_CALL,
                                          True, uncited))
        return ImportedRun(run_id=run_id, name=name, calls=tuple(run_calls),
                           claims=tuple(claims), not_importable=not_importable)

    def _own_call(self, name: str) -> str:
        """A call id of the importer's own naming that no call of the sample has."""
        call_id, count = name, 1
        while call_id in self._calls:
            count += 1
            call_id = f"{name}-{count}"
        self._calls[call_id] = name
        return call_id

    def _new_call(self, call_id: str, tool: str, path: str, named: str) -> None:
        if not call_id or not tool:
            raise self._error(path, f"a tool {named} needs a non-empty id and "
                              + ("function" if named == "call" else "name"))
        if call_id in self._calls:
            raise self._error(f"{path}.id", "a second tool call of the same id")
        self._calls[call_id] = tool

    def _tool_calls(self, message: dict[str, object], path: str) -> None:
        tool_calls = message.get("tool_calls")
        if tool_calls is None:
            return
        if not isinstance(tool_calls, list):
            raise self._error(f"{path}.tool_calls", "expected a list of tool calls")
        for index, value in enumerate(tool_calls):
            call_path = f"{path}.tool_calls[{index}]"
            call = object_at(value, self._place, call_path)
            call_id = string_at(call, "id", self._place, call_path)
            self._new_call(call_id, string_at(call, "function", self._place, call_path),
                           call_path, "call")
            arguments = object_at(call.get("arguments"), self._place, f"{call_path}.arguments")
            self._arguments[call_id] = {key: self._argument(key, value, call_path)
                                        for key, value in arguments.items()}

    def _argument(self, key: str, value: object, path: str) -> object:
        """An argument's value with its attachment resolved: one of ``url`` or ``uri`` must
        be in the attachments (it is the address read); another argument's missing
        attachment is only kept as it is (it is no address)."""
        if not isinstance(value, str) or not value.startswith(_ATTACHMENT):
            return value
        if key in ("url", "uri"):
            return self._resolved(value, f"{path}.arguments.{key}")
        return self._attachments.get(value[len(_ATTACHMENT):], value)

    def _content(self, content: object, path: str) -> None:
        """The documents and the provider's own tool uses of a message's content, in order."""
        if not isinstance(content, list):
            return  # a string, or a shape _blocks refuses where it reads the content
        for index, value in enumerate(content):
            if not isinstance(value, dict):
                continue
            if value.get("type") == "tool_use":
                self._tool_use(value, f"{path}[{index}]")
            elif value.get("type") == "document":
                self._document(value, f"{path}[{index}]")

    def _document(self, block: dict[str, object], path: str) -> None:
        document = self._resolved(string_at(block, "document", self._place, path),
                                  f"{path}.document")
        mime_type = optional_string_at(block, "mime_type", self._place, path) or ""
        text = document_text(document, mime_type)
        source = None
        if text.text is not None:
            source = self._source(f"document:{len(self._documents)}", text.text)
        self._documents.append(_Document(source, text.missing, given=True))

    def _tool_use(self, block: dict[str, object], path: str) -> None:
        """A provider's own tool use (``tool_use`` content) is a call with its result: the
        results of Anthropic's web search are sources without content, its web fetch a source
        with the page's text (and a document, as the API counts them)."""
        call_id = string_at(block, "id", self._place, path)
        tool = string_at(block, "name", self._place, path)
        self._new_call(call_id, tool, path, "use")
        error = optional_string_at(block, "error", self._place, path)
        result = self._resolved(string_at(block, "result", self._place, path), f"{path}.result")
        sources: list[ImportedSource] = []
        ok = error is None
        if block.get("tool_type") == "web_search" and tool == "web_fetch":
            arguments = block.get("arguments")
            fetched = web_fetch(result, arguments if isinstance(arguments, str) else "")
            failure = fetched.error or ("web_fetch failed" if error is not None else None)
            if failure is not None:
                ok = False
                if fetched.url is not None:
                    self._failed[page_key(fetched.url)] = failure
            elif fetched.text is not None and fetched.url is not None:
                sources = [self._source(fetched.url, fetched.text,
                                        captured_at=fetched.retrieved_at)]
                self._documents.append(_Document(sources[0]))
            else:
                self._documents.append(_Document(None, fetched.missing))
        elif ok and block.get("tool_type") == "web_search":
            sources = [self._source(url, None) for url in _search_result_urls(result)]
        self._results[call_id] = _Result(ok=ok, sources=sources)

    def _tool_result(self, message: dict[str, object], path: str) -> None:
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise self._error(f"{path}.tool_call_id", "a tool message names no tool call")
        if call_id not in self._calls:
            raise self._error(f"{path}.tool_call_id",
                              "a tool message answers no earlier tool call")
        if call_id in self._results:
            raise self._error(f"{path}.tool_call_id",
                              "a second tool message for the same tool call")
        error = message.get("error")
        if error is not None and not isinstance(error, dict):
            raise self._error(f"{path}.error", "expected an object or null")
        blocks = self._blocks(message.get("content"), f"{path}.content")
        url = argument_url(self._arguments.get(call_id, {}))
        if error is not None:
            self._results[call_id] = _Result(ok=False, sources=[])
            if url is not None:
                self._failed[page_key(url)] = _tool_error(error)
            return
        sources = self._cited_sources(blocks)
        if not sources and url is not None:
            text = "\n".join(block.text for block in blocks if block.text is not None)
            sources = [self._source(url, text)]
        self._results[call_id] = _Result(ok=True, sources=sources)

    def _cited_sources(self, blocks: list[_Block]) -> list[ImportedSource]:
        """Sources from the URL citations a tool put in its own output (rule 1 of the
        package's docstring)."""
        sources = []
        for block in blocks:
            if block.text is None or not block.citations:
                continue
            for index, value in enumerate(block.citations):
                citation = self._citation(value, f"{block.path}.citations[{index}]")
                if citation.kind != "url" or not citation.url:
                    continue
                if citation.quote is not None:
                    sources.append(self._source(citation.url, citation.quote))
                elif not citation.span and len(block.citations) == 1:
                    sources.append(self._source(citation.url, block.text))
        return sources

    def _claims(self, final: tuple[str, object] | None,
                sources: _Captures) -> tuple[list[ImportedClaim], int]:
        if final is None:
            return [], 0
        path, content = final
        claims: list[ImportedClaim] = []
        not_importable = 0
        for block in self._blocks(content, f"{path}.content"):
            if block.text is None or not block.citations:
                continue
            citations = []
            for index, value in enumerate(block.citations):
                citation_path = f"{block.path}.citations[{index}]"
                citation = self._citation(value, citation_path)
                if citation.quote is None:
                    not_importable += 1
                    continue
                if not citation.quote.strip():
                    raise self._error(f"{citation_path}.cited_text", "an empty cited_text")
                if citation.kind != "url":
                    source_id = self._document_source(citation, citation_path)
                elif not citation.url:
                    raise self._error(f"{citation_path}.url", "a URL citation without a URL")
                else:
                    source_id = sources.cited(citation.url, self._source)
                citations.append(ImportedCitation(source_id, citation.quote))
            if citations:
                claims.append(ImportedClaim(block.text, tuple(citations)))
        return claims, not_importable

    def _document_source(self, citation: _Citation, path: str) -> str:
        """The source a document or content citation quotes: the document its
        ``internal.document_index`` names, counted as Anthropic counts them."""
        index = citation.document
        if index is None:
            raise self._error(path, f"a {citation.kind} citation that names no document "
                              "(expected internal.document_index, as Anthropic's citations "
                              "have): the log does not say which text it quotes")
        if not 0 <= index < len(self._documents):
            raise self._error(f"{path}.internal.document_index",
                              f"a {citation.kind} citation of document {index}, but the sample "
                              f"holds {len(self._documents)} document(s); {_NOT_KEPT}")
        document = self._documents[index]
        if document.source is None:
            raise self._error(path, f"a {citation.kind} citation quotes {document.missing}")
        return document.source.id

    def _blocks(self, content: object, path: str) -> list[_Block]:
        """A message's content (a string, or a list of content blocks) as blocks."""
        if isinstance(content, str):
            return [_Block(path, self._resolved(content, path), None)]
        if not isinstance(content, list):
            raise self._error(path, "a message's content is neither a string nor a list")
        blocks = []
        for index, value in enumerate(content):
            block_path = f"{path}[{index}]"
            block = object_at(value, self._place, block_path)
            kind = block.get("type")
            if not isinstance(kind, str) or kind not in _CONTENT_TYPES:
                raise self._error(f"{block_path}.type", _unknown("content", kind, _CONTENT_TYPES))
            if kind != "text":
                blocks.append(_Block(block_path, None, None))
                continue
            text = string_at(block, "text", self._place, block_path)
            citations = block.get("citations")
            if citations is not None and not isinstance(citations, list):
                raise self._error(f"{block_path}.citations", "expected a list or null")
            blocks.append(_Block(block_path, self._resolved(text, f"{block_path}.text"),
                                 citations))
        return blocks

    def _citation(self, value: object, path: str) -> _Citation:
        citation = object_at(value, self._place, path)
        kind = citation.get("type")
        if not isinstance(kind, str) or kind not in _CITATION_TYPES:
            raise self._error(f"{path}.type", _unknown("citation", kind, _CITATION_TYPES))
        url = None
        if kind == "url":
            url = self._resolved(string_at(citation, "url", self._place, path), f"{path}.url")
        internal = citation.get("internal")
        document = internal.get("document_index") if isinstance(internal, dict) else None
        cited = citation.get("cited_text")
        quote = None
        if isinstance(cited, str):
            quote = self._resolved(cited, f"{path}.cited_text")
            if isinstance(internal, dict) and "encrypted_index" in internal:
                quote = quote.removesuffix("...")  # Anthropic's web search cut it short
        elif cited is not None and not _is_span(cited):
            raise self._error(f"{path}.cited_text",
                              "cited_text is neither a string nor a (start, end) span")
        return _Citation(kind, url, quote, span=cited is not None and quote is None,
                         document=document if _is_index(document) else None)

    def _resolved(self, text: str, path: str) -> str:
        """``text``, or the attachment it refers to (``attachment://HASH``)."""
        if not text.startswith(_ATTACHMENT):
            return text
        value = self._attachments.get(text[len(_ATTACHMENT):])
        if not isinstance(value, str):
            raise self._error(path, "an attachment:// reference the sample's attachments "
                                    f"do not hold; {_NOT_KEPT}")
        return value

    def _source(self, uri: str, content: str | None, *, captured_at: str | None = None,
                error: str | None = None) -> ImportedSource:
        self._source_count += 1
        return ImportedSource(f"s{self._source_count}", uri, content, captured_at=captured_at,
                              error=error)

    def _error(self, path: str, what: str) -> Unsupported:
        return self._place.error(path, what)


NewSource = Callable[..., ImportedSource]


class _Captures:
    """The sources of a run by same-page key (:func:`page_key`): a citation's URL names the
    last capture of its page; else, when every read of it failed, a source without content
    with the ``error`` of its last read (the agent never read what it cites: TC204), even if a
    search found it; else the last search result of it (found, never tried: TC203); else a
    source without content and without an error."""

    def __init__(self, failed: dict[str, str]) -> None:
        self._failed = failed
        self._last: dict[str, str] = {}
        self._last_found: dict[str, str] = {}  # sources without content: found, not read
        self._uncaptured: dict[str, ImportedSource] = {}

    def captured(self, source: ImportedSource) -> None:
        found = self._last if source.content is not None else self._last_found
        found[page_key(source.uri)] = source.id

    def cited(self, url: str, new_source: NewSource) -> str:
        key = page_key(url)
        if key in self._last:
            return self._last[key]
        if key in self._last_found and key not in self._failed:
            return self._last_found[key]
        if key not in self._uncaptured:
            self._uncaptured[key] = new_source(url, None, error=self._failed.get(key))
        return self._uncaptured[key].id

    def uncaptured(self) -> tuple[ImportedSource, ...]:
        return tuple(self._uncaptured.values())


def _tool_error(error: dict[str, object]) -> str:
    """Why a tool call failed, as Inspect's ``ToolCallError`` says it."""
    kind, message = error.get("type"), error.get("message")
    kind = kind if isinstance(kind, str) and kind else "error"
    return f"{kind}: {message}" if isinstance(message, str) and message else kind


def object_at(value: object, place: Place, path: str) -> dict[str, object]:
    """``value``, which must be a JSON object (TC107 at ``path`` if not)."""
    if not isinstance(value, dict):
        raise place.error(path, "expected a JSON object" if value is not None else
                          "a required object is missing")
    return value


def string_at(obj: dict[str, object], key: str, place: Place, path: str) -> str:
    """``obj[key]``, which must be a string (TC107 if not)."""
    value = obj.get(key)
    if not isinstance(value, str):
        raise place.error(f"{path}.{key}", "a required string is missing" if value is None
                          else "expected a string")
    return value


def optional_string_at(obj: dict[str, object], key: str, place: Place, path: str) -> str | None:
    """``obj[key]``, a string or absent (TC107 for anything else)."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise place.error(f"{path}.{key}", "expected a string")
    return value


def _search_result_urls(result: str) -> list[str]:
    """The URLs of an Anthropic web search's results, as Inspect keeps them: ``result`` is the
    JSON of the list of ``web_search_result`` blocks. Any other result names none."""
    try:
        blocks = json.loads(result)
    except (ValueError, RecursionError):
        return []
    if not isinstance(blocks, list):
        return []
    return [block["url"] for block in blocks
            if isinstance(block, dict) and block.get("type") == "web_search_result"
            and isinstance(block.get("url"), str) and block["url"]]


def _is_span(value: object) -> bool:
    return (isinstance(value, list) and len(value) == 2
            and all(_is_index(i) for i in value))


def _is_index(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _unknown(what: str, kind: object, known: frozenset[str]) -> str:
    """A type tag TraceCite does not know, with the ones it does."""
    return (f"unknown {what} type{_named(kind)} (expected one of {', '.join(sorted(known))}; "
            "a type of a newer Inspect needs a newer TraceCite)")


def _named(value: object) -> str:
    """`` ('name')`` for a value that is a plain lower-case word, else nothing: a type tag is
    named to help, but never input text that could be anything."""
    if isinstance(value, str) and _WORD.match(value):
        return f" ({value!r})"
    return "" if value is not None else " (none given)"
