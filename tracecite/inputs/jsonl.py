"""Strict JSON for trace lines, shared by the validator and the source re-reader.

An answer can cite tens of thousands of quotes on one line. Decoding such a line whole would
build every claim at once; instead a line longer than :data:`LAZY_FROM_CHARS` has its
top-level ``claims`` array checked for syntax and then decoded one element at a time as the
validator walks it, so memory follows one claim, not all of them.

With the ``fast`` extra, lines shorter than that are decoded by orjson first, from their bytes
(:func:`fast_loads`), about twice as fast as the stdlib and its UTF-8 decoding. It never decides
alone: a line orjson refuses goes the stdlib's way, which gives the verdict (orjson refuses NaN
and Infinity, which TraceCite refuses too, but also ``1e400``, lone surrogates like
``"\\ud800"``, a leading byte order mark or record separator, which the stdlib reads, and
invalid UTF-8, which the stdlib's way calls TC102). Where orjson accepts a line, its value is
the stdlib's, except that an integer beyond 64 bits is a float: TraceCite never reads a
number's value (a field is a string, a list, an object or a boolean, and a number in its place
is "a number" either way), so every finding is the same. ``TRACECITE_JSON_DECODER=json`` (read
when TraceCite starts) turns orjson off.

A lone surrogate (a ``\\ud800`` escape without its pair) is not text: it cannot be written as
UTF-8, so no report, cache or hash could hold it. The stdlib decodes one; :func:`loads` then
raises :class:`LoneSurrogateError` (a ValueError), and the reader makes it a TC123 finding on
its line. Only a line holding such an escape is searched for one, so other lines pay one
``"\\u" in line`` scan.
"""

from __future__ import annotations

import json
import os
import re
from array import array
from collections.abc import Callable, Collection, Iterator
from json.decoder import WHITESPACE, scanstring  # type: ignore[attr-defined]
from typing import Any

LAZY_FROM_CHARS = 1 << 20
"""Lines at least this long get their top-level ``claims`` array decoded lazily."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _long_int(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # more digits than int() accepts: still JSON, kept as a float
        return float(text)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


class LoneSurrogateError(ValueError):
    """A trace line's JSON holds a lone surrogate, which is not text (module docstring)."""


LONE_SURROGATE_MESSAGE = ("line holds a lone surrogate (an escape of U+D800 to U+DFFF without "
                          "its pair), which is not text")
"""The message of the finding on such a line (it names no field: any string may hold one)."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def may_hold_surrogate(text: str) -> bool:
    """Whether a line's text has an escape that could decode to a lone surrogate (a pair
    decodes to one character above U+FFFF, which is text)."""
    return "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None


def has_lone_surrogate(value: Any) -> bool:
    """Whether a decoded JSON value holds a lone surrogate in any string, key or value (walked
    without recursion: a deep value cannot overflow the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, LazyArray):  # decoded one element at a time, never kept whole
            if any(has_lone_surrogate(element) for element in item):
                return True
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _refuse_surrogates(text: str, value: Any) -> Any:
    """``value``, unless ``text`` decoded to a lone surrogate (:class:`LoneSurrogateError`)."""
    if may_hold_surrogate(text) and has_lone_surrogate(value):
        raise LoneSurrogateError(LONE_SURROGATE_MESSAGE)
    return value
_skip = WHITESPACE.match
DECODER = _DECODER
"""The strict decoder (no NaN or Infinity), for readers of lines too long to hold."""
WHITESPACE_MATCH = _skip
"""JSON's whitespace at a position (``.end()`` is where it stops)."""

DECODER_VARIABLE = "TRACECITE_JSON_DECODER"
"""The environment variable that turns orjson off (``json``); read when TraceCite starts."""


def _orjson_loads() -> Callable[[bytes], Any] | None:
    """orjson's ``loads`` when it is installed and not turned off."""
    if os.environ.get(DECODER_VARIABLE, "") == "json":
        return None
    from tracecite.stops import signals_deferred

    try:
        # A stop signal raised inside orjson's initialisation crashes the process: it waits.
        with signals_deferred():
            import orjson
    except ImportError:
        return None
    fast: Callable[[bytes], Any] = orjson.loads
    return fast


_orjson = _orjson_loads()

REFUSED: Any = object()
"""What :func:`fast_loads` gives for a line it leaves to the stdlib."""


def fast_loads(raw: bytes) -> Any:
    """The value of a trace line (its bytes) by orjson, or :data:`REFUSED` when the line must
    go the stdlib's way: orjson is not installed or turned off, refuses the line, or the line
    is long enough to be decoded lazily (module docstring)."""
    if _orjson is None or len(raw) >= LAZY_FROM_CHARS:
        return REFUSED
    try:
        return _orjson(raw)
    except ValueError:  # orjson.JSONDecodeError
        return REFUSED


class LazyArray(list[Any]):
    """A JSON array whose elements are decoded when it is iterated, one at a time.

    It is a ``list`` to the validator's type checks; only iteration, ``len`` and truth are
    meaningful. Its syntax was checked when it was made, so iterating cannot fail.
    """

    def __init__(self, text: str, starts: array[int]) -> None:
        super().__init__()
        self._text = text
        self._starts = starts

    def __iter__(self) -> Iterator[Any]:
        for start in self._starts:
            yield _DECODER.raw_decode(self._text, start)[0]

    def __len__(self) -> int:
        return len(self._starts)

    def __bool__(self) -> bool:
        return len(self._starts) > 0


def _lazy_array(text: str, i: int,
                visit: Callable[[Any], None] | None = None) -> tuple[list[Any], int]:
    """The array starting at ``text[i] == "["``, its elements syntax-checked and dropped — or,
    with ``visit``, each handed to it as it is decoded (and an empty list returned, which does
    not hold on to the text)."""
    starts: array[int] = array("q")
    i = _skip(text, i + 1).end()
    if text[i:i + 1] == "]":
        return (LazyArray(text, starts) if visit is None else []), i + 1
    while True:
        if visit is None:
            starts.append(i)
            _, i = _DECODER.raw_decode(text, i)
        else:
            element, i = _DECODER.raw_decode(text, i)
            visit(element)
        i = _skip(text, i).end()
        char, i = text[i:i + 1], i + 1
        if char == "]":
            return (LazyArray(text, starts) if visit is None else []), i
        if char != ",":
            raise ValueError("expected , or ] in an array")
        i = _skip(text, i).end()


def _lazy_object(text: str, visit: Callable[[Any], None] | None = None) -> Any:
    """Decode a line that holds one object, keeping its ``claims`` array lazy (or handing each
    of its elements to ``visit`` as it is decoded)."""
    i = _skip(text, 0).end()
    if text[i:i + 1] != "{":
        return json.loads(text, parse_constant=_reject_constant)
    obj: dict[str, Any] = {}
    i = _skip(text, i + 1).end()
    if text[i:i + 1] == "}":
        i += 1
    else:
        while True:
            if text[i:i + 1] != '"':
                raise ValueError("expected a key")
            key, i = scanstring(text, i + 1, True)
            i = _skip(text, i).end()
            if text[i:i + 1] != ":":
                raise ValueError("expected :")
            i = _skip(text, i + 1).end()
            value: Any
            if key == "claims" and visit is not None and key in obj:
                # JSON keeps the last of two equal keys; the visited claims cannot be undone.
                raise ValueError("claims given twice")
            if key == "claims" and text[i:i + 1] == "[":
                value, i = _lazy_array(text, i, visit)
            else:
                value, i = _DECODER.raw_decode(text, i)
            obj[key] = value
            i = _skip(text, i).end()
            char, i = text[i:i + 1], i + 1
            if char == "}":
                break
            if char != ",":
                raise ValueError("expected , or } in an object")
            i = _skip(text, i).end()
    if _skip(text, i).end() != len(text):
        raise ValueError("extra data after the value")
    return obj


def visit_claims(text: str, visit: Callable[[Any], None]) -> Any:
    """Decode a line holding one object, handing each element of its top-level ``claims``
    array to ``visit`` as it is decoded instead of keeping them: the object comes back with
    ``claims`` empty. One decoding pass, one claim in memory at a time (ValueError if the
    line is not that JSON)."""
    inner = visit
    if may_hold_surrogate(text):
        def checked(element: Any) -> None:
            if has_lone_surrogate(element):
                raise LoneSurrogateError(LONE_SURROGATE_MESSAGE)
            inner(element)

        visit = checked
    try:
        event = _lazy_object(text, visit)
        if inner is not visit and has_lone_surrogate(event):
            raise LoneSurrogateError(LONE_SURROGATE_MESSAGE)
        return event
    except RecursionError:
        raise ValueError("nesting too deep") from None


def quote_positions(text: str, wanted: Collection[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """Where the value of each wanted citation's ``quote`` starts in an answer line: the index
    (0-based, in characters) of its opening quotation mark, by ``(claim, citation)`` (1-based,
    as findings count them). The structure is walked only down to the wanted citations; every
    other claim and citation is skipped by the C decoder. A duplicate key counts last, as the
    decoder keeps it. ValueError if the line is not the JSON object it was."""
    claims = {c for c, _ in wanted}
    found: dict[tuple[int, int], int] = {}

    def answer_field(key: str, i: int) -> int | None:
        if key != "claims" or text[i:i + 1] != "[":
            return None
        return _walk_array(text, i, claim)

    def claim(c: int, i: int) -> int | None:
        if c not in claims or text[i:i + 1] != "{":
            return None  # skipped whole

        def claim_field(key: str, j: int) -> int | None:
            if key != "citations" or text[j:j + 1] != "[":
                return None
            return _walk_array(text, j, lambda n, k: citation(c, n, k))

        return _walk_object(text, i, claim_field)

    def citation(c: int, n: int, i: int) -> int | None:
        if (c, n) not in wanted or text[i:i + 1] != "{":
            return None

        def citation_field(key: str, j: int) -> None:
            if key == "quote":
                found[c, n] = j  # a later "quote" key overwrites it, as the decoder does
            # and the value is skipped

        return _walk_object(text, i, citation_field)

    start = _skip(text, 1 if text.startswith(_SKIPPABLE) else 0).end()
    if text[start:start + 1] != "{":
        raise ValueError("not an object")
    _walk_object(text, start, answer_field)
    return found


def _walk_object(text: str, i: int, on_value: Callable[[str, int], int | None]) -> int:
    """Walk the object at ``text[i] == "{"``: ``on_value(key, start)`` walks a value itself
    (returning where it ends) or returns None to have it skipped; where the object ends."""
    i = _skip(text, i + 1).end()
    if text[i:i + 1] == "}":
        return i + 1
    while True:
        if text[i:i + 1] != '"':
            raise ValueError("expected a key")
        key, i = scanstring(text, i + 1, True)
        i = _skip(text, i).end()
        if text[i:i + 1] != ":":
            raise ValueError("expected :")
        i = _skip(text, i + 1).end()
        end = on_value(key, i)
        i = _DECODER.raw_decode(text, i)[1] if end is None else end
        i = _skip(text, i).end()
        char, i = text[i:i + 1], i + 1
        if char == "}":
            return i
        if char != ",":
            raise ValueError("expected , or } in an object")
        i = _skip(text, i).end()


def _walk_array(text: str, i: int, on_element: Callable[[int, int], int | None]) -> int:
    """Walk the array at ``text[i] == "["``: ``on_element(number, start)`` (1-based) as
    :func:`_walk_object`'s ``on_value``; where the array ends."""
    i = _skip(text, i + 1).end()
    if text[i:i + 1] == "]":
        return i + 1
    number = 0
    while True:
        number += 1
        end = on_element(number, i)
        i = _DECODER.raw_decode(text, i)[1] if end is None else end
        i = _skip(text, i).end()
        char, i = text[i:i + 1], i + 1
        if char == "]":
            return i
        if char != ",":
            raise ValueError("expected , or ] in an array")
        i = _skip(text, i).end()


_SKIPPABLE = ("\x1e", "\ufeff")


def line_text(raw: bytes) -> str:
    """A trace line's text as the validator's reader (jsonlines) sees it: strict UTF-8, and one
    RFC 7464 record separator or BOM before it dropped (UnicodeDecodeError if not UTF-8)."""
    text = raw.decode("utf-8")
    return text[1:] if text.startswith(_SKIPPABLE) else text


def loads(line: str | bytes) -> Any:
    """Strict JSON: no NaN/Infinity, and too-deep nesting is a JSON error, not a crash."""
    try:
        if len(line) >= LAZY_FROM_CHARS:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            try:
                return _refuse_surrogates(text, _lazy_object(text))
            except LoneSurrogateError:
                raise
            except ValueError:
                pass  # the strict decoder below gives the verdict
        try:
            if isinstance(line, str):  # what the reader hands over: skip json.loads' set-up
                value = _DECODER.decode(line)
            else:
                value = json.loads(line, parse_constant=_reject_constant)
        except ValueError:
            # Python refuses integers of more than 4300 digits; a second, slower pass (only
            # for lines that failed) reads them as floats before calling the line bad.
            value = json.loads(line, parse_constant=_reject_constant, parse_int=_long_int)
        text = line if isinstance(line, str) else line.decode("utf-8", "replace")
        return _refuse_surrogates(text, value)
    except RecursionError:
        raise ValueError("nesting too deep") from None
