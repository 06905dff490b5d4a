"""``tracecite hook``: the one entry point for pre-commit and the GitHub Action (SPEC §6).

The pipeline is: find the files (given, changed since a ref or a pull request's base, or every
tracked file) → keep those the configured globs select → run the stage's checks → one report
with one exit code.

- ``offline``: notes format, trace structure and evidence (``check --evidence``).
- ``online``: ``verify-notes`` on the notes, ``verify-urls`` on the traces (and ``verify-files``
  when the configuration asks for it).
- ``all``: both, with each finding reported once.

Every input is read once, before anything is fetched, and every check of the stage works on
what was read (a trace can be hundreds of MB): one malformed file stops the run with exit 1
before any network access, whatever the stage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

from tracecite import commands
from tracecite.codes import Code
from tracecite.config import Config, ConfigError, find_config, load_config
from tracecite.errors import UsageError
from tracecite.findings import Finding, Report, Summary

COMMAND = "hook"
STAGES = ("offline", "online", "all")
FETCH_DEPTH_HINT = ("check the repository out with its history (actions/checkout with "
                    "'fetch-depth: 0')")

LiveFactory = Callable[[str], commands.LiveOptions]
"""Builds the live checks' options from the command line, labelled for the progress bar."""


class GitError(Exception):
    """git could not tell which files to check; ``finding`` is the TC103 to report."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.finding = Finding(Code.GIT_FAILED, message)


# ---- command line ---------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The hook's own arguments (the CLI adds the output and fetch options)."""
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="files to consider; those no notes/traces glob selects are "
                             "ignored (pre-commit passes every changed file)")
    parser.add_argument("--stage", choices=STAGES, default="offline",
                        help="offline: format, structure and evidence (default); online: "
                             "live pages (and files); all: both")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", dest="all_files",
                       help="every tracked file the globs select (for scheduled runs)")
    which.add_argument("--since", metavar="REF",
                       help="files changed since the merge base of REF and HEAD, plus "
                            "untracked files")
    parser.add_argument("--config", metavar="FILE",
                        help="configuration file (default: .tracecite.toml or pyproject.toml "
                             "[tool.tracecite] here or at the git top level)")
    parser.add_argument("--verify-files", action="store_true", default=None,
                        help="online: also re-read cited file: sources (config: verify_files)")
    parser.add_argument("--root", metavar="DIR", default=None,
                        help="directory file: sources resolve against (config: files_root; "
                             "default: the current directory)")


def run_hook(args: argparse.Namespace, live: LiveFactory) -> Report:
    """Run ``tracecite hook`` from its parsed command line. ``live`` builds the live options
    from ``args`` once the configuration has filled in what the flags left unset."""
    if args.files and (args.all_files or args.since):
        raise UsageError("FILE arguments cannot be combined with --all or --since")
    try:
        config = _load(args.config)
        paths = _candidates(args, config.base)
    except (ConfigError, GitError) as exc:
        return Report(COMMAND, (exc.finding,))
    _apply_config(args, config)
    # Built, and so checked, before any input is read: a bad fetch flag is TC100 at once.
    pages = files = None
    if args.stage != "offline":
        pages = live("fetching pages")
        if args.verify_files:
            files = live(commands.LIVE_COMMAND["file"])
    return run_stage(args.stage, select(paths, config), pages=pages, files=files)


def _load(explicit: str | None) -> Config:
    if explicit is not None:
        return load_config(explicit)
    here = os.getcwd()
    path = find_config(here)
    if path is None:
        top = git_top_level(here)
        if top is not None:
            path = find_config(top)
    # Relative to here, as input files are, so an annotation can point at it.
    return load_config(os.path.relpath(path) if path is not None else None)


def _apply_config(args: argparse.Namespace, config: Config) -> None:
    """Flags win; the configuration fills in the rest; then the built-in defaults."""
    from tracecite.fetch.limits import (
        DEFAULT_CONCURRENCY,
        DEFAULT_PER_HOST,
        MAX_BYTES,
        MAX_TIMEOUT,
    )

    defaults = {"timeout": MAX_TIMEOUT, "max_bytes": MAX_BYTES,
                "concurrency": DEFAULT_CONCURRENCY, "per_host": DEFAULT_PER_HOST}
    for name, default in defaults.items():  # the CLI's own defaults, which it leaves unset here
        if getattr(args, name) is None:
            configured = getattr(config, name)
            setattr(args, name, configured if configured is not None else default)
    if args.user_agent is None:
        args.user_agent = config.user_agent
    if args.verify_files is None:
        args.verify_files = config.verify_files
    if args.root is None:
        args.root = (os.path.relpath(os.path.join(config.base, config.files_root))
                     if config.files_root is not None else ".")
    if args.stage != "offline" and args.verify_files and not os.path.isdir(args.root):
        raise UsageError("the file: sources' root (--root or files_root) names no directory")


# ---- which files ----------------------------------------------------------------------------

def _candidates(args: argparse.Namespace, base: str) -> list[str]:
    """The files to consider, relative to the current directory."""
    if args.files:
        return list(args.files)
    if args.all_files:
        found = tracked_files(base)
    elif args.since:
        found = changed_files(base, args.since)
    elif os.environ.get("GITHUB_ACTIONS") == "true":
        found = changed_files(base, pull_request_base(base, os.environ))
    else:
        raise UsageError("no files: give FILE arguments, --since REF or --all")
    here = os.getcwd()
    return [os.path.relpath(os.path.join(base, p), here) for p in found]


def select(paths: Iterable[str], config: Config) -> list[str]:
    """The paths (each once, in order) that a notes or traces glob selects and no exclude
    glob removes; globs see each path relative to the configuration's directory."""
    include = _compile([*config.notes, *config.traces])
    exclude = _compile(config.exclude)
    base = config.base
    chosen: dict[str, None] = {}
    for path in paths:
        relative = os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")
        if not include.fullmatch(relative):
            continue
        prefixes = [relative]
        parts = relative.split("/")
        prefixes += ["/".join(parts[:i]) for i in range(1, len(parts))]
        if config.exclude and any(exclude.fullmatch(p) for p in prefixes):
            continue
        chosen[path] = None
    return list(chosen)


def _compile(patterns: Sequence[str]) -> re.Pattern[str]:
    if not patterns:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{glob_regex(p)})" for p in patterns))


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> str:
    """A glob as a regular expression over ``/``-separated relative paths.

    ``*`` and ``?`` stay within one path segment, ``[…]`` is a character class (``[!…]``
    negated), a ``**`` segment is any number of folders, and a pattern without ``/`` matches
    the file name in any folder (as in ``.gitignore``).
    """
    pattern = pattern.strip().lstrip("/").rstrip("/")
    if "/" not in pattern:
        pattern = "**/" + pattern
    segments = pattern.split("/")
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            out.append(".+" if last else "(?:[^/]+/)*")
        else:
            out.append(_segment_regex(segment) + ("" if last else "/"))
    return "".join(out)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := segment.find("]", i + 2)) != -1:
            body = segment[i + 1:end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            body = body.replace("\\", "\\\\").replace("^", "\\^")
            out.append(f"[{'^/' if negate else ''}{body}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


# ---- git ------------------------------------------------------------------------------------

def _git(args: Sequence[str], cwd: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed, and finding the files to check needs it; "
                       "give FILE arguments instead") from None
    if done.returncode != 0:
        raise GitError(_git_reason(args, done.stderr))
    return done.stdout


def _git_reason(args: Sequence[str], stderr: bytes) -> str:
    text = stderr.decode("utf-8", "replace")
    if "not a git repository" in text:
        return ("not in a git repository, and finding the files to check needs one; "
                "give FILE arguments instead")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no message")
    return f"git {args[0]} failed: {first[:200]}"


def git_top_level(cwd: str) -> str | None:
    """The working tree's top-level directory, or None outside a repository (or without git)."""
    try:
        return os.fsdecode(_git(["rev-parse", "--show-toplevel"], cwd).rstrip(b"\n"))
    except GitError:
        return None


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(item) for item in data.split(b"\0") if item]


def tracked_files(cwd: str) -> list[str]:
    """Every tracked file under ``cwd``, relative to it (``--all``)."""
    return sorted(_split_z(_git(["ls-files", "-z"], cwd)))


def _commit_exists(ref: str, cwd: str) -> bool:
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    except GitError:
        return False
    return True


def changed_files(cwd: str, since: str) -> list[str]:
    """Files under ``cwd`` (relative to it) added, copied, modified or renamed (new name)
    since the merge base of ``since`` and HEAD, in the working tree, plus untracked files
    that are not ignored. Deleted files are left out."""
    if since.startswith("-") or not _commit_exists(since, cwd):
        _git(["rev-parse", "--show-toplevel"], cwd)  # "not a repository" says it better
        raise GitError(f"{since!r} names no commit in this clone; fetch it, or "
                       f"{FETCH_DEPTH_HINT}")
    try:
        base = _git(["merge-base", since, "HEAD"], cwd).decode().strip()
    except GitError:
        raise GitError(f"{since!r} and HEAD have no merge base in this clone (a shallow "
                       f"history?); {FETCH_DEPTH_HINT}") from None
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


def pull_request_base(cwd: str, environ: Mapping[str, str]) -> str:
    """The commit a pull request (or merge-queue group) is compared with, from the Actions
    event file or ``GITHUB_BASE_REF``; TC103 when it is not in the clone."""
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
    raise UsageError("no files: this run is not for a pull request, so give FILE arguments, "
                     "--since REF or --all")


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


# ---- running the stage ----------------------------------------------------------------------

def run_stage(stage: str, paths: Sequence[str], *, pages: commands.LiveOptions | None = None,
              files: commands.LiveOptions | None = None) -> Report:
    """Run ``stage`` on the selected ``paths``: each input is read once (format, structure and
    evidence), then the online checks run on what was read; one report for all of it.

    ``pages``: the options of the web checks, which the online stages need; ``files``: those of
    the ``file:`` checks, which run only when given.
    """
    if stage not in STAGES:
        raise UsageError(f"unknown stage {stage!r}")
    if not paths:
        return Report(COMMAND)
    inputs = commands.read_inputs(paths, evidence=True, keep_uris=stage != "offline")
    findings = inputs.format_findings()
    summary = inputs.counts()
    # Online alone reports as verify-urls does: evidence once every input is well formed, and
    # in the summary the live verdicts only. Offline and all report as check --evidence.
    if stage != "online" or not commands.has_input_errors(findings):
        findings += inputs.evidence_findings()
    if stage != "online":
        summary += inputs.evidence_counts()
    # One malformed file stops the run before anything is fetched or read (SPEC §3).
    if stage == "offline" or commands.has_input_errors(findings):
        return Report(COMMAND, tuple(findings), summary)
    if pages is None:
        raise ValueError("the online stages need the options of the web checks")
    # Notes and traces together: a page that both cite is fetched once.
    found, counts = commands.check_pages_live(inputs.notes, inputs.traces, pages)
    findings += found
    summary += counts
    if inputs.traces:
        kinds: tuple[commands.SourceKind, ...] = ("web", "file") if files is not None else ("web",)
        if files is not None:
            found, counts = commands.check_traces_live(inputs.traces, "file", files)
            findings += found
            summary += counts
        summary += Summary(skipped=commands.count_skipped(inputs.traces, kinds))
    return Report(COMMAND, tuple(findings), summary)
