"""PDFium's text of each PDF named on the command line, and nothing else: no checks, no
report, one bare interpreter that imports only the engine. Figure 12 runs one such process per
core over its share of the files, as its ``pdftotext`` peer does, for the floor of any tool
that reads PDFs with PDFium (``benchmarks/bench_pdf.py``)."""

from __future__ import annotations

import sys

import pypdfium2  # type: ignore[import-untyped]  # the pdf extra; no types shipped


def main(paths: list[str]) -> int:
    """Read every page's text of each PDF, as TraceCite's PDF workers do."""
    for path in paths:
        document = pypdfium2.PdfDocument(path)
        try:
            for index in range(len(document)):
                page = document[index]
                textpage = page.get_textpage()
                textpage.get_text_range()
                textpage.close()
                page.close()
        finally:
            document.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
