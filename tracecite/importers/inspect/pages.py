"""What a sample's pages and documents are (docs/guides/importers.md#inspect-ai): the same-page
key of a URL, the address a tool call read, and the text an Anthropic ``web_fetch`` or a
``ContentDocument`` kept in the log."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes, urlsplit, urlunsplit

from tracecite.checks.compare import stable_uri
from tracecite.inputs.captured import captured_at_of

_TRACKING = frozenset({"fbclid", "gclid", "msclkid", "mc_cid", "mc_eid"})
_URL_ARGUMENTS = ("url", "uri")
_WEB = ("http", "https")
_DATA_URL = re.compile(r"data:([^,;]*)((?:;[^,;]*)*),", re.S)
PDF = "application/pdf"
_NO_DOCUMENT = ("a web_fetch result that holds no fetched document (expected the JSON of a "
                "web_fetch_tool_result block, as Inspect's Anthropic provider keeps it)")


def page_key(url: str) -> str:
    """The key two URLs of the same page share: the stable URI (docs/reference/commands.md)
    without fragment, without a trailing ``/`` on a path other than the root, and without
    tracking parameters (``utm_*``, ``fbclid``, ``gclid``, ``msclkid``, ``mc_cid``,
    ``mc_eid``). A URI that is not http(s) is keyed by its stable URI alone."""
    stable = stable_uri(url)
    try:
        parts = urlsplit(stable)
    except ValueError:  # an authority urlsplit refuses (a bad IPv6 literal): kept as it is
        return stable
    if parts.scheme not in _WEB or not parts.netloc:
        return stable
    path = parts.path
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = "&".join(pair for pair in parts.query.split("&")
                     if pair and not _tracking(pair.split("=", 1)[0]))
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


def _tracking(name: str) -> bool:
    name = name.lower()
    return name.startswith("utm_") or name in _TRACKING


def is_web_url(value: str) -> bool:
    """Whether ``value`` is an absolute http(s) URL (a host, no white space)."""
    if not value or any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in _WEB and bool(parts.hostname)


def argument_url(arguments: dict[str, object]) -> str | None:
    """The address a tool call read, from its arguments: a non-empty ``url`` (else ``uri``)
    string, else the one absolute http(s) URL that any argument holds, whatever its name.
    Arguments holding two different URLs name no one page: None, as for none."""
    for key in _URL_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    urls = {value for value in arguments.values() if isinstance(value, str) and is_web_url(value)}
    return urls.pop() if len(urls) == 1 else None


@dataclass(frozen=True)
class Fetched:
    """What an Anthropic ``web_fetch`` kept: the page's ``url``, and its ``text`` (None with
    ``missing`` saying why: a PDF, or a result that is not a fetched document), or ``error``
    when the fetch failed."""

    url: str | None
    text: str | None = None
    retrieved_at: str | None = None
    error: str | None = None
    missing: str | None = None


def web_fetch(result: str, arguments: str) -> Fetched:
    """An Anthropic ``web_fetch`` tool use as Inspect logs it: ``result`` is the JSON of the
    ``web_fetch_tool_result`` block, ``arguments`` the JSON of the call's input."""
    url = _loaded_url(arguments)
    block = _loaded(result)
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, dict):
        return Fetched(url, missing=_NO_DOCUMENT)
    if content.get("type") == "web_fetch_tool_result_error":
        code = content.get("error_code")
        return Fetched(url, error="web_fetch failed" + (
            f" ({code})" if isinstance(code, str) and re.fullmatch(r"[a-z_]{1,40}", code)
            else ""))
    fetched_url = content.get("url")
    if isinstance(fetched_url, str) and fetched_url:
        url = fetched_url
    retrieved_at = captured_at_of(content.get("retrieved_at"))
    document = content.get("content")
    source = document.get("source") if isinstance(document, dict) else None
    if not isinstance(source, dict):
        return Fetched(url, retrieved_at=retrieved_at, missing=_NO_DOCUMENT)
    if source.get("type") == "text" and isinstance(source.get("data"), str):
        return Fetched(url, source["data"], retrieved_at)
    if source.get("media_type") == PDF:
        data = source.get("data")
        try:
            raw = base64.b64decode(data if isinstance(data, str) else "", validate=True)
        except (binascii.Error, ValueError):
            return Fetched(url, retrieved_at=retrieved_at, missing="a fetched PDF whose data "
                           "is not base64")
        text, why = _pdf_text(raw)
        return Fetched(url, text, retrieved_at, missing=None if why is None else
                       f"a fetched PDF that cannot be read: {why}")
    return Fetched(url, retrieved_at=retrieved_at,
                   missing="a fetched document that is not text")


def _loaded(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _loaded_url(arguments: str) -> str | None:
    value = _loaded(arguments)
    if isinstance(value, dict):
        return argument_url(value)
    return None


@dataclass(frozen=True)
class DocumentText:
    """A ``ContentDocument``'s text, or why the log keeps none (``missing``)."""

    text: str | None
    missing: str | None = None


def document_text(document: str, mime_type: str) -> DocumentText:
    """The text of a ``ContentDocument`` whose ``document`` (attachments already resolved) is
    a ``data:`` URL; a file path is not kept in the log, a PDF needs PDF support and an image
    has no text."""
    if mime_type.startswith("image/"):
        return DocumentText(None, "an image document, which has no text to quote (expected a "
                                  "text or PDF document)")
    match = _DATA_URL.match(document)
    if match is None:
        return DocumentText(None, "a document given by file path, whose text the log does not "
                                  "keep; give the document as a data: URL (its text is then in "
                                  "the log)")
    data = document[match.end():]
    try:
        raw = (base64.b64decode(data, validate=True) if ";base64" in match.group(2).lower()
               else unquote_to_bytes(data))
        if mime_type == PDF:
            text, why = _pdf_text(raw)
            return DocumentText(text, None if why is None else
                                f"a PDF document that cannot be read: {why}")
        return DocumentText(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        return DocumentText(None, "a document whose data is not UTF-8 text (expected UTF-8, "
                                  "base64 or percent-encoded; save the document as UTF-8)")


def _pdf_text(data: bytes) -> tuple[str | None, str | None]:
    """A PDF's text, its pages joined by a newline (docs/guides/pdf.md), read within the PDF
    limits; or None and why not (the pdf extra missing included)."""
    from tracecite.pdf.reader import PdfError, pdf_pages

    try:
        return "\n".join(pdf_pages(data)), None
    except PdfError as error:
        return None, error.reason
