"""Writes the PDFs the PDF tests read, each with the sentences it holds (found) and altered
copies of them (never found): ``python -m tests.pdf.make_pdfs DIR`` writes them to DIR.

fpdf2 writes them (the test extra has it) with DejaVu Sans, the font of Debian's
``fonts-dejavu-core``, for the curly punctuation and the ligature characters; :func:`font`
is None where it is missing, and the tests that need it say so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FONT_PATHS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/local/share/fonts/DejaVuSans.ttf",
)
LONG_PAGES = 300


def font() -> str | None:
    """The path of DejaVu Sans, or None."""
    return next((p for p in FONT_PATHS if os.path.exists(p)), None)


@dataclass(frozen=True)
class Made:
    """One PDF written: where, the sentences it holds, altered ones it does not, and, for a
    PDF that cannot be read, the words TC323's reason has."""

    path: Path
    found: tuple[str, ...] = ()
    altered: tuple[str, ...] = ()
    unreadable: str | None = None
    pages: int = 1


@dataclass
class _Doc:
    pdf: Any
    found: list[str] = field(default_factory=list)
    altered: list[str] = field(default_factory=list)


def _new() -> Any:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_compression(True)
    path = font()
    assert path is not None
    pdf.add_font("dejavu", "", path)
    pdf.set_font("dejavu", size=11)
    pdf.set_auto_page_break(False)
    return pdf


def _one_column(pdf: Any) -> tuple[list[str], list[str]]:
    sentences = [
        "Citation checkers read the text of every source they are given.",
        "The quarterly filing lists revenue, expenses and the outlook for the coming year.",
        "A quote that wraps across several lines of a narrow column is still one sentence.",
    ]
    pdf.add_page()
    pdf.set_xy(20, 20)
    pdf.multi_cell(70, 6, " ".join(sentences))
    altered = ["Citation checkers read the text of any source they are given.",
               "The quarterly filing lists revenue and the outlook for the coming year."]
    return sentences, altered


def _two_columns(pdf: Any) -> tuple[list[str], list[str]]:
    left = ["The left column opens the argument about open data.",
            "It closes with a claim about public registries."]
    right = ["The right column answers with the cost of keeping records.",
             "Archives need money as much as they need care."]
    pdf.add_page()
    pdf.set_xy(15, 20)
    pdf.multi_cell(85, 6, " ".join(left))
    pdf.set_xy(110, 20)
    pdf.multi_cell(85, 6, " ".join(right))
    return left + right, ["The left column opens the argument about closed data."]


def _headers(pdf: Any) -> tuple[list[str], list[str]]:
    found = []
    for page in (1, 2, 3):
        pdf.add_page()
        pdf.set_xy(20, 10)
        pdf.cell(0, 6, "Annual Report of the Example Institute")
        sentence = f"Section {page} reports what the institute measured this year."
        found.append(sentence)
        pdf.set_xy(20, 40)
        pdf.multi_cell(170, 6, sentence)
        pdf.set_xy(20, 280)
        pdf.cell(0, 6, f"Page {page} of 3")
    return found, ["Section 4 reports what the institute measured this year."]


def _page_break(pdf: Any) -> tuple[list[str], list[str]]:
    pdf.add_page()
    pdf.set_xy(20, 270)
    pdf.cell(0, 6, "The committee agreed that the evidence")
    pdf.add_page()
    pdf.set_xy(20, 20)
    pdf.cell(0, 6, "was strong enough to publish the findings.")
    return (["The committee agreed that the evidence was strong enough to publish the findings."],
            ["The committee agreed that the evidence was weak."])


def _hyphenation(pdf: Any) -> tuple[list[str], list[str]]:
    pdf.add_page()
    pdf.set_xy(20, 20)
    lines = ["The auditors examined every trans-", "action in the ledger with a well-known",
             "method and found the accounts in good or-", "der at the end of the year.",
             "The Franco-", "German treaty was signed by co\u2010", "operating states."]
    pdf.multi_cell(170, 6, "\n".join(lines))
    found = ["The auditors examined every transaction in the ledger with a well-known method",
             "found the accounts in good order at the end of the year.",
             "signed by cooperating states."]
    return found, ["The auditors examined every trans- action in the ledger",
                   "with a wellknown method"]


def _ligatures(pdf: Any) -> tuple[list[str], list[str]]:
    pdf.add_page()
    pdf.set_xy(20, 20)
    pdf.multi_cell(170, 6, "The \ufb01nancial of\ufb01ce reported \ufb02ows of  "
                   "e\ufb00ort and a\ufb04uent sta\ufb00.")
    return (["The financial office reported flows of effort and affluent staff."],
            ["The financial office reported flows of effort and fluent staff."])


def _curly(pdf: Any) -> tuple[list[str], list[str]]:
    pdf.add_page()
    pdf.set_xy(20, 20)
    text = ("The minister said \u201cwe will publish the data\u201d \u2014 and the "
            "ministry\u2019s staff agreed.")
    pdf.multi_cell(170, 6, text)
    return [text], ['The minister said "we will publish the data" - and the ministry\'s '
                    'staff agreed.']


def _table(pdf: Any) -> tuple[list[str], list[str]]:
    pdf.add_page()
    pdf.set_xy(20, 20)
    rows = [("Region", "Revenue growth"), ("North", "Twelve percent a year"),
            ("South", "Four percent a year")]
    with pdf.table(first_row_as_headings=False) as table:
        for row in rows:
            cells = table.row()
            for cell in row:
                cells.cell(cell)
    return ["Twelve percent a year", "Four percent a year", "Revenue growth"], [
        "Twenty percent a year"]


def _rotated(pdf: Any) -> tuple[list[str], list[str]]:
    pdf.add_page(orientation="L")
    with pdf.rotation(90, x=100, y=150):
        pdf.set_xy(100, 150)
        pdf.cell(0, 6, "Rotated tables still carry their captions.")
    # A second page, turned a quarter by the page's own /Rotate (see _turn_page_two).
    pdf.add_page()
    pdf.set_xy(20, 20)
    pdf.cell(0, 6, "A page turned on its side keeps its text in order.")
    return (["Rotated tables still carry their captions.",
             "A page turned on its side keeps its text in order."],
            ["Rotated tables lose their captions."])


def _turn_page_two(path: Path) -> None:
    """Give page 2 a /Rotate of 90 (fpdf2 writes none): the engine under test is only the
    writer's tool here, its text extraction is not used."""
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    document[1].set_rotation(90)
    turned = path.with_suffix(".turned")
    document.save(str(turned))
    document.close()
    turned.replace(path)


def _long(pdf: Any) -> tuple[list[str], list[str]]:
    for page in range(1, LONG_PAGES + 1):
        pdf.add_page()
        pdf.set_xy(20, 20)
        pdf.cell(0, 6, f"Page {page} of the long report records measurement {page * 7}.")
    return ([f"Page {p} of the long report records measurement {p * 7}." for p in (1, 150, 300)],
            ["Page 301 of the long report records measurement 2107."])


def _image_only(pdf: Any) -> tuple[list[str], list[str]]:
    from PIL import Image

    pdf.add_page()
    pdf.image(Image.new("RGB", (60, 40), (200, 30, 30)), x=20, y=20, w=60)
    return [], []


READABLE: dict[str, Callable[[Any], tuple[list[str], list[str]]]] = {
    "one-column": _one_column,
    "two-columns": _two_columns,
    "headers-footers": _headers,
    "page-break": _page_break,
    "hyphenation": _hyphenation,
    "ligatures": _ligatures,
    "curly": _curly,
    "table": _table,
    "rotated": _rotated,
    "long": _long,
}


def write_all(folder: Path) -> dict[str, Made]:
    """Write every PDF into ``folder``; by name, what each holds."""
    folder.mkdir(parents=True, exist_ok=True)
    made: dict[str, Made] = {}
    for name, build in READABLE.items():
        pdf = _new()
        found, altered = build(pdf)
        path = folder / f"{name}.pdf"
        pdf.output(str(path))
        if name == "rotated":
            _turn_page_two(path)
        made[name] = Made(path, tuple(found), tuple(altered),
                          pages=pdf.page_no())
    for name, user in (("encrypted-open", ""), ("encrypted-password", "secret")):
        pdf = _new()
        found, altered = _one_column(pdf)
        pdf.set_encryption(owner_password="owner-secret", user_password=user)
        path = folder / f"{name}.pdf"
        pdf.output(str(path))
        made[name] = (Made(path, tuple(found), tuple(altered)) if not user else
                      Made(path, unreadable="encrypted"))
    pdf = _new()
    _image_only(pdf)
    path = folder / "image-only.pdf"
    pdf.output(str(path))
    made["image-only"] = Made(path, unreadable="no text layer")
    whole = made["long"].path.read_bytes()
    path = folder / "truncated.pdf"
    path.write_bytes(whole[:len(whole) // 3])
    made["truncated"] = Made(path, unreadable="damaged")
    return made


if __name__ == "__main__":
    for name, item in write_all(Path(sys.argv[1])).items():
        print(name, item.path)
