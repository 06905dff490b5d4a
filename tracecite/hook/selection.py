"""Which files the hook checks: the configured globs, as ``.gitignore``-style patterns over
paths relative to the configuration's directory."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracecite.settings import Settings


def select(paths: Iterable[str], settings: Settings) -> list[str]:
    """The paths (each once, in order) that a notes or traces glob selects and no exclude
    glob removes; globs see each path relative to the configuration's directory."""
    include = _compile([*settings.notes, *settings.traces])
    exclude = _compile(settings.exclude)
    base = settings.config_base
    chosen: dict[str, None] = {}
    for path in paths:
        relative = os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")
        if not include.fullmatch(relative):
            continue
        prefixes = [relative]
        parts = relative.split("/")
        prefixes += ["/".join(parts[:i]) for i in range(1, len(parts))]
        if settings.exclude and any(exclude.fullmatch(p) for p in prefixes):
            continue
        chosen[path] = None
    return list(chosen)


def leaves_out(folder: str, settings: Settings) -> bool:
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
