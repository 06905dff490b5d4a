"""Reading a document from a string in a test."""

from __future__ import annotations

from pathlib import Path

from tracecite.inputs.documents import DocumentFile, read_document
from tracecite.model import DocumentCitation


def read(tmp_path: Path, text: str | bytes, name: str = "doc.md",
         **options: object) -> DocumentFile:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8", newline="")
    else:
        path.write_bytes(text)
    return read_document(str(path), **options)  # type: ignore[arg-type]


def citations(tmp_path: Path, text: str, name: str = "doc.md") -> list[DocumentCitation]:
    document = read(tmp_path, text, name)
    assert document.problems == ()
    return list(document.citations)
