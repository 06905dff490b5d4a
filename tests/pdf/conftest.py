"""The generated PDFs (tests/pdf/make_pdfs.py), written once per session into a temporary
folder, and what the PDF tests share."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import answer, call, cite, claim, result, source, write_trace
from tests.pdf.make_pdfs import Made, font, write_all


def need_engine() -> None:
    """Skip, saying why, where the pdf extra is not installed (the test extra has it)."""
    pytest.importorskip("pypdfium2", reason="the pdf extra (tracecite[pdf]) is not installed")


@pytest.fixture(scope="session")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Made]:
    """Every generated PDF, by name."""
    need_engine()
    if font() is None:
        pytest.skip("DejaVu Sans (Debian's fonts-dejavu-core) is not installed: the PDFs "
                    "with curly punctuation and ligatures cannot be written")
    return write_all(tmp_path_factory.mktemp("pdfs"))


def files_trace(path: Path, cited: Iterable[tuple[str, str]]) -> Path:
    """A trace citing each ``(uri, quote)`` (one source per URI; its capture holds the
    quotes, so the evidence check passes and the live verdict is the file's)."""
    by_uri: dict[str, list[str]] = {}
    for uri, quote in cited:
        by_uri.setdefault(uri, []).append(quote)
    sources = [source(f"s{i}", uri, " ".join(quotes))
               for i, (uri, quotes) in enumerate(by_uri.items(), 1)]
    ids = {uri: f"s{i}" for i, uri in enumerate(by_uri, 1)}
    cites: list[dict[str, Any]] = [cite(ids[uri], quote) for uri, quote in cited]
    return write_trace(path, [call(), result(sources=sources), answer([claim(citations=cites)])])
