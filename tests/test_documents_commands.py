"""Documents in every command: which kind a file is read as, ``check --docs``, ``verify-docs``
(live pages through the loopback site, local files under the root), the library's
``verify_docs``, a notes URL's text directive, and the reports' locations.

Live pages are served on 127.0.0.1 and reached only through ``--connect-to``, ``--allow-net``
and ``--ca-cert`` (tests/live_fixtures.py); any name lookup fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, write_notes
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    Lookups,
    Site,
    html,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite import api

PAGE = "The quick brown fox jumps over the lazy dog. It was a bright cold day in April."


def write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


def blockquote(quote: str, url: str) -> str:
    return f"> {quote}\n>\n> — [the source]({url})\n"


def findings(report: dict[str, Any]) -> list[tuple[str, int | None, int | None, int | None]]:
    return [(f["code"], f["line"], f["column"], f.get("record")) for f in report["findings"]]


# ---- which kind a file is ----------------------------------------------------------------

def test_check_reads_a_named_markdown_file_as_notes_unless_docs(cli: Cli, tmp_path: Path) -> None:
    doc = write(tmp_path / "page.md", "# A page\n\n" + blockquote("quick brown fox", "a.md"))
    as_notes = cli("check", doc, "--json")
    assert as_notes.exit == 1 and "TC110" in as_notes.codes()  # the seed's notes.md rule
    as_doc = cli("check", "--docs", doc, "--json")
    report = as_doc.json()
    assert as_doc.exit == 0, report
    assert report["summary"]["document_citations"] == 1
    assert report["summary"]["records"] == 0
    assert "notices" not in report  # the listing is data, not a notice
    assert report["documents"] == [{"file": str(doc), "citations": [
        {"record": 1, "line": 3, "column": 3, "form": "blockquote", "source": "a.md",
         "directive": False, "ignored": False}]}]
    console = cli("check", "--docs", doc)
    assert f"note: {doc}: 1 citation: 3:3 blockquote a.md\n" in console.out


def test_check_docs_keeps_traces_as_traces(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    trace.write_text('{"type": "answer"}\n', encoding="utf-8")
    doc = write(tmp_path / "page.md", blockquote("quick brown fox", "a.md"))
    res = cli("check", "--docs", doc, trace, "--json")
    assert res.exit == 1
    assert {f["file"] for f in res.json()["findings"]} == {str(trace)}  # its structure


def test_a_directory_reads_each_file_as_its_glob_says(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".tracecite.toml", 'notes = ["docs/sources.md"]\n')
    # A loopback address, refused without any network access.
    write(tmp_path / "docs/sources.md", "claim: c\nquote: q\nurl: https://127.0.0.1/\n")
    write(tmp_path / "docs/guide.md", blockquote("quick brown fox", "sources.md"))
    write(tmp_path / "docs/page.html", '<blockquote cite="https://example.org/">x y</blockquote>')
    write(tmp_path / "site/page.html", "<p>not selected by the default documents globs</p>")
    report = cli("check", "docs", "site", "--json").json()
    assert report["summary"]["records"] == 1  # the notes glob wins over **/*.md
    assert report["summary"]["document_citations"] == 2
    assert [f["code"] for f in report["findings"]] == ["TC106"]  # site/ selects nothing
    # verify-docs of the folder reads only its documents, never the notes file.
    docs = cli("verify-docs", "docs", "--json", "--root", ".").json()
    assert docs["summary"]["records"] == 0
    assert docs["summary"]["inputs"] == 2
    # ... and verify-notes its notes only, never a document.
    notes = cli("verify-notes", "docs", "--json").json()
    assert (notes["summary"]["inputs"], notes["summary"]["records"]) == (1, 1)
    assert [f["code"] for f in notes["findings"]] == ["TC306"]


def test_document_forms_chooses_the_forms(cli: Cli, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "docs/guide.md",
          blockquote("quick brown fox", "a.md")
          + '\nIt was “a bright cold day in April” ([the book](a.md)).\n')
    assert cli("check", "docs", "--json").json()["summary"]["document_citations"] == 2
    report = api.check(["docs/guide.md"], docs=True, document_forms=["blockquote"])
    assert report.summary.document_citations == 1
    # The hook (and so pre-commit and the Action) takes the configuration's forms.
    write(tmp_path / ".tracecite.toml", 'document_forms = ["inline"]\n')
    assert cli("hook", "docs/guide.md", "--json").json()["summary"]["document_citations"] == 1
    write(tmp_path / ".tracecite.toml", 'document_forms = ["quotes"]\n')
    bad = cli("hook", "docs/guide.md", "--json")
    assert bad.exit == 1 and bad.codes() == ["TC104"]
    with pytest.raises(api.UsageError):
        api.check(["docs/guide.md"], document_forms=["quotes"])


def test_check_docs_reports_a_broken_form_at_its_line(cli: Cli, tmp_path: Path) -> None:
    doc = write(tmp_path / "page.md",
                "# Page\n\nSee [the passage](https://example.org/#:~:text=a%ZZb).\n")
    res = cli("check", "--docs", doc, "--json")
    assert res.exit == 1
    ((code, line, _column, _record),) = findings(res.json())
    assert (code, line) == ("TC140", 3)


# ---- verify-docs: live pages -------------------------------------------------------------

def test_verify_docs_checks_every_form_against_live_pages(cli: Cli, site: Site,
                                                          tmp_path: Path) -> None:
    url = site.route("/page", text(PAGE))
    site.route("/other", html("<p>Nothing quoted here.</p>"))
    doc = write(tmp_path / "report.md", "\n".join([
        "# Report",
        "",
        blockquote("The quick brown fox jumps over the lazy dog.", url),
        f"It was “a bright cold day in April” ([the book]({url})).",
        "",
        f"The [passage]({url}#:~:text=quick%20brown,lazy%20dog) is highlighted.",
        "",
        f"The [missing passage]({url}#:~:text=slow%20red%20fox) is not.",
        "",
        f"It said “this sentence is not on the page” ([other](https://{HOST}/other)).",
        "",
        "<!-- tracecite: ignore -->",
        blockquote("Not checked at all.", url),
    ]))
    res = cli("verify-docs", doc, "--json", *site.flags)
    report = res.json()
    assert res.exit == 2, report
    assert [(code, line, record) for code, line, _c, record in findings(report)] == [
        ("TC210", 11, 4), ("TC210", 13, 5)]
    fragment, inline = report["findings"]
    assert fragment["uri"] == url  # fetched without the directive
    assert fragment["column"] is not None and fragment["diagnosis"]["kinds"]
    assert inline["uri"] == f"https://{HOST}/other"
    assert inline["diagnosis"]["kinds"] == ["none"]
    live = report["summary"]["live"]
    assert (live["checked"], live["matched"], live["not_found"], live["skipped"]) == (5, 3, 2, 1)
    assert sorted(site.paths) == ["/other", "/page"]  # each page fetched once
    for finding in report["findings"]:
        assert "fox" not in finding["message"] and "sentence" not in finding["message"]


def test_a_link_directive_is_checked_besides_the_quote(cli: Cli, site: Site,
                                                       tmp_path: Path) -> None:
    url = site.route("/page", text(PAGE))
    doc = write(tmp_path / "a.md", blockquote("The quick brown fox", f"{url}#:~:text=green"))
    report = cli("verify-docs", doc, "--json", *site.flags).json()
    assert [f["code"] for f in report["findings"]] == ["TC210"]
    assert report["summary"]["live"]["matched"] == 1  # the quote; its directive is not there


def test_verify_docs_sources_through_the_cache(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/page", text(PAGE))
    doc = write(tmp_path / "a.md", blockquote("quick brown fox", url))
    cache = tmp_path / "cache.sqlite"
    first = cli("verify-docs", doc, "--json", "--cache", cache, *site.flags).json()
    second = cli("verify-docs", doc, "--json", "--cache", cache, *site.flags).json()
    assert first["exit_code"] == second["exit_code"] == 0
    assert second["summary"]["live"]["cached"] == 1
    assert site.paths == ["/page"]


def test_verify_docs_shards_cover_each_citation_once(cli: Cli, site: Site,
                                                     tmp_path: Path) -> None:
    urls = [site.route(f"/p{n}", text(PAGE)) for n in range(6)]
    doc = write(tmp_path / "a.md", "\n".join(blockquote("quick brown fox", u) for u in urls))
    checked = [cli("verify-docs", doc, "--json", "--shard", f"{k}/3", *site.flags).json()
               ["summary"]["live"]["checked"] for k in (1, 2, 3)]
    assert sum(checked) == 6
    assert sorted(site.paths) == sorted(f"/p{n}" for n in range(6))


# ---- verify-docs: local sources ----------------------------------------------------------

def test_local_sources_resolve_against_the_document_and_stay_under_the_root(
        cli: Cli, tmp_path: Path) -> None:
    root = tmp_path / "site"
    write(root / "sources/style.md", "Sample URLs use **example.com**, *never* a real one.\n")
    write(root / "sources/page.html", "<p>Seen <b>here</b></p><script>hidden words</script>")
    write(tmp_path / "secret.txt", "a secret outside the root\n")
    doc = write(root / "docs/guide.md", "\n".join([
        blockquote("Sample URLs use example.com, never a real one.", "../sources/style.md"),
        blockquote("Seen here", "/sources/page.html"),  # a leading slash: from the root
        blockquote("hidden words", "../sources/page.html"),  # not visible
        blockquote("a secret outside the root", "../../secret.txt"),
        "```tracecite\nclaim: c\nquote: Sample URLs use\nurl: file:../sources/style.md\n```\n",
        blockquote("no such file here", "missing.md"),
        blockquote("Write to us", "mailto:someone@example.org"),  # no source: skipped
        blockquote("Seen here", "file:../sources/page.html#part"),
        blockquote("a secret outside the root", f"file://{tmp_path / 'secret.txt'}"),
    ]))
    res = cli("verify-docs", doc, "--json", "--root", root)
    report = res.json()
    assert res.exit == 2
    assert [(f["code"], f["record"]) for f in report["findings"]] == [
        ("TC211", 3), ("TC321", 4), ("TC320", 6), ("TC321", 9)]
    assert report["findings"][0]["diagnosis"]["kinds"] == ["hidden"]
    assert report["findings"][1]["uri"] == "file:../secret.txt"
    files = report["summary"]["files"]
    assert (files["checked"], files["matched"]) == (8, 4)
    assert report["summary"]["live"]["skipped"] == 1


def test_a_markdown_source_is_matched_on_its_rendered_text(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path / "source.md", "The *quick* brown <!-- a hidden remark --> **fox**.\n")
    doc = write(tmp_path / "a.md", blockquote("The quick brown fox.", "source.md")
                + "\n" + blockquote("a hidden remark", "source.md"))
    report = cli("verify-docs", doc, "--json", "--root", tmp_path).json()
    assert [(f["code"], f["record"]) for f in report["findings"]] == [("TC211", 2)]
    # A trace citing the same file reads its text as it is (verify-files).
    assert "TC211" in cli("verify-files", _trace_citing(tmp_path, "file:source.md",
                                                        "The quick brown fox."),
                          "--json", "--root", tmp_path).codes()


def _trace_citing(tmp_path: Path, uri: str, quote: str) -> Path:
    from tests.conftest import answer, call, cite, claim, result, source, write_trace

    return write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(uri=uri, content=quote)]),
        answer([claim(citations=[cite(quote=quote)])])])


def test_a_one_line_markdown_source_is_never_read_as_a_path(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path / "secret.md", "the secret words\n")
    write(tmp_path / "root/name.md", str(tmp_path / "secret.md"))  # one line, no line end
    doc = write(tmp_path / "root/a.md", blockquote("the secret words", "name.md"))
    report = cli("verify-docs", doc, "--json", "--root", tmp_path / "root").json()
    assert [f["code"] for f in report["findings"]] == ["TC211"]


def test_verify_docs_needs_a_root_that_exists(cli: Cli, tmp_path: Path) -> None:
    doc = write(tmp_path / "a.md", blockquote("quick", "b.md"))
    res = cli("verify-docs", doc, "--json", "--root", tmp_path / "missing")
    assert res.exit == 1 and res.codes() == ["TC100"]


def test_the_library_verify_docs(tmp_path: Path) -> None:
    write(tmp_path / "source.md", "The quick brown fox.\n")
    doc = write(tmp_path / "a.md", blockquote("The quick brown fox.", "source.md"))
    report = api.verify_docs([doc], root=str(tmp_path))
    assert report.exit_code == 0
    assert report.command == "verify-docs"
    assert report.summary.files.matched == 1
    with pytest.raises(api.UsageError):
        api.verify_docs([doc], evidence=True)  # an option of another command


def test_each_document_link_is_resolved_once_for_both_live_checks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.checks import documents

    resolved: list[str] = []
    real = documents.source_of

    def counted(document: str, url: str, root: str) -> Any:
        resolved.append(url)
        return real(document, url, root)

    monkeypatch.setattr(documents, "source_of", counted)
    write(tmp_path / "source.md", "The quick brown fox.\n")
    doc = write(tmp_path / "a.md", blockquote("The quick brown fox.", "source.md") + "\n"
                + blockquote("Four words to mail.", "mailto:a@example.org"))
    report = api.verify_docs([doc], root=str(tmp_path))
    assert report.summary.files.matched == 1 and report.summary.live.skipped == 1
    assert sorted(resolved) == ["mailto:a@example.org", "source.md"]
    resolved.clear()
    report = api.check([doc], docs=True)  # offline: no live check, so no link resolved
    assert report.summary.document_citations == 2 and resolved == []


# ---- notes: a URL's text directive -------------------------------------------------------

def test_a_notes_url_directive_is_a_second_quote_of_the_record(cli: Cli, site: Site,
                                                               tmp_path: Path) -> None:
    url = site.route("/page", text(PAGE))
    notes = write_notes(tmp_path / "n.notes", "\n".join([
        "claim: c1", "quote: quick brown fox", f"url: {url}#:~:text=bright%20cold,April", "",
        "claim: c2", "quote: quick brown fox", f"url: {url}#:~:text=warm%20day", "",
    ]))
    res = cli("verify-notes", notes, "--json", *site.flags)
    report = res.json()
    assert res.exit == 2
    assert [(f["code"], f["line"], f["record"]) for f in report["findings"]] == [
        ("TC210", 7, 2)]  # at the url: line, which holds the directive
    assert report["findings"][0]["uri"] == url  # the directive's words are never shown
    live = report["summary"]["live"]
    assert (live["checked"], live["matched"]) == (4, 3)
    assert site.paths == ["/page"]


# ---- reports ------------------------------------------------------------------------------

def test_document_findings_are_at_their_line_in_every_format(cli: Cli, tmp_path: Path) -> None:
    write(tmp_path / "source.md", "Something else.\n")
    doc = write(tmp_path / "a.md", "# Title\n\n" + blockquote("The quick brown fox.",
                                                              "source.md"))
    github = cli("verify-docs", doc, "--format", "github", "--root", tmp_path)
    assert f"::error file={doc},line=3,col=3,title=TC211" in github.out
    sarif = json.loads(cli("verify-docs", doc, "--format", "sarif", "--root", tmp_path).out)
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (3, 3)
    console = cli("verify-docs", doc, "--root", tmp_path)
    assert f"{doc}:3:3" in console.out and "record 1" in console.out


# ---- the hook: both stages, and a pull request's changed lines ---------------------------

def test_hook_checks_only_the_citations_a_change_touches(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.git_repo import commit_all, git, make_repo

    repo = make_repo(tmp_path / "repo")
    write(repo / "docs/source.md", "Nothing that any citation quotes.\n")
    quotes = ["first missing quote", "second missing quote", "third missing quote"]
    guide = "# Guide\n\n" + "\n".join(blockquote(q, "source.md") for q in quotes)
    write(repo / "docs/guide.md", guide)
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    # Citation 1's quote line and citation 3's link line change; citation 2 is untouched.
    write(repo / "docs/guide.md", guide.replace("first missing", "first changed").replace(
        "third missing quote\n>\n> — [the source]", "third missing quote\n>\n> — [the new source]"))
    commit_all(repo, "topic")
    monkeypatch.chdir(repo)
    offline = cli("hook", "--since", "main", "--json").json()
    assert offline["findings"] == [] and offline["summary"]["document_citations"] == 3
    online = cli("hook", "--stage", "online", "--since", "main", "--json").json()
    assert [(f["code"], f["record"]) for f in online["findings"]] == [("TC211", 1),
                                                                     ("TC211", 3)]
    assert online["summary"]["live"]["unchanged"] == 1
    every = cli("hook", "--stage", "online", "--since", "main", "--all-records", "--json").json()
    assert [f["record"] for f in every["findings"]] == [1, 2, 3]


def test_the_hook_reads_traces_file_sources_only_when_asked(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "source.md", "The quick brown fox.\n")
    write(tmp_path / "a.md", blockquote("The quick brown fox.", "source.md"))
    trace = _trace_citing(tmp_path, "file:source.md", "not in the file")
    trace = trace.rename(tmp_path / "run.trace.jsonl")
    # The evidence matches (the capture holds the quote); the file no longer does.
    report = cli("hook", "--stage", "online", "a.md", "run.trace.jsonl", "--json").json()
    assert report["findings"] == []
    assert report["summary"]["files"]["matched"] == 1  # the document's citation only
    report = cli("hook", "--stage", "online", "--verify-files", "a.md", "run.trace.jsonl",
                 "--json").json()
    assert [f["code"] for f in report["findings"]] == ["TC211"]
    assert report["findings"][0]["file"] == "run.trace.jsonl"


# ---- the example site (docs/guides/documents.md#a-walkthrough) ---------------------------

def test_the_example_site_runs_as_the_walkthrough_says(cli: Cli) -> None:
    from tests.conftest import EXAMPLES

    site = EXAMPLES / "docs"
    pages = [site / "index.md", site / "reference.html"]
    listed = cli("check", "--docs", *pages, "--json").json()
    assert listed["exit_code"] == 0
    assert listed["summary"]["document_citations"] == 8
    forms = {c["form"] for d in listed["documents"] for c in d["citations"]}
    assert forms == {"blockquote", "cite", "inline", "fragment", "notes"}
    passing = cli("verify-docs", "--root", site, *pages, "--json").json()
    assert passing["exit_code"] == 0, passing["findings"]
    files = passing["summary"]["files"]
    assert (files["checked"], files["matched"]) == (7, 7)
    assert passing["summary"]["live"]["skipped"] == 1  # after its ignore comment
    failing = cli("verify-docs", "--root", site, site / "failing.md", "--json").json()
    assert [(f["code"], f["line"]) for f in failing["findings"]] == [("TC211", 3),
                                                                    ("TC211", 7)]
    # The trace that cites the old guide page still verifies against it.
    assert cli("verify-files", EXAMPLES / "passing.trace.jsonl", "--root", EXAMPLES).exit == 0


def test_verify_docs_forks_its_parse_workers_before_it_reads_the_documents(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked after the reading, each parse worker's resident set counted the citations it
    shares with the run (docs/performance.md, figure 11): the run forks them first, reads with
    ``--jobs`` workers that are not forked from it (the pool's thread runs), and both live
    checks parse in that one pool."""
    from tracecite import workers
    from tracecite.checks.parse_pool import ParsePool
    from tracecite.run import assemble

    monkeypatch.setattr(workers, "start_method", lambda: "fork")
    events: list[tuple[str, object]] = []
    made = ParsePool.__init__
    launch = ParsePool._launch
    read = assemble.read_inputs

    def init(self: ParsePool, *args: Any, **kwargs: Any) -> None:
        events.append(("pool", None))
        made(self, *args, **kwargs)

    def launched(self: ParsePool, **kwargs: bool) -> None:
        events.append(("fork", self.launched))
        launch(self, **kwargs)

    def reading(*args: Any, **kwargs: Any) -> Any:
        events.append(("read", kwargs.get("method")))
        return read(*args, **kwargs)

    monkeypatch.setattr(ParsePool, "__init__", init)
    monkeypatch.setattr(ParsePool, "_launch", launched)
    monkeypatch.setattr(assemble, "read_inputs", reading)
    write(tmp_path / "page.html", "<p>Seen <b>here</b></p>")
    doc = write(tmp_path / "a.md", blockquote("Seen here", "page.html") + "\n"
                + blockquote("not on the page", "page.html"))
    report = cli("verify-docs", doc, "--json", "--root", tmp_path).json()
    assert [(f["code"], f["record"]) for f in report["findings"]] == [("TC211", 2)]
    assert events[:3] == [("pool", None), ("fork", False), ("read", "forkserver")]
    # One pool for the run: the live checks start none of their own, nor fork it again.
    assert [e for e in events if e[0] == "pool"] == [("pool", None)]
    assert all(e == ("fork", True) for e in events[3:])
