"""The near-miss diagnosis of a PDF (docs/guides/pdf.md#near-misses): the ``layout`` kind and
the pages it names, on page texts as the engine gives them (no engine needed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tracecite.checks.parse_pool import match_pages
from tracecite.findings import Diagnosis

PAGES = (
    "Annual Report\r\nThe board met in March and the com\ufffemittee\r\nreviewed the Franco\ufffe"
    "German accounts, which were in good\r\nPage 1 of 3",
    "Annual Report\r\norder at the end of the year. A well-\r\nknown auditor signed them."
    "\r\nPage 2 of 3",
    "Annual Report\r\nNothing else happened in the last quarter.\r\nPage 3 of 3",
)


def verdict(quote: str) -> bool | Diagnosis:
    (result,) = match_pages(PAGES, [quote])
    return result


def test_the_rules_apply_before_matching() -> None:
    assert verdict("The board met in March and the committee reviewed the") is True
    assert verdict("A wellknown auditor") is True  # PDFium's mark is removed, halves joined


def test_a_quote_across_a_page_break_with_a_running_header_and_footer() -> None:
    diagnosis = verdict("which were in good order at the end of the year.")
    assert isinstance(diagnosis, Diagnosis)
    assert (diagnosis.kinds, diagnosis.where) == (("layout",), "pages 1-2")


def test_a_hyphen_at_a_line_end_that_belongs_to_the_word() -> None:
    diagnosis = verdict("the Franco-German accounts")
    assert isinstance(diagnosis, Diagnosis)
    assert (diagnosis.kinds, diagnosis.where) == (("layout",), "page 1")
    diagnosis = verdict("A well-known auditor signed them.")
    assert isinstance(diagnosis, Diagnosis)
    assert (diagnosis.kinds, diagnosis.where) == (("layout",), "page 2")


def test_a_fold_is_preferred_and_names_its_page() -> None:
    diagnosis = verdict("NOTHING ELSE HAPPENED")
    assert isinstance(diagnosis, Diagnosis)
    assert (diagnosis.kinds, diagnosis.where) == (("case",), "page 3")


def test_a_partial_match_names_the_page_of_its_run() -> None:
    diagnosis = verdict("Nothing else happened in the last quarter of the decade.")
    assert isinstance(diagnosis, Diagnosis)
    assert (diagnosis.kinds, diagnosis.where) == (("partial",), "page 3")


def test_nothing_close_names_no_page() -> None:
    diagnosis = verdict("An entirely different sentence about the weather in May.")
    assert isinstance(diagnosis, Diagnosis)
    assert (diagnosis.kinds, diagnosis.where) == (("none",), None)


def test_running_lines_are_only_those_that_recur() -> None:
    # The first line of page 2 is not repeated anywhere: a quote across it is no layout miss.
    pages = ("First page ends here", "Unique opening line\r\nand the rest")
    (result,) = match_pages(pages, ["ends here and the rest"])
    assert isinstance(result, Diagnosis) and "layout" not in result.kinds


def test_the_message_phrase_names_the_pages_and_never_text() -> None:
    from tracecite.checks.diagnosis import phrase

    said = phrase(Diagnosis(("layout",), quote_chars=40, where="pages 1-2"), "in the file")
    assert said == ("it is there when the PDF's line and column breaks are joined differently "
                    "(a hyphen kept at a line's end, or running headers and footers left out) "
                    "(pages 1-2 of the PDF)")
    partial = phrase(Diagnosis(("partial",), quote_chars=40, matched_chars=30,
                               first_difference=30, where="page 3"), "in the file")
    assert partial.endswith("(page 3 of the PDF)")
    # An HTML diagnosis's "where" is a place in the markup, not a page.
    hidden = phrase(Diagnosis(("hidden",), quote_chars=4, where="script"))
    assert "of the PDF" not in hidden


def test_the_page_texts_are_worked_out_once_per_source(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each miss used to apply the PDF rules to every page again to name its pages.
    from tracecite.checks import diagnosis
    from tracecite.pdf import text

    calls = {"page_text": 0, "with_starts": 0}

    def counted(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            calls[name] += 1
            return function(*args)
        return call

    monkeypatch.setattr(text, "page_text", counted("page_text", text.page_text))
    monkeypatch.setattr(diagnosis, "with_starts", counted("with_starts", diagnosis.with_starts))
    quotes = ["NOTHING ELSE HAPPENED", "Nothing else happened in the last quarter of the decade.",
              "THE BOARD MET", "A WELLKNOWN AUDITOR"]
    verdicts = match_pages(PAGES, quotes)
    assert all(isinstance(v, Diagnosis) and v.where for v in verdicts)
    assert calls["page_text"] == len(PAGES)  # once per page, for the matching
    assert calls["with_starts"] == 1 + 3  # the pages' starts once; the three layouts once
