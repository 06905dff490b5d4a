"""The hook's globs: which files are notes and traces, and what is excluded."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tracecite.codes import Code
from tracecite.hook.selection import not_selected
from tracecite.inputs.selection import glob_regex, select, sort_out
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
    # Literal inside a class, where a regex would read them as its own syntax (and Python warned
    # "Possible nested set" on the user's stderr for "[[").
    ("[[]x.md", "[x.md", True),
    ("[^a].md", "^.md", True),
    ("[^a].md", "b.md", False),
    ("[a&&b].md", "&.md", True),
    ("[a~b|c].md", "|.md", True),
    ("[\\]x.md", "\\x.md", True),
])
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FutureWarning from re about set syntax
        assert bool(re.fullmatch(glob_regex(pattern), path)) is matches


def test_default_globs_select_notes_traces_and_other_markdown_as_documents(
        tmp_path: Path) -> None:
    config = Settings(config_path=str(tmp_path / ".tracecite.toml"))
    paths = ["README.md", "docs/guide.md", "docs/a.notes", "docs/b.notes.md", "c.notes.txt",
             "run.trace.jsonl", "traces/r1.jsonl", "eval/traces/2024/r2.jsonl", "data.jsonl",
             "docs/notes.md", "runs/agent-run.jsonl", "eval/runs/r3.jsonl", "reruns/x.jsonl",
             "docs/page.html", "site/page.html", "notes.txt"]
    out = sort_out([str(tmp_path / p) for p in paths], config)
    notes, traces, documents = ([os.path.relpath(p, tmp_path) for p in kind]
                                for kind in out.split())
    assert notes == ["docs/a.notes", "docs/b.notes.md", "c.notes.txt"]  # notes win over .md
    assert traces == ["run.trace.jsonl", "traces/r1.jsonl", "eval/traces/2024/r2.jsonl",
                      "runs/agent-run.jsonl", "eval/runs/r3.jsonl"]
    assert documents == ["README.md", "docs/guide.md", "docs/notes.md", "docs/page.html"]
    assert [os.path.relpath(p, tmp_path) for p in out.unselected] == [
        "data.jsonl", "reruns/x.jsonl", "site/page.html", "notes.txt"]


def test_traces_globs_win_over_documents_globs(tmp_path: Path) -> None:
    config = Settings(config_path=str(tmp_path / ".tracecite.toml"),
                      notes=("docs/sources.md",), documents=("**/*.md",))
    out = sort_out([str(tmp_path / p) for p in ("docs/sources.md", "docs/a.md")], config)
    notes, traces, documents = ([os.path.relpath(p, tmp_path) for p in kind]
                                for kind in out.split())
    assert (notes, traces, documents) == (["docs/sources.md"], [], ["docs/a.md"])


def _readme_paths() -> list[str]:
    """The concrete notes and trace names the README uses (placeholders such as OLD.jsonl,
    globs, and this repository's own examples/ left out)."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    names = re.findall(r"[\w./-]+\.(?:jsonl|notes(?:\.md|\.txt)?)\b", text)
    return sorted({n for n in names
                   if "*" not in n and "//" not in n
                   and not n.isupper()
                   and not n.split(".")[0].isupper()})


def test_the_readmes_own_example_names_are_selected_by_default(tmp_path: Path) -> None:
    names = _readme_paths()
    # The bundled examples too: `tracecite check examples` reads every one.
    assert {"examples/passing.trace.jsonl", "examples/citations.notes.md",
            "runs/imported/exchange.trace.jsonl"} <= set(names)
    config = Settings(config_path=str(tmp_path / ".tracecite.toml"))
    chosen = select([str(tmp_path / p) for p in names], config)
    assert [os.path.relpath(p, tmp_path) for p in chosen] == names


def test_sort_out_lists_the_unselected_but_not_the_excluded(tmp_path: Path) -> None:
    config = Settings(config_path=str(tmp_path / ".tracecite.toml"),
                      exclude=("drafts", "*.old.jsonl"))
    paths = ["a.notes", "README.rst", "drafts/x.md", "drafts/y.notes", "run.old.jsonl",
             "agent.jsonl", "README.rst", "guide.md"]
    out = sort_out([str(tmp_path / p) for p in paths], config)
    assert [os.path.relpath(p, tmp_path) for p in out.selected] == ["a.notes", "guide.md"]
    assert [os.path.relpath(p, tmp_path) for p in out.unselected] == ["README.rst",
                                                                      "agent.jsonl"]


@pytest.mark.parametrize(("config_path", "path", "key", "where"), [
    (None, "run.jsonl", "'traces'", "none was found, so the default globs apply"),
    ("pyproject.toml", "docs/a.txt", "'notes'", "the [tool.tracecite] table of pyproject.toml"),
    ("cfg/.tracecite.toml", "a.md", "'documents' (or 'notes')", "in cfg/.tracecite.toml"),
    (None, "site/page.html", "'documents' (or 'notes')", "the default globs apply"),
    (None, "site/page.XHTML", "'documents' (or 'notes')", "the default globs apply"),
])
def test_not_selected_names_the_key_and_the_configuration(
        config_path: str | None, path: str, key: str, where: str) -> None:
    finding = not_selected(path, Settings(config_path=config_path))
    assert (finding.code, finding.file, finding.line) == (Code.NOT_SELECTED, path, None)
    assert (finding.severity, finding.exit) == ("warning", 0)
    assert f"to {key} " in finding.message and where in finding.message
    assert "'exclude'" in finding.message


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


