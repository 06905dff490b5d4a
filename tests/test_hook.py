"""``tracecite hook``: globs, file discovery with git, stages and the merged report."""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.git_repo import ACTIONS_VARIABLES, BROKEN_NOTES, commit_all, git, make_repo, write
from tracecite.checks.evidence import EvidenceScan
from tracecite.checks.kinds import SourceKind
from tracecite.cli import main, run
from tracecite.codes import Code
from tracecite.commands import Inputs
from tracecite.findings import Counts, Finding, Report
from tracecite.hook import git as hook_git
from tracecite.hook.selection import glob_regex, select
from tracecite.hook.stages import stage_plan
from tracecite.settings import STAGES, Settings

GOOD_NOTES = "claim: c\nquote: q\nurl: https://example.org/\n"


pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    """Run the CLI with ``--json``; the exit code and the parsed report."""
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def files_in(report: Any) -> set[str]:
    return {f["file"] for f in report["findings"] if f["file"] is not None}


@pytest.fixture(autouse=True)
def _no_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start outside GitHub Actions, whatever runs them."""
    for name in ACTIONS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# ---- globs and selection ----------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("*.notes", "a.notes", True),
    ("*.notes", "docs/deep/a.notes", True),
    ("*.notes", "a.notes.md", False),
    ("docs/*.md", "docs/a.md", True),
    ("docs/*.md", "docs/sub/a.md", False),
    ("docs/*.md", "other/docs/a.md", False),
    ("/docs/*.md", "docs/a.md", True),
    ("docs/**/*.md", "docs/a.md", True),
    ("docs/**/*.md", "docs/x/y/a.md", True),
    ("**/traces/**/*.jsonl", "traces/a.jsonl", True),
    ("**/traces/**/*.jsonl", "x/traces/y/a.jsonl", True),
    ("**/traces/**/*.jsonl", "xtraces/a.jsonl", False),
    ("vendor/**", "vendor/a/b", True),
    ("vendor/**", "vendor", False),
    ("a?.notes", "ab.notes", True),
    ("a?.notes", "a/.notes", False),
    ("[ab].notes", "b.notes", True),
    ("[!ab].notes", "c.notes", True),
    ("[!ab].notes", "a.notes", False),
    ("a+b(c).notes", "a+b(c).notes", True),
    ("[unclosed.notes", "[unclosed.notes", True),
])
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    import re

    assert bool(re.fullmatch(glob_regex(pattern), path)) is matches


def test_default_globs_select_notes_and_traces_but_not_other_markdown(tmp_path: Path) -> None:
    config = Settings(config_path=str(tmp_path / ".tracecite.toml"))
    paths = ["README.md", "docs/guide.md", "docs/a.notes", "docs/b.notes.md", "c.notes.txt",
             "run.trace.jsonl", "traces/r1.jsonl", "eval/traces/2024/r2.jsonl", "data.jsonl",
             "docs/notes.md"]
    chosen = select([str(tmp_path / p) for p in paths], config)
    assert [os.path.relpath(p, tmp_path) for p in chosen] == [
        "docs/a.notes", "docs/b.notes.md", "c.notes.txt", "run.trace.jsonl", "traces/r1.jsonl",
        "eval/traces/2024/r2.jsonl",
    ]


def test_excludes_match_paths_and_their_folders(tmp_path: Path) -> None:
    config = Settings(config_path=str(tmp_path / ".tracecite.toml"),
                      exclude=("vendor", "**/draft-*.notes", "old/**"))
    paths = ["vendor/x/a.notes", "docs/draft-1.notes", "docs/final.notes", "old/b.notes",
             "docs/vendor.notes"]
    chosen = select([str(tmp_path / p) for p in paths], config)
    assert [os.path.relpath(p, tmp_path) for p in chosen] == ["docs/final.notes",
                                                              "docs/vendor.notes"]


def test_selection_keeps_paths_as_given_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    monkeypatch.chdir(tmp_path)
    assert select(["a.notes", "./a.notes", "a.notes"], Settings()) == ["a.notes",
                                                                            "./a.notes"]


def test_parse_name_status_keeps_new_names() -> None:
    data = b"A\0new.notes\0M\0mod.notes\0R087\0old.notes\0renamed.notes\0C100\0src\0copy\0"
    assert hook_git.parse_name_status(data) == ["new.notes", "mod.notes", "renamed.notes", "copy"]
    assert hook_git.parse_name_status(b"") == []


# ---- explicit files (pre-commit) ----------------------------------------------------------------

def test_explicit_files_not_selected_are_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "README.md", "this is not notes\n")
    write(tmp_path, "docs/a.notes", GOOD_NOTES)
    code, report = run_json(["hook", "README.md", "docs/a.notes"], capsys)
    assert code == 0
    assert report["command"] == "hook"
    assert report["summary"]["inputs"] == 1


def test_offline_stage_checks_format_structure_and_evidence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "bad.notes", BROKEN_NOTES)
    shutil.copy(EXAMPLES / "failing-evidence.jsonl", tmp_path / "bad.trace.jsonl")
    shutil.copy(EXAMPLES / "passing.jsonl", tmp_path / "good.trace.jsonl")
    code, report = run_json(["hook", "bad.notes", "bad.trace.jsonl", "good.trace.jsonl"], capsys)
    codes = {f["code"] for f in report["findings"]}
    assert code == 1
    assert {"TC113", "TC202"} <= codes
    code, report = run_json(["hook", "good.trace.jsonl", "bad.trace.jsonl"], capsys)
    assert code == 2
    assert files_in(report) == {"bad.trace.jsonl"}


def test_no_selected_files_passes_without_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for stage in STAGES:
        code, report = run_json(["hook", "--stage", stage, "missing.md"], capsys)
        assert code == 0
        assert report["findings"] == []


# ---- git: --since, --all, pull requests ------------------------------------------------------

@pytest.fixture
def branched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repo whose branch ``topic`` adds, modifies, renames and deletes notes since ``main``;
    every changed notes file is broken, so each one checked shows up as a finding."""
    repo = make_repo(tmp_path / "repo")
    write(repo, "docs/kept.notes", GOOD_NOTES)
    write(repo, "docs/modified.notes", GOOD_NOTES)
    write(repo, "docs/old-name.notes", BROKEN_NOTES + "\n# a comment that keeps it similar\n")
    write(repo, "docs/deleted.notes", GOOD_NOTES)
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, "docs/added.notes", BROKEN_NOTES)
    write(repo, "docs/modified.notes", BROKEN_NOTES)
    write(repo, "docs/added.md", BROKEN_NOTES)  # not selected by the globs
    git(repo, "mv", "docs/old-name.notes", "docs/new-name.notes")
    git(repo, "rm", "-q", "docs/deleted.notes")
    commit_all(repo, "topic")
    write(repo, "docs/untracked.notes", BROKEN_NOTES)
    write(repo, "docs/kept.notes", BROKEN_NOTES)  # changed in the working tree only
    monkeypatch.chdir(repo)
    return repo


CHANGED = {"docs/added.notes", "docs/modified.notes", "docs/new-name.notes",
           "docs/untracked.notes", "docs/kept.notes"}


def test_since_checks_changed_renamed_and_untracked_files(
        branched: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(["hook", "--since", "main"], capsys)
    assert code == 1
    assert files_in(report) == CHANGED  # deleted skipped, renamed under its new name


def test_since_from_a_subdirectory_with_the_config_at_the_top(
        branched: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(branched, ".tracecite.toml", 'notes = ["*.notes", "docs/*.md"]\n')
    monkeypatch.chdir(branched / "docs")
    code, report = run_json(["hook", "--since", "main"], capsys)
    assert code == 1
    assert files_in(report) == {os.path.relpath(branched / p, branched / "docs")
                                for p in (*CHANGED, "docs/added.md")}


def test_all_checks_every_tracked_selected_file(branched: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(["hook", "--all"], capsys)
    assert code == 1
    assert report["summary"]["inputs"] == 4
    assert files_in(report) == {"docs/added.notes", "docs/modified.notes",
                                "docs/new-name.notes", "docs/kept.notes"}


def test_since_an_unknown_ref_is_tc103(branched: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    code, report = run_json(["hook", "--since", "no-such-branch"], capsys)
    assert code == 1
    (finding,) = report["findings"]
    assert finding["code"] == "TC103"
    assert "fetch-depth: 0" in finding["message"]
    code, report = run_json(["hook", "--since", "--all"], capsys)
    assert code == 1


def test_git_needed_outside_a_repository_is_tc103(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    for args in (["--all"], ["--since", "main"]):
        code, report = run_json(["hook", *args], capsys)
        assert code == 1
        (finding,) = report["findings"]
        assert finding["code"] == "TC103"
        assert "not in a git repository" in finding["message"]


def test_git_missing_is_tc103(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, report = run_json(["hook", "--all"], capsys)
    assert code == 1
    assert "git is not installed" in report["findings"][0]["message"]


def test_files_with_all_or_since_and_no_files_at_all_are_usage_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["hook", "--all", "a.notes"]) == 1
    assert main(["hook", "--all", "--since", "main"]) == 1
    assert main(["hook"]) == 1
    assert "TC100" in capsys.readouterr().err


@pytest.mark.parametrize("stage", ["online", "all"])
@pytest.mark.parametrize("flag", [["--timeout", "99"], ["--connect-to", "junk"],
                                  ["--ca-cert", "no-such-file.pem"]])
def test_a_bad_fetch_flag_is_tc100_before_any_input_is_read(
        stage: str, flag: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """As verify-notes does: the flags are checked first, even when an input is malformed."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "bad.notes", BROKEN_NOTES)
    code, report = run_json(["hook", "--stage", stage, *flag, "bad.notes"], capsys)
    assert code == 1
    assert [f["code"] for f in report["findings"]] == ["TC100"]


def _pull_request_event(tmp_path: Path, base_sha: str) -> Path:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "base": {"sha": base_sha,
                                                                        "ref": "main"}}}))
    return event


def test_actions_pull_request_base_from_the_event(
        branched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    base = git(branched, "rev-parse", "main").strip()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_pull_request_event(tmp_path, base)))
    code, report = run_json(["hook"], capsys)
    assert code == 1
    assert files_in(report) == CHANGED


def test_actions_pull_request_base_from_github_base_ref(
        branched: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    git(branched, "update-ref", "refs/remotes/origin/main", "main")
    git(branched, "branch", "-q", "-D", "main")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    code, report = run_json(["hook"], capsys)
    assert code == 1
    assert files_in(report) == CHANGED


def test_actions_base_not_fetched_asks_for_fetch_depth_0(
        branched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_pull_request_event(tmp_path, "ab" * 20)))
    code, report = run_json(["hook"], capsys)
    assert code == 1
    (finding,) = report["findings"]
    assert finding["code"] == "TC103"
    assert "fetch-depth: 0" in finding["message"]
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    monkeypatch.setenv("GITHUB_BASE_REF", "release")
    code, report = run_json(["hook"], capsys)
    assert "fetch-depth: 0" in report["findings"][0]["message"]


def test_actions_outside_a_pull_request_needs_files(
        branched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    event = tmp_path / "push.json"
    event.write_text('{"ref": "refs/heads/main"}')
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    assert main(["hook", "--json"]) == 1


def test_merge_group_base(branched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    event = tmp_path / "mq.json"
    event.write_text(json.dumps({"merge_group": {"base_sha": git(branched, "rev-parse",
                                                                 "main").strip()}}))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    _, report = run_json(["hook"], capsys)
    assert files_in(report) == CHANGED


# ---- stages: which commands run, and the merged report --------------------------------------

class Recorder:
    """Stands in for the live checks, recording what each was given: which check, the inputs
    (already read) by path, and the settings."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from tracecite import commands

        self.calls: list[tuple[str, list[str], Settings]] = []
        monkeypatch.setattr(commands, "_check_live", self._check)

    def _check(self, inputs: Inputs, settings: Settings, kind: SourceKind, label: str
               ) -> tuple[list[Finding], Counts]:
        if kind is SourceKind.WEB:
            return self._web(inputs, settings, label)
        return self._files(inputs, settings, label)

    def _web(self, inputs: Inputs, settings: Settings, label: str
             ) -> tuple[list[Finding], Counts]:
        paths = [n.path for n in inputs.notes] + [t.scan.path for t in inputs.traces]
        self.calls.append(("web", paths, settings))
        findings, counts = [], Counts()
        if inputs.notes:
            counts += Counts(checked=2, matched=2)
        if inputs.traces:
            findings, web = self._live(inputs.traces, "web")
            counts += web
        return findings, counts

    def _files(self, inputs: Inputs, settings: Settings, label: str
               ) -> tuple[list[Finding], Counts]:
        self.calls.append(("file", [t.scan.path for t in inputs.traces], settings))
        return self._live(inputs.traces, "file")

    @staticmethod
    def _live(traces: Sequence[EvidenceScan], kind: str) -> tuple[list[Finding], Counts]:
        code = Code.QUOTE_NOT_ON_PAGE if kind == "web" else Code.QUOTE_NOT_IN_FILE
        live = Finding(code, "quote is not in the source now", file=traces[0].scan.path,
                       line=7, claim=1, citation=1)
        if kind == "web":
            return [live], Counts(checked=3, matched=2, not_found=1, skipped=1)
        return [live], Counts(checked=1, not_found=1, skipped=3)


def _hook(args: list[str]) -> Report:
    """``tracecite hook ARGS`` in-process, its report (written as JSON to a file)."""
    return run(["hook", "--report-file", "json:/dev/null", *args], stdout=io.StringIO())


def test_online_checks_the_notes_and_the_traces_web_sources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    write(tmp_path, "a.notes", GOOD_NOTES)
    shutil.copy(EXAMPLES / "passing.jsonl", tmp_path / "run.trace.jsonl")

    report = _hook(["--stage", "online", "a.notes", "run.trace.jsonl"])
    # One fetch of pages for notes and traces together: a page both cite is fetched once.
    assert [call[:2] for call in recorder.calls] == [("web", ["a.notes", "run.trace.jsonl"])]
    assert report.command == "hook"
    assert [f.code for f in report.findings] == [Code.QUOTE_NOT_ON_PAGE]
    s = report.summary
    # Evidence counted as captured (the trace's 4 quotes), the live verdicts apart.
    assert (s.inputs, s.records, s.citations) == (2, 1, 4)
    assert s.captured == Counts(checked=4, matched=4)
    assert s.live == Counts(checked=5, matched=4, not_found=1, skipped=1)
    assert s.files == Counts()


def test_all_reports_evidence_once_and_verify_files_when_configured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    shutil.copy(EXAMPLES / "passing.jsonl", tmp_path / "run.trace.jsonl")
    shutil.copy(EXAMPLES / "failing-evidence.jsonl", tmp_path / "bad.trace.jsonl")
    write(tmp_path, ".tracecite.toml", "verify_files = true\nfiles_root = 'site'\n")
    (tmp_path / "site").mkdir()
    report = _hook(["--stage", "all", "run.trace.jsonl", "bad.trace.jsonl"])
    traces = ["run.trace.jsonl", "bad.trace.jsonl"]
    assert [call[:2] for call in recorder.calls] == [("web", traces), ("file", traces)]
    assert recorder.calls[1][2].root == "site"
    assert sorted(f.code.code for f in report.findings) == ["TC201", "TC202", "TC210", "TC211"]
    s = report.summary
    # Evidence (4 + 2 quotes) once, in captured; the live checks in live and files.
    assert s.citations == 6
    assert s.captured == Counts(checked=6, matched=5, not_found=1)
    assert (s.live.checked, s.files.checked) == (3, 1)


@pytest.mark.parametrize("stage", ["online", "all"])
@pytest.mark.parametrize(("bad", "code"), [("bad.notes", "TC113"),
                                           ("bad.trace.jsonl", "TC123")])
def test_input_errors_stop_the_run_before_anything_is_fetched(
        stage: str, bad: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    write(tmp_path, "good.notes", GOOD_NOTES)
    write(tmp_path, "bad.notes", BROKEN_NOTES)
    shutil.copy(EXAMPLES / "failing-format.jsonl", tmp_path / "bad.trace.jsonl")
    shutil.copy(EXAMPLES / "failing-evidence.jsonl", tmp_path / "evidence.trace.jsonl")
    report = _hook(["--stage", stage, "good.notes", bad, "evidence.trace.jsonl"])
    assert report.exit_code == 1
    assert recorder.calls == []
    codes = {f.code.code for f in report.findings}
    assert code in codes
    # Every stage reports the evidence it read, as check --evidence does.
    assert "TC202" in codes


def test_flags_win_over_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    from tracecite.fetch.limits import MAX_BYTES

    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    write(tmp_path, "pyproject.toml", "[tool.tracecite]\ntimeout = 5\nconcurrency = 3\n"
                                      "user-agent = 'docs-bot/1'\nnotes = ['*.md']\n")
    write(tmp_path, "x.md", GOOD_NOTES)
    _hook(["--stage", "online", "--timeout", "7", "x.md"])
    _hook(["--stage", "online", "x.md"])
    first, second = (call[2] for call in recorder.calls)
    assert (first.timeout, first.concurrency, first.user_agent, first.max_bytes) == (
        7.0, 3, "docs-bot/1", MAX_BYTES)
    assert second.timeout == 5.0


def test_verify_files_root_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, ".tracecite.toml", "verify_files = true\nfiles_root = 'nowhere'\n")
    assert main(["hook", "--stage", "online", "--json", "x.notes"]) == 1


def test_unknown_stage_is_refused() -> None:
    with pytest.raises(Exception, match="unknown stage"):
        stage_plan(Settings(stage="sometimes"))


# ---- one real online run against a local server ---------------------------------------------

    """The paths `local_site` was asked for, in order."""


@pytest.mark.network
def test_online_end_to_end_against_a_local_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_site: int,
        site_requests: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    url = "http://docs.test/page"
    write(tmp_path, "site.notes",
          f"claim: ok\nquote: appear word for word in\nurl: {url}\n\n"
          f"claim: bad\nquote: this sentence is not there\nurl: {url}\n")
    trace = [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "fetch"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True,
         "sources": [{"id": "s", "uri": url, "content": "must appear word for word"}]},
        {"type": "answer", "run_id": "r", "claims": [
            {"text": "t", "citations": [{"source_id": "s", "quote": "appear word for word"}]}]},
    ]
    write(tmp_path, "run.trace.jsonl", "\n".join(json.dumps(e) for e in trace) + "\n")
    net = ["--connect-to", f"docs.test:80:127.0.0.1:{local_site}", "--allow-net", "127.0.0.0/8"]
    code, report = run_json(["hook", "--stage", "all", *net, "site.notes", "run.trace.jsonl"],
                            capsys)
    assert code == 2
    findings = report["findings"]
    assert [(f["code"], f["file"], f.get("record")) for f in findings] == [
        ("TC210", "site.notes", 2)]
    # Two notes records and the trace's citation, on the one page they cite.
    assert report["summary"]["live"]["checked"] == 3
    assert site_requests == ["/page"]  # cited by the notes and the trace, fetched once
    # Without --allow-net the loopback address is refused, never connected to.
    code, report = run_json(["hook", "--stage", "online", "--connect-to",
                             f"docs.test:80:127.0.0.1:{local_site}", "site.notes"], capsys)
    assert code == 2
    assert {f["code"] for f in report["findings"]} == {"TC306"}


def _count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
                 seen: list[str]) -> None:
    """Wrap ``owner.name`` (a function of a path) so that each call appends its path."""
    real = getattr(owner, name)

    def counting(path: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)


@pytest.mark.network
@pytest.mark.parametrize("stage", ["online", "all"])
def test_each_input_is_read_once_however_many_checks_use_it(
        stage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_site: int,
        site_requests: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A trace can be hundreds of MB: evidence, the web check and the file check share one
    scan of it, and the notes are parsed once for their format and their live check."""
    from tracecite import commands

    monkeypatch.chdir(tmp_path)
    url = "http://docs.test/page"
    write(tmp_path, "site.notes", f"claim: ok\nquote: appear word for word in\nurl: {url}\n")
    write(tmp_path, "site/guide.txt", "Quotes must appear word for word.\n")
    trace = [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "fetch"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True, "sources": [
            {"id": "web", "uri": url, "content": "must appear word for word"},
            {"id": "file", "uri": "file:guide.txt", "content": "must appear word for word"},
            {"id": "other", "uri": "urn:isbn:0451450523", "content": "appear word for word"}]},
        {"type": "answer", "run_id": "r", "claims": [{"text": "t", "citations": [
            {"source_id": s, "quote": "appear word for word"}
            for s in ("web", "file", "other")]}]},
    ]
    write(tmp_path, "run.trace.jsonl", "\n".join(json.dumps(e) for e in trace) + "\n")
    scans: list[str] = []
    notes_read: list[str] = []
    for name in ("scan_with_evidence", "scan_trace"):  # with evidence, and without
        _count_calls(monkeypatch, commands, name, scans)
    _count_calls(monkeypatch, commands, "read_notes", notes_read)
    net = ["--connect-to", f"docs.test:80:127.0.0.1:{local_site}", "--allow-net", "127.0.0.0/8"]
    code, report = run_json(["hook", "--stage", stage, "--verify-files", "--root", "site", *net,
                             "site.notes", "run.trace.jsonl"], capsys)
    assert (code, report["findings"]) == (0, [])
    assert scans == ["run.trace.jsonl"]
    assert notes_read == ["site.notes"]
    summary = report["summary"]
    assert (summary["inputs"], summary["records"], summary["citations"]) == (2, 1, 3)
    # Every stage counts the same: each kind of check apart. Captured: the three citations.
    # Live: the notes' quote and the web citation (the file: and urn: ones skipped); files:
    # the file citation (the other two skipped). The page both cite is fetched once.
    checks = {k: (summary[k]["checked"], summary[k]["matched"], summary[k]["skipped"])
              for k in ("captured", "live", "files")}
    assert checks == {"captured": (3, 3, 0), "live": (2, 2, 2), "files": (1, 1, 2)}
    assert site_requests == ["/page"]
