"""The pre-commit hooks: the manifest itself, and the real ``pre-commit try-repo``.

``try-repo`` clones this checkout at HEAD (plus staged and tracked changes) and installs the hook
environment with pip, once per run: the two runs start together, in parallel, once per module.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.conftest import REPO_ROOT as ROOT
from tests.git_repo import (
    ACTIONS_VARIABLES,
    BROKEN_NOTES,
    GIT_ENV,
    commit_all,
    git,
    make_repo,
    write,
)
from tracecite.cli import main
from tracecite.inputs.selection import select
from tracecite.settings import Settings

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit (the test extra)")

MANIFEST = ROOT / ".pre-commit-hooks.yaml"
# A URL the address policy refuses without any network access (a loopback literal).
REFUSED_NOTES = "claim: c\nquote: q\nurl: https://127.0.0.1/page\n"
GOOD_FILES = ("docs/good.notes", "traces/good.jsonl", "README.md")
PUSHED_BEFORE = "".join(f"claim: c{n}\nquote: q\nurl: https://127.0.0.1/old{n}\n\n"
                        for n in (1, 2))
PUSHED_RECORD = "claim: c3\nquote: q\nurl: https://127.0.0.1/new\n"  # its url: on line 12
BAD_FILES = ("docs/bad.notes", "traces/bad.jsonl", "docs/good.notes", "agent-output.jsonl",
             "docs/sources.md")
# A document with a text directive that does not decode (TC140), and a trace the default globs
# do not select: the hooks' files: pattern passes both, so TraceCite's globs decide.
BROKEN_DOCUMENT = "# Sources\n\nSee [the passage](https://example.org/#:~:text=a%ZZ).\n"


def _manifest() -> list[dict[str, Any]]:
    hooks = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(hooks, list)
    return hooks


def _hook(hook_id: str) -> dict[str, Any]:
    return next(h for h in _manifest() if h["id"] == hook_id)


@pytest.fixture(autouse=True)
def _no_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ACTIONS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# ---- the manifest -------------------------------------------------------------------------

def test_manifest_hooks() -> None:
    hooks = {h["id"]: h for h in _manifest()}
    assert set(hooks) == {"tracecite", "tracecite-online"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["require_serial"] is True  # one run, one report, one exit code
        assert hook["entry"].split()[:2] == ["tracecite", "hook"]
    assert "stages" not in hooks["tracecite"]  # default stages: runs on every commit
    assert "--stage offline" in hooks["tracecite"]["entry"]
    assert hooks["tracecite-online"]["stages"] == ["pre-push", "manual"]
    assert "--stage online" in hooks["tracecite-online"]["entry"]


SAMPLE_PATHS = [
    "a.notes", "docs/a.notes", "docs/a.notes.md", "docs/a.notes.txt", "docs/a.md", "README.md",
    "notes", "docs/notes.md", "a.notes.rst", "x.trace.jsonl", "deep/x.trace.jsonl",
    "traces/a.jsonl", "eval/traces/b/c.jsonl", "traces/a.json", "data.jsonl", "mytraces/a.jsonl",
    "traces.jsonl", "docs/.notes", "runs/agent-run.jsonl", "eval/runs/a.jsonl", "reruns/a.jsonl",
    "docs/page.html", "docs/deep/page.htm", "site/index.html", "GUIDE.MD", "a.markdown",
    "site/page.xhtml",
    "agent-output.jsonl", "docs/sources.md", "src/app.py", "logo.png", "notes.txt",
]
# What a configuration may select besides the defaults: the hooks' `files:` must pass it, so
# that TraceCite's globs decide (a file they do not select is a TC106 warning, never silence).
CONFIGURED = Settings(notes=("docs/sources.md", "*.notes", "*.notes.txt"),
                      traces=("*.jsonl",), documents=("**/*.md", "**/*.markdown",
                                                      "**/*.html", "**/*.htm",
                                                      "**/*.xhtml"))
KEPT_OUT = {"notes", "traces/a.json", "a.notes.rst", "src/app.py", "logo.png", "notes.txt"}


@pytest.mark.parametrize("hook_id", ["tracecite", "tracecite-online"])
def test_files_regex_passes_whatever_the_globs_may_select(hook_id: str, tmp_path: Path) -> None:
    pattern = re.compile(_hook(hook_id)["files"])
    for settings in (Settings(config_path=str(tmp_path / ".tracecite.toml")),
                     replace(CONFIGURED, config_path=str(tmp_path / ".tracecite.toml"))):
        for path in SAMPLE_PATHS:
            if select([str(tmp_path / path)], settings):
                assert pattern.search(path), path
    for path in SAMPLE_PATHS:
        assert bool(pattern.search(path)) is (path not in KEPT_OUT), path


def _entry(hook_id: str) -> list[str]:
    entry: list[str] = _hook(hook_id)["entry"].split()
    assert entry[0] == "tracecite"
    return entry[1:]


def test_each_entry_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "docs/good.notes", REFUSED_NOTES)
    write(tmp_path, "docs/bad.notes", BROKEN_NOTES)
    write(tmp_path, "README.md", "not selected\n")
    (tmp_path / "traces").mkdir()
    shutil.copy(EXAMPLES / "passing.trace.jsonl", tmp_path / "traces" / "good.jsonl")
    shutil.copy(EXAMPLES / "failing-evidence.trace.jsonl", tmp_path / "traces" / "bad.jsonl")
    offline = _entry("tracecite")
    assert main([*offline, "docs/good.notes", "traces/good.jsonl", "README.md"]) == 0
    assert main([*offline, "traces/good.jsonl", "traces/bad.jsonl"]) == 2
    assert main([*offline, "docs/bad.notes", "traces/bad.jsonl"]) == 1
    online = _entry("tracecite-online")
    assert main([*online, "README.md"]) == 0  # nothing selected, nothing fetched
    assert main([*online, "docs/bad.notes", "docs/good.notes"]) == 1  # before any fetch
    capsys.readouterr()
    assert main([*online, "docs/good.notes"]) == 2
    assert "TC306" in capsys.readouterr().out


# ---- the real pre-commit try-repo ----------------------------------------------------------

def _pre_commit_missing() -> str | None:
    if importlib.util.find_spec("pre_commit") is None:
        return "pre-commit is not installed (pip install -e '.[test]')"
    if shutil.which("git") is None:
        return "git is not installed"
    if not (ROOT / ".git").exists():
        return "the checkout under test is not a git repository (try-repo clones it)"
    return None


class TryRepo:
    """One ``pre-commit try-repo`` run: its exit code, output and wall time."""

    def __init__(self, target: Path, env: dict[str, str], *args: str) -> None:
        self.args = args
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), *args,
             "--color", "never"],
            cwd=target, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = ""
        self.code: int | None = None
        self.seconds = 0.0

    def wait(self) -> TryRepo:
        self.output, _ = self.process.communicate(timeout=600)
        self.code = self.process.returncode
        self.seconds = time.monotonic() - self.started
        return self


@pytest.fixture(scope="module")
def try_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, TryRepo]]:
    reason = _pre_commit_missing()
    if reason:
        pytest.skip(reason)
    base = tmp_path_factory.mktemp("precommit")
    target = make_repo(base / "docs-repo")
    write(target, "docs/good.notes", REFUSED_NOTES)
    write(target, "docs/bad.notes", BROKEN_NOTES)
    (target / "traces").mkdir()
    shutil.copy(EXAMPLES / "passing.trace.jsonl", target / "traces" / "good.jsonl")
    shutil.copy(EXAMPLES / "failing-evidence.trace.jsonl", target / "traces" / "bad.jsonl")
    write(target, "docs/pushed.notes", PUSHED_BEFORE)
    write(target, "docs/sources.md", BROKEN_DOCUMENT)
    shutil.copy(EXAMPLES / "passing.trace.jsonl", target / "agent-output.jsonl")
    commit_all(target, "docs")
    pushed_from = git(target, "rev-parse", "HEAD").strip()
    write(target, "docs/pushed.notes", PUSHED_BEFORE + "\n" + PUSHED_RECORD)
    commit_all(target, "a record to push")
    env = {k: v for k, v in os.environ.items() if k not in ACTIONS_VARIABLES}
    env.update(GIT_ENV, PRE_COMMIT_HOME=str(base / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    # pre-commit is run by this interpreter; its hook environment still comes from pip.
    runs = {
        # Every hook of the manifest, at the manual stage: the offline hook passes, and the
        # online hook fails on an address the policy refuses (no network is touched).
        "good": TryRepo(target, env, "--hook-stage", "manual", "--files", *GOOD_FILES),
        "bad": TryRepo(target, env, "tracecite", "--files", *BAD_FILES),
        # A push: pre-commit gives the files changed since the remote's commit, and the refs.
        "push": TryRepo(target, env, "tracecite-online", "--hook-stage", "pre-push",
                        "--from-ref", pushed_from, "--to-ref", "HEAD"),
    }
    yield {name: run.wait() for name, run in runs.items()}


def _section(output: str, name: str) -> str:
    """One hook's part of pre-commit's output."""
    start = output.index(name)
    rest = output[start:]
    following = re.search(r"\n\S.*\.{3,}", rest[len(name):])
    return rest if following is None else rest[:len(name) + following.start()]


@pytest.mark.slow
def test_try_repo_offline_hook_passes_on_good_files(try_repo: dict[str, TryRepo]) -> None:
    run = try_repo["good"]
    offline = _section(run.output, "tracecite (offline)")
    assert re.match(r"tracecite \(offline\)\.+Passed", offline), run.output


@pytest.mark.slow
def test_try_repo_offline_hook_fails_on_bad_files(try_repo: dict[str, TryRepo]) -> None:
    run = try_repo["bad"]
    assert run.code == 1, run.output
    offline = _section(run.output, "tracecite (offline)")
    assert re.match(r"tracecite \(offline\)\.+Failed", offline), run.output
    assert "- hook id: tracecite" in offline
    assert "- exit code: 1" in offline
    for expected in ("docs/bad.notes", "TC113 notes-missing-field", "traces/bad.jsonl",
                     "TC202 quote-not-in-capture", "tracecite hook --stage offline: failed: ",
                     "docs/sources.md:3", "TC140 doc-citation-invalid",
                     "agent-output.jsonl", "TC106 not-selected"):
        assert expected in offline, expected
    assert "documentation purposes" not in run.output  # never a quote


@pytest.mark.slow
def test_try_repo_online_hook_runs_at_its_stage(try_repo: dict[str, TryRepo]) -> None:
    run = try_repo["good"]
    assert run.code == 1, run.output  # the online hook failed
    online = _section(run.output, "tracecite (online)")
    assert re.match(r"tracecite \(online\)\.+Failed", online), run.output
    assert "- hook id: tracecite-online" in online
    assert "- exit code: 2" in online
    assert "TC306 address-refused" in online


@pytest.mark.slow
def test_try_repo_push_checks_only_the_records_pushed(try_repo: dict[str, TryRepo]) -> None:
    """pre-commit's refs reach the hook: of the pushed file's three records only the one the
    push adds is checked (its refused address is the one finding), the others unchanged."""
    run = try_repo["push"]
    assert run.code == 1, run.output
    online = _section(run.output, "tracecite (online)")
    assert "- exit code: 2" in online
    # One finding line (the fix line after the findings names the code too).
    assert online.count("TC306 address-refused  ") == 1, online
    assert "docs/pushed.notes:12" in online and "2 unchanged" in online, online


@pytest.mark.slow
def test_try_repo_runs_in_reasonable_time(try_repo: dict[str, TryRepo]) -> None:
    # Both runs install the hook environment with pip; in parallel they take one's time.
    slowest = max(run.seconds for run in try_repo.values())
    assert slowest < 300, f"pre-commit try-repo took {slowest:.0f} s"
