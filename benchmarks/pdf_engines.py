"""The PDF engines TraceCite could read PDFs with, measured on the same PDFs: pypdfium2
(PDFium, the one it uses), pypdf, pdfminer.six and poppler's pdftotext (docs/guides/pdf.md,
the README's paragraph on PDF sources).

For each engine: the CPU time to extract the text of every PDF, and how many of the PDFs' known
sentences are found in that text, under TraceCite's normalisation (and, for every engine alike,
the PDF rules of docs/guides/pdf.md: ligatures folded, a hyphen at a line's end before a
lower-case letter joined). The PDFs are the test suite's (tests/pdf/make_pdfs.py: columns,
running headers, hyphenation, ligatures, curly punctuation, a table, a rotated page, 300
pages) and figure 12's 40 reports of 25 pages.

Only pypdfium2 is one of TraceCite's extras; install the others in your virtual environment
for this script alone:

    .venv/bin/pip install pypdf pdfminer.six
    apt-get install poppler-utils        # pdftotext
    .venv/bin/python benchmarks/pdf_engines.py

An engine that is not installed is left out, saying so.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gen_pdfs
from bench_util import Table, seconds, which

from tracecite.matching import MatchText, normalise
from tracecite.pdf.text import page_text

Extract = Callable[[Path], list[str]]


def _pdfium(path: Path) -> list[str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(str(path))
    try:
        return [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()


def _pypdf(path: Path) -> list[str]:
    import pypdf

    return [page.extract_text() or "" for page in pypdf.PdfReader(str(path)).pages]


def _pdfminer(path: Path) -> list[str]:
    from pdfminer.high_level import extract_text

    return extract_text(str(path)).split("\f")


def _pdftotext(path: Path) -> list[str]:
    done = subprocess.run(["pdftotext", "-q", "-enc", "UTF-8", str(path), "-"],
                          capture_output=True, check=False)
    return done.stdout.decode("utf-8", "replace").split("\f")


def _available() -> dict[str, Extract]:
    engines: dict[str, Extract] = {}
    for name, module, extract in (("pypdfium2 (PDFium)", "pypdfium2", _pdfium),
                                  ("pypdf", "pypdf", _pypdf),
                                  ("pdfminer.six", "pdfminer", _pdfminer)):
        try:
            __import__(module)
        except ImportError:
            print(f"{name} is not installed: left out", file=sys.stderr)
            continue
        engines[name] = extract
    if which("pdftotext"):
        engines["pdftotext (poppler)"] = _pdftotext
    else:
        print("pdftotext is not installed: left out", file=sys.stderr)
    return engines


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _documents(folder: Path) -> list[tuple[Path, tuple[str, ...]]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.pdf.make_pdfs import font, write_all

    documents: list[tuple[Path, tuple[str, ...]]] = []
    if font() is not None:
        documents += [(m.path, m.found) for m in write_all(folder).values() if m.found]
    else:
        print("DejaVu Sans is not installed: the test suite's PDFs are left out",
              file=sys.stderr)
    reports, quotes = gen_pdfs.report_set(40, 25)
    documents += [(reports / name, tuple(said)) for name, said in sorted(quotes.items())]
    return documents


def main() -> int:
    """Measure every engine installed; print the table."""
    with tempfile.TemporaryDirectory() as tmp:
        documents = _documents(Path(tmp))
        sentences = sum(len(found) for _, found in documents)
        table = Table(f"PDF engines: {len(documents)} PDFs, {sentences} known sentences",
                      ["engine", "CPU time", "sentences found", "the test suite's PDFs"])
        suite = [(p, f) for p, f in documents if not p.name.startswith("report-")]
        for name, extract in _available().items():
            started = _cpu()
            texts = [extract(path) for path, _ in documents]
            spent = _cpu() - started
            found = suite_found = 0
            for (path, known), pages in zip(documents, texts, strict=True):
                text = MatchText("\n".join(page_text(p) for p in pages))
                hits = sum(text.contains(normalise(s)) for s in known)
                found += hits
                if (path, known) in suite:
                    suite_found += hits
            table.add(name, seconds(spent), f"{found}/{sentences}",
                      f"{suite_found}/{sum(len(f) for _, f in suite)}")
        table.note(f"measured {time.strftime('%Y-%m-%d')}; CPU time of this process and the "
                   "pdftotext processes it waited for")
    print(table.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
