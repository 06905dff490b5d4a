"""PDFium, the PDF engine, called through the raw bindings that the ``pdf`` extra's pypdfium2
ships (``pypdfium2_raw``): a handful of C calls a page, in a PDF worker process
(:mod:`tracecite.pdf.worker`).

pypdfium2's own classes wrap every document, page and text page in a Python object with a
finalizer and a place in a tracker, and importing them doubles the time the engine takes to
load. Called directly, a page's text costs about 5 % less, the same text either way: the text
page's characters from ``FPDFText_GetText``, over the range pypdfium2's ``get_text_range``
reads (characters at either end with no place in the text left out, https://crbug.com/pdfium/2079),
decoded from UTF-16 as it decodes them.
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["BINDINGS", "Document", "OpenFailed", "installed_in", "package_folder", "pdfium"]

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


_loaded: list[Any] = []
"""The bindings once :func:`pdfium` has loaded them and initialised the library."""


def pdfium() -> Any:
    """PDFium's raw bindings, the library initialised in this process (once); raises
    ``ImportError`` when the ``pdf`` extra is not installed."""
    if not _loaded:
        import pypdfium2_raw as raw  # type: ignore[import-untyped]  # no types shipped

        # Version 2 of the configuration, as pypdfium2 initialises it: no user font paths, no
        # JavaScript. The call does nothing where the library is initialised already.
        config = raw.FPDF_LIBRARY_CONFIG(version=2, m_pUserFontPaths=None, m_pIsolate=None,
                                         m_v8EmbedderSlot=0)
        raw.FPDF_InitLibraryWithConfig(config)
        _loaded.append(raw)
    return _loaded[0]


class OpenFailed(Exception):
    """A PDF the engine does not open; ``code`` is PDFium's ``FPDF_GetLastError`` then."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Document:
    """One PDF opened from memory with the empty password, its pages read one at a time; close
    it with the ``with`` block it is opened in. ``data`` is held until then: the engine reads
    from it."""

    def __init__(self, data: bytes | ctypes.Array[ctypes.c_char]) -> None:
        self._pdfium = pdfium()
        self._data = data
        self._handle = self._pdfium.FPDF_LoadMemDocument64(data, len(data), None)
        if not self._handle:
            raise OpenFailed(int(self._pdfium.FPDF_GetLastError()))
        self.pages = int(self._pdfium.FPDF_GetPageCount(self._handle))
        """The number of pages."""
        if self.pages < 1:  # as pypdfium2 takes it: a document of no pages did not open
            code = int(self._pdfium.FPDF_GetLastError())
            self.close()
            raise OpenFailed(code)

    def __enter__(self) -> Document:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Free the document (again: nothing)."""
        if self._handle:
            self._pdfium.FPDF_CloseDocument(self._handle)
            self._handle = None

    def text(self, index: int) -> str | None:
        """Page ``index``'s text (from 0), or None when the engine cannot read the page."""
        engine = self._pdfium
        page = engine.FPDF_LoadPage(self._handle, index)
        if not page:
            return None
        try:
            textpage = engine.FPDFText_LoadPage(page)
            if not textpage:
                return None
            try:
                return _text(engine, textpage)
            finally:
                engine.FPDFText_ClosePage(textpage)
        finally:
            engine.FPDF_ClosePage(page)


def _text(engine: Any, textpage: Any) -> str | None:
    """A text page's characters, as pypdfium2's ``get_text_range()`` reads them all."""
    count = int(engine.FPDFText_CountChars(textpage))
    if count < 0:
        return None
    first, last = 0, count - 1
    index_of = engine.FPDFText_GetTextIndexFromCharIndex
    while first <= last and index_of(textpage, first) == -1:
        first += 1
    while first <= last and index_of(textpage, last) == -1:
        last -= 1
    if first > last:
        return ""
    # Room for the text's characters and its NUL: by text index, as pypdfium2 counts them, or
    # by character, whichever is more.
    size = max(index_of(textpage, last) - index_of(textpage, first), last - first) + 2
    buffer = (ctypes.c_ushort * size)()
    written = min(int(engine.FPDFText_GetText(textpage, first, last + 1 - first, buffer)), size)
    return ctypes.string_at(buffer, 2 * max(written - 1, 0)).decode("utf-16-le", "ignore")
