"""The PDF rules on one page's text (docs/guides/pdf.md#how-the-text-is-read), and the engine's
version in the cache key."""

from __future__ import annotations

import pytest

from tracecite.pdf import engine_version
from tracecite.pdf.text import LIGATURES, page_text


@pytest.mark.parametrize(("raw", "text"), [
    ("\ufb01nal \ufb02ow e\ufb00ort \ufb03 \ufb04 \ufb05 \ufb06",
     "final flow effort ffi ffl st st"),
    # PDFium's mark of a hyphenated line end (the line break already dropped), and the old one.
    ("exam\ufffeple", "example"),
    ("exam\x02ple", "example"),
    ("exam\ufffe\r\nple", "example"),
    # A hyphen still at a line's end joins before a lower-case letter, of any script.
    ("exam-\r\nple", "example"),
    ("exam-  \n  ple", "example"),
    ("co\u2010\noperate", "cooperate"),
    ("co\u00ad\noperate", "cooperate"),
    ("\u00e9co-\n\u00e9nomie", "\u00e9co\u00e9nomie"),
    # ... and nowhere else.
    ("Franco-\nGerman", "Franco-\nGerman"),
    ("pages 3-\n4", "pages 3-\n4"),
    ("a well-known effect", "a well-known effect"),
    ("a dash -\n- here", "a dash -\n- here"),
    ("ends with a hyphen-", "ends with a hyphen-"),
])
def test_page_text_rules(raw: str, text: str) -> None:
    assert page_text(raw) == text


def test_every_ligature_of_the_block_is_folded() -> None:
    assert sorted(LIGATURES) == [chr(c) for c in range(0xFB00, 0xFB07)]


def test_the_engine_version_is_read_without_loading_it() -> None:
    pytest.importorskip("pypdfium2", reason="the pdf extra (tracecite[pdf]) is not installed")
    import subprocess
    import sys

    version = engine_version()
    assert version is not None and version.startswith("pypdfium2 ") and "PDFium " in version
    # Every run's options digest reads it: it must load neither the engine nor ctypes.
    probe = ("import sys; from tracecite.settings import pdf_engine; v = pdf_engine(); "
             "print(v is not None, *(m in sys.modules for m in ('pypdfium2', 'pypdfium2_raw', "
             "'ctypes', 'tracecite.pdf.text')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "False", "False", "False", "False"]


def test_no_engine_no_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pypdfium2", None)
    assert engine_version() is None


def test_a_quote_across_pages_is_found_with_the_page_it_ends_on() -> None:
    from tracecite.pdf.text import _Finder

    finder = _Finder(["one two three four five six"])
    assert not finder.read("zero one\r\n")
    assert not finder.read("two three\r\nfour")  # the window reaches back over page one
    assert finder.read("  five six seven")


def test_a_quote_found_is_found_in_the_whole_text_however_the_pages_are_cut() -> None:
    from tracecite.matching import MatchText, normalise
    from tracecite.pdf.text import _Finder

    pages = ["alpha\u0301 beta", "\u0301gamma delta", "epsilon   zeta\r\n", "eta theta"]
    whole = MatchText("\n".join(page_text(p) for p in pages))
    for quote in ["beta gamma", "\u0301gamma delta", "zeta eta", "delta epsilon zeta eta theta",
                  "alpha\u0301 beta"]:
        finder = _Finder([normalise(quote)])
        found = any(finder.read(page) for page in pages)
        assert found == whole.contains(normalise(quote)), quote
