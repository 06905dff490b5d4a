"""Which files the hook checks: those the configured globs select
(:mod:`tracecite.inputs.selection`). A file given to the hook that no glob selects
is a TC106 warning, so a misnamed trace is never skipped in silence; an excluded file is left
out on purpose, without one (docs/reference/reports.md#honest-summaries)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.model import document_kind, is_trace

if TYPE_CHECKING:
    from tracecite.settings import Settings


def not_selected(path: str, settings: Settings) -> Finding:
    """TC106 for a file given to the hook that no glob selects: it is not checked, and the
    message names the keys to change and where (docs/reference/reports.md#honest-summaries)."""
    if is_trace(path):
        keys = "'traces'"
    elif document_kind(path) is not None:
        keys = "'documents' (or 'notes')"
    else:
        keys = "'notes'"
    if settings.config_path is None:
        where = ("in a .tracecite.toml or the [tool.tracecite] table of pyproject.toml (none "
                 "was found, so the default globs apply)")
    elif os.path.basename(settings.config_path) == "pyproject.toml":
        where = f"in the [tool.tracecite] table of {settings.config_path}"
    else:
        where = f"in {settings.config_path}"
    return Finding(Code.NOT_SELECTED,
                   f"no notes, traces or documents glob selects this file, so it is not "
                   f"checked: add a glob that matches it to {keys} {where}, or to 'exclude' to "
                   f"leave it out without this warning", file=path)
