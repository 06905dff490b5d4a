"""Inspect AI eval logs (docs/guides/importers.md ``inspect``): one run per sample and epoch.

A log is a ``.eval`` archive (a zip of ``header.json``, or ``_journal/start.json`` while the
eval runs, and one ``samples/{id}_epoch_{n}.json`` per sample) or a ``.json`` log (the whole
``EvalLog``, its ``samples`` included). Archive members are read one at a time. Members
compressed with zstd, which current Inspect writes and Python's ``zipfile`` reads only from
3.14, are decompressed with the ``zstandard`` package of the ``tracecite[inspect]`` extra.

What a sample becomes:

- Each of an assistant message's ``tool_calls`` is a tool call (``id``, ``function``); the tool
  message whose ``tool_call_id`` names it is its result, failed (``ok`` false, no sources)
  when the message has an ``error``. A call that no tool message answers captured nothing and
  is a failed result too. The provider's own tool uses (``tool_use`` content of an assistant
  message, such as Anthropic's web search) are calls too, failed when they have an ``error``.
- The sources of a result. A tool message carries no URI of its own, so the URI is taken from
  what the tool itself recorded, in this order, and nothing else is tried:

  1. the URL citations inside the tool message's text blocks (Inspect's ``web_search`` marks
     each result so): one with a string ``cited_text`` is a source of that URL whose content
     is that text (the search result's own words); one without ``cited_text`` that is the only
     citation of its block is a source of that URL whose content is the block's text (the
     page, as the Google provider of ``web_search`` gives it);
  2. otherwise a ``url`` (else ``uri``) argument of the call holding a non-empty string: the
     result is one source of that URI whose content is the tool message's text (its string
     content, or its text blocks joined by newlines, as Inspect's ``ChatMessage.text``).

  A result with neither has no source: its output is kept out of every check rather than
  given an address it may not have. (A citation of the answer cannot say which result it
  read: it has no call id. Choosing the result that happens to contain its quote would make
  the evidence check pass by construction.) The results of a provider's web search
  (Anthropic's, whose JSON lists ``web_search_result`` blocks) are sources of their URLs
  with ``content: null``: the provider returns no page text.
- The final assistant message's text blocks with citations are the claims. A citation whose
    ``cited_text`` is a string is a quote; a ``UrlCitation`` names its source by ``url``, as the
    same stable URI (docs/reference/commands.md): the last capture with text, else the last search
    result
  without, else a source with ``content: null`` of a call named ``cited-urls``. Quotes of a
  source without content are checked live (TC203 in evidence mode). A ``cited_text`` cut
  short by Anthropic's web search (a trailing ``...``) is imported without it. A
  ``DocumentCitation`` or ``ContentCitation`` with a string ``cited_text`` is TC107: the log
  keeps no text of the document it quotes. A citation whose ``cited_text`` is a span of the
  answer (OpenAI, Google) or absent quotes nothing: it is counted in ``not_importable``, never
  a quote; a block left with no quote is not a claim.

``attachment://`` references in the text read are resolved from the sample's
``attachments``. Any shape outside these, or an archive that is truncated or corrupt, is
TC107 with the JSON path of the element (after the member's name for an archive).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from tracecite.checks.compare import stable_uri
from tracecite.errors import TraceCiteError
from tracecite.findings import Finding
from tracecite.importers.eval_archive import CORRUPT, ZIP_MAGIC, Place, member_bytes
from tracecite.importers.model import (
    ImportedCall,
    ImportedCitation,
    ImportedClaim,
    ImportedRun,
    ImportedSource,
    Unsupported,
)
from tracecite.inputs.files import decode_utf8, open_input, unreadable
from tracecite.settings import MAX_MEMBER_BYTES

_HEADER = "header.json"
_START = "_journal/start.json"  # the header of a log still being written
_SAMPLES = "samples/"
_ATTACHMENT = "attachment://"
_ROLES = frozenset({"system", "user", "assistant", "tool"})
_CONTENT_TYPES = frozenset(
    {"text", "reasoning", "image", "audio", "video", "data", "tool_use", "document"})
_CITATION_TYPES = frozenset({"url", "document", "content"})
_URL_ARGUMENTS = ("url", "uri")
_UNCAPTURED_CALL = "cited-urls"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}\Z")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_WORD = re.compile(r"[a-z][a-z_]{0,39}\Z")

def read_runs(path: Path, display: str, *,
              max_member_bytes: int = MAX_MEMBER_BYTES) -> Iterator[ImportedRun]:
    """The runs of the Inspect log at ``path``, one per sample and epoch, in the log's order;
    ``display`` names the file in findings. A ``.eval`` file is read as an archive, a
    ``.json`` file as a JSON log, anything else by its first bytes; an archive member that
    decompresses past ``max_member_bytes`` is TC107 "too large" (docs/guides/importers.md). Raises
    :class:`Unsupported` (TC107) for what cannot be imported and :class:`TraceCiteError` for a
    file that cannot be read (TC101) or a JSON log that is not UTF-8 (TC102, as for every
    other input; a member of an archive that is not is TC107, named by the member)."""
    opened = open_input(str(path))
    if isinstance(opened, Finding):
        raise TraceCiteError(dataclasses.replace(opened, file=display))
    with opened:
        try:
            archive = path.suffix == ".eval" or (
                path.suffix != ".json" and opened.read(len(ZIP_MAGIC)) == ZIP_MAGIC)
            opened.seek(0)
            data = b"" if archive else opened.read()
        except OSError as exc:
            raise TraceCiteError(unreadable(display, exc)) from None
        if archive:
            yield from _archive_runs(opened, display, max_member_bytes)
        else:
            yield from _json_runs(data, display)


def _json_runs(data: bytes, display: str) -> Iterator[ImportedRun]:
    place = Place(display)
    text = decode_utf8(data, display)
    if isinstance(text, Finding):
        raise TraceCiteError(text)
    log = _object(_parse_text(text, place), place, "$")
    label = _label(log, place)
    samples = log.get("samples")
    if samples is None:
        raise place.error("$.samples", "the log was written without its samples")
    if not isinstance(samples, list):
        raise place.error("$.samples", "expected a list of samples")
    if not samples:
        raise place.error("$.samples", "the log holds no sample")
    names = _Names(Path(display).stem)
    for index, sample in enumerate(samples):
        yield _SampleReader(place, f"$.samples[{index}]", sample).run(label, names)


def _archive_runs(opened: BinaryIO, display: str, max_bytes: int) -> Iterator[ImportedRun]:
    place = Place(display)
    try:
        archive = zipfile.ZipFile(opened)
        infos = archive.infolist()
    except CORRUPT:
        raise place.error("$", "not a readable .eval archive (zip): truncated or corrupt") from None
    with archive:
        # A sample logged again (requeued) is a second member of the same name; the last one
        # is the sample, as Inspect reads it.
        members = {info.filename: info for info in infos}
        header = members.get(_HEADER) or members.get(_START)
        if header is None:
            raise place.error("$", f"the archive has neither {_HEADER} nor {_START}")
        header_place = Place(display, header.filename)
        log = _object(_parse(member_bytes(archive, opened, header, header_place, max_bytes),
                             header_place), header_place, "$")
        label = _label(log, header_place)
        samples = [info for name, info in members.items()
                   if name.startswith(_SAMPLES) and name.endswith(".json")]
        if not samples:
            raise place.error("$", f"the archive holds no sample ({_SAMPLES}…)")
        names = _Names(Path(display).stem)
        for info in samples:
            member_place = Place(display, info.filename)
            # No name holds the member's bytes or its parsed JSON: the bytes are freed once
            # decoded, the JSON once the run is made of it, before the run is written.
            yield _SampleReader(member_place, "$", _parse(
                member_bytes(archive, opened, info, member_place, max_bytes),
                member_place)).run(label, names)


def _parse(data: bytearray, place: Place) -> object:
    """A JSON document (UTF-8, a leading BOM allowed); Inspect writes ``NaN`` and
    ``Infinity`` for some scores, which Python's reader accepts. ``data`` is emptied once
    decoded: the bytes and their text are never both kept while the JSON is parsed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise place.error("$", "not valid UTF-8",
                          line=1 + data.count(b"\n", 0, exc.start)) from None
    data.clear()
    return _parse_text(text, place)


def _parse_text(text: str, place: Place) -> object:
    """A JSON document, decoded (a leading BOM allowed)."""
    try:
        return json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        # The reader's own words, without the position it appends ("... starting at").
        reason = re.sub(r"(?: starting)? at$", "", exc.msg)
        raise place.error("$", f"not valid JSON ({reason}, column {exc.colno})",
                          line=exc.lineno) from None
    except (ValueError, RecursionError):  # a number of too many digits, nesting too deep
        raise place.error("$", "not valid JSON (a number too long or nesting too deep)") from None


def _label(log: dict[str, object], place: Place) -> str:
    """What names the eval in run ids: its ``eval_id``, else its task."""
    spec = _object(log.get("eval"), place, "$.eval")
    task = _string(spec, "task", place, "$.eval")
    eval_id = _optional_string(spec, "eval_id", place, "$.eval")
    if not (eval_id or task):
        raise place.error("$.eval.task", "the eval has neither an eval_id nor a task name")
    return eval_id or task


class _Names:
    """File stems for the runs of one log: safe as file names, unique among them."""

    def __init__(self, stem: str) -> None:
        self._stem = _safe(stem)
        self._taken: set[str] = set()

    def name(self, sample_id: str, epoch: int) -> str:
        base = f"{self._stem}-{_safe(sample_id)}-epoch-{epoch}"
        name, count = base, 1
        while name in self._taken:  # ids 1 and "1" are two samples of the same name
            count += 1
            name = f"{base}-{count}"
        self._taken.add(name)
        return name


def _safe(text: str) -> str:
    if _SAFE_NAME.match(text):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    cleaned = _UNSAFE.sub("_", text).strip("._-")[:40]
    return f"{cleaned}-{digest}" if cleaned else digest


@dataclass(frozen=True)
class _Block:
    """A content block of a message: ``text`` None for blocks that are not text."""

    path: str
    text: str | None
    citations: list[object] | None


@dataclass(frozen=True)
class _Citation:
    """A citation's shape: ``quote`` is its string ``cited_text``, None for a span or none;
    ``span`` is true for a span."""

    kind: str
    url: str | None
    quote: str | None
    span: bool


@dataclass
class _Result:
    ok: bool
    sources: list[ImportedSource]


class _SampleReader:
    """One sample (one epoch of it) turned into a run."""

    def __init__(self, place: Place, root: str, sample: object) -> None:
        self._place = place
        self._root = root
        self._sample = _object(sample, place, root)
        self._attachments: dict[str, object] = {}
        self._source_count = 0

    def run(self, label: str, names: _Names) -> ImportedRun:
        """The sample as a run, named from ``label`` and the sample's id and epoch."""
        sample, root = self._sample, self._root
        sample_id = sample.get("id")
        if isinstance(sample_id, bool) or not isinstance(sample_id, (int, str)) or (
                sample_id == ""):
            raise self._error(f"{root}.id", "a sample needs an id (a string or an integer)")
        epoch = sample.get("epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise self._error(f"{root}.epoch", "a sample needs an epoch (an integer)")
        attachments = sample.get("attachments", {})
        if not isinstance(attachments, dict):
            raise self._error(f"{root}.attachments", "expected an object")
        self._attachments = attachments
        messages = sample.get("messages", [])
        if not isinstance(messages, list):
            raise self._error(f"{root}.messages", "expected a list of messages")

        calls: dict[str, str] = {}  # call id -> tool
        arguments: dict[str, dict[str, object]] = {}
        results: dict[str, _Result] = {}
        final: tuple[str, object] | None = None
        for index, value in enumerate(messages):
            path = f"{root}.messages[{index}]"
            message = _object(value, self._place, path)
            role = message.get("role")
            if not isinstance(role, str) or role not in _ROLES:
                raise self._error(f"{path}.role", "a message's role is none of system, user, "
                                                  "assistant, tool" + _named(role))
            if role == "assistant":
                self._tool_calls(message, path, calls, arguments)
                self._server_tool_uses(message, path, calls, results)
                final = (path, message.get("content"))
            elif role == "tool":
                self._tool_result(message, path, calls, arguments, results)

        sources = _Captures()
        run_calls: list[ImportedCall] = []
        for call_id, tool in calls.items():
            result = results.get(call_id, _Result(ok=False, sources=[]))
            for source in result.sources:
                sources.captured(source)
            run_calls.append(ImportedCall(call_id, tool, result.ok, tuple(result.sources)))
        claims, not_importable = self._claims(final, sources)
        uncited = sources.uncaptured()
        if uncited:
            call_id = _UNCAPTURED_CALL
            count = 1
            while call_id in calls:
                count += 1
                call_id = f"{_UNCAPTURED_CALL}-{count}"
            run_calls.append(ImportedCall(call_id, _UNCAPTURED_CALL, True, uncited))
        return ImportedRun(
            run_id=f"{label}/{sample_id}/epoch-{epoch}",
            name=names.name(str(sample_id), epoch),
            calls=tuple(run_calls),
            claims=tuple(claims),
            not_importable=not_importable,
        )

    def _tool_calls(self, message: dict[str, object], path: str, calls: dict[str, str],
                    arguments: dict[str, dict[str, object]]) -> None:
        tool_calls = message.get("tool_calls")
        if tool_calls is None:
            return
        if not isinstance(tool_calls, list):
            raise self._error(f"{path}.tool_calls", "expected a list of tool calls")
        for index, value in enumerate(tool_calls):
            call_path = f"{path}.tool_calls[{index}]"
            call = _object(value, self._place, call_path)
            call_id = _string(call, "id", self._place, call_path)
            tool = _string(call, "function", self._place, call_path)
            if not call_id or not tool:
                raise self._error(call_path, "a tool call needs a non-empty id and function")
            if call_id in calls:
                raise self._error(f"{call_path}.id", "a second tool call of the same id")
            calls[call_id] = tool
            arguments[call_id] = _object(call.get("arguments"), self._place,
                                         f"{call_path}.arguments")

    def _server_tool_uses(self, message: dict[str, object], path: str, calls: dict[str, str],
                          results: dict[str, _Result]) -> None:
        """The provider's own tool uses (``tool_use`` content) are calls with their results;
        the results of Anthropic's web search are sources without content."""
        content = message.get("content")
        if not isinstance(content, list):
            return  # a string, or a shape _blocks refuses when it reads the final answer
        for index, value in enumerate(content):
            if not isinstance(value, dict) or value.get("type") != "tool_use":
                continue
            use_path = f"{path}.content[{index}]"
            call_id = _string(value, "id", self._place, use_path)
            tool = _string(value, "name", self._place, use_path)
            if not call_id or not tool:
                raise self._error(use_path, "a tool use needs a non-empty id and name")
            if call_id in calls:
                raise self._error(f"{use_path}.id", "a second tool call of the same id")
            error = _optional_string(value, "error", self._place, use_path)
            result = _string(value, "result", self._place, use_path)
            calls[call_id] = tool
            sources = []
            if error is None and value.get("tool_type") == "web_search":
                sources = [self._source(url, None) for url in _search_result_urls(result)]
            results[call_id] = _Result(ok=error is None, sources=sources)

    def _tool_result(self, message: dict[str, object], path: str, calls: dict[str, str],
                     arguments: dict[str, dict[str, object]],
                     results: dict[str, _Result]) -> None:
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise self._error(f"{path}.tool_call_id", "a tool message names no tool call")
        if call_id not in calls:
            raise self._error(f"{path}.tool_call_id",
                              "a tool message answers no earlier tool call")
        if call_id in results:
            raise self._error(f"{path}.tool_call_id",
                              "a second tool message for the same tool call")
        error = message.get("error")
        if error is not None and not isinstance(error, dict):
            raise self._error(f"{path}.error", "expected an object or null")
        blocks = self._blocks(message.get("content"), f"{path}.content")
        if error is not None:
            results[call_id] = _Result(ok=False, sources=[])
            return
        sources = self._cited_sources(blocks)
        if not sources:
            uri = self._argument_uri(arguments[call_id], path)
            if uri is not None:
                text = "\n".join(block.text for block in blocks if block.text is not None)
                sources = [self._source(uri, text)]
        results[call_id] = _Result(ok=True, sources=sources)

    def _cited_sources(self, blocks: list[_Block]) -> list[ImportedSource]:
        """Sources from the URL citations a tool put in its own output (rule 1 above)."""
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

    def _argument_uri(self, call_arguments: dict[str, object], path: str) -> str | None:
        for key in _URL_ARGUMENTS:
            value = call_arguments.get(key)
            if isinstance(value, str):
                value = self._resolved(value, f"{path}.arguments.{key}")
                if value:
                    return value
        return None

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
                if citation.kind != "url":
                    raise self._error(citation_path, f"a {citation.kind} citation quotes a "
                                      "document whose text the log does not keep")
                if not citation.quote.strip():
                    raise self._error(f"{citation_path}.cited_text", "an empty cited_text")
                if not citation.url:
                    raise self._error(f"{citation_path}.url", "a URL citation without a URL")
                citations.append(ImportedCitation(sources.cited(citation.url, self._source),
                                                  citation.quote))
            if citations:
                claims.append(ImportedClaim(block.text, tuple(citations)))
        return claims, not_importable

    def _blocks(self, content: object, path: str) -> list[_Block]:
        """A message's content (a string, or a list of content blocks) as blocks."""
        if isinstance(content, str):
            return [_Block(path, self._resolved(content, path), None)]
        if not isinstance(content, list):
            raise self._error(path, "a message's content is neither a string nor a list")
        blocks = []
        for index, value in enumerate(content):
            block_path = f"{path}[{index}]"
            block = _object(value, self._place, block_path)
            kind = block.get("type")
            if not isinstance(kind, str) or kind not in _CONTENT_TYPES:
                raise self._error(f"{block_path}.type", "unknown content type" + _named(kind))
            if kind != "text":
                blocks.append(_Block(block_path, None, None))
                continue
            text = _string(block, "text", self._place, block_path)
            citations = block.get("citations")
            if citations is not None and not isinstance(citations, list):
                raise self._error(f"{block_path}.citations", "expected a list or null")
            blocks.append(_Block(block_path, self._resolved(text, f"{block_path}.text"),
                                 citations))
        return blocks

    def _citation(self, value: object, path: str) -> _Citation:
        citation = _object(value, self._place, path)
        kind = citation.get("type")
        if not isinstance(kind, str) or kind not in _CITATION_TYPES:
            raise self._error(f"{path}.type", "unknown citation type" + _named(kind))
        url = None
        if kind == "url":
            url = self._resolved(_string(citation, "url", self._place, path), f"{path}.url")
        cited = citation.get("cited_text")
        quote = None
        if isinstance(cited, str):
            quote = self._resolved(cited, f"{path}.cited_text")
            internal = citation.get("internal")
            if isinstance(internal, dict) and "encrypted_index" in internal:
                quote = quote.removesuffix("...")  # Anthropic's web search cut it short
        elif cited is not None and not _is_span(cited):
            raise self._error(f"{path}.cited_text",
                              "cited_text is neither a string nor a (start, end) span")
        return _Citation(kind, url, quote, span=cited is not None and quote is None)

    def _resolved(self, text: str, path: str) -> str:
        """``text``, or the attachment it refers to (``attachment://HASH``)."""
        if not text.startswith(_ATTACHMENT):
            return text
        value = self._attachments.get(text[len(_ATTACHMENT):])
        if not isinstance(value, str):
            raise self._error(path, "an attachment:// reference the sample's attachments "
                                    "do not hold")
        return value

    def _source(self, uri: str, content: str | None) -> ImportedSource:
        self._source_count += 1
        return ImportedSource(f"s{self._source_count}", uri, content)

    def _error(self, path: str, what: str) -> Unsupported:
        return self._place.error(path, what)


class _Captures:
    """The sources of a run by stable URI (docs/reference/commands.md): a citation's URL names the
    last capture of its URI, or a source with no captured text, one per URI."""

    def __init__(self) -> None:
        self._last: dict[str, str] = {}
        self._last_found: dict[str, str] = {}  # sources without content: found, not read
        self._uncaptured: dict[str, ImportedSource] = {}

    def captured(self, source: ImportedSource) -> None:
        found = self._last if source.content is not None else self._last_found
        found[stable_uri(source.uri)] = source.id

    def cited(self, url: str, new_source: Callable[[str, str | None], ImportedSource]) -> str:
        key = stable_uri(url)
        if key in self._last:
            return self._last[key]
        if key in self._last_found:
            return self._last_found[key]
        if key not in self._uncaptured:
            self._uncaptured[key] = new_source(url, None)
        return self._uncaptured[key].id

    def uncaptured(self) -> tuple[ImportedSource, ...]:
        return tuple(self._uncaptured.values())


def _object(value: object, place: Place, path: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise place.error(path, "expected a JSON object" if value is not None else
                          "a required object is missing")
    return value


def _string(obj: dict[str, object], key: str, place: Place, path: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise place.error(f"{path}.{key}", "a required string is missing" if value is None
                          else "expected a string")
    return value


def _optional_string(obj: dict[str, object], key: str, place: Place, path: str) -> str | None:
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
            and all(isinstance(i, int) and not isinstance(i, bool) for i in value))


def _named(value: object) -> str:
    """`` ('name')`` for a value that is a plain lower-case word, else nothing: a type tag is
    named to help, but never input text that could be anything."""
    if isinstance(value, str) and _WORD.match(value):
        return f" ({value!r})"
    return "" if value is not None else " (none given)"
