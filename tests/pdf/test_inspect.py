"""Inspect PDF documents (docs/guides/pdf.md#where-pdfs-come-from): a cited ``ContentDocument``
PDF and a fetched PDF are captured as their pages' text, joined by a newline."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.importers.test_inspect_pages import (
    PAGE,
    cited,
    doc_cite,
    fetch_use,
    fetched,
    final,
    log_of,
    only_run,
    sample,
    user,
)
from tests.pdf.make_pdfs import Made


def _pdf_document(data: bytes) -> dict[str, str]:
    return {"type": "document", "filename": "r.pdf", "mime_type": "application/pdf",
            "document": f"data:application/pdf;base64,{base64.b64encode(data).decode()}"}


def test_a_cited_pdf_document_is_its_pages_text(tmp_path: Path, pdfs: dict[str, Made]) -> None:
    made = pdfs["page-break"]
    run = only_run(log_of(tmp_path, sample(
        user(_pdf_document(made.path.read_bytes())), final(doc_cite(0, made.found[0])))))
    [(uri, text, error)] = cited(run)
    assert (uri, error) == ("document:0", None)
    assert text is not None and " ".join(text.split()) == made.found[0]


def test_a_fetched_pdf_is_its_pages_text(tmp_path: Path, pdfs: dict[str, Made]) -> None:
    made = pdfs["one-column"]
    source = {"type": "base64", "media_type": "application/pdf",
              "data": base64.b64encode(made.path.read_bytes()).decode()}
    use = fetch_use(PAGE, fetched(PAGE, source))
    run = only_run(log_of(tmp_path, sample(user(), final(doc_cite(0, made.found[0]),
                                                          before=(use,)))))
    [(uri, text, error)] = cited(run)
    assert (uri, error) == (PAGE, None)
    assert text is not None and all(s in " ".join(text.split()) for s in made.found)
