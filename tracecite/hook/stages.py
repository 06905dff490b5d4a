"""``tracecite hook``: find the files (given, changed since a ref or a pull request's base, or
every tracked file) → keep those the configured globs select → run the stage's checks → one
report with one exit code.

- ``offline``: notes format, trace structure and evidence (``check --evidence``).
- ``online`` and ``all``: the same, then ``verify-notes`` on the notes and ``verify-urls`` on the
  traces (and ``verify-files`` when the configuration asks for it), each finding reported once.

Every input is read once, before anything is fetched, and every check of the stage works on
what was read (a trace can be hundreds of MB): one malformed file stops the run with exit 1
before any network access, whatever the stage.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tracecite.checks.kinds import SourceKind
from tracecite.commands import Plan, run_checks, split_inputs
from tracecite.errors import UsageError
from tracecite.findings import Report
from tracecite.hook.git import changed_files, pull_request_base, tracked_files
from tracecite.hook.selection import select
from tracecite.settings import STAGES

if TYPE_CHECKING:
    from tracecite.settings import Settings

COMMAND = "hook"


def stage_plan(settings: Settings) -> Plan:
    """What the settings' stage runs."""
    if settings.stage not in STAGES:
        raise UsageError(f"unknown stage {settings.stage!r}")
    if settings.stage == "offline":
        return Plan(COMMAND, evidence=True, stage=settings.stage)
    live = (SourceKind.WEB, SourceKind.FILE) if settings.verify_files else (SourceKind.WEB,)
    return Plan(COMMAND, evidence=True, live=live, stage=settings.stage)


def run_hook(files: Sequence[str], settings: Settings) -> Report:
    """Run ``tracecite hook`` on ``files`` (empty: found through git, as the settings say)."""
    if files and (settings.all_files or settings.since):
        name = settings.origins.name
        raise UsageError(f"{name('files')} cannot be combined with {name('all_files')} or "
                         f"{name('since')}")
    plan = stage_plan(settings)
    paths = select(files or candidates(settings), settings)
    if not paths:
        return Report(COMMAND, stage=plan.stage)
    return run_checks(plan, *split_inputs(paths), settings)


def candidates(settings: Settings) -> list[str]:
    """The files to consider when none are given, relative to the current directory."""
    base = settings.config_base
    if settings.all_files:
        found = tracked_files(base)
    elif settings.since:
        found = changed_files(base, settings.since)
    elif os.environ.get("GITHUB_ACTIONS") == "true":
        found = changed_files(base, pull_request_base(base, os.environ,
                                                      choices=_choices(settings)))
    else:
        raise UsageError(f"no files: give {_choices(settings)}")
    here = os.getcwd()
    return [os.path.relpath(os.path.join(base, p), here) for p in found]


def _choices(settings: Settings) -> str:
    """The ways to name the files, as the run is driven (flags or the Action's inputs)."""
    name = settings.origins.name
    return f"{name('files')}, {name('since')} or {name('all_files')}"
