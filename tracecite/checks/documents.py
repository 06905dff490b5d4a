"""The live checks of documents' citations (docs/guides/documents.md): where each citation's
source is (a web page, or a local file under the root resolved against the document's own
folder), and the quotes to check there, a text directive's among them.

A text directive (``#:~:text=``) is checked as a quote of its own, carried through the live run
as a string (:func:`directive_quote`) so that grouping, the cache and the parse workers treat it
as any other quote; :func:`tracecite.checks.parse_pool.match_quotes` reads it back
(:func:`directive_of`) and matches it with :func:`tracecite.text_directive.directive_found`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote as percent_encoded
from urllib.parse import unquote

from tracecite.checks.kinds import SourceKind
from tracecite.checks.quotes import QuoteCheck
from tracecite.findings import ListedDocument
from tracecite.matching import normalise
from tracecite.model import (
    DocumentCitation,
    NoteRecord,
    NoteRecords,
    TextDirective,
    document_kind,
)

if TYPE_CHECKING:
    from tracecite.inputs.documents import DocumentFile

_MARK = "\x00text-directive\x00"
"""What starts a directive carried as a quote: a NUL, which no quote read from a notes file or
a document holds."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def directive_quote(directive: TextDirective) -> str:
    """``directive`` as one string a live run carries like a quote, its parts normalised
    (docs/reference/matching.md)."""
    parts = [None if p is None else normalise(p)
             for p in (directive.prefix, directive.start, directive.end, directive.suffix)]
    return _MARK + json.dumps(parts, ensure_ascii=False)


def directive_of(quote: str) -> TextDirective | None:
    """The directive a quote string carries (:func:`directive_quote`), or None for a quote."""
    if not quote.startswith(_MARK):
        return None
    prefix, start, end, suffix = json.loads(quote[len(_MARK):])
    return TextDirective(start, end=end, prefix=prefix, suffix=suffix)


def _without_directive(url: str) -> str:
    from tracecite.text_directive import without_directive

    return without_directive(url)


def shard_key(url: str) -> str:
    """What a document citation's source is sharded by (docs/guides/scale.md): its link
    without the text directive, so that every citation of one page is in one shard."""
    return _without_directive(url)


def source_of(document: str, url: str, root: str) -> tuple[SourceKind | None, str]:
    """Which kind of source a document's link is and the target a live check loads: an http(s)
    URL without its text directive; a relative link or a ``file:`` URI as ``file:`` + its path
    relative to ``root``, resolved against the document's own folder (a leading ``/``: against
    the root), so a path that leaves the root is refused by the loader (TC321) as a trace's
    ``file:`` source is. None: a link of another scheme (``mailto:``, …), never checked."""
    link = _without_directive(url).strip()
    if SourceKind.WEB.takes(link):
        return SourceKind.WEB, link
    if link.lower().startswith("file://"):
        return SourceKind.FILE, link  # absolute: the loader still keeps it under the root
    if link.lower().startswith("file:"):
        link = link[5:]
    elif _SCHEME.match(link) or link.startswith("//"):
        return None, link
    path = unquote(link.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return None, link  # a link to a heading of the same document is no source
    if path.startswith("/"):
        where = os.path.join(os.path.abspath(root), path.lstrip("/"))
    else:
        where = os.path.join(os.path.dirname(os.path.abspath(document)), path)
    relative = os.path.relpath(os.path.normpath(where), os.path.abspath(root))
    return SourceKind.FILE, "file:" + percent_encoded(relative.replace(os.sep, "/"), safe="/")


def quotes_of(citation: DocumentCitation) -> list[str]:
    """The quotes a citation asks to find: its text, and its link's text directive as a quote of
    its own; a ``fragment`` citation's quote is its directive."""
    quotes = [] if citation.form == "fragment" and citation.directive else [
        normalise(citation.quote)]
    if citation.directive is not None:
        quotes.append(directive_quote(citation.directive))
    return quotes


@dataclass(frozen=True)
class DocumentChecks:
    """The checks of documents' citations, each link resolved once for every live check of a
    run: those of web pages, those of local files, and how many citations are skipped (those
    marked ``<!-- tracecite: ignore -->``, a document's ``skipped``, and those whose link is of
    no kind checked), counted once, in the web check."""

    web: tuple[QuoteCheck, ...] = ()
    files: tuple[QuoteCheck, ...] = ()
    skipped: int = 0

    def of_kind(self, kind: SourceKind) -> tuple[list[QuoteCheck], int]:
        """The checks of sources of ``kind``, and the citations skipped that its check counts."""
        if kind is SourceKind.WEB:
            return list(self.web), self.skipped
        return list(self.files), 0


def document_checks(documents: Iterable[DocumentFile], root: str) -> DocumentChecks:
    """The checks of the documents' citations by the kind of source each link names
    (:func:`source_of`, once per link and folder: a page is cited by many citations)."""
    checks: dict[SourceKind, list[QuoteCheck]] = {SourceKind.WEB: [], SourceKind.FILE: []}
    skipped = 0
    resolved: dict[tuple[str, str], tuple[SourceKind | None, str]] = {}
    for document in documents:
        for citation in document.citations:
            if citation.ignored:
                skipped += 1
                continue
            where = (os.path.dirname(citation.file), citation.url)
            found = resolved.get(where)
            if found is None:
                found = resolved[where] = source_of(citation.file, citation.url, root)
            source, target = found
            if source is None:
                skipped += 1
                continue
            checks[source].extend(QuoteCheck(q, target, citation.file, citation.line,
                                             record=citation.ordinal, column=citation.column)
                                  for q in quotes_of(citation))
    return DocumentChecks(tuple(checks[SourceKind.WEB]), tuple(checks[SourceKind.FILE]),
                          skipped)


def markdown_targets(checks: Sequence[QuoteCheck]) -> frozenset[str]:
    """The ``file:`` targets of documents' checks that name Markdown: matched on their
    rendered text (docs/guides/documents.md)."""
    return frozenset(c.target for c in checks
                     if document_kind(unquote(c.target.split("#", 1)[0])) == "markdown")


def directive_checks(records: Sequence[NoteRecord]) -> Iterator[QuoteCheck]:
    """For each notes record whose ``url:`` has a text directive, the directive as a second
    quote of the record, reported at the ``url:`` line (docs/guides/documents.md). The URLs
    are read from the records' columns; a record is made only for a URL with a directive."""
    url_at = records.url if isinstance(records, NoteRecords) else (lambda i: records[i].url)
    for i in range(len(records)):
        if ":~:" not in url_at(i):
            continue
        from tracecite.text_directive import parse_text_directive

        record = records[i]
        try:
            directive = parse_text_directive(record.url)
        except ValueError:
            continue  # not a directive a browser reads either: the quote alone is checked
        if directive is not None:
            yield QuoteCheck(directive_quote(directive), _without_directive(record.url),
                             record.file, record.url_line, record=record.index,
                             quote_line=record.url_line)


def listing(document: DocumentFile) -> ListedDocument:
    """A document's citations as ``check --docs`` lists them (docs/reference/reports.md): the
    citations themselves, each made its listed form only as it is written."""
    return ListedDocument(document.file, document.citations)

