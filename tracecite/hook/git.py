"""git for ``tracecite hook``: which files are tracked, which changed since a ref or a pull
request's base. Every failure is a :class:`~tracecite.errors.GitError` (TC103) saying what to do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class Changes:
    """The files under a directory (relative to it) that changed since the merge base ``base``
    of a ref and HEAD: added, copied, modified or renamed (by the new name), in the working
    tree, and the untracked files that are not ignored; deleted files are left out.
    ``renamed_from``: a renamed or copied file's old name."""

    base: str
    files: tuple[str, ...]
    untracked: frozenset[str] = frozenset()
    renamed_from: Mapping[str, str] = field(default_factory=dict)


LineRanges = tuple[tuple[int, int], ...]
"""Lines of a file, as sorted ranges ``(first, last)``, 1-based and inclusive."""


def merge_base(cwd: str, since: str) -> str:
    """The merge base of ``since`` and HEAD (TC103 when either is not in the clone)."""
    if since.startswith("-") or not _commit_exists(since, cwd):
        _git(["rev-parse", "--show-toplevel"], cwd)  # "not a repository" says it better
        raise GitError(f"{since!r} names no commit in this clone; fetch it, or "
                       f"{FETCH_DEPTH_HINT}")
    found = _git_succeeds(["merge-base", since, "HEAD"], cwd)
    if found is None:
        raise GitError(f"{since!r} and HEAD have no merge base in this clone (a shallow "
                       f"history?); {FETCH_DEPTH_HINT}")
    return found.decode().strip()


def changes(cwd: str, since: str) -> Changes:
    """What changed under ``cwd`` since the merge base of ``since`` and HEAD."""
    base = merge_base(cwd, since)
    diff = _git(["diff", "--name-status", "-z", "--diff-filter=ACMR", "--find-renames",
                 "--relative", "--no-ext-diff", base, "--"], cwd)
    untracked = _split_z(_git(["ls-files", "-z", "--others", "--exclude-standard"], cwd))
    pairs = name_status_pairs(diff)
    return Changes(base, tuple(sorted({*(new for _, new in pairs), *untracked})),
                   frozenset(untracked), {new: old for old, new in pairs if old is not None})


def parse_name_status(data: bytes) -> list[str]:
    """The current names in ``git diff --name-status -z`` output (a rename's new name)."""
    return [new for _, new in name_status_pairs(data)]


def name_status_pairs(data: bytes) -> list[tuple[str | None, str]]:
    """``(old name, current name)`` in ``git diff --name-status -z`` output; the old name is
    None unless the file was renamed or copied."""
    fields = data.split(b"\0")
    pairs: list[tuple[str | None, str]] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i][:1]
        old = None
        if status in (b"R", b"C") and i + 2 < len(fields):  # a rename or copy: old, then new
            old = os.fsdecode(fields[i + 1])
            i += 1
        i += 1
        if i < len(fields):
            pairs.append((old, os.fsdecode(fields[i])))
        i += 1
    return pairs


def changed_lines(cwd: str, found: Changes, paths: Sequence[str]) -> dict[str, LineRanges | None]:
    """For each of ``paths`` (among ``found.files``, relative to ``cwd``), the lines of its
    working-tree version added or changed since ``found.base``: None when the whole file is
    new to git (untracked) or git's diff does not show it; ``()`` when only its name or mode
    changed. Deleted lines leave no line of the new version changed."""
    result: dict[str, LineRanges | None] = dict.fromkeys(paths)
    tracked = [p for p in paths if p not in found.untracked]
    if not tracked:
        return result
    spec = sorted({*tracked, *(found.renamed_from[p] for p in tracked
                               if p in found.renamed_from)})
    # Every setting that changes the patch's shape is fixed here: no colour, no external diff
    # or text conversion, fixed prefixes, unquoted UTF-8 names; --text, so a file git thinks
    # binary still shows its lines; literal pathspecs, so a name is never read as a glob.
    patch = _git(["-c", "core.quotePath=false", "--literal-pathspecs", "diff", "-U0",
                  "--no-color", "--no-ext-diff", "--no-textconv", "--text", "--find-renames",
                  "--relative", "--src-prefix=a/", "--dst-prefix=b/", found.base, "--", *spec],
                 cwd)
    for name, ranges in parse_patch(patch).items():
        if name in result:
            result[name] = ranges
    return result


_HUNK = re.compile(rb"@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_patch(patch: bytes) -> dict[str, LineRanges]:
    """The new-side lines each file's hunks add or change in ``git diff -U0`` output, by the
    file's new name. A hunk's own lines are skipped by count, so a changed line that looks
    like a header (``+++ x``, ``@@``, ``diff --git``) is never read as one; a file renamed or
    re-moded without a hunk is present with no lines."""
    found: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    lines = patch.split(b"\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(b"diff --git "):
            current = _same_names(line[len(b"diff --git "):])
            if current is not None:
                found.setdefault(current, [])
        elif line.startswith((b"rename to ", b"copy to ")):
            current = _path(line.split(b" ", 2)[2])
            found.setdefault(current, [])
        elif line.startswith(b"+++ "):
            name = _path(line[4:])
            current = name[2:] if name.startswith("b/") else None  # None: /dev/null
            if current is not None:
                found.setdefault(current, [])
        elif line.startswith(b"@@ ") and (match := _HUNK.match(line)):
            old_count = int(match.group(1) or b"1")
            start, count = int(match.group(2)), int(match.group(3) or b"1")
            if current is not None and count:
                found[current].append((start, start + count - 1))
            # Skip the hunk's lines: old_count removed, count added, "\ No newline" notes.
            left = old_count + count
            while left and i < len(lines):
                if not lines[i].startswith(b"\\"):
                    left -= 1
                i += 1
    return {name: tuple(sorted(ranges)) for name, ranges in found.items()}


def _path(field: bytes) -> str:
    """A name in a patch header: C-quoted when it holds special characters; a name with a
    blank is followed by a tab."""
    field = field.removesuffix(b"\t")
    if field.startswith(b'"') and field.endswith(b'"') and len(field) >= 2:
        return os.fsdecode(_unquote(field[1:-1]))
    return os.fsdecode(field)


_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
            ord("r"): 13, ord('"'): 34, ord("\\"): 92}


def _unquote(body: bytes) -> bytes:
    """Undo git's C-style quoting of a name (``\\t``, ``\\"``, ``\\ooo`` octal bytes, …)."""
    out = bytearray()
    i = 0
    while i < len(body):
        byte = body[i]
        if byte == 92 and i + 1 < len(body):  # a backslash
            nxt = body[i + 1]
            if 48 <= nxt <= 55 and i + 4 <= len(body):  # three octal digits
                out.append(int(body[i + 1:i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(byte)
        i += 1
    return bytes(out)


def _same_names(both: bytes) -> str | None:
    """The name in ``a/NAME b/NAME`` when both sides name the same file, else None (a
    rename is named by its ``rename to`` line, a change by its ``+++`` line)."""
    if both.startswith(b'"'):
        end = both.find(b'" ', 1)
        while end != -1 and both[end - 1:end] == b"\\":
            end = both.find(b'" ', end + 1)
        if end == -1:
            return None
        old, new = both[:end + 1], both[end + 2:]
        a, b = _path(old), _path(new)
        return a[2:] if a.startswith("a/") and b == "b/" + a[2:] else None
    half = (len(both) - 1) // 2
    if len(both) % 2 == 1 and both[half:half + 1] == b" " and both[:2] == b"a/" and \
            both[half + 1:half + 3] == b"b/" and both[2:half] == both[half + 3:]:
        return os.fsdecode(both[2:half])
    return None


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
