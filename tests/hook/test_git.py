"""git for the hook: --since, --all, pull requests and merge groups, and what TC103 says."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.git_repo import BROKEN_NOTES, commit_all, git, make_repo, write
from tests.hook.conftest import GOOD_NOTES, files_in, run_json
from tracecite.cli import main
from tracecite.hook import git as hook_git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_parse_name_status_keeps_new_names() -> None:
    data = b"A\0new.notes\0M\0mod.notes\0R087\0old.notes\0renamed.notes\0C100\0src\0copy\0"
    assert hook_git.parse_name_status(data) == ["new.notes", "mod.notes", "renamed.notes", "copy"]
    assert hook_git.parse_name_status(b"") == []




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


