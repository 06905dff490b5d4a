"""git for ``tracecite hook``: which files are tracked, which changed since a ref or a pull
request's base. Every failure is a :class:`~tracecite.errors.GitError` (TC103) saying what to do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence

from tracecite.errors import GitError, UsageError

FETCH_DEPTH_HINT = ("check the repository out with its history (actions/checkout with "
                    "'fetch-depth: 0')")


_NO_GIT = ("git is not installed, and finding the files to check needs it; give FILE "
           "arguments instead")


def _run_git(args: Sequence[str], cwd: str) -> subprocess.CompletedProcess[bytes] | None:
    """git's answer, or None when git is not installed."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        return None


def _git(args: Sequence[str], cwd: str) -> bytes:
    """git's output; a failure is TC103 saying why."""
    done = _run_git(args, cwd)
    if done is None:
        raise GitError(_NO_GIT)
    if done.returncode != 0:
        raise GitError(_git_reason(args, done.stderr))
    return done.stdout


def _git_succeeds(args: Sequence[str], cwd: str) -> bytes | None:
    """git's output when it succeeds, else None (a question, not a failure)."""
    done = _run_git(args, cwd)
    return done.stdout if done is not None and done.returncode == 0 else None


def _git_reason(args: Sequence[str], stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace")
    if "not a git repository" in text:
        return ("not in a git repository, and finding the files to check needs one; "
                "give FILE arguments instead")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no message")
    return f"git {args[0]} failed: {first[:200]}"


def git_top_level(cwd: str) -> str | None:
    """The working tree's top-level directory, or None outside a repository (or without git)."""
    out = _git_succeeds(["rev-parse", "--show-toplevel"], cwd)
    return os.fsdecode(out.rstrip(b"\n")) if out is not None else None


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(item) for item in data.split(b"\0") if item]


def tracked_files(cwd: str) -> list[str]:
    """Every tracked file under ``cwd``, relative to it (``--all``)."""
    return sorted(_split_z(_git(["ls-files", "-z"], cwd)))


def _commit_exists(ref: str, cwd: str) -> bool:
    return _git_succeeds(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd) is not None


def changed_files(cwd: str, since: str) -> list[str]:
    """Files under ``cwd`` (relative to it) added, copied, modified or renamed (new name)
    since the merge base of ``since`` and HEAD, in the working tree, plus untracked files
    that are not ignored. Deleted files are left out."""
    if since.startswith("-") or not _commit_exists(since, cwd):
        _git(["rev-parse", "--show-toplevel"], cwd)  # "not a repository" says it better
        raise GitError(f"{since!r} names no commit in this clone; fetch it, or "
                       f"{FETCH_DEPTH_HINT}")
    merge_base = _git_succeeds(["merge-base", since, "HEAD"], cwd)
    if merge_base is None:
        raise GitError(f"{since!r} and HEAD have no merge base in this clone (a shallow "
                       f"history?); {FETCH_DEPTH_HINT}")
    base = merge_base.decode().strip()
    diff = _git(["diff", "--name-status", "-z", "--diff-filter=ACMR", "--find-renames",
                 "--relative", "--no-ext-diff", base, "--"], cwd)
    untracked = _git(["ls-files", "-z", "--others", "--exclude-standard"], cwd)
    return sorted({*parse_name_status(diff), *_split_z(untracked)})


def parse_name_status(data: bytes) -> list[str]:
    """The current names in ``git diff --name-status -z`` output (a rename's new name)."""
    fields = data.split(b"\0")
    names: list[str] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][:1]
        i += 2 if status in (b"R", b"C") else 1  # a rename or copy lists old, then new
        if i < len(fields):
            names.append(os.fsdecode(fields[i]))
        i += 1
    return names


def pull_request_base(cwd: str, environ: Mapping[str, str], *,
                      choices: str = "FILE arguments, --since or --all") -> str:
    """The commit a pull request (or merge-queue group) is compared with, from the Actions
    event file or ``GITHUB_BASE_REF``; TC103 when it is not in the clone, TC100 naming
    ``choices`` (the other ways to name the files) when the run is not for a pull request."""
    event = _event(environ.get("GITHUB_EVENT_PATH"))
    sha = _dig(event, "pull_request", "base", "sha") or _dig(event, "merge_group", "base_sha")
    if sha:
        if not re.fullmatch(r"[0-9a-fA-F]{40,64}", sha):
            raise GitError("the event's base commit is not a commit id")
        if not _commit_exists(sha, cwd):
            _git(["rev-parse", "--show-toplevel"], cwd)
            raise GitError(f"the pull request's base commit {sha[:12]} is not in this clone; "
                           f"{FETCH_DEPTH_HINT}")
        return sha
    ref = environ.get("GITHUB_BASE_REF", "")
    if ref:
        for candidate in (f"refs/remotes/origin/{ref}", f"refs/heads/{ref}"):
            if _commit_exists(candidate, cwd):
                return candidate
        _git(["rev-parse", "--show-toplevel"], cwd)
        raise GitError(f"the pull request's base branch {ref!r} is not in this clone; "
                       f"{FETCH_DEPTH_HINT}")
    raise UsageError(f"no files: this run is not for a pull request, so give {choices}")


def _event(path: str | None) -> object:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _dig(value: object, *keys: str) -> str | None:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value if isinstance(value, str) else None
