"""The notes form: records in a ```tracecite fenced block, at the document's lines."""

from __future__ import annotations

from pathlib import Path

from tests.inputs.documents.helpers import citations, read
from tracecite.codes import Code

BLOCK = ("# Title\n\n```tracecite\nclaim: A claim.\nquote:  some words here\n"
         "url: https://e.org/n\n\n---\nclaim: B\nquote: more words\nurl: https://e.org/m\n```\n")


def test_records_at_document_lines(tmp_path: Path) -> None:
    first, second = citations(tmp_path, BLOCK)
    assert (first.form, first.quote, first.url, first.claim) == (
        "notes", "some words here", "https://e.org/n", "A claim.")
    assert (first.line, first.column) == (5, 9)
    assert first.lines == (4, 5, 6)
    assert (second.ordinal, second.line, second.column) == (2, 10, 8)


def test_other_fences_are_not_notes(tmp_path: Path) -> None:
    assert citations(tmp_path, BLOCK.replace("```tracecite", "```text")) == []
    assert citations(tmp_path, BLOCK.replace("```tracecite", "~~~ tracecite extra")
                     .replace("\n```\n", "\n~~~\n")) != []


def test_broken_records_are_found_at_document_lines(tmp_path: Path) -> None:
    document = read(tmp_path, "Text.\n\n```tracecite\nclaim: c\nqoute: x\nurl: u\n```\n")
    assert document.citations == ()
    codes = [(f.code, f.line, f.column, f.record) for f in document.problems]
    assert (Code.NOTES_UNKNOWN_FIELD, 5, 1, None) in codes
    assert all(f.file is not None for f in document.problems)


def test_indented_block_columns(tmp_path: Path) -> None:
    document = read(tmp_path, "- item\n\n  ```tracecite\n  claim: c\n  bad line\n  url: u\n  ```\n")
    [problem] = [f for f in document.problems if f.code is Code.NOTES_BAD_LINE]
    assert (problem.line, problem.column) == (5, 3)
