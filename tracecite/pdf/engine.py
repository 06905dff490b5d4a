"""PDFium, the PDF engine: the library that the ``pdf`` extra's pypdfium2 ships beside its raw
bindings (``pypdfium2_raw``), loaded with :mod:`ctypes` and called directly, a handful of C
calls a page, in a PDF worker process (:mod:`tracecite.pdf.worker`).

pypdfium2's own classes wrap every document, page and text page in a Python object with a
finalizer and a place in a tracker, and importing them doubles the time the engine takes to
load; its raw bindings declare every one of PDFium's calls. Called directly, a page's text
costs about 5 % less, the same text either way: the text page's characters from
``FPDFText_GetText``, over the range pypdfium2's ``get_text_range`` reads (characters at either
end with no place in the text left out, https://crbug.com/pdfium/2079), decoded from UTF-16 as
it decodes them.
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["Document", "OpenFailed", "pdfium"]

_loaded: list[Any] = []
"""The library once :func:`pdfium` has loaded and initialised it."""

_LIBRARY = {"win32": "pdfium.dll", "cygwin": "pdfium.dll", "msys": "pdfium.dll",
            "darwin": "libpdfium.dylib", "ios": "libpdfium.dylib"}
"""The library's file in the bindings' folder, by platform, as the bindings name it: the
rest are Unix-like (``libpdfium.so``)."""


class _LibraryConfig(ctypes.Structure):
    """``FPDF_LIBRARY_CONFIG`` of ``fpdfview.h``, whole; a version 2 configuration reads the
    first five fields."""

    _fields_ = (("version", ctypes.c_int), ("m_pUserFontPaths", ctypes.c_void_p),
                ("m_pIsolate", ctypes.c_void_p), ("m_v8EmbedderSlot", ctypes.c_uint),
                ("m_pPlatform", ctypes.c_void_p), ("m_RendererType", ctypes.c_int),
                ("m_FontLibraryType", ctypes.c_int), ("m_BrotliEnabled", ctypes.c_int),
                ("m_IsolatePerDocument", ctypes.c_int))


_HANDLE = ctypes.c_void_p
_CALLS: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "FPDF_InitLibraryWithConfig": (None, (ctypes.POINTER(_LibraryConfig),)),
    "FPDF_GetLastError": (ctypes.c_ulong, ()),
    "FPDF_LoadMemDocument64": (_HANDLE, (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)),
    "FPDF_GetPageCount": (ctypes.c_int, (_HANDLE,)),
    "FPDF_CloseDocument": (None, (_HANDLE,)),
    "FPDF_LoadPage": (_HANDLE, (_HANDLE, ctypes.c_int)),
    "FPDF_ClosePage": (None, (_HANDLE,)),
    "FPDFText_LoadPage": (_HANDLE, (_HANDLE,)),
    "FPDFText_ClosePage": (None, (_HANDLE,)),
    "FPDFText_CountChars": (ctypes.c_int, (_HANDLE,)),
    "FPDFText_GetTextIndexFromCharIndex": (ctypes.c_int, (_HANDLE, ctypes.c_int)),
    "FPDFText_GetText": (ctypes.c_int, (_HANDLE, ctypes.c_int, ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_ushort))),
}
"""The calls used here, each with its result and argument types as ``fpdfview.h`` and
``fpdf_text.h`` declare them (handles as plain pointers)."""


def pdfium() -> Any:
    """PDFium, the library initialised in this process (once); raises ``ImportError`` when
    the ``pdf`` extra is not installed.

    The library is loaded from the bindings' folder with only the calls above declared:
    importing the bindings declares all of PDFium's hundreds of calls and imports half the
    standard library to find the file, 13 ms of a PDF worker's start against 1 ms.
    """
    if not _loaded:
        import os
        import sys

        from tracecite.pdf import BINDINGS, package_folder

        folder = package_folder(BINDINGS)
        name = next((file for prefix, file in _LIBRARY.items()
                     if sys.platform.startswith(prefix)), "libpdfium.so")
        if folder is None:
            raise ImportError(f"{BINDINGS} is not installed", name=BINDINGS)
        try:
            library = ctypes.CDLL(os.path.join(folder, name))
        except OSError as error:
            raise ImportError(f"PDFium did not load: {error}", name=BINDINGS) from error
        for call, (result, arguments) in _CALLS.items():
            function = getattr(library, call)
            function.restype, function.argtypes = result, arguments
        # Version 2 of the configuration, as pypdfium2 initialises it: no user font paths, no
        # JavaScript. The call does nothing where the library is initialised already.
        library.FPDF_InitLibraryWithConfig(ctypes.byref(_LibraryConfig(version=2)))
        _loaded.append(library)
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
