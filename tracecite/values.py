"""The checks of option values, for the settings table (:mod:`tracecite.settings`) and the
fetcher's options (:class:`~tracecite.fetch.options.FetchOptions`); below both, it imports
neither, nor the reporters.

A check takes a value — from the configuration file's TOML, or a flag's or an Action input's
text already converted by a parser — and returns it normalised, or raises ``ValueError`` with a
message that starts "must …", which each source prefixes with what it names (a flag, a key, an
input).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tracecite.fetch.limits import MAX_RETRY_WAIT, MAX_TIMEOUT
from tracecite.model import DOCUMENT_FORMS, is_trace
from tracecite.report_formats import REPORT_FORMATS

if TYPE_CHECKING:  # the fetcher's types: a command that fetches nothing never imports them
    from ipaddress import IPv4Network, IPv6Network

    from tracecite.fetch.connect_to import ConnectTo

_USER_AGENT = re.compile(r"[\x20-\x7e]{1,1000}")

Check = Callable[[Any], Any]
"""Checks one value and returns it normalised; raises ValueError("must …") when it is bad."""


def seconds(value: object) -> float:
    """A per-source deadline: more than 0 and at most the fetcher's limit."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a number of seconds")
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise ValueError(f"must be more than 0 and at most {MAX_TIMEOUT:g} seconds")
    return float(value)


def wait(value: object) -> float:
    """A wait for rate limits: from 0 to the most a source may wait."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a number of seconds")
    if not (math.isfinite(value) and 0 <= value <= MAX_RETRY_WAIT):
        raise ValueError(f"must be from 0 to {MAX_RETRY_WAIT:g} seconds")
    return float(value)


def whole(low: int, high: int) -> Check:
    """A check of whole numbers from ``low`` to ``high``."""
    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be a whole number")
        if not low <= value <= high:
            raise ValueError(f"must be from {low} to {high}")
        return value
    return check


def user_agent(value: object) -> str:
    """A ``User-Agent`` header: printable ASCII, so it cannot inject a header."""
    if not isinstance(value, str) or not value:
        raise ValueError("must be a non-empty string")
    if not _USER_AGENT.fullmatch(value):
        raise ValueError("must be printable ASCII (at most 1000 characters)")
    return value


def boolean(value: object) -> bool:
    """true or false."""
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def non_empty_path(value: object) -> str:
    """A non-empty path (no NUL in it: no file has one in its name)."""
    if not isinstance(value, str) or not value:
        raise ValueError("must be a non-empty path")
    if "\0" in value:
        raise ValueError("must be a path without a NUL character")
    return value


def choice(choices: Iterable[str]) -> Check:
    """A check that the value is one of ``choices``."""
    allowed = tuple(choices)

    def check(value: object) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return str(value)
    return check


def forms(value: object) -> tuple[str, ...]:
    """A list of a document's citation forms (``document_forms``), each once, in the order
    :data:`~tracecite.model.DOCUMENT_FORMS` names them (docs/guides/documents.md)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be a list of citation forms ({', '.join(DOCUMENT_FORMS)})")
    unknown = [v for v in value if v not in DOCUMENT_FORMS]
    if unknown:
        raise ValueError(f"names no citation form: {unknown[0]!r} (the forms are "
                         f"{', '.join(DOCUMENT_FORMS)})")
    return tuple(form for form in DOCUMENT_FORMS if form in value)


def globs(what: str) -> Check:
    """A check of a list of globs (``what``: notes, traces, documents or exclude)."""
    def check(value: object) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ValueError("must be a list of non-empty glob strings")
        for pattern in value:
            trace_like = is_trace(pattern)
            if what == "traces" and not trace_like:
                raise ValueError(f"pattern {pattern!r} must end in .jsonl (a file is read as a "
                                 "trace by its .jsonl suffix)")
            if what in ("notes", "documents") and trace_like:
                raise ValueError(f"pattern {pattern!r} ends in .jsonl, which is read as a trace")
            _check_glob(pattern)
        return tuple(value)
    return check


def _check_glob(pattern: str) -> None:
    """ValueError for a glob whose ``[…]`` class cannot match anything (a range that runs
    backwards, such as ``[z-a]``)."""
    from tracecite.globs import glob_regex

    try:
        re.compile(glob_regex(pattern))
    except re.error:
        raise ValueError(f"pattern {pattern!r} is not a glob: a [...] range in it runs "
                         "backwards") from None


def connect_to(value: object) -> ConnectTo:
    """``HOST:PORT:ADDR:PORT2`` (curl's ``--connect-to``)."""
    from tracecite.fetch.connect_to import parse_connect_to

    return parse_connect_to(str(value))


def allow_net(value: object) -> IPv4Network | IPv6Network:
    """A network in CIDR notation, let through the address policy."""
    from tracecite.fetch.address_policy import parse_allow_net

    return parse_allow_net(str(value))


def readable_file(value: object) -> str:
    """A path that names a file."""
    name = non_empty_path(value)
    if not os.path.isfile(name):
        raise ValueError("names no readable file")
    return name


def report_file(value: object) -> str:
    """``FORMAT:PATH`` of a report file (that its directory exists is checked with the other
    settings, where the message can name the option as it was set)."""
    spec = str(value)
    file_format, colon, path = spec.partition(":")
    if not colon or file_format not in REPORT_FORMATS or not path:
        raise ValueError(f"takes FORMAT:PATH with FORMAT one of "
                         f"{', '.join(sorted(REPORT_FORMATS))}")
    non_empty_path(path)
    return spec


def report_file_problem(spec: str) -> str | None:
    """What keeps the report file ``FORMAT:PATH`` from being written, found before the run
    (None: nothing)."""
    path = spec.partition(":")[2]
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        return "names a path in a directory that does not exist"
    if os.path.isdir(path):
        return "names a directory, not a file"
    return None


_DURATION = re.compile(r"(\d{1,9})([smhd])")
_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DEFAULT_CACHE_MAX_AGE = 86400.0
"""A cached verdict is used without a request for a day (``1d``), then revalidated."""


def duration(value: object) -> float:
    """Seconds in ``30m``, ``12h``, ``7d`` (or ``90s``); ValueError "must …" for the rest."""
    match = _DURATION.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        raise ValueError("must be a duration such as 30m, 12h or 7d")
    return float(int(match.group(1)) * _DURATION_UNITS[match.group(2)])


def url_glob(value: object) -> str:
    """A URL glob (``skip_urls``)."""
    if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
        raise ValueError("must be URL globs without blanks, such as https://example.org/**")
    return value


def warnable(value: object) -> str:
    """A registry code whose findings may be warnings (exit-2 codes only)."""
    from tracecite.codes import BY_CODE

    code = BY_CODE.get(value) if isinstance(value, str) else None
    if code is None:
        raise ValueError("must name codes of the registry, such as TC319")
    if code.exit != 2:
        raise ValueError(f"must name codes that fail a run with exit 2; {code.code} cannot be "
                         f"a warning")
    return code.code



MAX_SHARDS = 256
"""The most shards a run may be split into (a GitHub Actions matrix has at most 256 jobs)."""

_SHARD = re.compile(r"([0-9]{1,4})/([0-9]{1,4})")


def shard(value: object) -> tuple[int, int]:
    """``K/N``: shard K of N (docs/guides/scale.md), 1 ≤ K ≤ N ≤ :data:`MAX_SHARDS`; also ``(K,
    N)``."""
    if isinstance(value, str) and (match := _SHARD.fullmatch(value.strip())):
        value = (int(match.group(1)), int(match.group(2)))
    if (not isinstance(value, tuple) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise ValueError("must be K/N, shard K of N, such as 2/4")
    k, n = value
    if not 1 <= k <= n <= MAX_SHARDS:
        raise ValueError(f"must be K/N with 1 <= K <= N <= {MAX_SHARDS}")
    return (k, n)


_SARIF_CATEGORY = re.compile(r"[\x21-\x7e]{1,200}")


def sarif_category(value: object) -> str:
    """A SARIF run's category (``automationDetails.id``): printable ASCII without blanks."""
    if not isinstance(value, str) or not _SARIF_CATEGORY.fullmatch(value):
        raise ValueError("must be 1 to 200 printable ASCII characters without blanks, such "
                         "as citations-pr")
    return value

# ---- parsers: text (a flag or an Action input) to the value a check takes --------------------

def number(text: str) -> object:
    """Text to a number (a flag or an Action input)."""
    try:
        return float(text)
    except ValueError:
        raise ValueError("must be a number of seconds") from None


def integer(text: str) -> object:
    """Text to a whole number."""
    try:
        return int(text)
    except ValueError:
        raise ValueError("must be a whole number") from None


TRUE_WORDS = ("true", "True", "TRUE")
FALSE_WORDS = ("false", "False", "FALSE")


def truth(text: str) -> object:
    """The Actions toolkit's ``getBooleanInput``: true/True/TRUE or false/False/FALSE."""
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ValueError("must be true or false")


def as_is(text: str) -> object:
    """Text as it is."""
    return text


