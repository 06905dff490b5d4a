"""Throw-away git repositories for the tests of the hook, the Action and the pre-commit hooks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}
ACTIONS_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH",
                     "GITHUB_BASE_REF", "GITHUB_OUTPUT", "RUNNER_TEMP")

BROKEN_NOTES = "claim: c\nquote: q\n"  # TC113: no url


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity and no user configuration."""
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, check=True)
    return done.stdout


def make_repo(path: Path) -> Path:
    """An empty repository on branch ``main`` with one commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# docs\n", encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "start")
    return path


def write(repo: Path, name: str, text: str) -> Path:
    target = repo / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def commit_all(repo: Path, message: str = "change") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
