"""Strict JSON for trace lines, shared by the validator and the source re-reader."""

from __future__ import annotations

import json
from typing import Any


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _long_int(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # more digits than int() accepts: still JSON, kept as a float
        return float(text)


def loads(line: str | bytes) -> Any:
    """Strict JSON: no NaN/Infinity, and too-deep nesting is a JSON error, not a crash."""
    try:
        try:
            return json.loads(line, parse_constant=_reject_constant)
        except ValueError:
            # Python refuses integers of more than 4300 digits; a second, slower pass (only
            # for lines that failed) reads them as floats before calling the line bad.
            return json.loads(line, parse_constant=_reject_constant, parse_int=_long_int)
    except RecursionError:
        raise ValueError("nesting too deep") from None
