"""PDF sources (docs/guides/pdf.md): their text as PDFium extracts it page by page, read in
worker processes within the PDF limits.

- :mod:`tracecite.pdf.engine`: PDFium, called through its raw bindings;
- :mod:`tracecite.pdf.text`: the pages read, and the PDF rules applied to each page's text;
- :mod:`tracecite.pdf.worker`: the worker process that runs the engine;
- :mod:`tracecite.pdf.reader`: the run's PDF workers and :func:`pdf_pages`, for importers.
"""

from __future__ import annotations

PDF_MAGIC = b"%PDF-"
"""How a PDF starts (a body with no type is read as a PDF when it starts so)."""


def is_pdf(head: bytes | bytearray) -> bool:
    """Whether a body or file starting with ``head`` is a PDF."""
    return head.startswith(PDF_MAGIC)


def named_pdf(uri: str) -> bool:
    """Whether ``uri``'s path ends in ``.pdf``: a hint that the source is a PDF, to start the
    PDF workers before it is loaded (what it is read as is decided once it is)."""
    path = uri.split("#", 1)[0].split("?", 1)[0]
    return path.lower().endswith(".pdf")
