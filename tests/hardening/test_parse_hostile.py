"""Hostile markup through the command line (SECURITY.md, "Parsing a page costs more than
fetching it"): a page past a parse limit is a TC318 finding with exit 2, from the web and from
``verify-files``, and its message quotes nothing from the page. The parser's side, family by
family, is tests/visible/test_hostile_markup.py.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Cli, cite, source, write_trace
from tests.conftest import answer as answer_event
from tests.conftest import call as call_event
from tests.conftest import claim as claim_event
from tests.conftest import result as result_event
from tests.fetch.servers import Servers, head, send_bytes
from tests.visible.conftest import CANARY, distinct
from tracecite.visible import MAX_DEPTH, MAX_FORMATTING

QUOTE = "the quoted words are here"
PAGES = {
    "deep.html": "<div>" * (4 * MAX_DEPTH) + f"<p>{QUOTE}</p>",  # parses: the depth cap
    "soup.html": "<p>" + distinct("b", MAX_FORMATTING + 1) + f"{QUOTE} {CANARY}",
    "fine.html": f"<p>{QUOTE}</p>",
}


def test_verify_files_reports_a_page_past_a_limit_as_tc318(cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for name, page in PAGES.items():
        (root / name).write_text(page, encoding="utf-8")
    sources = [source(f"s{i}", f"file:{name}", QUOTE) for i, name in enumerate(PAGES, 1)]
    trace = write_trace(tmp_path / "t.jsonl", [
        call_event(), result_event(sources=sources),
        answer_event([claim_event(citations=[cite(f"s{i}", QUOTE) for i in (1, 2, 3)])]),
    ])
    # Worker processes parse here (the run starts no thread before them).
    run = cli("verify-files", trace, "--root", root, "--json")
    report = run.json()
    assert [(f["code"], f["name"], f["source_id"], f["exit"]) for f in report["findings"]] == [
        ("TC318", "parse-limit", "s2", 2)]
    assert report["exit_code"] == run.exit == 2
    assert report["summary"]["files"]["matched"] == 2
    assert CANARY not in run.out and CANARY not in run.err


def test_verify_notes_reports_a_page_past_a_limit_as_tc318(
    cli: Cli, tmp_path: Path, servers: Servers,
) -> None:
    body = PAGES["soup.html"].encode()
    server = servers.raw(send_bytes(
        head("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                        ("Content-Length", str(len(body)))]) + body))
    notes = tmp_path / "notes.md"
    notes.write_text(f"claim: a claim\nquote: {QUOTE}\nurl: http://example.test/\n",
                     encoding="utf-8")
    for fmt in ("json", "github", "sarif", "console"):
        run = cli("verify-notes", notes, "--format", fmt, "--connect-to",
                  f"example.test:80:127.0.0.1:{server.port}", "--allow-net", "127.0.0.0/8")
        assert run.exit == 2
        assert "TC318" in run.out
        assert CANARY not in run.out and CANARY not in run.err


def test_timeout_bounds_the_parse_too(cli: Cli, tmp_path: Path) -> None:
    """``--timeout`` is the deadline per source: parsing a page gets as long, no longer."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "big.html").write_text("<p>word</p>" * 20_000 + f"<p>{QUOTE}</p>", encoding="utf-8")
    trace = write_trace(tmp_path / "t.jsonl", [
        call_event(), result_event(sources=[source("s1", "file:big.html", QUOTE)]),
        answer_event([claim_event(citations=[cite("s1", QUOTE)])]),
    ])
    assert cli("verify-files", trace, "--root", root).exit == 0
    run = cli("verify-files", trace, "--root", root, "--timeout", "0.001", "--json")
    assert (run.exit, run.codes()) == (2, ["TC318"])
