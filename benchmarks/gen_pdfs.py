"""PDFs with known text for the PDF benchmarks (figure 12 and ``pdf_engines.py``), made with
fpdf2 (in the test extra) and cached in ``benchmarks/out/pdfs-*``.

- :func:`report_set`: ``count`` reports of ``pages`` dense pages each (two paragraphs a page,
  wrapped lines, a running header and a page number), and the sentences each holds;
- :func:`padded_pdf`: a short report padded to about ``size`` bytes with an embedded image of
  noise, as scanned figures make real reports large while their text stays small (or a longer
  one of as many pages of text as asked for, padded to the same size).
"""

from __future__ import annotations

import random
from pathlib import Path

from bench_util import OUT_DIR

_PROSE = ("the report finds that public records kept by every agency grew faster than the "
          "budget for keeping them while the archive staff measured each series twice and "
          "wrote down what changed between the editions of the annual survey of registries "
          "data quality improved where the method was published and the sources were cited "
          "in full")
WORDS = _PROSE.split(" ")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(12, 22))]
    return " ".join(words).capitalize() + f" ({rng.randint(1000, 99999)})."


def _report(path: Path, pages: int, seed: int) -> list[str]:
    from fpdf import FPDF

    rng = random.Random(seed)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    sentences: list[str] = []
    for page in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=8)
        pdf.set_xy(15, 8)
        pdf.cell(0, 5, f"Report {seed} of the registry survey")
        pdf.set_font("Helvetica", size=10)
        pdf.set_xy(15, 20)
        text = " ".join(_sentence(rng) for _ in range(24))
        sentences.extend(s.strip() + ")." for s in text.split(").") if s.strip())
        pdf.multi_cell(180, 5, text)
        pdf.set_xy(15, 285)
        pdf.cell(0, 5, f"Page {page}")
    pdf.output(str(path))
    return sentences


def report_set(count: int = 40, pages: int = 25) -> tuple[Path, dict[str, list[str]]]:
    """The folder of ``count`` reports and, by file name, a few sentences of each."""
    folder = OUT_DIR / f"pdfs-{count}x{pages}"
    folder.mkdir(parents=True, exist_ok=True)
    quotes: dict[str, list[str]] = {}
    for n in range(count):
        path = folder / f"report-{n:03d}.pdf"
        sentences = _report(path, pages, n) if not path.exists() else _sentences(pages, n)
        rng = random.Random(n)
        quotes[path.name] = rng.sample(sentences, 5)
    return folder, quotes


def _sentences(pages: int, seed: int) -> list[str]:
    """The sentences :func:`_report` wrote for ``seed`` (without writing the PDF again)."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(pages):
        text = " ".join(_sentence(rng) for _ in range(24))
        out.extend(s.strip() + ")." for s in text.split(").") if s.strip())
    return out


def _padded_texts(pages: int) -> list[str]:
    rng = random.Random(7)  # the first pages the same whatever the number of pages
    return [" ".join(_sentence(rng) for _ in range(24)) for _ in range(pages)]


def padded_pdf(size: int, pages: int = 4) -> tuple[bytes, list[list[str]]]:
    """A report of ``pages`` pages of text padded with a noise image (on its last page) to
    about ``size`` bytes, and the sentences of each page."""
    texts = _padded_texts(pages)
    path = OUT_DIR / (f"padded-{size}.pdf" if pages == 4 else f"padded-{size}-{pages}p.pdf")
    if not path.exists():
        from fpdf import FPDF
        from PIL import Image

        OUT_DIR.mkdir(parents=True, exist_ok=True)
        side = int((size / 3) ** 0.5)  # an RGB image of noise barely compresses
        noise = Image.frombytes("RGB", (side, side), random.Random(8).randbytes(side * side * 3))
        pdf = FPDF(format="A4")
        pdf.set_auto_page_break(False)
        for text in texts:
            pdf.add_page()
            pdf.set_font("Helvetica", size=10)
            pdf.set_xy(15, 20)
            pdf.multi_cell(180, 5, text)
        pdf.image(noise, x=15, y=200, w=100)
        pdf.output(str(path))
    return path.read_bytes(), [[s.strip() + ")." for s in t.split(").") if s.strip()]
                               for t in texts]
