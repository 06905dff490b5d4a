"""``skip_urls`` (docs/web-over-time.md#warnings-and-skips): globs of URLs that are never fetched,
their quotes counted skipped.

A glob is matched against the whole URL in its stable form (docs/reference/commands.md: scheme and
host lower-cased, default port and fragment dropped, percent-escapes normalised), and is put in that
form itself. ``*`` matches within one part of the URL: the scheme, one host label (no ``.``), one
path segment (no ``/``) or the query; ``**`` matches across labels, segments and the query. Every
other character stands for itself, so ``https://example.org/a`` skips that page only (not
``/a?x=1``, not ``/a/b``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tracecite.checks.compare import stable_uri

# What one "*" may not cross, by the part of the URL it is in.
_WITHIN = {"scheme": ":/", "host": "./?", "path": "/?", "query": ""}


def url_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression a ``skip_urls`` glob stands for (see the module's docstring)."""
    glob = stable_uri(pattern)
    out: list[str] = []
    part = "scheme" if "://" in glob else "path"
    i = 0
    while i < len(glob):
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = glob[i]
        if char == "*":
            stops = _WITHIN[part]
            out.append(f"[^{re.escape(stops)}]*" if stops else ".*")
        else:
            out.append(re.escape(char))
        if part == "scheme" and glob.startswith("://", i):
            out.append(re.escape("//"))
            part = "host"
            i += 3
            continue
        if part == "host" and char == "/":
            part = "path"
        elif part in ("host", "path") and char == "?":
            part = "query"
        i += 1
    return re.compile("".join(out), re.DOTALL)


def skips(url: str, globs: Sequence[re.Pattern[str]]) -> bool:
    """Whether ``url`` (in its stable form) matches one of the compiled ``globs``."""
    if not globs:
        return False
    stable = stable_uri(url)
    return any(glob.fullmatch(stable) for glob in globs)
