"""PDFium called directly (tracecite/pdf/engine.py): the same text, page by page, as
pypdfium2's own ``get_text_range()`` gives, PDFium's reasons for a PDF it does not open, and the
library loaded without the bindings' module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.pdf.conftest import need_engine
from tests.pdf.make_pdfs import Made
from tracecite.pdf.engine import Document, OpenFailed, pdfium

TYPESET = Path(__file__).with_name("typeset")


def _helpers_text(data: bytes) -> list[str]:
    """Every page's text as pypdfium2's classes read it."""
    import pypdfium2  # type: ignore[import-untyped]  # no types shipped

    document = pypdfium2.PdfDocument(data)
    try:
        pages = []
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return pages
    finally:
        document.close()


def _readable(pdfs: dict[str, Made]) -> list[Path]:
    return [*(made.path for made in pdfs.values() if made.unreadable is None),
            pdfs["image-only"].path, *sorted(TYPESET.glob("*.pdf"))]


def test_every_page_reads_as_pypdfium2_reads_it(pdfs: dict[str, Made]) -> None:
    paths = _readable(pdfs)
    assert len(paths) >= 14
    for path in paths:
        data = path.read_bytes()
        with Document(data) as document:
            ours = [document.text(index) for index in range(document.pages)]
        assert ours == _helpers_text(data), path.name


def test_the_pages_are_counted_and_an_image_only_page_has_no_text(pdfs: dict[str, Made]
                                                                  ) -> None:
    with Document(pdfs["long"].path.read_bytes()) as document:
        assert document.pages == pdfs["long"].pages > 250
    with Document(pdfs["image-only"].path.read_bytes()) as document:
        assert [document.text(0)] == [""]


def test_a_page_past_the_last_is_none_and_closing_twice_is_nothing(pdfs: dict[str, Made]
                                                                    ) -> None:
    document = Document(pdfs["one-column"].path.read_bytes())
    assert document.text(document.pages) is None
    document.close()
    document.close()


@pytest.mark.parametrize(("name", "code"), [("encrypted-password", 4), ("truncated", 3)])
def test_what_does_not_open_gives_pdfiums_reason(pdfs: dict[str, Made], name: str,
                                                 code: int) -> None:
    with pytest.raises(OpenFailed) as failed:
        Document(pdfs[name].path.read_bytes())
    assert failed.value.code == code


def test_bytes_that_are_no_pdf_do_not_open() -> None:
    need_engine()
    with pytest.raises(OpenFailed) as failed:
        Document(b"%PDF-1.7\nnot a PDF at all\n")
    assert failed.value.code == 3


def test_the_library_is_initialised_once() -> None:
    need_engine()
    assert pdfium() is pdfium()


def test_the_library_loads_without_the_bindings_module() -> None:
    """A PDF worker loads PDFium from the bindings' folder and declares only its own calls:
    importing the bindings declares all of them and imports half the standard library."""
    need_engine()
    probe = ("import sys; from tracecite.pdf.engine import Document, pdfium; pdfium(); "
             "Document(open(sys.argv[1], 'rb').read()).close(); "
             "print(sorted(m for m in sys.modules if m.startswith(('pypdfium2', 'ctypes.util'))))")
    pdf = sorted(TYPESET.glob("*.pdf"))[0]
    done = subprocess.run([sys.executable, "-c", probe, str(pdf)], capture_output=True,
                          text=True, check=True, cwd=Path(__file__).parents[2])
    assert done.stdout.strip() == "[]"


def test_without_the_extra_the_library_is_an_import_error(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    import tracecite.pdf.engine as engine

    monkeypatch.setattr(engine, "_loaded", [])
    monkeypatch.setitem(sys.modules, "pypdfium2_raw", None)  # hidden: as if not installed
    with pytest.raises(ImportError, match="pypdfium2_raw"):
        engine.pdfium()
