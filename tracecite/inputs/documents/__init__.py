"""Documents: the citations that Markdown and HTML files hold where writers put them
(docs/guides/documents.md#citation-forms).

:func:`read_document` reads one file into a :class:`DocumentFile`: its citations in source order
(those after a ``<!-- tracecite: ignore -->`` line included, with ``ignored=True``, and counted in
``skipped``) and its problems (TC101 unreadable, TC102 not UTF-8, TC140 a broken form), each at
its file, line and column. :func:`rendered_text` is a Markdown file's text as a reader sees it,
which is what a quote citing a Markdown file is matched on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tracecite.findings import Finding
from tracecite.inputs.documents.forms import Collector
from tracecite.inputs.documents.locate import Source
from tracecite.inputs.files import read_text
from tracecite.model import DOCUMENT_FORMS, DocumentCitation, document_kind

MARKDOWN = "markdown"
HTML = "html"
KINDS = (MARKDOWN, HTML)


@dataclass(frozen=True)
class DocumentFile:
    """A document's citations and problems. ``skipped`` counts the citations an ignore comment
    stands before; they are in ``citations`` too, with ``ignored=True``."""

    file: str
    citations: tuple[DocumentCitation, ...]
    problems: tuple[Finding, ...]
    skipped: int


def kind_of(path: str) -> str | None:
    """``markdown`` or ``html`` by the file's suffix (case ignored; ``.xhtml`` is HTML), None
    for neither: :func:`tracecite.model.document_kind`, the one table of document names."""
    return document_kind(path)


def read_document(path: str, *, forms: frozenset[str] = frozenset(DOCUMENT_FORMS),
                  display: str | None = None, kind: str | None = None) -> DocumentFile:
    """Read one Markdown or HTML document's citations (docs/guides/documents.md).

    ``forms``: the citation forms looked for; ``display``: the file name findings and citations
    carry (default ``path``); ``kind``: ``markdown`` or ``html``, else by suffix (anything else
    is read as Markdown).
    """
    name = path if display is None else display
    text = read_text(path)
    if isinstance(text, Finding):
        located = Finding(text.code, text.message, file=name, line=text.line or 1,
                          column=text.column or 1)
        return DocumentFile(name, (), (located,), 0)
    return parse_document(text, name, forms=forms, kind=kind or kind_of(path) or MARKDOWN)


def parse_document(text: str, name: str, *, forms: frozenset[str] = frozenset(DOCUMENT_FORMS),
                   kind: str = MARKDOWN) -> DocumentFile:
    """A document's citations from its text (``name`` locates them); never raises."""
    source = Source(text)
    collector = Collector(name, source, forms)
    try:
        if kind == HTML:
            from tracecite.inputs.documents.cite import from_html
            from_html(collector, source.text, 0, quotes=True)
        else:
            from tracecite.inputs.documents.markdown import read_markdown
            read_markdown(source, collector)
    except RecursionError:
        collector.problem(0, "the document nests too deeply to be read for citations")
    citations = collector.citations()
    problems = sorted(collector.problems, key=lambda f: (f.line or 0, f.column or 0))
    return DocumentFile(name, citations, tuple(problems),
                        sum(1 for c in citations if c.ignored))


def rendered_text(path_or_text: str | os.PathLike[str], kind: str = MARKDOWN) -> str:
    """A document's text as a reader sees it: what a quote citing a local Markdown file is
    matched on (docs/guides/documents.md). A ``str`` is the document's text; a path object
    (:class:`pathlib.Path`) names a file to read (UTF-8; ValueError with the finding's message
    when it cannot be read). ``kind`` ``markdown``: each block on a line of its own, code as
    written, raw HTML as its visible text; ``html``: the visible text (:mod:`tracecite.visible`).
    """
    if isinstance(path_or_text, str):
        text = path_or_text
    else:
        read = read_text(os.fspath(path_or_text))
        if isinstance(read, Finding):
            raise ValueError(read.message)
        text = read
    if kind == HTML:
        from tracecite.visible import visible_text
        return visible_text(text)
    if kind != MARKDOWN:
        raise ValueError(f"unknown document kind {kind!r}")
    from tracecite.inputs.documents.markdown import rendered_blocks
    return rendered_blocks(Source(text))


__all__ = ["HTML", "KINDS", "MARKDOWN", "DocumentFile", "kind_of", "parse_document",
           "read_document", "rendered_text"]
