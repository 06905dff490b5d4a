"""``check --docs``'s listing as data (docs/reference/reports.md#the-documents-listing): the
report's ``documents`` member, written only when the run lists documents, never a quote; one
console line per document (none with ``--quiet``), none in SARIF or github; read back and merged
in input order."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tracecite.codes import Code
from tracecite.findings import Finding, ListedCitation, ListedDocument, Report, RunDigests
from tracecite.inputs.documents import parse_document
from tracecite.merge import merge_reports
from tracecite.report_reader import ReportFormatError, read_report, read_report_file
from tracecite.report_writer import report_dict
from tracecite.reporters.json import format_json, safe_json, write_json

QUOTE = "the quick brown fox jumps over"
DOC = (f"# Page\n\nAs “{QUOTE}” [the guide](guide.md#:~:text=quick%20brown) said.\n\n"
       "<!-- tracecite: ignore -->\n"
       "> lazy dogs sleep all day\n>\n> — [a page](https://a.example/p)\n")


def _doc(tmp_path: Path, name: str = "page.md", body: str = DOC) -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_check_docs_lists_each_citation_as_data_never_its_quote(cli: Cli, tmp_path: Path
                                                                ) -> None:
    doc = _doc(tmp_path)
    run = cli("check", "--docs", doc, "--json")
    report = run.json()
    assert report["documents"] == [{"file": str(doc), "citations": [
        {"record": 1, "line": 3, "column": 5, "form": "inline", "source": "guide.md",
         "directive": True, "ignored": False},
        {"record": 2, "line": 6, "column": 3, "form": "blockquote",
         "source": "https://a.example/p", "directive": False, "ignored": True}]}]
    assert "notices" not in report
    for words in ("quick", "lazy", "quick%20brown"):
        assert words not in run.out, words


def test_reports_that_list_no_documents_have_no_member(cli: Cli, tmp_path: Path) -> None:
    doc = _doc(tmp_path)
    assert "documents" not in cli("verify-docs", "--root", tmp_path, doc, "--json",
                                  "--no-progress").json()
    notes = tmp_path / "a.notes"
    notes.write_text("quote: a b c d\nurl: https://a.example/\n", encoding="utf-8")
    assert "documents" not in cli("check", notes, "--json").json()
    assert '"documents"' not in format_json(Report("check"))


def test_the_console_lists_a_line_per_document_and_quiet_leaves_it_out(cli: Cli, tmp_path: Path
                                                                       ) -> None:
    doc = _doc(tmp_path)
    other = _doc(tmp_path, "empty.md", "# Nothing cited\n")
    out = cli("check", "--docs", doc, other).out
    assert (f"note: {doc}: 2 citations: 3:5 inline guide.md (text directive); "
            f"6:3 blockquote https://a.example/p (ignored)\n") in out
    assert f"note: {other}: 0 citations\n" in out
    quiet = cli("check", "--docs", doc, other, "--quiet")
    assert quiet.exit == 0 and quiet.out == ""


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_sarif_and_github_carry_no_listing(cli: Cli, tmp_path: Path, fmt: str) -> None:
    doc = _doc(tmp_path)
    out = cli("check", "--docs", doc, "--format", fmt).out
    assert "guide.md" not in out and "a.example/p" not in out


def _report(documents: tuple[ListedDocument, ...] | None, *findings: Finding,
            digest: str = "1") -> Report:
    return Report("check", tuple(findings), documents=documents,
                  run=RunDigests(digest * 64, "2" * 64))


def _listed(file: str, *records: int) -> ListedDocument:
    return ListedDocument(file, tuple(
        ListedCitation(n, n + 2, 1, "inline", f"https://a.example/{n}", n % 2 == 0, False)
        for n in records))


BROKEN = Finding(Code.DOC_CITATION_INVALID, "the cite attribute is empty", file="b.md", line=4,
                 column=2)


@pytest.mark.parametrize("findings", [(), (BROKEN,)])
@pytest.mark.parametrize("documents", [(), (_listed("a.md", 1, 2), _listed("b.md"))])
def test_the_json_written_a_piece_at_a_time_is_the_whole_documents(
        documents: tuple[ListedDocument, ...], findings: tuple[Finding, ...]) -> None:
    report = _report(documents, *findings)
    whole = safe_json(report_dict(report))
    assert format_json(report) == whole
    written: list[str] = []

    class Sink:
        def write(self, text: str) -> int:
            written.append(text)
            return len(text)

    write_json(report, Sink())  # type: ignore[arg-type]
    assert "".join(written) == whole
    assert json.loads(whole)["documents"] == [
        {"file": d.file, "citations": [
            {"record": c.record, "line": c.line, "column": c.column, "form": c.form,
             "source": c.source, "directive": c.directive, "ignored": c.ignored}
            for c in d.listed()]} for d in documents]


def test_a_listing_reads_back_whole_and_streamed(tmp_path: Path) -> None:
    report = _report((_listed("a.md", 1, 2), _listed("b.md")), BROKEN)
    document = report_dict(report)
    assert report_dict(read_report(document)) == document
    path = tmp_path / "r.json"
    path.write_text(format_json(report), encoding="utf-8")
    read = read_report_file(str(path))
    assert isinstance(read, Report) and read.documents == report.documents
    assert read_report(report_dict(_report(None))).documents is None


@pytest.mark.parametrize(("member", "value"), [
    ("record", True), ("line", "3"), ("directive", 1), ("source", None), ("form", 7)])
def test_a_listed_citation_of_the_wrong_type_is_no_report(member: str, value: Any) -> None:
    document = report_dict(_report((_listed("a.md", 1),)))
    document["documents"][0]["citations"][0][member] = value
    with pytest.raises(ReportFormatError, match=f"citation 1: {member} is missing"):
        read_report(document)
    del document["documents"][0]["citations"][0][member]
    with pytest.raises(ReportFormatError, match=member):
        read_report(document)


@pytest.mark.parametrize("documents", [{}, [1], [{"file": "a.md"}], [{"citations": []}]])
def test_a_listing_that_is_not_one_is_no_report(documents: object) -> None:
    document = report_dict(_report(()))
    document["documents"] = documents
    with pytest.raises(ReportFormatError, match="documents"):
        read_report(document)


def test_merge_concatenates_the_listings_in_input_order() -> None:
    first = _report((_listed("b.md", 1),), digest="1")
    second = _report(None, digest="3")  # a check that listed no documents adds none
    third = _report((_listed("a.md", 1, 2), _listed("c.md")), digest="4")
    merged = merge_reports([first, second, third])
    assert merged.documents is not None
    assert [d.file for d in merged.documents] == ["b.md", "a.md", "c.md"]
    assert merge_reports([first, third][::-1]).documents == (*(third.documents or ()),
                                                             *(first.documents or ()))
    assert merge_reports([second, _report(None, digest="5")]).documents is None


def test_merge_on_the_command_line_keeps_the_listing(cli: Cli, tmp_path: Path) -> None:
    one = _doc(tmp_path, "one.md")
    two = _doc(tmp_path, "two.md", "# Two\n\n> a b c d\n>\n> — [x](x.md)\n")
    (tmp_path / "1.json").write_text(cli("check", "--docs", two, "--json").out, "utf-8")
    (tmp_path / "2.json").write_text(cli("check", "--docs", one, "--json").out, "utf-8")
    merged = cli("merge", tmp_path / "1.json", tmp_path / "2.json", "--json").json()
    assert [d["file"] for d in merged["documents"]] == [str(two), str(one)]
    assert [len(d["citations"]) for d in merged["documents"]] == [1, 2]


def test_the_listing_holds_the_runs_records_not_a_copy_of_each() -> None:
    """10,000 documents of five citations: the report's listing refers to the documents'
    own citation records, and writing it holds one document's JSON at a time."""
    from tracecite.checks.documents import listing

    body = "".join(f"“one two three four {n}” [x](https://a.example/{n})\n\n"
                   for n in range(5))
    documents = [parse_document(body, f"d{i}.md") for i in range(2_000)]
    listed = tuple(listing(d) for d in documents)
    assert all(a.citations is d.citations for a, d in zip(listed, documents, strict=True))
    report = _report(listed)

    class Count:
        size = 0

        def write(self, text: str) -> int:
            self.size += len(text)
            return len(text)

    sink = Count()
    tracemalloc.start()
    try:
        write_json(report, sink)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.size > 2_000_000  # ten thousand citations written …
    assert peak < 600_000  # … never all of them in memory at once
