"""PDFs waiting for a PDF worker (docs/guides/pdf.md#limits): the loader that hands one over
goes on, and past the bytes a run keeps in memory the others wait in a temporary file that has
no name, each read as if it had waited in memory."""

from __future__ import annotations

import tempfile
import threading
from typing import Any

import pytest

from tests.pdf.make_pdfs import Made
from tracecite.checks.kinds import MatchKind
from tracecite.checks.parse_pool import ParsePool
from tracecite.findings import Diagnosis
from tracecite.matching import normalise
from tracecite.pdf.reader import PdfError, PdfReader


def test_past_the_bytes_held_pdfs_wait_on_disk(pdfs: dict[str, Made],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    made = pdfs["one-column"]
    data = made.path.read_bytes()
    gate = threading.Event()
    real = PdfReader.raw_pages

    def held_back(reader: PdfReader, body: bytes) -> tuple[str, ...]:
        gate.wait(30)  # every PDF is handed over before the first is read
        return real(reader, body)

    files: list[Any] = []
    made_file = tempfile.TemporaryFile

    def counted(*args: Any, **kwargs: Any) -> Any:
        files.append(made_file(*args, **kwargs))
        return files[-1]

    monkeypatch.setattr(PdfReader, "raw_pages", held_back)
    monkeypatch.setattr(tempfile, "TemporaryFile", counted)
    quotes = [normalise(made.found[0]), normalise("a sentence that is in no PDF at all")]
    with ParsePool(1, pdf_held=len(data) + 1) as pool:
        futures = [pool.submit(MatchKind.PDF, data, quotes) for _ in range(6)]
        assert not any(f.done() for f in futures)  # the caller did not wait for a worker
        assert len(files) == 5  # one body fits in memory, the five others wait on disk
        gate.set()
        for future in futures:
            found, missed = future.result(30)
            assert found is True and isinstance(missed, Diagnosis)
    assert all(f.closed for f in files)  # read back, then gone


def test_a_pdf_that_cannot_be_read_fails_its_own_future(pdfs: dict[str, Made]) -> None:
    made = pdfs["one-column"]
    data = made.path.read_bytes()
    quotes = [normalise(made.found[0])]
    with ParsePool(1, pdf_held=1) as pool:  # every body but a first one waits on disk
        futures = [pool.submit(MatchKind.PDF, body, quotes)
                   for body in (data, b"%PDF-1.7 not really", data)]
        assert futures[0].result(30) == futures[2].result(30) == [True]
        with pytest.raises(PdfError) as caught:
            futures[1].result(30)
        assert "damaged" in caught.value.reason


def test_stopping_drops_the_pdfs_not_begun(pdfs: dict[str, Made],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data = pdfs["one-column"].path.read_bytes()
    gate = threading.Event()
    real = PdfReader.raw_pages

    def held_back(reader: PdfReader, body: bytes) -> tuple[str, ...]:
        gate.wait(30)
        return real(reader, body)

    files: list[Any] = []
    made_file = tempfile.TemporaryFile

    def counted(*args: Any, **kwargs: Any) -> Any:
        files.append(made_file(*args, **kwargs))
        return files[-1]

    monkeypatch.setattr(PdfReader, "raw_pages", held_back)
    monkeypatch.setattr(tempfile, "TemporaryFile", counted)
    pool = ParsePool(1, pdf_held=1)
    futures = [pool.submit(MatchKind.PDF, data, ["x"]) for _ in range(5)]
    pool.terminate()
    gate.set()
    assert files and all(f.closed for f in files)
    assert sum(f.cancelled() for f in futures) == 3  # two were with the worker's threads
    begun = [f for f in futures if not f.cancelled()]
    assert all(f.exception(30) is not None for f in begun)  # their worker was ended
