"""Typed field reading for trace events: each wrong or missing field becomes one finding.

Shared by the trace validator and by the answer reader, which checks an answer's claims before
it knows the answer's line (its findings are made with ``line=None`` and placed later).
"""

from __future__ import annotations

from typing import Any

from tracecite.codes import Code
from tracecite.findings import Finding

MISSING: Any = object()
"""What :meth:`FieldChecker.field` returns for a field that is absent or wrong."""


class FieldChecker:
    """Collects the findings of one trace file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.findings: list[Finding] = []

    def problem(self, code: Code, message: str, line: int | None, **where: Any) -> None:
        """Record a finding at ``line`` of the trace."""
        self.findings.append(Finding(code, message, file=self.path, line=line, **where))

    def field(self, obj: dict[str, Any], name: str, kind: type, line: int | None, where: str,
              **loc: Any) -> Any:
        """The value of a required field of JSON type ``kind`` (``str``, ``list`` or ``bool``),
        or :data:`MISSING` after a finding."""
        value: Any = obj.get(name, MISSING)
        # The common case, first and cheap: this runs for every field of every event.
        if type(value) is kind:
            return value
        return self._wrong(value, f"{where}.{name}" if where else name, kind, line, loc)

    def non_empty_field(self, obj: dict[str, Any], name: str, line: int | None, where: str,
                        **loc: Any) -> Any:
        """The value of a required string field that is not blank, or :data:`MISSING` after a
        finding."""
        value: Any = obj.get(name, MISSING)
        if type(value) is str and value.strip():  # the common case, as in field()
            return value
        label = f"{where}.{name}" if where else name
        if isinstance(value, str):
            self.problem(Code.TRACE_WRONG_TYPE, f"field {label} must not be empty", line, **loc)
            return MISSING
        return self._wrong(value, label, str, line, loc)

    def _wrong(self, value: Any, label: str, kind: type, line: int | None,
               loc: dict[str, Any]) -> Any:
        """:data:`MISSING`, after the finding for a field that is absent or of the wrong type
        (a value of the right type comes back as it is)."""
        if value is MISSING:
            self.problem(Code.TRACE_MISSING_FIELD, f"field {label} is missing", line, **loc)
            return MISSING
        # isinstance, not type(): a long answer's claims are a list subclass (jsonl.LazyArray).
        if not isinstance(value, kind):
            self.problem(
                Code.TRACE_WRONG_TYPE,
                f"field {label} must be {_JSON_NAMES[kind]}, not {json_type_of(value)}",
                line, **loc,
            )
            return MISSING
        return value


_JSON_NAMES: dict[type, str] = {
    str: "a string", bool: "a boolean", list: "a list", dict: "an object",
    int: "a number", float: "a number", type(None): "null",
}


def json_type_of(value: Any) -> str:
    """What a decoded JSON value is, in words ("a string", "null", …)."""
    for kind in (bool, str, list, dict, int, float, type(None)):
        if isinstance(value, kind):
            return _JSON_NAMES[kind]
    return type(value).__name__
