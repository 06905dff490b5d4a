"""Project configuration for ``tracecite hook``: ``.tracecite.toml`` or ``[tool.tracecite]``.

The configuration says which files are notes and traces (globs) and sets the fetch limits a
project wants; command-line flags win over it. Options that widen what the fetcher may reach
(``allow_net``, ``connect_to``, ``ca_cert``) are refused here on purpose: a repository's own files
must never be able to point the checker at a private network (SPEC §6).

A bad file is a :class:`ConfigError` carrying a TC104 finding with the file and line, never a
traceback.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracecite.codes import Code
from tracecite.commands import is_trace
from tracecite.fetch.limits import MAX_BYTES, MAX_CONCURRENCY, MAX_TIMEOUT
from tracecite.findings import Finding

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

PROJECT_FILE = ".tracecite.toml"
PYPROJECT = "pyproject.toml"

DEFAULT_NOTES = ("*.notes", "*.notes.md", "*.notes.txt")
"""Notes files: names ending in ``.notes``, ``.notes.md`` or ``.notes.txt``, at any depth.
Deliberately narrow, so a documentation repository's other Markdown is never read as notes."""

DEFAULT_TRACES = ("*.trace.jsonl", "**/traces/**/*.jsonl")
"""Traces: ``*.trace.jsonl`` anywhere, and every ``.jsonl`` file under a ``traces/`` folder."""

REFUSED_KEYS = frozenset({"allow_net", "connect_to", "ca_cert"})
"""Keys that are command-line/Action-input only, whatever a repository file says."""


class ConfigError(Exception):
    """A configuration file that cannot be used; ``finding`` says where and why (TC104)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


@dataclass(frozen=True)
class Config:
    """The hook's settings; every field has the documented default."""

    notes: tuple[str, ...] = DEFAULT_NOTES
    traces: tuple[str, ...] = DEFAULT_TRACES
    exclude: tuple[str, ...] = ()
    timeout: float | None = None
    concurrency: int | None = None
    per_host: int | None = None
    max_bytes: int | None = None
    user_agent: str | None = None
    verify_files: bool = False
    files_root: str | None = None
    path: str | None = None
    """The file the settings came from (None: built-in defaults)."""

    @property
    def base(self) -> str:
        """The directory globs and ``files_root`` are relative to: the config file's own."""
        return os.path.dirname(os.path.abspath(self.path)) if self.path else os.getcwd()


# ---- finding and reading the file -----------------------------------------------------------

def find_config(directory: str) -> str | None:
    """The configuration file in ``directory``: ``.tracecite.toml``, else a ``pyproject.toml``
    with a ``[tool.tracecite]`` table (the hook looks here, then at the git top level)."""
    candidate = os.path.join(directory, PROJECT_FILE)
    if os.path.isfile(candidate):
        return candidate
    candidate = os.path.join(directory, PYPROJECT)
    if os.path.isfile(candidate) and _mentions_tracecite(candidate):
        return candidate
    return None


def _mentions_tracecite(path: str) -> bool:
    """Cheap pre-check, so an unrelated (or broken) pyproject.toml is never parsed here."""
    try:
        with open(path, "rb") as handle:
            return b"tracecite" in handle.read()
    except OSError:
        return False


def load_config(path: str | None) -> Config:
    """Read and validate ``path`` (None: the defaults); raise :class:`ConfigError` if bad."""
    if path is None:
        return Config()
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _error(path, f"configuration file cannot be read ({reason})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _error(path, "configuration file is not UTF-8") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message, line, column = _decode_error(str(exc))
        if line is None:  # "at end of document": point at the last line
            line = max(1, len(text.splitlines()))
        raise _error(path, f"not valid TOML: {message}", line, column) from None
    in_pyproject = os.path.basename(path) == PYPROJECT
    if in_pyproject:
        table = document.get("tool", {}).get("tracecite") if isinstance(
            document.get("tool"), dict) else None
        if table is None:
            return Config(path=path)
        if not isinstance(table, dict):
            raise _error(path, "[tool.tracecite] must be a table",
                         _key_line(text, "tracecite", in_pyproject=True, top=True))
    else:
        table = document
    return _validate(table, path, text, in_pyproject=in_pyproject)


_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def _decode_error(text: str) -> tuple[str, int | None, int | None]:
    """tomllib puts the position at the end of its message: split it off."""
    match = _POSITION.search(text)
    if match:
        return text[:match.start()], int(match.group(1)), int(match.group(2))
    return re.sub(r"\s*\(at end of document\)\s*$", " (at the end)", text), None, None


def _error(path: str, message: str, line: int | None = None,
           column: int | None = None) -> ConfigError:
    return ConfigError(Finding(Code.CONFIG_INVALID, message, file=path, line=line,
                               column=column))


# ---- validation ------------------------------------------------------------------------------

def _validate(table: Mapping[str, Any], path: str, text: str, *, in_pyproject: bool) -> Config:
    values: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("-", "_")
        line = _key_line(text, raw_key, in_pyproject=in_pyproject)
        if key in REFUSED_KEYS:
            flag = "--" + key.replace("_", "-")
            raise _error(path, f"'{raw_key}' is never read from a configuration file in a "
                               f"repository; pass {flag} on the command line or the Action's "
                               f"'{key.replace('_', '-')}' input", line)
        if key not in _CHECKS:
            known = ", ".join(sorted(_CHECKS))
            raise _error(path, f"unknown key '{_safe(raw_key)}' (known keys: {known})", line)
        if key in seen:
            raise _error(path, f"'{raw_key}' and '{seen[key]}' are the same key", line)
        seen[key] = raw_key
        try:
            values[key] = _CHECKS[key](value)
        except ValueError as exc:
            raise _error(path, f"'{raw_key}' {exc}", line) from None
    return Config(path=path, **values)


def _safe(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii")[:60]


def _globs(what: str) -> Any:
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
            if what == "notes" and trace_like:
                raise ValueError(f"pattern {pattern!r} ends in .jsonl, which is read as a trace")
        return tuple(value)
    return check


def _timeout(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a number of seconds")
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise ValueError(f"must be more than 0 and at most {MAX_TIMEOUT:g} seconds")
    return float(value)


def _bounded_int(low: int, high: int) -> Any:
    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be a whole number")
        if not low <= value <= high:
            raise ValueError(f"must be from {low} to {high}")
        return value
    return check


def _user_agent(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("must be a non-empty string")
    if not (value.isascii() and value.isprintable()):
        raise ValueError("must be printable ASCII")
    return value


def _boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _directory(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("must be a non-empty path")
    return value


_CHECKS: dict[str, Any] = {
    "notes": _globs("notes"),
    "traces": _globs("traces"),
    "exclude": _globs("exclude"),
    "timeout": _timeout,
    "concurrency": _bounded_int(1, MAX_CONCURRENCY),
    "per_host": _bounded_int(1, MAX_CONCURRENCY),
    "max_bytes": _bounded_int(1, MAX_BYTES),
    "user_agent": _user_agent,
    "verify_files": _boolean,
    "files_root": _directory,
}


# ---- locating a key for the error message ----------------------------------------------------

_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")


def _key_line(text: str, key: str, *, in_pyproject: bool, top: bool = False) -> int | None:
    """The line a key is set on, by a simple scan (tomllib does not keep positions)."""
    table = "tool" if top else ("tool.tracecite" if in_pyproject else "")
    current = ""
    key_pattern = re.compile(
        rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*[=.]"""
    )
    dotted = re.compile(rf"""^\s*(?:tool\s*\.\s*)?tracecite\s*\.\s*{re.escape(key)}\s*=""")
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header and not line.lstrip().startswith("[["):
            current = re.sub(r"\s*\.\s*", ".", header.group(1)).replace('"', "")
            continue
        if current == table and key_pattern.match(line):
            return number
        if in_pyproject and current in ("", "tool") and dotted.match(line):
            return number
    return None

