"""PDFium's text of each PDF named on the command line, and nothing else: no checks, no
report, one bare interpreter that loads only the engine, called as TraceCite's PDF workers call
it (``tracecite.pdf.engine``). Figure 12 runs one such process per core over its share of the
files, as its ``pdftotext`` peer does, for the floor of any tool that reads PDFs with PDFium
(``benchmarks/bench_pdf.py``)."""

from __future__ import annotations

import sys

from tracecite.pdf.engine import Document


def main(paths: list[str]) -> int:
    """Read every page's text of each PDF."""
    for path in paths:
        with open(path, "rb") as stream, Document(stream.read()) as document:
            for index in range(document.pages):
                document.text(index)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
