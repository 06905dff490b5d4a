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
    write(repo, "docs/added.txt", BROKEN_NOTES)  # not selected by the globs
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
    write(branched, ".tracecite.toml", 'notes = ["*.notes", "docs/*.txt"]\n')
    monkeypatch.chdir(branched / "docs")
    code, report = run_json(["hook", "--since", "main"], capsys)
    assert code == 1
    assert files_in(report) == {os.path.relpath(branched / p, branched / "docs")
                                for p in (*CHANGED, "docs/added.txt")}


def test_all_checks_every_tracked_selected_file(branched: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(["hook", "--all"], capsys)
    assert code == 1
    assert report["summary"]["inputs"] == 5  # the repository's README.md is a document
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




# ---- the lines a change adds or changes (docs/hook.md#checking-only-what-changed) ----------------

def test_parse_patch_reads_new_side_ranges_and_skips_hunk_lines_by_count() -> None:
    patch = (b"diff --git a/a.notes b/a.notes\n"
             b"index 1..2 100644\n"
             b"--- a/a.notes\n"
             b"+++ b/a.notes\n"
             b"@@ -2 +2 @@ claim: c\n"
             b"-quote: old\n"
             b"+quote: new\n"
             b"@@ -5,0 +6,3 @@\n"
             b"++++ b/not-a-file\n"          # added lines that look like headers
             b"+@@ -1 +99,5 @@\n"
             b"+diff --git a/x b/x\n"
             b"@@ -9,2 +11,0 @@\n"          # a deletion: no line of the new side
             b"-x\n"
             b"-y\n"
             b"\\ No newline at end of file\n"
             b"diff --git \"a/sp ace\\tand \\\"q\\\"\\303\\274.notes\" "
             b"\"b/sp ace\\tand \\\"q\\\"\\303\\274.notes\"\n"
             b"--- \"a/sp ace\\tand \\\"q\\\"\\303\\274.notes\"\n"
             b"+++ \"b/sp ace\\tand \\\"q\\\"\\303\\274.notes\"\n"
             b"@@ -0,0 +1,2 @@\n"
             b"+a\n"
             b"+b\n"
             b"diff --git a/my notes.notes b/my notes.notes\n"
             b"--- a/my notes.notes\t\n"
             b"+++ b/my notes.notes\t\n"
             b"@@ -1 +1 @@\n"
             b"-a\n"
             b"+b\n"
             b"diff --git a/old.notes b/new name.notes\n"
             b"similarity index 100%\n"
             b"rename from old.notes\n"
             b"rename to new name.notes\n"
             b"diff --git a/gone.notes b/gone.notes\n"
             b"deleted file mode 100644\n"
             b"--- a/gone.notes\n"
             b"+++ /dev/null\n"
             b"@@ -1 +0,0 @@\n"
             b"-a\n")
    assert hook_git.parse_patch(patch) == {
        "a.notes": ((2, 2), (6, 8)),
        'sp ace\tand "q"ü.notes': ((1, 2),),
        "my notes.notes": ((1, 1),),
        "new name.notes": (),
        "gone.notes": (),
    }


def test_changed_lines_in_a_real_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    names = {"plain": "docs/a.notes", "space": "docs/my notes.notes", "unicode": "docs/ünï.notes",
             "crlf": "crlf.notes", "binary": "bin.notes", "moved": "old.notes",
             "only-moved": "same.notes", "deleted": "gone.notes"}
    for key, name in names.items():  # distinct contents, so renames pair up as made
        write(repo, name, "".join(f"{key} {i}\n" for i in range(1, 21)))
    (repo / "crlf.notes").write_bytes(b"".join(b"line %d\r\n" % i for i in range(1, 6)))
    (repo / "bin.notes").write_bytes(b"a\0b\nc\nd\n")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    # Settings a user may have that change a patch's shape: none may change what is read.
    for key, value in (("diff.noprefix", "true"), ("color.ui", "always"),
                       ("diff.mnemonicPrefix", "true"), ("core.quotePath", "true"),
                       ("diff.renames", "false")):
        git(repo, "config", key, value)
    def edit(key: str) -> str:
        return "".join(f"{key} {i}\n" if i != 7 else "changed\n" for i in range(1, 21))

    for key in ("plain", "space", "unicode"):
        write(repo, names[key], edit(key) + "added\n")
    (repo / "crlf.notes").write_bytes(b"line 1\r\nCHANGED\r\nline 3\r\nline 4\r\nline 5\r\n")
    (repo / "bin.notes").write_bytes(b"a\0b\nC\nd\n")
    git(repo, "mv", "old.notes", "moved.notes")
    write(repo, "moved.notes", edit("moved"))
    git(repo, "mv", "same.notes", "same-name-but-moved.notes")
    git(repo, "rm", "-q", "gone.notes")
    commit_all(repo, "topic")
    write(repo, "new.notes", "fresh\n")  # untracked: new to git, changed throughout
    found = hook_git.changes(str(repo), "main")
    assert found.renamed_from == {"moved.notes": "old.notes",
                                  "same-name-but-moved.notes": "same.notes"}
    assert "gone.notes" not in found.files
    lines = hook_git.changed_lines(str(repo), found, list(found.files))
    assert lines == {
        "docs/a.notes": ((7, 7), (21, 21)),
        "docs/my notes.notes": ((7, 7), (21, 21)),
        "docs/ünï.notes": ((7, 7), (21, 21)),
        "crlf.notes": ((2, 2),),
        "bin.notes": ((2, 2),),
        "moved.notes": ((7, 7),),  # a rename is diffed against its old name
        "same-name-but-moved.notes": (),
        "new.notes": None,
    }
    assert hook_git.changed_lines(str(repo), found, []) == {}
