"""``tracecite hook``: find the files (given, changed since a ref or a pull request's base, or
every tracked file) → keep those the configured globs select → run the stage's checks → one
report with one exit code.

- ``offline``: notes format, trace structure and evidence (``check --evidence``).
- ``online`` and ``all``: the same, then ``verify-notes`` on the notes and ``verify-urls`` on the
  traces (and ``verify-files`` when the configuration asks for it), each finding reported once.

Every input is read once, before anything is fetched, and every check of the stage works on
what was read (a trace can be hundreds of MB): one malformed file stops the run with exit 1
before any network access, whatever the stage.

On the changes since a ref or a pull request's base, the live checks look only at the notes records
whose lines the diff adds or changes, and at the changed traces whole; the other records are counted
``unchanged`` (docs/hook.md#checking-only-what-changed; ``--all-records`` checks them all). So do
the files pre-commit gives the online hook on a push (or ``pre-commit run --from-ref --to-ref``):
the records the push adds or changes since the remote's commit are checked. Files given to the hook
that no glob selects are TC106 warnings (docs/reference/reports.md#honest-summaries).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from tracecite.checks.kinds import SourceKind
from tracecite.codes import Code
from tracecite.command_table import HOOK
from tracecite.errors import GitError, UsageError
from tracecite.findings import Report
from tracecite.hook.git import (
    Changes,
    LineRanges,
    changed_lines,
    changes,
    pull_request_base,
    tracked_files,
)
from tracecite.hook.selection import not_selected
from tracecite.inputs.directories import expand_with
from tracecite.inputs.selection import sort_out
from tracecite.run.assemble import offline_shard, run_checks, stamped
from tracecite.run.plan import Plan
from tracecite.surroundings import read_surroundings

if TYPE_CHECKING:
    from tracecite.settings import Settings

COMMAND = HOOK.name

ONLINE_HOOK = "tracecite-online"
"""The online hook's id in ``.pre-commit-hooks.yaml``."""

OFFLINE_NOTICE = (f"no source host resolved: offline? To skip the online hook: "
                  f"SKIP={ONLINE_HOOK} git push")
"""What a live run says when no web source's host resolved at all
(docs/hook.md#checking-only-what-changed)."""

# Codes a web source gets without asking any resolver: the URL is refused as written.
_REFUSED_UNASKED = frozenset({Code.URL_INVALID, Code.URL_SCHEME, Code.URL_PORT,
                              Code.URL_USERINFO, Code.URL_IPV6_LITERAL, Code.URL_NON_ASCII_HOST})


def stage_plan(settings: Settings) -> Plan:
    """What the settings' stage runs: its plan in the command table, whose live checks of web
    pages are followed by those of ``file:`` sources when ``verify_files`` asks."""
    plan = HOOK.stage(settings.stage)
    if plan is None:
        raise UsageError(f"unknown stage {settings.stage!r}")
    if plan.live and settings.verify_files:
        return replace(plan, live=(*plan.live, SourceKind.FILE))
    return plan


def run_hook(files: Sequence[str], settings: Settings) -> Report:
    """Run ``tracecite hook`` on ``files`` (empty: found through git, as the settings say)."""
    if files and (settings.all_files or settings.since):
        name = settings.origins.name
        raise UsageError(f"{name('files')} cannot be combined with {name('all_files')} or "
                         f"{name('since')}")
    plan = stage_plan(settings)
    found = None if files else changes_to_check(settings)
    # A directory given stands for the files under it that the globs select, as for `check`.
    given = expand_with(files, settings)
    sorted_out = sort_out(given.paths or candidates(settings, found), settings)
    # Only files someone named: files git found and no glob selects are simply not inputs.
    # Like every offline finding, these are shard 1's (docs/guides/scale.md).
    warnings = tuple(not_selected(path, settings) for path in sorted_out.unselected
                     if files and offline_shard(settings))
    paths = sorted_out.selected
    if not paths:
        return stamped(Report(COMMAND, (*given.findings, *warnings), stage=plan.stage), (),
                       settings)
    notes, traces, documents = sorted_out.split()
    if documents:
        plan, settings = _with_documents(plan, settings)
    if plan.live and not settings.all_records:
        if files:
            found = pushed_changes(settings)
        if found is not None:
            plan = replace(plan, changed_lines=_notes_lines(found, [*notes, *documents],
                                                            settings))
    report = run_checks(plan, notes, traces, settings, unread=given.findings,
                        documents=documents)
    notices = (OFFLINE_NOTICE,) if plan.live and no_host_resolved(report) else ()
    return replace(report, findings=(*warnings, *report.findings),
                   notices=(*report.notices, *notices))


def _with_documents(plan: Plan, settings: Settings) -> tuple[Plan, Settings]:
    """The plan and settings of a stage that reads documents: a live stage reads their local
    sources too (the traces' only when ``verify_files`` asks), under the repository's root
    unless ``files_root`` or ``--root`` names one (docs/guides/documents.md)."""
    if plan.live and SourceKind.FILE not in plan.live:
        plan = replace(plan, live=(*plan.live, SourceKind.FILE), trace_files=False)
    origins = settings.origins
    if "root" not in origins.flags | origins.inputs | origins.config:
        settings = replace(settings, root=settings.config_base)
    return plan, settings


def changes_to_check(settings: Settings) -> Changes | None:
    """What changed since ``--since`` or the pull request's base, when the files are found
    that way (None: ``--all``)."""
    base = settings.config_base
    if settings.all_files:
        return None
    if settings.since:
        return changes(base, settings.since)
    around = read_surroundings()
    if around.on_github_actions:
        return changes(base, pull_request_base(base, around.environ, choices=_choices(settings)))
    raise UsageError(f"no files: give {_choices(settings)}")


PUSH_REFS = ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF")
"""What pre-commit (3.2 and later) sets for a ``pre-push`` hook, and for ``pre-commit run
--from-ref A --to-ref B``: the remote's commit, and the local one being pushed."""


def pushed_changes(settings: Settings) -> Changes | None:
    """What changed since the commit a push starts from, when pre-commit gave the refs: the
    files it hands the hook are the pushed ones, and their records the push did not touch need
    no request. None without the refs, or when git cannot tell (a ref not in the clone, no merge
    base): the files' records are then checked whole, and the push is not held up by it."""
    since, to = (os.environ.get(name, "") for name in PUSH_REFS)
    if not since or not to:
        return None
    try:
        return changes(settings.config_base, since)
    except GitError:
        return None


def candidates(settings: Settings, found: Changes | None = None) -> list[str]:
    """The files to consider when none are given, relative to the current directory: those
    that changed (``found``), else (``--all``) every tracked file."""
    base = settings.config_base
    listed = found.files if found is not None else tracked_files(base)
    here = os.getcwd()
    return [os.path.relpath(os.path.join(base, p), here) for p in listed]


def _notes_lines(found: Changes, notes: Sequence[str], settings: Settings
                 ) -> Mapping[str, LineRanges]:
    """The changed lines of each notes file, by its path as given; files new to git are left
    out, so they are checked whole."""
    base = settings.config_base
    by_git_name = {os.path.relpath(os.path.abspath(p), base).replace(os.sep, "/"): p
                   for p in notes}
    lines = changed_lines(base, found, list(by_git_name))
    return {by_git_name[name]: ranges for name, ranges in lines.items() if ranges is not None}


def no_host_resolved(report: Report) -> bool:
    """Whether a live run's web sources all failed to resolve: at least one TC307, nothing
    found or matched on a page, no other failure but URLs refused without a lookup, and not
    stopped before every source was tried."""
    live = report.summary.live
    if report.stopped_by is not None or live.matched or live.not_found:
        return False
    web = {f.code for f in report.findings
           if f.code.code.startswith("TC3") and not f.code.code.startswith("TC32")}
    return Code.DNS_FAILURE in web and web <= _REFUSED_UNASKED | {Code.DNS_FAILURE}


def _choices(settings: Settings) -> str:
    """The ways to name the files, as the run is driven (flags or the Action's inputs)."""
    name = settings.origins.name
    return f"{name('files')}, {name('since')} or {name('all_files')}"
