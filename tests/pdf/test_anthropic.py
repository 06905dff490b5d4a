"""Anthropic base64 PDF documents (docs/guides/pdf.md#for-importers): a ``page_location``
citation is checked against the pages it names only, the source naming those pages; a PDF
nothing cites blocks nothing."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.pdf.make_pdfs import Made


def _exchange(pdf: bytes, citations: list[dict[str, Any]]) -> dict[str, Any]:
    document = {"type": "document", "citations": {"enabled": True},
                "source": {"type": "base64", "media_type": "application/pdf",
                           "data": base64.b64encode(pdf).decode("ascii")}}
    return {
        "request": {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
            {"role": "user", "content": [document, {"type": "text", "text": "Summarise."}]}]},
        "response": {"id": "msg_pdf", "type": "message", "role": "assistant",
                     "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                     "content": [{"type": "text", "text": "A claim.", "citations": citations}]},
    }


def _page(quote: str, start: int, end: int) -> dict[str, Any]:
    return {"type": "page_location", "cited_text": quote, "document_index": 0,
            "document_title": None, "start_page_number": start, "end_page_number": end}


def _import(cli: Cli, tmp_path: Path, exchange: dict[str, Any]) -> Path:
    path = tmp_path / "exchange.json"
    path.write_text(json.dumps(exchange), encoding="utf-8")
    out = tmp_path / "out"
    res = cli("import", "anthropic", path, "-o", out, "--json")
    assert res.exit == 0, res.out
    (trace,) = out.glob("*.jsonl")
    return trace


def test_page_location_citations_are_checked_against_their_pages(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made]) -> None:
    pdf = pdfs["headers-footers"].path.read_bytes()
    first, second, third = pdfs["headers-footers"].found
    trace = _import(cli, tmp_path, _exchange(pdf, [
        _page(first, 1, 2), _page(second, 2, 3), _page(third, 1, 4),
        _page(third, 1, 2),  # on page 3, cited as page 1's
    ]))
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    sources = {s["id"]: s["uri"] for e in events for s in e.get("sources") or []}
    assert sources == {"document-0-page-1": "document:0#page=1",
                       "document-0-page-2": "document:0#page=2",
                       "document-0-pages-1-3": "document:0#pages=1-3"}
    report = cli("check", trace, "--evidence", "--json").json()
    assert [(f["code"], f["citation"], f["source_id"]) for f in report["findings"]] == [
        ("TC202", 4, "document-0-page-1")]


def test_pages_the_pdf_does_not_have_are_refused(cli: Cli, tmp_path: Path,
                                                 pdfs: dict[str, Made]) -> None:
    pdf = pdfs["headers-footers"].path.read_bytes()
    path = tmp_path / "exchange.json"
    path.write_text(json.dumps(_exchange(pdf, [_page("x", 3, 5)])), encoding="utf-8")
    res = cli("import", "anthropic", path, "-o", tmp_path / "out", "--json")
    (finding,) = res.json()["findings"]
    assert (finding["code"], res.exit) == ("TC107", 1)
    assert "pages 3 to 4 are not in the PDF document (document_index 0), which has 3" in (
        finding["message"])


def test_an_unreadable_cited_pdf_says_why(cli: Cli, tmp_path: Path,
                                          pdfs: dict[str, Made]) -> None:
    pdf = pdfs["encrypted-password"].path.read_bytes()
    path = tmp_path / "exchange.json"
    path.write_text(json.dumps(_exchange(pdf, [_page("x", 1, 2)])), encoding="utf-8")
    (finding,) = cli("import", "anthropic", path, "-o", tmp_path / "out",
                     "--json").json()["findings"]
    assert finding["code"] == "TC107" and "encrypted" in finding["message"]


def test_a_pdf_nothing_cites_is_never_read_even_broken(cli: Cli, tmp_path: Path) -> None:
    exchange = _exchange(b"", [])
    exchange["request"]["messages"][0]["content"][0]["source"]["data"] = "not base64 at all!"
    text = {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                           "data": "The sky is blue."}}
    exchange["request"]["messages"][0]["content"].insert(1, text)
    exchange["response"]["content"][0]["citations"] = [
        {"type": "char_location", "cited_text": "The sky is blue.", "document_index": 1,
         "document_title": None, "start_char_index": 0, "end_char_index": 16}]
    trace = _import(cli, tmp_path, exchange)
    assert cli("check", trace, "--evidence", "--json").exit == 0


def test_a_cited_pdf_that_is_not_base64(cli: Cli, tmp_path: Path) -> None:
    exchange = _exchange(b"", [_page("x", 1, 2)])
    exchange["request"]["messages"][0]["content"][0]["source"]["data"] = "not base64 at all!"
    path = tmp_path / "exchange.json"
    path.write_text(json.dumps(exchange), encoding="utf-8")
    (finding,) = cli("import", "anthropic", path, "-o", tmp_path / "out",
                     "--json").json()["findings"]
    assert finding["code"] == "TC107" and "is not base64" in finding["message"]


def test_an_imports_pdfs_are_read_by_one_worker(
        cli: Cli, tmp_path: Path, pdfs: dict[str, Made],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three exchanges citing PDFs: one PDF worker started for the import, not one a PDF."""
    from tracecite.pdf import reader

    started: list[object] = []
    worker = reader._Worker

    def counted(*args: Any) -> Any:
        started.append(args)
        return worker(*args)

    monkeypatch.setattr(reader, "_Worker", counted)
    pdf = pdfs["headers-footers"].path.read_bytes()
    first = pdfs["headers-footers"].found[0]
    path = tmp_path / "exchanges.jsonl"
    path.write_text("".join(json.dumps(_exchange(pdf, [_page(first, 1, 2)])) + "\n"
                            for _ in range(3)), encoding="utf-8")
    res = cli("import", "anthropic", path, "-o", tmp_path / "out", "--json")
    assert res.exit == 0, res.out
    assert len(list((tmp_path / "out").glob("*.jsonl"))) == 3
    assert len(started) == 1
