"""Which files the configured globs select: ``.gitignore``-style patterns over paths relative to
the configuration's directory (docs/hook.md). The hook sorts the files it is given with them, and
a directory given to any command is walked with them (:mod:`tracecite.inputs.directories`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.globs import glob_regex

if TYPE_CHECKING:  # for the type checker only: a Protocol class costs start-up time
    from typing import Protocol

    class Globs(Protocol):
        """The globs of a run (its :class:`~tracecite.settings.Settings` are ones): notes,
        traces and documents select (notes and traces first), exclude removes, each relative
        to ``config_base``."""

        @property
        def notes(self) -> Sequence[str]: ...
        @property
        def traces(self) -> Sequence[str]: ...
        @property
        def documents(self) -> Sequence[str]: ...
        @property
        def exclude(self) -> Sequence[str]: ...
        @property
        def config_base(self) -> str: ...


def select(paths: Iterable[str], settings: Globs) -> list[str]:
    """The paths (each once, in order) that a notes, traces or documents glob selects and no
    exclude glob removes; globs see each path relative to the configuration's directory."""
    return sort_out(paths, settings).selected


@dataclass(frozen=True)
class Selection:
    """Given paths sorted out by the globs: ``selected`` (checked), ``unselected`` (no notes,
    traces or documents glob matches them: TC106), and the excluded rest, which is left out on
    purpose and not listed. Each list keeps the paths' order, each path once. ``documents``:
    the selected paths that only a documents glob selects (a notes or traces glob wins,
    docs/guides/documents.md)."""

    selected: list[str]
    unselected: list[str]
    documents: frozenset[str] = frozenset()

    def split(self) -> tuple[list[str], list[str], list[str]]:
        """The selected notes, traces and documents, each in the paths' order: a file a notes
        or traces glob selects is notes or a trace by its ``.jsonl`` suffix."""
        from tracecite.model import is_trace

        rest = [p for p in self.selected if p not in self.documents]
        return ([p for p in rest if not is_trace(p)], [p for p in rest if is_trace(p)],
                [p for p in self.selected if p in self.documents])


def sort_out(paths: Iterable[str], settings: Globs) -> Selection:
    """Sort ``paths`` by the settings' globs (relative to the configuration's directory)."""
    include = _compile([*settings.notes, *settings.traces])
    documents = _compile(settings.documents)
    exclude = _compile(settings.exclude)
    base = settings.config_base
    inside = os.path.join(os.path.abspath(base), "")  # a path under it starts with this
    chosen: dict[str, None] = {}
    unselected: dict[str, None] = {}
    as_document: set[str] = set()
    for path in paths:
        absolute = os.path.abspath(path)
        # The prefix cut is relpath's answer for a path under the base, without its cost.
        relative = (absolute[len(inside):] if absolute.startswith(inside)
                    else os.path.relpath(absolute, base)).replace(os.sep, "/")
        if settings.exclude:
            parts = relative.split("/")
            prefixes = [relative, *("/".join(parts[:i]) for i in range(1, len(parts)))]
            if any(exclude.fullmatch(p) for p in prefixes):
                continue
        if include.fullmatch(relative):
            chosen[path] = None
        elif documents.fullmatch(relative):
            chosen[path] = None
            as_document.add(path)
        else:
            unselected[path] = None
    return Selection(list(chosen), list(unselected), frozenset(as_document))


def leaves_out(folder: str, settings: Globs) -> bool:
    """Whether an exclude glob removes ``folder``, and so every file under it (a walk of a
    directory need not enter it)."""
    if not settings.exclude:
        return False
    relative = os.path.relpath(os.path.abspath(folder), settings.config_base)
    return bool(_compile(settings.exclude).fullmatch(relative.replace(os.sep, "/")))


def _compile(patterns: Sequence[str]) -> re.Pattern[str]:
    if not patterns:
        return re.compile(r"(?!)")
    return re.compile("|".join(f"(?:{glob_regex(p)})" for p in patterns))


