"""What the command line makes of its FILE arguments: directories expanded by the configured globs,
a pattern the shell left unexpanded, a mistyped command, and where in a trace's answer line a
citation's finding points (docs/reference/commands.md, docs/reference/reports.md#locations)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    EXAMPLES,
    REPO_ROOT,
    Cli,
    answer,
    call,
    claim,
    jsonl,
    note,
    result,
    source,
    valid_events,
)
from tests.conftest import write_notes as _write_notes
from tests.conftest import write_trace as _write_trace
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.settings import DEFAULT_DOCUMENTS, DEFAULT_NOTES, DEFAULT_TRACES


def write_notes(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return _write_notes(path, text)


def write_trace(path: Path, events: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return _write_trace(path, events)


def _tree(root: Path) -> None:
    """docs/ with notes and traces the default globs select, and files they do not."""
    write_notes(root / "docs" / "b.notes", note())
    write_notes(root / "docs" / "a.notes.md", note())
    write_notes(root / "docs" / "sub" / "c.notes.txt", note())
    write_notes(root / "docs" / "README.md", "not notes at all\n")
    write_trace(root / "docs" / "run.trace.jsonl", valid_events())
    write_trace(root / "docs" / "traces" / "x.jsonl", valid_events())
    write_notes(root / "docs" / "vendor" / "v.notes", note())


def _files(run_json: dict[str, Any]) -> list[str]:
    return [f["file"] for f in run_json["findings"]]


# ---- directories ------------------------------------------------------------------------------

def test_a_directory_is_the_files_the_globs_select(cli: Cli, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    run = cli("check", "docs", "--evidence", "--json")
    assert run.exit == 0, run.out
    summary = run.json()["summary"]
    # 4 notes files, 2 traces and README.md, a document (the notes globs win over
    # **/*.md for a.notes.md).
    assert (summary["inputs"], summary["records"], summary["citations"]) == (7, 4, 2)
    assert summary["document_citations"] == 0
    assert cli("docs", "--evidence", "--json").json() == run.json()  # the bare form


def test_directory_files_come_in_sorted_order(cli: Cli, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    for path in (tmp_path / "docs").rglob("*.notes*"):
        path.write_text("claim: a\n")  # every notes file now has a TC113
    monkeypatch.chdir(tmp_path)
    run = cli("check", "docs", "--json")
    assert _files(run.json()) == [
        os.path.join("docs", name) for name in (
            "a.notes.md", "b.notes", os.path.join("sub", "c.notes.txt"),
            os.path.join("vendor", "v.notes"))]


def test_configured_globs_and_excludes_choose(cli: Cli, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.tracecite]\nnotes = ["*.md"]\ntraces = []\nexclude = ["vendor"]\n')
    (tmp_path / "docs" / "README.md").write_text("claim: a\n")
    monkeypatch.chdir(tmp_path)
    run = cli("check", "docs", "--json")
    assert run.exit == 1
    assert _files(run.json()) == [os.path.join("docs", "README.md")]
    assert run.json()["summary"]["inputs"] == 2  # README.md and a.notes.md


def test_excluded_folders_are_not_entered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite import surroundings as directories

    _tree(tmp_path)
    (tmp_path / ".tracecite.toml").write_text('exclude = ["docs/vendor"]\n')
    monkeypatch.chdir(tmp_path)
    entered: list[str] = []
    scandir = os.scandir

    def recording(folder: str) -> Any:
        entered.append(folder)
        return scandir(folder)

    monkeypatch.setattr(directories.os, "scandir", recording)
    expanded = directories.expand_directories(["docs"])
    assert os.path.join("docs", "vendor", "v.notes") not in expanded.paths
    assert os.path.join("docs", "vendor") not in entered
    assert os.path.join("docs", "sub") in entered


def test_symlinked_directories_are_not_followed(cli: Cli, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    write_notes(outside / "far.notes", "claim: a\n")
    write_notes(tmp_path / "docs" / "near.notes", note())
    try:
        (tmp_path / "docs" / "away").symlink_to(outside, target_is_directory=True)
        (tmp_path / "docs" / "loop").symlink_to(tmp_path / "docs", target_is_directory=True)
        (tmp_path / "docs" / "linked.notes").symlink_to(outside / "far.notes")
    except OSError:
        pytest.skip("symbolic links cannot be made here")
    monkeypatch.chdir(tmp_path)
    run = cli("check", "docs", "--json")
    # The link to a file is read (its TC113); nothing is read through the folder links.
    assert _files(run.json()) == [os.path.join("docs", "linked.notes")]
    assert run.json()["summary"]["inputs"] == 2


def test_a_directory_that_selects_nothing_is_tc106(cli: Cli, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Readable, but nothing in it is named as the globs expect: a warning that says so, not
    "input-unreadable"."""
    write_notes(tmp_path / "empty" / "README.txt", "hello\n")
    write_notes(tmp_path / "a.notes", note())
    monkeypatch.chdir(tmp_path)
    run = cli("check", "empty", "a.notes", "--json")
    assert run.exit == 0
    (finding,) = run.json()["findings"]
    assert (finding["code"], finding["name"], finding["severity"], finding["file"],
            finding["line"]) == ("TC106", "not-selected", "warning", "empty", None)
    assert finding["message"] == (
        "nothing in this directory is selected: no file under it matches the globs "
        f"(notes: {', '.join(DEFAULT_NOTES)}; traces: {', '.join(DEFAULT_TRACES)}; "
        f"documents: {', '.join(DEFAULT_DOCUMENTS)}); rename the files or set the globs in the "
        "configuration")
    assert "unreadable" not in cli("check", "empty").out
    # verify-notes reads notes only, so names only the notes globs.
    run = cli("verify-notes", "empty", "--json")
    assert run.exit == 0
    assert "(notes: *.notes, *.notes.md, *.notes.txt);" in run.json()["findings"][0]["message"]
    assert run.json()["summary"]["live"]["checked"] == 0


def test_verify_files_takes_a_directory_of_traces(cli: Cli, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "page.txt").write_text("The quick brown fox jumps over the lazy dog.")
    local = [call(), result(sources=[source(uri="file:page.txt")]), answer()]
    write_trace(tmp_path / "docs" / "run.trace.jsonl", local)
    write_trace(tmp_path / "docs" / "traces" / "x.jsonl", local)
    run = cli("verify-files", "docs", "--json")
    assert run.exit == 0, run.out
    summary = run.json()["summary"]
    # The two traces, not the notes beside them.
    assert (summary["inputs"], summary["files"]["matched"]) == (2, 2)


def test_a_bad_configuration_is_tc104_only_for_a_directory(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".tracecite.toml").write_text("notes = 3\n")
    write_notes(tmp_path / "docs" / "a.notes", note())
    monkeypatch.chdir(tmp_path)
    assert cli("check", "docs/a.notes", "--json").exit == 0
    run = cli("check", "docs", "--json")
    assert run.exit == 1 and run.codes() == ["TC104"]


def test_directory_subprocess(tmp_path: Path) -> None:
    _tree(tmp_path)
    run = _run_tracecite(tmp_path, "docs", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["summary"]["inputs"] == 7  # README.md is a document


# ---- hints ------------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["*.jsonl", "notes/?.md", "run[12].jsonl"])
def test_an_unexpanded_pattern_gets_a_hint(cli: Cli, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, pattern: str) -> None:
    monkeypatch.chdir(tmp_path)
    (finding,) = cli("check", pattern, "--json").json()["findings"]
    assert (finding["code"], finding["file"]) == ("TC101", pattern)
    assert finding["message"] == ("input file does not exist; the shell did not expand it: no "
                                  "file matches, or it was quoted")


def test_a_missing_file_without_pattern_characters_gets_no_hint(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (finding,) = cli("check", "missing.jsonl", "--json").json()["findings"]
    assert finding["message"] == "input file does not exist"


# A NUL cannot come from a shell, only from a caller of the library or of ``run``: each was an
# internal error (TC900), or a traceback past the error boundary for a report file.
NUL = "a\0b"


@pytest.mark.parametrize("argv", [
    ["check", NUL], ["check", NUL, "--evidence"], ["compare", NUL, NUL], ["merge", NUL],
    ["verify-notes", NUL],
])
def test_an_input_named_with_a_nul_is_tc101(cli: Cli, argv: list[str]) -> None:
    findings = cli(*argv, "--json").json()["findings"]
    assert {f["code"] for f in findings} == {"TC101"}
    assert findings[0]["message"] == "the file name holds a NUL character: no file has that name"


@pytest.mark.parametrize(("option", "value"), [
    ("--report-file", f"json:{NUL}"), ("--report-file", f"sarif:{NUL}"), ("--cache", NUL),
    ("--ca-cert", NUL),
])
def test_an_option_naming_a_path_with_a_nul_is_tc100(cli: Cli, option: str, value: str) -> None:
    run = cli("verify-notes", str(EXAMPLES / "citations.notes.md"), option, value)
    assert run.exit == 1
    assert run.err == (f"tracecite: TC100 usage: argument {option}: must be a path without a NUL "
                       "character (see 'tracecite verify-notes --help')\n")


def test_import_into_a_directory_named_with_a_nul_is_tc100(cli: Cli) -> None:
    run = cli("import", "anthropic", str(EXAMPLES / "anthropic"), "-o", NUL, "--json")
    assert run.exit == 1
    assert run.json()["findings"][0]["message"] == "-o: the directory's name holds a NUL character"


@pytest.mark.parametrize(("word", "close"), [
    ("chek", "'check'"), ("Check", "'check'"), ("hoook", "'hook'"),
    ("compar", "'compare'"), ("verify-note", "'verify-notes'"),
    ("verify", "'verify-urls', 'verify-docs', 'verify-notes' or 'verify-files'"),
])
def test_a_mistyped_command_is_tc100(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     word: str, close: str) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli(word, "notes.md", "--json")
    assert run.exit == 1
    (finding,) = run.json()["findings"]
    assert finding["code"] == "TC100"
    assert finding["message"] == f"unknown command '{word}'; did you mean {close}?"


@pytest.mark.parametrize("word", ["chek.md", "docs/chek", "xyzzy"])
def test_a_file_is_never_taken_for_a_command(cli: Cli, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, word: str) -> None:
    """Names with an extension or a folder, and words close to no command, are files."""
    monkeypatch.chdir(tmp_path)
    (finding,) = cli(word, "--json").json()["findings"]
    assert (finding["code"], finding["file"]) == ("TC101", word)


def test_an_existing_file_named_like_a_command_is_checked(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_notes(tmp_path / "chek", note())
    run = cli("chek", "--json")
    assert run.exit == 0 and run.json()["command"] == "check"


def test_hints_subprocess(tmp_path: Path) -> None:
    run = _run_tracecite(tmp_path, "chek", "notes.md")
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == "tracecite: TC100 usage: unknown command 'chek'; did you mean 'check'?\n"
    run = _run_tracecite(tmp_path, "check", "*.jsonl")  # no shell here: the pattern as quoted
    assert run.returncode == 1
    assert "the shell did not expand it" in run.stdout


def _run_tracecite(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    return subprocess.run([sys.executable, "-m", "tracecite", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


# ---- trace columns (docs/reference/reports.md#locations) -----------------------------------------

def _column_of(line: bytes, claim_at: int, citation_at: int) -> int:
    """The expected column: the ``quote`` key of that citation, counted by hand in characters
    (the answer below writes claim and citation numbers into each quote)."""
    text = line.decode("utf-8")
    marker = json.dumps(f"q{claim_at}.{citation_at} ", ensure_ascii=False)[:-1]
    return text.index(marker) + 1


def _answer(quote: Any = None, **per_citation: Any) -> dict[str, Any]:
    """Two claims of two citations each; the quote of each names its place, and is found in
    the capture unless ``quote`` says otherwise (``per_citation["c2n1"]``: one citation's
    fields)."""
    claims = []
    for c in (1, 2):
        cites = []
        for n in (1, 2):
            fields = {"source_id": "s1", "quote": f"q{c}.{n} quick"}
            fields.update(per_citation.get(f"c{c}n{n}", {}))
            cites.append({"note": "é" * c, **fields})
        claims.append(claim(text=f"Ünïcode claim {c} with \"quote\": in it", citations=cites))
    return answer(claims)


CAPTURE = "q1.1 quick q1.2 quick q2.1 quick q2.2 quick"


@pytest.mark.parametrize("answer_last", [True, False], ids=["answer-last", "answer-first"])
def test_a_quote_not_in_its_capture_points_at_its_column(cli: Cli, tmp_path: Path,
                                                         answer_last: bool) -> None:
    events = [call(), result(sources=[source(content=CAPTURE)]),
              _answer(c2n1={"quote": "q2.1 missing"})]
    if not answer_last:  # the answer is not read ahead: the second way through the reader
        events.append({"type": "note", "run_id": "r1"})
    path = write_trace(tmp_path / "t.jsonl", events)
    run = cli("check", path, "--evidence", "--json")
    assert run.exit == 2
    (finding,) = run.json()["findings"]
    line = path.read_bytes().splitlines()[2]
    assert (finding["code"], finding["line"], finding["claim"], finding["citation"]) == (
        "TC202", 3, 2, 1)
    column = finding["column"]
    assert line.decode()[column - 1:].startswith('"q2.1 missing"')
    assert column == _column_of(line, 2, 1)


def test_an_unknown_source_points_at_its_quote(cli: Cli, tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(content=CAPTURE)]),
        _answer(c1n2={"source_id": "s9"}, c2n2={"source_id": "s8", "quote": 5})])
    run = cli("check", path, "--json")
    findings = run.json()["findings"]
    line = path.read_bytes().splitlines()[2].decode()
    got = {(f["code"], f["claim"], f["citation"]): f["column"] for f in findings}
    assert got[("TC131", 1, 2)] == _column_of(line.encode(), 1, 2)
    assert line[got[("TC131", 1, 2)] - 1:].startswith('"q1.2 ')
    # A quote that is not a string is still where the quote is (a number, here).
    assert line[got[("TC131", 2, 2)] - 1:].startswith("5")


def test_live_findings_point_at_the_quote(cli: Cli, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "page.txt").write_text("q1.1 quick q1.2 quick q2.2 quick")
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(uri="file:page.txt", content=CAPTURE),
                                source("s2", uri="file:gone.txt", content=CAPTURE)]),
        _answer(c2n2={"source_id": "s2"})])
    run = cli("verify-files", "t.jsonl", "--json")
    assert run.exit == 2
    line = path.read_bytes().splitlines()[2]
    got = [(f["code"], f["claim"], f["citation"], f["column"]) for f in run.json()["findings"]]
    assert sorted(got) == [("TC211", 2, 1, _column_of(line, 2, 1)),
                           ("TC320", 2, 2, _column_of(line, 2, 2))]
    sarif = json.loads(cli("verify-files", "t.jsonl", "--format", "sarif").out)
    regions = [r["locations"][0]["physicalLocation"]["region"]
               for r in sarif["runs"][0]["results"]]
    assert sorted(r["startColumn"] for r in regions) == sorted(
        [_column_of(line, 2, 1), _column_of(line, 2, 2)])


@pytest.mark.network
def test_web_findings_point_at_the_quote(cli: Cli, site: Site, tmp_path: Path) -> None:
    page = site.route("/page", text("q1.1 quick q1.2 quick q2.1 quick"))
    gone = site.route("/gone", text("no", status=404))
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(uri=page, content=CAPTURE),
                                source("s2", uri=gone, content=CAPTURE)]),
        _answer(c1n2={"source_id": "s2"})])
    run = cli("verify-urls", path, "--json", *site.flags)
    assert run.exit == 2
    line = path.read_bytes().splitlines()[2]
    got = sorted((f["code"], f["claim"], f["citation"], f["column"])
                 for f in run.json()["findings"])
    assert got == [("TC210", 2, 2, _column_of(line, 2, 2)),
                   ("TC315", 1, 2, _column_of(line, 1, 2))]


def test_columns_in_a_long_answer_line(cli: Cli, tmp_path: Path) -> None:
    """Over 1 MiB the answer's claims are decoded lazily; the columns are the same."""
    padding = "x" * (1 << 20)
    events = [call(), result(sources=[source(content=CAPTURE)]),
              _answer(c1n1={"pad": padding}, c2n2={"quote": "q2.2 gone"})]
    path = write_trace(tmp_path / "t.jsonl", events)
    (finding,) = cli("check", path, "--evidence", "--json").json()["findings"]
    line = path.read_bytes().splitlines()[2]
    assert finding["column"] == _column_of(line, 2, 2) > (1 << 20)


def test_passing_runs_never_read_the_answer_again(cli: Cli, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.inputs import answer as answer_module
    from tracecite.inputs import trace, validator

    looked: list[object] = []

    def spy(*args: Any) -> dict[tuple[int, int], int]:
        looked.append(args)
        return answer_module.quote_columns(*args)

    for module in (trace, validator):  # where it is called
        monkeypatch.setattr(module, "quote_columns", spy)
    path = write_trace(tmp_path / "t.jsonl", [call(), result(sources=[source(content=CAPTURE)]),
                                              _answer()])
    assert cli("check", path, "--evidence").exit == 0
    assert looked == []
    path.write_bytes(jsonl([call(), result(sources=[source(content=CAPTURE)]),
                            _answer(c1n1={"quote": "gone"})]))
    assert cli("check", path, "--evidence").exit == 2
    assert len(looked) == 1  # one read of the answer line, for the one finding


def test_live_runs_read_the_answer_again_only_for_their_findings(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.inputs import answer as answer_module
    from tracecite.inputs import trace

    looked: list[object] = []

    def spy(*args: Any) -> dict[tuple[int, int], int]:
        looked.append(args)
        return answer_module.quote_columns(*args)

    monkeypatch.setattr(trace, "quote_columns", spy)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "page.txt").write_text(CAPTURE, encoding="utf-8")
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(uri="file:page.txt", content=CAPTURE)]), _answer()])
    assert cli("verify-files", str(path)).exit == 0
    assert looked == []  # every quote is on the page: no column is needed
    (tmp_path / "page.txt").write_text("q1.1 quick q1.2 quick q2.1 quick", encoding="utf-8")
    run = cli("verify-files", str(path), "--json")
    assert run.exit == 2
    assert len(looked) == 1  # one read of the answer line, for the one finding
    (finding,) = run.json()["findings"]
    line = path.read_bytes().splitlines()[2]
    assert (finding["code"], finding["column"]) == ("TC211", _column_of(line, 2, 2))


def test_a_very_deep_directory_is_walked_whole(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite import surroundings as directories

    monkeypatch.chdir(tmp_path)
    deep = "docs"
    os.mkdir(deep)
    for _ in range(1100):  # deeper than Python's recursion limit (os.makedirs recurses too)
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    Path(deep, "far.notes").write_text("")
    Path("docs", "near.notes").write_text("")
    try:
        expanded = directories.expand_directories(["docs"])
    finally:  # pytest's clean-up (shutil.rmtree) recurses too: the tree goes here, bottom up
        os.remove(os.path.join(deep, "far.notes"))
        while deep != "docs":
            os.rmdir(deep)
            deep = os.path.dirname(deep)
    assert expanded.paths == (os.path.join("docs", "near.notes"),
                              os.path.join(*["docs"] + ["d"] * 1100, "far.notes"))
