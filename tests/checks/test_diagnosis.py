"""The near-miss diagnosis (docs/reference/reports.md#near-misses): each kind on its own and
combined, the longest run, the phrase in the message, and the diagnosis on every quote-not-found
finding, end to end."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    Cli,
    answer,
    call,
    check_canaries,
    cite,
    claim,
    note,
    result,
    source,
    token,
    write_notes,
    write_trace,
)
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    JSON,
    Site,
    html,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.checks import diagnosis as diagnosis_module
from tracecite.checks.diagnosis import Diagnoser, HtmlPage, phrase
from tracecite.findings import DIAGNOSIS_KINDS, Diagnosis
from tracecite.matching import normalise
from tracecite.visible import parse_visible

PAGE = "The quick brown fox doesn’t jump over the lazy dog; it sleeps all day long."


def diagnose(quote: str, page: str = PAGE) -> Diagnosis:
    """The diagnosis of ``quote`` on a text source holding ``page``."""
    return Diagnoser([normalise(page)]).diagnose(normalise(quote))


def diagnose_html(quote: str, markup: str) -> Diagnosis:
    """The diagnosis of ``quote`` on an HTML page, from the tree the visible-text pass built."""
    root, visible = parse_visible(markup)
    return Diagnoser([normalise(visible)], HtmlPage(root, markup)).diagnose(quote)


# ---- each kind ------------------------------------------------------------------------------

def test_case() -> None:
    assert diagnose("THE QUICK BROWN FOX") == Diagnosis(("case",), quote_chars=19)


def test_typography_names_the_code_points_on_both_sides() -> None:
    assert diagnose("fox doesn't jump") == Diagnosis(
        ("typography",), quote_chars=16, characters=("U+2019 RIGHT SINGLE QUOTATION MARK",))
    # On the quote's side too, and each fold of the table: dashes, ellipsis, ligatures.
    found = diagnose("“ﬁne” – done…", 'a "fine" - done... b')
    assert found.kinds == ("typography",)
    assert found.characters == (
        "U+2013 EN DASH", "U+201C LEFT DOUBLE QUOTATION MARK",
        "U+201D RIGHT DOUBLE QUOTATION MARK", "U+2026 HORIZONTAL ELLIPSIS",
        "U+FB01 LATIN SMALL LIGATURE FI")


def test_typography_names_only_the_code_points_where_the_quote_was_found() -> None:
    page = "an em — dash far away. " + "filler words " * 200 + "don’t stop"
    assert diagnose("don't stop", page).characters == ("U+2019 RIGHT SINGLE QUOTATION MARK",)


@pytest.mark.parametrize("character, name", [
    ("\u00ad", "U+00AD SOFT HYPHEN"), ("\u200b", "U+200B ZERO WIDTH SPACE"),
    ("\u200d", "U+200D ZERO WIDTH JOINER"), ("\u200f", "U+200F RIGHT-TO-LEFT MARK"),
])
def test_invisible(character: str, name: str) -> None:
    assert diagnose("lazy dog", f"the la{character}zy dog") == Diagnosis(
        ("invisible",), quote_chars=8, characters=(name,))
    assert diagnose(f"la{character}zy dog", "the lazy dog") == Diagnosis(
        ("invisible",), quote_chars=9, characters=(name,))


@pytest.mark.parametrize("quote", ['"quick brown fox"', "“quick brown fox”", "'quick brown fox'",
                                   "«quick brown fox»", "„quick brown fox“"])
def test_wrapped(quote: str) -> None:
    assert diagnose(quote).kinds == ("wrapped",)


@pytest.mark.parametrize("mark", ["...", "…", "[...]", "[…]", " [ … ] "])
def test_ellipsis(mark: str) -> None:
    assert diagnose(f"quick brown{mark}the lazy dog").kinds == ("ellipsis",)
    assert diagnose(f"quick brown fox{mark}").kinds == ("ellipsis",)  # cut short


def test_ellipsis_parts_must_be_in_order() -> None:
    assert diagnose("the lazy dog ... the quick brown").kinds != ("ellipsis",)


def test_boundary_blocks_cells_and_inline_joins() -> None:
    # Words a block separates, quoted run together; words an inline join runs together, quoted
    # apart.
    assert diagnose_html("headlinefirst words", "<h1>headline</h1><p>first words</p>").kinds \
        == ("boundary",)
    assert diagnose_html("cell onecell two", "<table><tr><td>cell one<td>cell two</table>"
                         ).kinds == ("boundary",)
    assert diagnose_html("foo bar baz", "<p><b>foo</b><i>bar</i> baz</p>").kinds == ("boundary",)
    assert diagnose("line oneline two", "line one\nline two").kinds == ("boundary",)


@pytest.mark.parametrize("markup, where", [
    ("<p>shown</p><script>var s = 'the hidden words here'</script>", "script"),
    ("<style>/* the hidden words here */</style><p>shown</p>", "style"),
    ("<p>shown</p><img alt='the hidden words here'>", "attribute"),
    ("<head><title>the hidden words here</title></head><p>shown</p>", "head"),
    ("<p>shown</p><div hidden>the hidden words here</div>", "hidden-element"),
    ("<p>shown</p><p style='display: none'>the <b>hidden</b> words here</p>", "hidden-element"),
    ("<p>shown</p><!-- the hidden words here -->", "comment"),
    ("<p>shown</p><template><p>the hidden words here</p></template>", "template"),
    ("<head><script>the hidden words here</script></head><p>shown</p>", "script"),
])
def test_hidden_says_where(markup: str, where: str) -> None:
    markup += "<p>" + "visible words " * 100 + "</p>"  # not a page rendered by its scripts
    assert diagnose_html("the hidden words here", markup) == Diagnosis(
        ("hidden",), quote_chars=21, where=where)


def test_hidden_is_for_html_only() -> None:
    # Markup in a text source is text: a near miss there is a text kind, never "hidden".
    assert diagnose("The hidden words here", "<script>the hidden words here</script>"
                    ).kinds == ("case",)


def test_script_rendered() -> None:
    app = "<div id=app></div><script>" + "render(app, {data: 1});" * 200 + "</script>"
    assert diagnose_html("the article text", app) == Diagnosis(("script-rendered",),
                                                                 quote_chars=16)
    # Both at once: the quote is in the page's scripts, and the page is a script.
    assert diagnose_html("render(app", app).kinds == ("hidden", "script-rendered")
    # Plenty of visible text, or scripts that are not most of the page: not script-rendered.
    long_page = "<p>" + "words " * 300 + "</p>" + "<script>x();</script>"
    assert diagnose_html("the article text", long_page).kinds == ("none",)
    small = "<p>a short page</p><script>x();</script>"
    assert diagnose_html("the article text", small).kinds == ("none",)


def test_partial_from_the_start() -> None:
    quote = "The quick brown fox doesn’t jump over the lazy cat"
    assert diagnose(quote) == Diagnosis(("partial",), quote_chars=50, matched_chars=47,
                                        first_difference=47)


def test_partial_in_the_middle() -> None:
    quote = "A slow brown fox doesn’t jump over the lazy dog"
    found = diagnose(quote)
    assert found == Diagnosis(("partial",), quote_chars=47, matched_chars=41,
                              first_difference=47)
    assert phrase(found, "on the page") == (
        "41 of 47 characters are on the page as one run, from offset 6 to 47")


def test_none() -> None:
    assert diagnose("completely unrelated sentence") == Diagnosis(("none",), quote_chars=29)


def test_partial_needs_half_of_the_quote_in_one_run() -> None:
    # 10 characters in one run: partial for a quote of 20, none for a quote of 21.
    page = "abcdefghij"
    assert diagnose("abcdefghij0123456789", page) == Diagnosis(
        ("partial",), quote_chars=20, matched_chars=10, first_difference=10)
    assert diagnose("abcdefghij0123456789x", page) == Diagnosis(("none",), quote_chars=21)
    # Two runs of 6 make no run of 10.
    assert diagnose("abcdefXYZabcdef", "abcdef") == Diagnosis(("none",), quote_chars=15)


def test_the_longest_run_is_the_longest_greedy_run() -> None:
    page = "alpha beta gamma delta epsilon"
    # Greedy runs: "alpha " (6), then "zzz" not found, then "gamma delta eps" (15).
    found = diagnose("alpha zzzgamma delta epsXX", page)
    assert (found.matched_chars, found.first_difference) == (15, 24)


# ---- combinations ---------------------------------------------------------------------------

def test_kinds_combine_in_the_order_of_preference() -> None:
    assert diagnose("THE QUICK BROWN FOX DOESN'T JUMP") == Diagnosis(
        ("case", "typography"), quote_chars=32,
        characters=("U+2019 RIGHT SINGLE QUOTATION MARK",))
    assert diagnose("“THE QUICK BROWN FOX”").kinds == ("case", "wrapped")
    assert diagnose("the quick … the LAZY DOG").kinds == ("case", "ellipsis")
    assert diagnose("lazy dog;it sleeps", "the la\u00adzy dog; it sleeps").kinds == (
        "invisible", "boundary")


def test_the_smallest_combination_wins() -> None:
    # The page has a typographic apostrophe, but case alone finds the quote.
    assert diagnose("THE QUICK").kinds == ("case",)
    combined = diagnose("“THE QUICK … LAZY DOG”").kinds
    assert combined == ("case", "wrapped", "ellipsis")
    assert list(combined) == [k for k in DIAGNOSIS_KINDS if k in combined]


def test_a_fold_that_changes_nothing_is_never_a_kind() -> None:
    # Neither side has typographic characters or format characters: only case applies.
    assert diagnose("PLAIN WORDS", "plain words") == Diagnosis(("case",), quote_chars=11)


# ---- what a diagnosis may say ---------------------------------------------------------------

def test_a_diagnosis_holds_no_text_of_the_quote_or_the_page() -> None:
    secret = "CANARYQUOTEX’s"
    page = f"the {secret.lower()} zebras, hidden \u00ad quokka"
    for quote in (secret.upper(), f"“{secret}”", f"{secret} zzz", "hid\u00adden quokka",
                  secret[:8]):
        found = diagnose(quote, page)
        shown = json.dumps(found.__dict__) + phrase(found, "on the page")
        for piece in ("CANARY", "canary", "QUOTEX", "zebras", "quokka", "’", "\u00ad", "“"):
            assert piece not in shown, (quote, piece, shown)


def test_phrases() -> None:
    assert phrase(Diagnosis(("case",), quote_chars=3), "on the page") == (
        "it is there when case is ignored")
    assert phrase(Diagnosis(("case", "typography"), quote_chars=3,
                            characters=("U+2019 RIGHT SINGLE QUOTATION MARK",))) == (
        "it is there when case is ignored and after folding typographic quotes, dashes, "
        "ellipses and ligatures (U+2019 RIGHT SINGLE QUOTATION MARK)")
    assert phrase(Diagnosis(("hidden",), where="script")) == (
        "it is in the markup inside a script element, which a browser does not show")
    assert phrase(Diagnosis(("script-rendered",))) == (
        "the page is probably rendered by JavaScript, which TraceCite does not run")
    assert phrase(Diagnosis(("partial",), 60, 41, 41), "on the page") == (
        "the first 41 of 60 characters are on the page; it differs from offset 41")
    assert phrase(Diagnosis(("none",), 60), "on the page") == (
        "nothing close is on the page (no run of half the quote's 60 characters)")


# ---- cost -----------------------------------------------------------------------------------

class CountingText(str):
    """A text that counts the scans made of it."""

    scans = 0

    def find(self, *args: Any) -> int:  # type: ignore[override]
        CountingText.scans += 1
        return super().find(*args)

    def __contains__(self, item: object) -> bool:
        CountingText.scans += 1
        return super().__contains__(item)  # type: ignore[operator]


def test_nothing_close_costs_a_few_scans_whatever_the_quote() -> None:
    text = CountingText("the quick brown fox " * 1000)
    quote = "zq" * 200
    CountingText.scans = 0
    assert diagnosis_module._longest_run(quote, text, 200)[:2] == (0, 0)
    assert CountingText.scans <= 4  # one per block of half a run: no scan per character


def test_a_run_costs_at_most_one_scan_per_relocation() -> None:
    text = CountingText("ab" * 500 + "abcdefgh")
    CountingText.scans = 0
    assert diagnosis_module._longest_run("abcdefghXY", text, 5)[:2] == (8, 8)
    # Blocks, the first character, and one relocation per character that moves the run.
    assert CountingText.scans <= 2 + 1 + 8


def test_each_text_is_folded_once_for_all_the_quotes_that_missed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    folds: list[int] = []
    real = diagnosis_module._fold

    def counting(text: str, *args: Any) -> str:
        if len(text) > 10_000:  # the page's text, not a quote
            folds.append(1)
        return real(text, *args)

    monkeypatch.setattr(diagnosis_module, "_fold", counting)
    page = normalise("Words of the page. " * 2000)
    diagnoser = Diagnoser([page])
    assert diagnoser.diagnose("WORDS OF THE").kinds == ("case",)
    once = len(folds)
    assert once > 0
    for quote in ("OF THE PAGE", "THE PAGE. WORDS", "PAGE. WORDS OF"):
        assert diagnoser.diagnose(quote).kinds == ("case",)
    assert len(folds) == once  # the folds of the first miss serve the others


# ---- end to end: evidence (TC202) ------------------------------------------------------------

CAPTURED = "The quick brown fox doesn’t jump over the lazy dog; it sleeps all day long."
EVIDENCE_QUOTES = {
    "THE QUICK BROWN FOX": ("case",),
    "fox doesn't jump": ("typography",),
    '"the lazy dog"': ("wrapped",),
    "The quick brown ... all day long": ("ellipsis",),
    "it sleeps all night long": ("partial",),
    "nothing of the kind at all": ("none",),
}


def evidence_trace(tmp_path: Path, content: str = CAPTURED,
                   quotes: tuple[str, ...] = tuple(EVIDENCE_QUOTES)) -> Path:
    return write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source("s1", "https://example.com/a", content)]),
        answer([claim(citations=[cite("s1", q) for q in quotes])])])


def test_check_evidence_reports_a_diagnosis_per_quote(cli: Cli, tmp_path: Path) -> None:
    run = cli("check", "--evidence", evidence_trace(tmp_path), "--json")
    assert run.exit == 2  # a diagnosis never changes the verdict
    findings = run.json()["findings"]
    assert [tuple(f["diagnosis"]["kinds"]) for f in findings] == list(EVIDENCE_QUOTES.values())
    assert all(f["code"] == "TC202" for f in findings)
    assert all(f["message"].startswith("quote is not in the captured content; ")
               for f in findings)
    typography = findings[1]
    assert typography["diagnosis"] == {
        "kinds": ["typography"], "quote_chars": 16, "matched_chars": None,
        "first_difference": None, "characters": ["U+2019 RIGHT SINGLE QUOTATION MARK"],
        "where": None, "cut_short": None}
    assert typography["message"] == (
        "quote is not in the captured content; it is there after folding typographic quotes, "
        "dashes, ellipses and ligatures (U+2019 RIGHT SINGLE QUOTATION MARK)")
    partial = findings[4]["diagnosis"]
    assert (partial["quote_chars"], partial["matched_chars"], partial["first_difference"]) == (
        24, 14, 14)


@pytest.mark.parametrize("fmt", ["console", "github", "sarif"])
def test_every_format_shows_the_phrase(cli: Cli, tmp_path: Path, fmt: str) -> None:
    run = cli("check", "--evidence", evidence_trace(tmp_path), "--format", fmt)
    assert run.exit == 2
    shown = " ".join(run.out.split())  # the console wraps long lines
    for words in ("it is there when case is ignored",
                  "U+2019 RIGHT SINGLE QUOTATION MARK",
                  "the first 14 of 24 characters are in the captured content",
                  "nothing close is in the captured content"):
        assert words in shown, (fmt, words)
    if fmt == "sarif":
        messages = [r["message"]["text"] for r in json.loads(run.out)["runs"][0]["results"]]
        assert any("it is there when case is ignored" in m for m in messages)


def test_quotes_found_get_no_diagnosis(cli: Cli, tmp_path: Path) -> None:
    path = evidence_trace(tmp_path, quotes=("quick brown fox", "THE QUICK BROWN FOX"))
    findings = cli("check", "--evidence", path, "--json").json()["findings"]
    assert [f["diagnosis"]["kinds"] for f in findings] == [["case"]]


# ---- end to end: live pages (TC210), files (TC211), the cache --------------------------------

LIVE_PAGE = ("<html><head><title>Page title words</title></head><body>"
             "<h1>Heading</h1><p>The quick brown fox doesn’t jump.</p>"
             "<div hidden>kept out of sight</div><script>var s = 'in the script';</script>"
             "</body></html>")
LIVE_QUOTES = {
    "THE QUICK BROWN FOX": ("case",),
    "fox doesn't jump": ("typography",),
    "HeadingThe quick": ("boundary",),
    "kept out of sight": ("hidden",),
    "in the script": ("hidden",),
    "Page title words": ("hidden",),
    "nothing of the kind": ("none",),
}


def live_notes(tmp_path: Path, url: str, quotes: dict[str, tuple[str, ...]]) -> Path:
    return write_notes(tmp_path / "n.md", "\n".join(note(quote=q, url=url) for q in quotes))


def test_verify_notes_diagnoses_on_the_page_tree(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", html(LIVE_PAGE))
    run = cli("verify-notes", live_notes(tmp_path, url, LIVE_QUOTES), "--json", *site.flags)
    assert run.exit == 2
    findings = sorted(run.json()["findings"], key=lambda f: f["record"])
    assert [f["code"] for f in findings] == ["TC210"] * len(LIVE_QUOTES)
    assert [tuple(f["diagnosis"]["kinds"]) for f in findings] == list(LIVE_QUOTES.values())
    assert [f["diagnosis"]["where"] for f in findings[3:6]] == [
        "hidden-element", "script", "head"]
    assert findings[4]["message"] == (
        "quote is not in the page's visible text; it is in the markup inside a script "
        "element, which a browser does not show")
    assert findings[6]["message"].endswith("nothing close is on the page (no run of half the "
                                           "quote's 19 characters)")


def test_json_and_text_sources_get_the_text_kinds(cli: Cli, site: Site, tmp_path: Path) -> None:
    json_url = site.route("/j", text(json.dumps({"a": ["The Quick Brown Fox"]}),
                                     headers=JSON))
    text_url = site.route("/t", text("<script>in the script</script>"))
    path = write_notes(tmp_path / "n.md", "\n".join([
        note(quote="the quick brown fox", url=json_url),
        note(quote="in the scripts", url=text_url)]))
    findings = sorted(cli("verify-notes", path, "--json", *site.flags).json()["findings"],
                      key=lambda f: f["record"])
    assert [f["diagnosis"]["kinds"] for f in findings] == [["case"], ["partial"]]


def test_verify_files_diagnoses_files(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "page.html").write_text(LIVE_PAGE, encoding="utf-8")
    (root / "doc.txt").write_text(CAPTURED, encoding="utf-8")
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source("s1", "file:page.html", "in the script"),
                                source("s2", "file:doc.txt", "THE LAZY DOG")]),
        answer([claim(citations=[cite("s1", "in the script"), cite("s2", "THE LAZY DOG")])])])
    run = cli("verify-files", path, "--root", root, "--json")
    assert run.exit == 2
    findings = {f["source_id"]: f for f in run.json()["findings"]}
    assert findings["s1"]["code"] == findings["s2"]["code"] == "TC211"
    assert findings["s1"]["diagnosis"]["where"] == "script"
    assert findings["s2"]["diagnosis"]["kinds"] == ["case"]
    assert findings["s2"]["message"] == (
        "quote is not in the file; it is there when case is ignored")


def test_a_cached_verdict_keeps_its_diagnosis(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", html(LIVE_PAGE))
    notes = live_notes(tmp_path, url, LIVE_QUOTES)
    cache = tmp_path / "cache.sqlite"
    first = cli("verify-notes", notes, "--json", "--cache", cache, *site.flags).json()
    second = cli("verify-notes", notes, "--json", "--cache", cache, *site.flags).json()
    assert site.paths == ["/a"]  # the second run asked nothing
    assert all(f["cached"] for f in second["findings"])

    def shown(report: dict[str, Any]) -> list[tuple[str, Any]]:
        return sorted((f["message"], json.dumps(f["diagnosis"])) for f in report["findings"])

    assert shown(first) == shown(second)
    assert second["exit_code"] == 2


def test_misses_cached_without_a_diagnosis_need_the_page(cli: Cli, site: Site,
                                                         tmp_path: Path) -> None:
    url = site.route("/a", html(LIVE_PAGE))
    notes = live_notes(tmp_path, url, {"THE QUICK BROWN FOX": ("case",)})
    cache = tmp_path / "cache.sqlite"
    cli("verify-notes", notes, "--json", "--cache", cache, *site.flags)
    with sqlite3.connect(cache) as db:  # as an older version left it: a miss, no diagnosis
        db.execute("UPDATE verdicts SET diagnosis = NULL")
    report = cli("verify-notes", notes, "--json", "--cache", cache, *site.flags).json()
    assert site.paths == ["/a", "/a"]
    (finding,) = report["findings"]
    assert finding["diagnosis"]["kinds"] == ["case"] and not finding.get("cached")


# ---- canaries: nothing of the quote or the page in any format --------------------------------

SECRETS = ["quoteone", "script", "page"]
"""Also tests/test_canaries.py, for every kind of diagnosis on captured content."""


def canary(kind: str) -> str:
    return f"\x1b[31m::error::x%0A{token(kind)}"


def test_no_canary_in_a_live_diagnosis(cli: Cli, site: Site, tmp_path: Path) -> None:
    page = (f"<html><head><title>{canary('page')}</title></head><body><p>{canary('page')} "
            f"shown</p><script>{canary('script')}</script></body></html>")
    url = site.route("/a", html(page))
    quotes = {canary("script"): (), canary("page").lower(): (), f"{canary('quoteone')}": ()}
    for fmt in ("json", "console", "github", "sarif"):
        run = cli("verify-notes", live_notes(tmp_path, url, quotes), "--format", fmt,
                  *site.flags)
        assert run.exit == 2
        check_canaries("stdout", run.out, fmt, SECRETS, fold=True)
        check_canaries("stderr", run.err, fmt, SECRETS, fold=True)


def test_the_tree_is_walked_only_for_a_quote_whose_words_are_in_the_markup(
        monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[int] = []
    real = Diagnoser._hidden_texts

    def counting(self: Diagnoser) -> dict[str, str]:
        walks.append(1)
        return real(self)

    monkeypatch.setattr(Diagnoser, "_hidden_texts", counting)
    markup = "<p>" + "visible words " * 100 + "</p><script>the hidden words</script>"
    root, visible = parse_visible(markup)
    diagnoser = Diagnoser([normalise(visible)], HtmlPage(root, markup))
    assert diagnoser.diagnose("zebras quietly grazing").kinds == ("none",)
    assert walks == []
    assert diagnoser.diagnose("the hidden words").where == "script"
    assert diagnoser.diagnose("hidden words").where == "script"
    assert walks == [1]  # once per page
