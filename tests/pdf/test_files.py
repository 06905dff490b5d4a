"""``file:`` PDFs (docs/guides/pdf.md#where-pdfs-come-from): a name ending in ``.pdf`` is read
as bytes under the PDF cap, any other name as text under the cap of every source."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracecite.checks.files import FileLoader
from tracecite.checks.kinds import MatchKind
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError

PDF = b"%PDF-1.7\n" + bytes(range(256)) * 8


@pytest.mark.parametrize("name", ["report.pdf", "REPORT.PDF", "dir%20a/r.Pdf"])
def test_a_pdf_name_is_read_as_bytes(tmp_path: Path, name: str) -> None:
    real = tmp_path / name.replace("%20", " ")
    real.parent.mkdir(exist_ok=True)
    real.write_bytes(PDF)
    loaded = FileLoader(str(tmp_path), 100, 4096).load(f"file:{name}")
    assert (loaded.kind, loaded.text) == (MatchKind.PDF, PDF)


def test_the_pdf_cap_is_for_pdf_names_only(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(PDF)
    (tmp_path / "a.txt").write_bytes(b"x" * len(PDF))
    loader = FileLoader(str(tmp_path), 100, len(PDF))
    assert loader.load("file:a.pdf").text == PDF
    with pytest.raises(FetchError) as caught:
        loader.load("file:a.txt")
    assert caught.value.code is Code.FILE_UNREADABLE and "100-byte cap" in caught.value.detail
    with pytest.raises(FetchError) as caught:
        FileLoader(str(tmp_path), 100, len(PDF) - 1).load("file:a.pdf")
    assert caught.value.code is Code.FILE_UNREADABLE


def test_a_pdf_under_another_name_is_not_read_as_one(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(PDF)
    with pytest.raises(FetchError) as caught:
        FileLoader(str(tmp_path), 10_000, 10_000).load("file:a.txt")
    assert (caught.value.code, caught.value.detail) == (Code.FILE_UNREADABLE,
                                                        "file is not UTF-8")


def test_a_pdf_outside_the_root_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / "out.pdf").write_bytes(PDF)
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(FetchError) as caught:
        FileLoader(str(root), 100, 4096).load("file:../out.pdf")
    assert caught.value.code is Code.FILE_OUTSIDE_ROOT
