"""Project configuration for ``tracecite hook``: ``.tracecite.toml`` or ``[tool.tracecite]``.

The configuration says which files are notes and traces (globs) and sets the fetch limits a
project wants; command-line flags win over it. Options that widen what the fetcher may reach
(``allow_net``, ``connect_to``, ``ca_cert``) are refused here on purpose: a repository's own files
must never be able to point the checker at a private network (docs/hook.md).

A bad file is a :class:`ConfigError` carrying a TC104 finding with the file and line, never a
traceback.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracecite.codes import Code
from tracecite.errors import ConfigError
from tracecite.findings import Finding
from tracecite.inputs.files import os_reason
from tracecite.settings import CONFIG_KEYS, REFUSED_KEYS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

PROJECT_FILE = ".tracecite.toml"
PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class Config:
    """A configuration file's values, checked by the settings table, by option name (the key
    ``files_root`` is the option ``root``); ``path`` is the file (None: there is none)."""

    path: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)


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


def discover(explicit: str | None) -> Config:
    """The configuration of a hook run: ``explicit`` (``--config``), else the file found here,
    else at the git top level, else none; raises :class:`ConfigError` for a bad one."""
    if explicit is not None:
        return load_config(explicit)
    from tracecite.hook.git import git_top_level

    here = os.getcwd()
    path = find_config(here)
    if path is None:
        top = git_top_level(here)
        if top is not None:
            path = find_config(top)
    # Relative to here, as input files are, so an annotation can point at it.
    return load_config(os.path.relpath(path) if path is not None else None)


def load_config(path: str | None) -> Config:
    """Read and validate ``path`` (None: the defaults); raise :class:`ConfigError` if bad."""
    if path is None:
        return Config()
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise _error(path, f"configuration file cannot be read ({os_reason(exc)})") from None
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
        if key not in CONFIG_KEYS:
            known = ", ".join(sorted(CONFIG_KEYS))
            raise _error(path, f"unknown key '{_safe(raw_key)}' (known keys: {known})", line)
        if key in seen:
            raise _error(path, f"'{raw_key}' and '{seen[key]}' are the same key", line)
        seen[key] = raw_key
        option = CONFIG_KEYS[key]
        try:
            values[option.name] = option.from_config(value)
        except ValueError as exc:
            raise _error(path, f"'{raw_key}' {exc}", line) from None
    return Config(path=path, values=values)


def _safe(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii")[:60]


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

