"""PDF sources (docs/guides/pdf.md): their text as PDFium extracts it page by page, read in
worker processes within the PDF limits.

- :mod:`tracecite.pdf.engine`: PDFium, called directly (found by :func:`installed_in`; its
  version, for the cache key, by :func:`engine_version`);
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


ENGINE = "pypdfium2"
"""The Python package of the PDF engine (the ``pdf`` extra)."""

BINDINGS = "pypdfium2_raw"
"""The module of PDFium's raw bindings, installed with pypdfium2 (the ``pdf`` extra)."""


def package_folder(package: str) -> str | None:
    """The folder of an installed ``package``, found without importing it; None when it is not
    installed (or hidden in ``sys.modules``)."""
    from importlib.util import find_spec

    try:
        spec = find_spec(package)
    except (ImportError, ValueError):  # ValueError: a module hidden in sys.modules
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(iter(spec.submodule_search_locations))


def installed_in() -> str | None:
    """The folder the bindings are installed in (a ``site-packages``), found without loading
    them; None when the ``pdf`` extra is not installed."""
    import os

    folder = package_folder(BINDINGS)
    return os.path.dirname(os.path.abspath(folder)) if folder is not None else None


def engine_version() -> str | None:
    """The PDF engine and its version (``pypdfium2 5.15.2, PDFium 159.0.8149.0``), read from
    the installed package's version files without loading the engine; None when the ``pdf``
    extra is not installed. Part of the key of every cached verdict."""
    import json
    import os

    parts: list[str] = []
    for package, name, keys in ((ENGINE, "pypdfium2", ("major", "minor", "patch")),
                                (BINDINGS, "PDFium", ("major", "minor", "build", "patch"))):
        folder = package_folder(package)
        if folder is None:
            return None
        try:
            with open(os.path.join(folder, "version.json"), encoding="utf-8") as stream:
                info = json.load(stream)
            parts.append(name + " " + ".".join(str(info[key]) for key in keys))
        except (OSError, ValueError, KeyError, TypeError):
            parts.append(name + " unknown")
    return ", ".join(parts)
