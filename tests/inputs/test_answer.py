"""The answer read ahead from the last line, and the validator taking it instead of decoding
the line again."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Cli, answer, call, cite, claim, result, valid_events, write_trace
from tracecite.inputs import events
from tracecite.inputs.answer import PreparedAnswer, quote_columns, read_final_answer
from tracecite.inputs.sources import SourceIndex
from tracecite.inputs.validator import TraceValidator, validate


def _read_ahead(path: Path) -> PreparedAnswer | None:
    with open(path, "rb") as handle:
        prepared = read_final_answer(str(path), handle)
        assert handle.tell() == 0
    return prepared


def _validate(path: Path, answer: PreparedAnswer | None = None) -> TraceValidator:
    with open(path, "rb") as handle:
        return validate(str(path), handle, SourceIndex(), answer=answer)


def _both_ways(path: Path) -> tuple[TraceValidator, TraceValidator]:
    """The trace validated with its answer read ahead, and in one plain pass; same findings."""
    prepared = _read_ahead(path)
    assert prepared is not None
    ahead = _validate(path, prepared)
    plain = _validate(path)
    assert ahead.answer_read_ahead and not plain.answer_read_ahead
    assert ahead.findings == plain.findings
    return ahead, plain


def test_the_last_line_is_read_ahead(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", [*valid_events(), "", "  \t"])
    prepared = _read_ahead(path)
    assert prepared is not None
    assert prepared.offset == path.read_bytes().index(b'{"type": "answer"')
    assert prepared.fields["type"] == "answer"
    assert prepared.draft.per_claim == [1]
    assert prepared.draft.source_ids == ["s1"]
    assert prepared.draft.quotes == ["quick brown fox"]
    assert prepared.draft.findings == []


@pytest.mark.parametrize("last", [
    json.dumps(call()),
    '{"type": "answer", "claims": [',
    "[1, 2]",
    b'{"type": "answer", "claims": [], "x": "\xff"}',
    # JSON keeps the last of two equal keys, so both lists would have to be undone.
    '{"type": "answer", "run_id": "r1", "claims": [], "claims": []}',
], ids=["not-an-answer", "broken", "not-an-object", "not-utf8", "claims-twice"])
def test_nothing_is_read_ahead_when_the_last_line_is_not_a_plain_answer(
        tmp_path: Path, last: str | bytes) -> None:
    path = tmp_path / "t.jsonl"
    head = b"".join(json.dumps(e).encode() + b"\n" for e in valid_events()[:2])
    path.write_bytes(head + (last if isinstance(last, bytes) else last.encode()) + b"\n")
    assert _read_ahead(path) is None


def test_an_empty_file_has_nothing_to_read_ahead(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n \n")
    assert _read_ahead(path) is None


def test_a_record_separator_before_the_answer_is_skipped_like_jsonlines_does(
        tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [json.dumps(e) for e in valid_events()]
    path.write_text("\n".join([*lines[:2], "\x1e" + lines[2]]) + "\n")
    prepared = _read_ahead(path)
    assert prepared is not None and prepared.draft.quotes == ["quick brown fox"]


def test_the_answer_read_ahead_is_not_decoded_again(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_trace(tmp_path / "t.jsonl", valid_events())
    decoded: list[str | bytes] = []
    original = events.loads
    fast = events.fast_loads
    if fast(b"{}") is events.REFUSED:
        monkeypatch.setattr(events, "loads", lambda line: decoded.append(line) or original(line))
    else:  # the fast extra's decoder takes every line here
        monkeypatch.setattr(events, "fast_loads", lambda raw: decoded.append(raw) or fast(raw))
    validated = _validate(path, _read_ahead(path))
    assert validated.findings == [] and validated.answer_read_ahead
    assert [json.loads(line)["type"] for line in decoded] == ["tool_call", "tool_result"]
    assert [(c.line, c.claim, c.citation, c.quote) for c in validated.citations] == [
        (3, 1, 1, "quick brown fox")]


def test_an_answer_changed_after_it_was_read_ahead_is_decoded_from_the_file(
        tmp_path: Path) -> None:
    """What the file says when the validator reaches it decides, not what was read ahead."""
    path = write_trace(tmp_path / "t.jsonl", valid_events())
    prepared = _read_ahead(path)
    write_trace(path, [call(), result(), answer([claim(citations=[cite(quote="lazy dog")])])])
    validated = _validate(path, prepared)
    assert validated.findings == [] and not validated.answer_read_ahead
    assert [c.quote for c in validated.citations] == ["lazy dog"]


def test_findings_in_an_answer_read_ahead_are_placed_on_its_line(tmp_path: Path) -> None:
    bad = answer([claim(citations=[cite(source_id="nope"), "x", cite(quote=" ")]), 7])
    ahead, _ = _both_ways(write_trace(tmp_path / "t.jsonl", [call(), result(), "", bad]))
    assert [(f.code.code, f.line, f.claim, f.citation) for f in ahead.findings] == [
        ("TC131", 4, 1, 1), ("TC123", 4, 1, 2), ("TC123", 4, 1, 3), ("TC123", 4, 2, None)]


def test_the_last_of_two_claims_keys_counts(cli: Cli, tmp_path: Path) -> None:
    """Read ahead or not, the answer is what JSON says: the last ``claims`` wins."""
    path = tmp_path / "t.jsonl"
    good = json.dumps([claim()])
    bad = json.dumps([claim(citations=[cite(quote="not in the source")])])
    lines = [json.dumps(e) for e in valid_events()[:2]]
    lines.append('{"type": "answer", "run_id": "r1", "claims": ' + bad + ', "claims": ' + good
                 + "}")
    path.write_text("\n".join(lines) + "\n")
    run = cli("check", path, "--evidence", "--json")
    assert (run.exit, run.codes()) == (0, [])


def test_blank_lines_after_the_answer_are_never_held_whole(tmp_path: Path) -> None:
    import tracemalloc

    path = write_trace(tmp_path / "t.jsonl", valid_events())
    with open(path, "ab") as handle:
        handle.write(b" \n" * (10 << 20))  # 20 MiB of blank lines
    tracemalloc.start()
    try:
        prepared = _read_ahead(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert prepared is not None and prepared.draft.quotes == ["quick brown fox"]
    assert peak < 4 << 20, f"peak {peak / 2**20:.1f} MiB"


_VALUES = st.sampled_from([None, 3, 2.5, True, "", " ", [], {}])
_CITATIONS = st.one_of(
    st.fixed_dictionaries({}, optional={
        "source_id": st.sampled_from(["s1", "nope"]) | _VALUES,
        "quote": st.sampled_from(["quick brown", "  quick\n brown ", "zebra"]) | _VALUES,
    }),
    _VALUES,
)
_CLAIMS = st.one_of(
    st.fixed_dictionaries({}, optional={
        "text": st.just("A claim.") | _VALUES,
        "citations": st.lists(_CITATIONS, max_size=4) | _VALUES,
    }),
    _VALUES,
)


@settings(max_examples=150, deadline=None)
@given(fields=st.fixed_dictionaries({"type": st.just("answer")}, optional={
    "run_id": st.just("r1") | _VALUES, "claims": st.lists(_CLAIMS, max_size=4) | _VALUES}))
def test_read_ahead_or_not_the_scan_is_the_same(fields: dict[str, Any]) -> None:
    """Checking an answer's structure first and its sources later finds what one pass finds."""
    with tempfile.TemporaryDirectory() as folder:
        ahead, plain = _both_ways(write_trace(Path(folder) / "t.jsonl",
                                              [call(), result(), fields]))
    assert list(ahead.citations) == list(plain.citations)
    assert ahead.per_claim == plain.per_claim


def test_quote_columns_read_the_answer_line_again(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", [call(), result(), answer([claim(citations=[
        cite(), cite(quote="second")])])])
    data = path.read_bytes()
    offset = data.index(b'{"type": "answer"')
    line = data[offset:].decode()
    assert quote_columns(str(path), offset, {(1, 2)}) == {(1, 2): line.index('"second"') + 1}
    assert quote_columns(str(path), offset, set()) == {}
    # Not the answer any more, or not there: no column rather than a wrong one.
    assert quote_columns(str(path), 0, {(1, 2)}) == {}
    assert quote_columns(str(tmp_path / "gone.jsonl"), offset, {(1, 2)}) == {}
    path.write_bytes(data[:offset] + b"\xff" + data[offset + 1:])
    assert quote_columns(str(path), offset, {(1, 2)}) == {}
