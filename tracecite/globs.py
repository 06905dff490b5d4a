"""The project's globs (notes, traces, documents, exclude) as regular expressions over
``/``-separated relative paths (docs/hook.md): one translation, for the
settings that check a glob and for the selection that uses it."""

from __future__ import annotations

import re
from functools import lru_cache


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
            # Literal in a glob's class, special in a regex's (or warned of as set syntax).
            body = re.sub(r"([\\^\[&~|])", r"\\\1", body)
            out.append(f"[{'^/' if negate else ''}{body}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
