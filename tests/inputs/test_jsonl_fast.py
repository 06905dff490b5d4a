"""orjson (the ``fast`` extra) decodes trace lines first, and every finding is the one the
stdlib decoder gives: lines orjson refuses go the stdlib's way, and where it accepts a line
its value is the stdlib's (an integer beyond 64 bits aside, whose value TraceCite never reads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import answer, call, cite, claim, jsonl, result, source
from tests.inputs.test_trace import Recorder
from tracecite.inputs import jsonl as jsonl_module
from tracecite.inputs.trace import read_trace

orjson = pytest.importorskip("orjson", reason="the fast extra is not installed")

# JSON (and not quite JSON) where orjson and the stdlib part ways, or might.
_ODD_VALUES = (
    "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1.5e-400", "-0", "-0.0", "1E2",
    "18446744073709551615", "18446744073709551616", "-9223372036854775809",
    "1" * 5000, '"\\ud800"', '"\\udfff\\ud800"', '"\\ud83d\\ude00"', '"\\u0000"', '"\x01"',
    '"\t"', '{"a":1,"a":2}', "[" * 1100 + "]" * 1100, "[1,]", "01", "true", "null", '"x"',
    '"\u2028"', "{}", "[]", "1.7976931348623157e309",
)
_LINE_PREFIXES = (b"", b"\xef\xbb\xbf", b"\x1e", b" ", b"\xff", b"\xed\xa0\x80", b"\xc0\xaf")


def _line(event: dict[str, Any], value: str) -> bytes:
    """``event`` with one more field whose raw JSON text is ``value``."""
    text = json.dumps(event, ensure_ascii=False)
    return (text[:-1] + ', "extra": ' + value + "}").encode("utf-8", "surrogatepass")


_EVENTS = st.sampled_from([
    call(),
    result(),
    result(sources=[source(content="the quick brown fox"), source(id="s2")]),
    result(sources=[source(content=None), source(id="s2", content=7)]),
    answer(),
    answer(claims=[claim(citations=[cite(quote="quick brown"), cite("s9")])]),
    {"type": "tool_call", "type ": 1},
])
_LINES = st.one_of(
    st.builds(_line, _EVENTS, st.sampled_from(_ODD_VALUES)),
    st.builds(lambda prefix, event: prefix + json.dumps(event).encode(),
              st.sampled_from(_LINE_PREFIXES), _EVENTS),
    st.builds(lambda event, cut: json.dumps(event).encode()[:cut], _EVENTS,
              st.integers(0, 60)),
    st.builds(lambda event, noise, at: (lambda raw: raw[:at] + noise + raw[at:])(
        json.dumps(event, ensure_ascii=False).encode()), _EVENTS, st.binary(max_size=4),
        st.integers(0, 80)),
    st.sampled_from(_ODD_VALUES).map(lambda value: value.encode("utf-8", "surrogatepass")),
)


def _scan(path: Path, fast: Any) -> tuple[Any, ...]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl_module, "_orjson", fast)
        recorder = Recorder()
        scanned = read_trace(str(path), tester=recorder)
    return (scanned.findings, [(c.line, c.claim, c.citation, c.quote) for c in scanned.citations],
            scanned.answer_line, scanned.valid, recorder.calls)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_LINES, min_size=1, max_size=6))
def test_the_findings_are_the_stdlibs(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(jsonl([call(), result(), *lines, answer()]))
    assert _scan(path, orjson.loads) == _scan(path, None)


@pytest.mark.parametrize("value", _ODD_VALUES, ids=range(len(_ODD_VALUES)))
@pytest.mark.parametrize("prefix", _LINE_PREFIXES, ids=range(len(_LINE_PREFIXES)))
def test_each_odd_line_gives_the_stdlibs_findings(tmp_path: Path, value: str,
                                                 prefix: bytes) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(jsonl([call(), prefix + _line(result(), value), answer()]))
    assert _scan(path, orjson.loads) == _scan(path, None)


@pytest.mark.parametrize(
    ("raw", "refused"),
    [
        (b'{"a": 1}', False),
        (b'{"a": NaN}', True),  # the stdlib refuses it too, with TraceCite's constant check
        (b'{"a": 1e400}', True),  # the stdlib reads inf
        (b'{"a": "\\ud800"}', True),  # the stdlib reads a lone surrogate
        (b'\xef\xbb\xbf{"a": 1}', True),  # the stdlib's way drops a byte order mark
        (b'{"a": "\xff"}', True),  # not UTF-8: TC102 the stdlib's way
        (b"[" * 2000 + b"]" * 2000, True),  # deeper than orjson goes
    ],
)
def test_orjson_refuses_what_it_does_not_read_as_the_stdlib(raw: bytes, refused: bool,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setattr(jsonl_module, "_orjson", orjson.loads)
    assert (jsonl_module.fast_loads(raw) is jsonl_module.REFUSED) is refused


def test_long_lines_are_left_to_the_lazy_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl_module, "_orjson", orjson.loads)
    long_line = b'{"a": "' + b"x" * jsonl_module.LAZY_FROM_CHARS + b'"}'
    assert jsonl_module.fast_loads(long_line) is jsonl_module.REFUSED


def test_the_environment_turns_orjson_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jsonl_module.DECODER_VARIABLE, "json")
    assert jsonl_module._orjson_loads() is None
    monkeypatch.delenv(jsonl_module.DECODER_VARIABLE)
    assert jsonl_module._orjson_loads() is orjson.loads
    monkeypatch.setattr(jsonl_module, "_orjson", None)
    assert jsonl_module.fast_loads(b"{}") is jsonl_module.REFUSED
