"""The trace validator (docs/guides/traces.md): every rule, TC120–TC131, read through the trace
reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import (
    CONTENT,
    answer,
    call,
    cite,
    claim,
    result,
    source,
    valid_events,
    write_trace,
)
from tracecite.inputs.sources import read_sources_at
from tracecite.inputs.trace import TraceScan, scan_trace
from tracecite.model import Citation


@pytest.fixture
def scan(tmp_path: Path) -> Any:
    """``scan(events, **options)`` writes a trace and scans it."""

    def run(events: list[Any], **options: Any) -> TraceScan:
        return scan_trace(str(write_trace(tmp_path / "t.jsonl", events)), **options)

    return run


def read_back(scanned: TraceScan, source_id: str) -> tuple[str, str | None]:
    """A source's URI and content, read again from the line the index says it is on."""
    with open(scanned.path, "rb") as handle:
        return read_sources_at(handle, scanned.sources.offset(source_id))[source_id]


def codes(scanned: TraceScan) -> list[tuple[str, int | None]]:
    return [(f.code.code, f.line) for f in scanned.findings]


def test_valid_trace(scan: Any) -> None:
    scanned = scan(valid_events())
    assert scanned.valid
    assert scanned.findings == ()
    assert scanned.answer_line == 3
    assert scanned.citations_per_claim == (1,)
    assert list(scanned.citations) == [Citation(scanned.path, 3, 1, 1, "s1", "quick brown fox")]
    assert read_back(scanned, "s1") == ("https://example.com/a", CONTENT)


def test_quotes_are_kept_normalised(scan: Any) -> None:
    scanned = scan([call(), result(), answer([claim(citations=[cite(quote="  quick\n brown ")])])])
    assert scanned.citations[0].quote == "quick brown"


def test_blank_lines_ignored_and_lines_counted(scan: Any) -> None:
    scanned = scan(["", call(), "   ", "\t\r", result(), "", answer(run_id="other")])
    assert codes(scanned) == [("TC124", 7)]
    assert scanned.sources.offset("s1") == sum(
        len(line) for line in Path(scanned.path).read_bytes().splitlines(keepends=True)[:4])


def test_crlf_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\r\n".join(json.dumps(e).encode() for e in valid_events()) + b"\r\n")
    scanned = scan_trace(str(path))
    assert scanned.findings == ()


def test_unknown_event_types_and_fields_are_allowed(scan: Any) -> None:
    events = [
        {"type": "thought", "run_id": "r1", "text": "hmm", "nested": {"a": [1, None]}},
        call(extra={"x": 1}, started_at=1.5),
        {"type": "tool_call_delta", "run_id": "r1", "call_id": 5},
        result(latency_ms=12, sources=[source(title="T", score=0.3, meta=None)]),
        answer([claim(confidence=0.9, citations=[cite(span=[1, 2])])], model="m"),
        {"type": "done", "run_id": "r1"},
    ]
    assert scan(events).findings == ()


def test_unicode_is_read_back_and_lone_surrogates_are_refused(scan: Any) -> None:
    content = "caf\u00e9 \U0001f600 done"
    scanned = scan([call(), result(sources=[source(uri="https://x/\u00e9", content=content)]),
                    answer([claim(citations=[cite(quote="\U0001f600")])])])
    assert scanned.findings == ()
    assert read_back(scanned, "s1") == ("https://x/\u00e9", content)
    # A lone surrogate is not text (no report could write it): TC123 on its line.
    scanned = scan([call(), result(sources=[source(uri="https://x/\ud801")]), answer()])
    assert [(f.code.value[0], f.line) for f in scanned.findings] == [("TC123", 2), ("TC131", 3)]


def test_content_is_read_again_from_the_file(scan: Any) -> None:
    scanned = scan(valid_events())
    assert read_back(scanned, "s1")[1] == CONTENT


def test_sink_sees_every_valid_source_in_order(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source("a", "u1", "x"), source("b", "u2", "y")]),
        call("c2"), result("c2", sources=[source("a", "u3", "dup"), source("c", "u4", "z")]),
        answer(claims=[]),
    ])
    seen: list[tuple[str, str, int, str | None]] = []
    scanned = scan_trace(str(path), sink=lambda *source: seen.append(source))
    assert seen == [("a", "u1", 2, "x"), ("b", "u2", 2, "y"), ("c", "u4", 4, "z")]
    assert codes(scanned) == [("TC129", 4)]
    assert scanned.findings[0].source_id == "a"


def test_a_source_not_captured_is_valid_and_seen_without_content(tmp_path: Path) -> None:
    """``"content": null`` (docs/guides/traces.md's extension): the source is valid, indexed and
    cited like any other; the sink is handed None for its content."""
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source("a", "u1", None), source("b", "u2", "y")]),
        call("c2"), result("c2", sources=[{"id": "c", "uri": "u3", "content": None,
                                           "captured_at": "2024-05-01T12:00:00Z"}]),
        answer([claim(citations=[cite("a"), cite("c")])]),
    ])
    seen: list[tuple[str, str, int, str | None]] = []
    scanned = scan_trace(str(path), sink=lambda *source: seen.append(source))
    assert scanned.findings == ()
    assert seen == [("a", "u1", 2, None), ("b", "u2", 2, "y"), ("c", "u3", 4, None)]
    assert [c.source_id for c in scanned.citations] == ["a", "c"]
    assert read_back(scanned, "a") == ("u1", None)
    assert scanned.captured_at == {"c": "20240501120000"}


@pytest.mark.parametrize("content, kind", [
    (7, "a number"), (["x"], "a list"), ({"text": "x"}, "an object"), (True, "a boolean")])
def test_content_of_another_type_is_tc123(scan: Any, content: Any, kind: str) -> None:
    scanned = scan([call(), result(sources=[source(content=content)]), answer(claims=[])])
    assert [(f.code.code, f.line, f.message) for f in scanned.findings] == [
        ("TC123", 2, f"field sources[1].content must be a string or null, not {kind}")]


def test_content_absent_is_still_missing(scan: Any) -> None:
    scanned = scan([call(), result(sources=[{"id": "s1", "uri": "u"}]), answer(claims=[])])
    assert [(f.code.code, f.message) for f in scanned.findings] == [
        ("TC122", "field sources[1].content is missing")]


# ---- TC120 / TC121 ---------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "{", "{'a': 1}", '{"type": "x",}', "nope", '{"a": NaN}', '{"a": Infinity}',
    '{"a": -Infinity}', "[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000,
    '{"a": 1} {"b": 2}',
])
def test_bad_json(scan: Any, line: str) -> None:
    assert codes(scan([call(), line, result(), answer()])) == [("TC120", 2)]


@pytest.mark.parametrize("line", ["[]", "1", '"text"', "true", "null", "2.5"])
def test_not_an_object(scan: Any, line: str) -> None:
    assert codes(scan([call(), line, result(), answer()])) == [("TC121", 2)]


def test_huge_number_in_an_unknown_field_is_json(scan: Any) -> None:
    events = valid_events()
    line = json.dumps(events[0])[:-1] + ', "big": ' + "9" * 5000 + "}"
    assert scan([line, *events[1:]]).findings == ()


def test_invalid_utf8_line(scan: Any) -> None:
    assert codes(scan([call(), b'{"type": "\xc3("}', result(), answer()])) == [("TC102", 2)]


def test_empty_file(scan: Any) -> None:
    assert codes(scan([])) == [("TC130", 1)]


# ---- TC122 / TC123: fields ------------------------------------------------------------------

def _without(event: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k != key}


@pytest.mark.parametrize("events, line, name", [
    ([_without(call(), "type"), result(), answer()], 1, "type"),
    ([_without(call(), "run_id"), result(), answer()], 1, "run_id"),
    ([_without(call(), "call_id"), result(), answer()], 1, "call_id"),
    ([_without(call(), "tool"), result(), answer()], 1, "tool"),
    ([call(), _without(result(), "call_id"), answer(claims=[])], 2, "call_id"),
    ([call(), _without(result(), "ok"), answer(claims=[])], 2, "ok"),
    ([call(), _without(result(), "sources"), answer(claims=[])], 2, "sources"),
    ([call(), result(sources=[_without(source(), "id")]), answer(claims=[])], 2, "id"),
    ([call(), result(sources=[_without(source(), "uri")]), answer(claims=[])], 2, "uri"),
    ([call(), result(sources=[_without(source(), "content")]), answer(claims=[])], 2,
     "content"),
    ([call(), result(), _without(answer(), "claims")], 3, "claims"),
    ([call(), result(), answer([_without(claim(), "text")])], 3, "text"),
    ([call(), result(), answer([_without(claim(), "citations")])], 3, "citations"),
    ([call(), result(), answer([claim(citations=[_without(cite(), "source_id")])])], 3,
     "source_id"),
    ([call(), result(), answer([claim(citations=[_without(cite(), "quote")])])], 3, "quote"),
])
def test_missing_field(scan: Any, events: list[Any], line: int, name: str) -> None:
    scanned = scan(events)
    assert codes(scanned)[0] == ("TC122", line)
    # A broken event can make later references to it break too; nothing else is reported.
    assert {f.code.code for f in scanned.findings} <= {"TC122", "TC126", "TC131"}
    assert any(f.message.endswith(f"{name} is missing") or f".{name} is missing" in f.message
               for f in scanned.findings if f.code.code == "TC122")


@pytest.mark.parametrize("events, line", [
    ([call(), result(ok="true", sources=[]), answer(claims=[])], 2),
    ([call(), result(ok=1, sources=[]), answer(claims=[])], 2),
    ([call(), result(ok=None, sources=[]), answer(claims=[])], 2),
    ([{**call(), "type": 3}, result(), answer()], 1),
    ([call(run_id=""), result(), answer()], 1),
    ([call(run_id="  "), result(), answer()], 1),
    ([call(run_id=7), result(), answer()], 1),
    ([call(call_id=""), result(), answer()], 1),
    ([call(call_id=True), result(), answer()], 1),
    ([call(tool=""), result(), answer()], 1),
    ([call(tool=["search"]), result(), answer()], 1),
    ([call(), result(sources={"id": "s1"}), answer(claims=[])], 2),
    ([call(), result(sources=["s1"]), answer(claims=[])], 2),
    ([call(), result(sources=[source(id="")]), answer(claims=[])], 2),
    ([call(), result(sources=[source(id=1)]), answer(claims=[])], 2),
    ([call(), result(sources=[source(uri="")]), answer(claims=[])], 2),
    ([call(), result(sources=[source(content=["x"])]), answer(claims=[])], 2),
    ([call(), result(sources=[source(content=3)]), answer(claims=[])], 2),
    ([call(), result(sources=[source(content={"text": "x"})]), answer(claims=[])], 2),
    ([call(), result(sources=[source(content=False)]), answer(claims=[])], 2),
    ([call(), result(ok=False, sources="none"), answer(claims=[])], 2),
    ([call(), result(), answer(claims={"text": "x"})], 3),
    ([call(), result(), answer(claims=["x"])], 3),
    ([call(), result(), answer([claim(text=None)])], 3),
    ([call(), result(), answer([claim(citations="s1")])], 3),
    ([call(), result(), answer([claim(citations=[["s1", "q"]])])], 3),
    ([call(), result(), answer([claim(citations=[cite(quote="")])])], 3),
    ([call(), result(), answer([claim(citations=[cite(quote=" \t\n\u00a0")])])], 3),
    ([call(), result(), answer([claim(citations=[cite(quote=5)])])], 3),
    ([call(), result(), answer([claim(citations=[cite(source_id="")])])], 3),
])
def test_wrong_type(scan: Any, events: list[Any], line: int) -> None:
    found = codes(scan(events))
    assert found[0] == ("TC123", line)
    # A broken tool_call makes its result's reference break too; nothing else is reported.
    assert {code for code, _ in found[1:]} <= {"TC126"}


def test_empty_claim_text_is_fine(scan: Any) -> None:
    assert scan([call(), result(), answer([claim(text="")])]).findings == ()


# ---- TC124–TC131: references ----------------------------------------------------------------

def test_run_id_mismatch_on_each_line(scan: Any) -> None:
    scanned = scan([call(), result(run_id="r2"), {"type": "note", "run_id": "r3"}, answer()])
    assert codes(scanned) == [("TC124", 2), ("TC124", 3)]


def test_run_id_taken_from_the_first_line_that_has_one(scan: Any) -> None:
    scanned = scan([_without(call(), "run_id"), result(run_id="r2"), answer(run_id="r2")])
    assert codes(scanned) == [("TC122", 1)]


def test_duplicate_call_id(scan: Any) -> None:
    scanned = scan([call(), call("c2"), call("c1"), result(), answer()])
    assert codes(scanned) == [("TC125", 3)]


def test_unknown_call_id_and_result_before_call(scan: Any) -> None:
    scanned = scan([result(), call(), answer()])
    assert codes(scanned) == [("TC126", 1)]


def test_duplicate_result(scan: Any) -> None:
    scanned = scan([call(), result(ok=False), result(), result(ok=False), answer()])
    assert codes(scanned) == [("TC127", 3), ("TC127", 4)]


@pytest.mark.parametrize("sources", [None, [], "absent"])
def test_failed_result_without_sources_is_fine(scan: Any, sources: Any) -> None:
    failed = result("c2", ok=False)
    if sources != "absent":
        failed["sources"] = sources
    assert scan([call(), result(), call("c2"), failed, answer()]).findings == ()


def test_failed_result_with_sources(scan: Any) -> None:
    scanned = scan([call(), result(ok=False, sources=[source()]), answer(claims=[])])
    assert codes(scanned) == [("TC128", 2)]
    # Its sources are not sources: citing one is an unknown source.
    scanned = scan([call(), result(ok=False, sources=[source()]), answer()])
    assert codes(scanned) == [("TC128", 2), ("TC131", 3)]


def test_duplicate_source_id_within_one_result(scan: Any) -> None:
    scanned = scan([call(), result(sources=[source(), source(uri="https://other/")]), answer()])
    assert codes(scanned) == [("TC129", 2)]
    assert read_back(scanned, "s1")[0] == "https://example.com/a"  # the first one counts


def test_duplicate_answer(scan: Any) -> None:
    scanned = scan([call(), result(), answer(), answer(), answer()])
    assert codes(scanned) == [("TC130", 4), ("TC130", 5)]
    assert scanned.answer_line == 3
    assert "line 3" in scanned.findings[0].message


def test_no_answer(scan: Any) -> None:
    # Reported at the last event: blank lines after it are not part of the run.
    assert codes(scan([call(), result(), ""])) == [("TC130", 2)]


def test_citation_before_its_source(scan: Any) -> None:
    scanned = scan([call(), answer(), result()])
    assert codes(scanned) == [("TC131", 2)]
    finding = scanned.findings[0]
    assert (finding.claim, finding.citation, finding.source_id) == (1, 1, "s1")


def test_unknown_source_id_located(scan: Any) -> None:
    scanned = scan([call(), result(), answer([claim(), claim(citations=[cite(), cite("s9")])])])
    assert codes(scanned) == [("TC131", 3)]
    finding = scanned.findings[0]
    assert (finding.claim, finding.citation, finding.source_id) == (2, 2, "s9")


def test_invalid_source_is_not_recorded(scan: Any) -> None:
    scanned = scan([call(), result(sources=[source(uri=5)]), answer()])
    assert codes(scanned) == [("TC123", 2), ("TC131", 3)]


def test_findings_never_carry_input_text(scan: Any) -> None:
    secret = "SECRET"
    scanned = scan([
        call(tool=secret), f"{{{secret}", f'"{secret}"',
        result(ok=secret, sources=[source(content=secret)]),
        {"type": "tool_result", "run_id": "r1", "call_id": "c1", "ok": False,
         "sources": [source(content=secret)]},
        answer([claim(text=secret, citations=[cite(quote=secret), cite(quote=["x" + secret])])]),
        answer([claim(text=secret)]),
    ])
    assert len(scanned.findings) >= 6
    for finding in scanned.findings:
        assert secret not in finding.message


# ---- a long answer line (decoded claim by claim) reads like any other line -------------------

def _long_answer(claim_extra: str) -> str:
    """An answer line of more than 1 MiB; the second claim carries ``claim_extra`` raw."""
    filler = claim(text="x" * 1000)
    claims = [json.dumps(filler)] * 1100
    second = json.dumps(claim())[:-1] + ", " + claim_extra + "}" if claim_extra else json.dumps(
        claim())
    claims[1] = second
    return '{"type": "answer", "run_id": "r1", "claims": [' + ", ".join(claims) + "]}"


@pytest.mark.parametrize("extra, expected", [
    ("", []),
    ('"big": ' + "9" * 5000, []),
    ('"n": NaN', [("TC120", 3), ("TC130", 3)]),
    ('"deep": ' + "[" * 100_000 + "]" * 100_000, [("TC120", 3), ("TC130", 3)]),
    ('"x": ', [("TC120", 3), ("TC130", 3)]),
], ids=["plain", "huge-number", "nan", "deep", "broken"])
def test_long_answer_line(scan: Any, extra: str, expected: list[tuple[str, int]]) -> None:
    scanned = scan([call(), result(), _long_answer(extra)])
    assert codes(scanned) == expected
    if not expected:
        assert scanned.citations_per_claim == (1,) * 1100
        assert len(scanned.citations) == 1100


def test_long_answer_line_with_evidence(cli: Any, tmp_path: Path) -> None:
    huge = _long_answer('"big": ' + "9" * 5000)
    path = write_trace(tmp_path / "t.jsonl", [call(), result(), huge])
    run = cli("check", path, "--evidence", "--json")
    assert (run.exit, run.codes()) == (0, [])
    assert run.json()["summary"]["captured"]["checked"] == 1100


# ---- the claim-by-claim decoder agrees with json.loads ---------------------------------------

def _materialise(value: Any) -> Any:
    if isinstance(value, list):
        return [_materialise(v) for v in value]
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    return value


def _strict(text: str) -> Any:
    """What the one-shot decoder says: the value, or None for a line that is not JSON or that
    decodes to a lone surrogate (an escape of U+D800 to U+DFFF without its pair: not text)."""
    from tracecite.inputs.jsonl import has_lone_surrogate

    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        try:
            value = json.loads(text, parse_constant=_no_constant, parse_int=_int_or_float)
        except (ValueError, RecursionError):
            return ("error", None)
    return ("error", None) if has_lone_surrogate(value) else ("ok", value)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _int_or_float(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return float(text)


json_leaf = (st.none() | st.booleans() | st.integers()
             | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5))
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=10)
answer_like = st.dictionaries(
    st.sampled_from(["type", "run_id", "claims", "cl\\u0061ims", "x"]) | st.text(max_size=3),
    json_value, max_size=4,
).flatmap(lambda d: st.lists(json_value, max_size=4).map(lambda claims: {**d, "claims": claims}))


@st.composite
def json_lines(draw: st.DrawFn) -> str:
    """JSON text of an answer-like object, formatted at random, sometimes damaged."""
    value = draw(answer_like)
    text = json.dumps(value, indent=draw(st.sampled_from([None, 0, 1])),
                      separators=draw(st.sampled_from([None, (",", ":"), (" , ", " : ")])),
                      ensure_ascii=draw(st.booleans()))
    text = text.replace('"cl\\\\u0061ims"', '"cl\\u0061ims"')
    text = draw(st.sampled_from(["", " ", "\t"])) + text + draw(st.sampled_from(["", " ", "\r"]))
    if draw(st.booleans()):
        # Damage it: delete, duplicate or insert a character somewhere.
        i = draw(st.integers(0, max(0, len(text) - 1)))
        edit = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if edit == "delete":
            text = text[:i] + text[i + 1:]
        elif edit == "duplicate":
            text = text[:i] + text[i:i + 1] + text[i:]
        else:
            text = text[:i] + draw(st.sampled_from(list('[]{},:"\\ 0aeE-.n'))) + text[i:]
    return text


@settings(max_examples=400, deadline=None)
@given(json_lines())
@pytest.mark.slow
def test_lazy_decoder_agrees_with_json_loads(text: str) -> None:
    from unittest import mock

    from tracecite.inputs import jsonl

    with mock.patch.object(jsonl, "LAZY_FROM_CHARS", 0):
        try:
            got = ("ok", _materialise(jsonl.loads(text)))
        except ValueError:
            got = ("error", None)
        assert got == _strict(text)
