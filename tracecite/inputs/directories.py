"""Directory arguments: ``tracecite check docs/`` checks the files under ``docs`` that the
configured globs select.

The globs are the hook's (``notes``, ``traces``, ``documents`` and ``exclude`` of
``.tracecite.toml`` or ``[tool.tracecite]``, found as the hook finds them, else the
defaults), given by the caller (:func:`tracecite.surroundings.expand_directories` for a
command) and matched by
:func:`~tracecite.inputs.selection.sort_out`, as the hook matches the files it is given. Nothing
else is skipped: a ``.git``, ``.venv`` or ``node_modules`` folder is walked unless an exclude glob
names it (an excluded folder is never entered). Symbolic links to files are taken like files;
symbolic links to folders are not followed, so a walk never leaves the directory given or loops.
The files come in sorted order of their path, folder by folder, each after the files of the
folder above it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.codes import Code
from tracecite.findings import Finding

if TYPE_CHECKING:  # imported where used: a run without a directory needs no glob
    from tracecite.inputs.selection import Globs


@dataclass(frozen=True)
class Expanded:
    """The inputs with every directory replaced by the files it selects, and a TC106 warning
    for each directory that selects none (readable, but nothing in it is named as the globs
    expect: docs/reference/commands.md#what-is-read). ``documents``: the files a directory gave
    that only a documents glob selects (docs/guides/documents.md); a file named as it is, is
    read as the command reads it."""

    paths: tuple[str, ...]
    findings: tuple[Finding, ...] = ()
    documents: frozenset[str] = frozenset()


KINDS = ("notes", "traces", "documents")
"""The kinds of input a glob selects, notes and traces winning over documents."""


def expand_with(paths: Sequence[str], globs: Globs, kinds: Collection[str] = KINDS
                ) -> Expanded:
    """Replace each directory among ``paths`` by the files under it of ``kinds`` that the
    ``notes``, ``traces`` and ``documents`` globs of ``globs`` select (notes and traces globs
    winning: a notes file is never taken for a document) and its ``exclude`` globs do not
    remove (the hook's settings, already resolved, or a command's configured globs)."""
    if not any(os.path.isdir(p) for p in paths):
        return Expanded(tuple(paths))
    from tracecite.inputs.selection import leaves_out, sort_out

    out: list[str] = []
    findings: list[Finding] = []
    documents: set[str] = set()
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        selection = sort_out(_files_under(path, lambda d: leaves_out(d, globs)), globs)
        notes, traces, docs = selection.split()
        wanted = {*(notes if "notes" in kinds else ()), *(traces if "traces" in kinds else ()),
                  *(docs if "documents" in kinds else ())}
        chosen = [p for p in selection.selected if p in wanted]
        if not chosen:
            findings.append(Finding(Code.NOT_SELECTED, _selects_nothing(globs, kinds),
                                    file=path))
        out.extend(chosen)
        documents.update(p for p in docs if p in wanted)
    return Expanded(tuple(out), tuple(findings), frozenset(documents))


def _files_under(top: str, pruned: Callable[[str], bool]) -> Iterator[str]:
    """Every file under ``top`` (symbolic links to files too), folder by folder in sorted
    order; folders that ``pruned`` names, and symbolic links to folders, are not entered. A
    folder that cannot be read is passed over, as by ``os.walk``."""
    waiting = [top]  # folders still to list, the next one last
    while waiting:
        try:
            with os.scandir(waiting.pop()) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        folders: list[str] = []
        for entry in entries:
            # The kind comes with the listing: only a symbolic link costs a stat.
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif entry.is_file():  # a regular file, or a link to one
                    yield os.path.normpath(entry.path)
            except OSError:
                continue  # gone meanwhile
        waiting.extend(reversed([f for f in folders if not pruned(f)]))


def _selects_nothing(globs: Globs, kinds: Collection[str] = KINDS) -> str:
    named = []
    for kind, patterns in (("notes", globs.notes), ("traces", globs.traces),
                           ("documents", globs.documents)):
        if kind in kinds and patterns:
            named.append(f"{kind}: {', '.join(patterns)}")
    if globs.exclude:
        named.append(f"exclude: {', '.join(globs.exclude)}")
    return (f"nothing in this directory is selected: no file under it matches the globs "
            f"({'; '.join(named)}); rename the files or set the globs in the configuration")
