"""What each kind of live check and each kind of match stands for: the values are a closed
set, and every value's mapping is tested."""

from __future__ import annotations

import pytest

from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.parse_pool import match_quotes
from tracecite.checks.quotes import QuoteCheck
from tracecite.codes import Code

# ---- SourceKind -----------------------------------------------------------------------------

MAPPING = {
    SourceKind.WEB: ("verify-urls", Code.QUOTE_NOT_ON_PAGE, "the page's visible text"),
    SourceKind.FILE: ("verify-files", Code.QUOTE_NOT_IN_FILE, "the file"),
}


def test_every_source_kind_is_mapped() -> None:
    assert set(SourceKind) == set(MAPPING)


@pytest.mark.parametrize("kind", list(SourceKind), ids=lambda k: k.name)
def test_source_kind_mapping(kind: SourceKind) -> None:
    command, code, source_name = MAPPING[kind]
    assert (kind.command, kind.not_found, kind.source_name) == (command, code, source_name)
    assert code.code == {SourceKind.WEB: "TC210", SourceKind.FILE: "TC211"}[kind]


@pytest.mark.parametrize("kind", list(SourceKind), ids=lambda k: k.name)
def test_a_quote_not_found_is_reported_in_its_kinds_words(kind: SourceKind) -> None:
    finding = QuoteCheck("absent", "u", "n.md", 3, record=1).not_found(kind)
    assert (finding.code, finding.message) == (kind.not_found,
                                               f"quote is not in {kind.source_name}")
    assert (finding.file, finding.line, finding.record, finding.uri) == ("n.md", 3, 1, "u")


@pytest.mark.parametrize(("uri", "expected"), [
    ("https://x.test/", True), ("http://x.test/", True), ("HTTPS://x.test/", True),
    # What a browser strips around a URL does not make it any less a web source (TC300 later).
    (" https://x.test/", True), ("\x00\thttp://x.test/", True), ("https://x.test/ \x1f", True),
    ("https:", True), ("ftp://x.test/", False), ("httpx://x.test/", False),
    ("file:a.txt", False), ("urn:isbn:0451450523", False), ("\x7fhttps://x.test/", False),
    ("", False),
])
def test_web_takes_http_and_https_uris(uri: str, expected: bool) -> None:
    assert SourceKind.WEB.takes(uri) is expected


@pytest.mark.parametrize(("uri", "expected"), [
    ("file:a.txt", True), ("FILE:a.txt", True), ("File:///a", True),
    ("https://x.test/", False), ("fil:a", False), ("urn:file:a", False), ("", False),
    (" file:a.txt", False),  # only URLs get the browser's stripping
])
def test_file_takes_file_uris(uri: str, expected: bool) -> None:
    assert SourceKind.FILE.takes(uri) is expected


def test_no_uri_is_of_two_kinds() -> None:
    for uri in ("https://x.test/", " http://x", "file:a", "FILE:///b", "urn:x", ""):
        assert sum(kind.takes(uri) for kind in SourceKind) <= 1


# ---- MatchKind ------------------------------------------------------------------------------

BODY = '<p>quick <b>brown</b></p><script>["lazy\\ndog"]</script>'
# What each kind finds in BODY: HTML its visible text only, JSON (not JSON here) the raw text,
# TEXT the raw text as it is.
MATCHES = {
    MatchKind.HTML: {"quick brown": True, "<b>brown</b>": False, "lazy": False},
    MatchKind.JSON: {"quick brown": False, "<b>brown</b>": True, "lazy": True},
    MatchKind.TEXT: {"quick brown": False, "<b>brown</b>": True, "lazy": True},
    # A PDF whose page shows BODY as it is: its text, not markup.
    MatchKind.PDF: {"quick brown": False, "<b>brown</b>": True, "lazy": True},
}


def _body(kind: MatchKind) -> str | bytes:
    if kind is not MatchKind.PDF:
        return BODY
    pytest.importorskip("pypdfium2", reason="the pdf extra (tracecite[pdf]) is not installed")
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.cell(0, 10, BODY)
    return bytes(pdf.output())


def test_every_match_kind_is_mapped() -> None:
    assert set(MatchKind) == set(MATCHES)


@pytest.mark.parametrize("kind", list(MatchKind), ids=lambda k: k.name)
def test_match_kind_mapping(kind: MatchKind) -> None:
    expected = MATCHES[kind]
    verdicts = match_quotes(kind, _body(kind), list(expected))
    assert [v is True for v in verdicts] == list(expected.values())


def test_json_also_matches_decoded_strings() -> None:
    body = '["lazy\\ndog"]'
    assert match_quotes(MatchKind.JSON, body, ["lazy dog"]) == [True]
    assert match_quotes(MatchKind.TEXT, body, ["lazy dog"])[0] is not True
