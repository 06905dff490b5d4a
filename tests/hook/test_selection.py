"""The hook's globs: which files are notes and traces, and what is excluded."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tracecite.hook.selection import glob_regex, select
from tracecite.settings import Settings

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")



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


