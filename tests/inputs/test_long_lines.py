"""Trace lines too long to hold are read a chunk at a time (docs/guides/traces.md): a tool
result with millions of sources on one line costs one source's memory, and every verdict is the
one the line read whole gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import answer, call, cite, claim, result, source, write_trace
from tests.memory import peak_run
from tracecite.checks.evidence import EvidenceScan, scan_with_evidence
from tracecite.inputs import answer as answer_module
from tracecite.inputs import events, long_lines
from tracecite.inputs import sources as sources_module

MIB = 1 << 20


def sources(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [source(f"s{n}", f"https://example.com/{n}", f"page {n} says 1.5e3 things")
            for n in range(start, start + count)]


def both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[EvidenceScan, EvidenceScan]:
    """The scan with every line read whole, and with lines of 200 bytes or more read in
    chunks of 16 characters (so values straddle chunks)."""
    whole = scan_with_evidence(str(path))
    for module in (events, sources_module, answer_module):
        monkeypatch.setattr(module, "LONG_LINE", 200)
    monkeypatch.setattr(long_lines, "_CHUNK", 16)
    return whole, scan_with_evidence(str(path))


def assert_same(whole: EvidenceScan, chunked: EvidenceScan) -> None:
    assert chunked.scan.findings == whole.scan.findings
    assert chunked.findings == whole.findings
    assert chunked.summary == whole.summary
    assert len(chunked.scan.sources) == len(whole.scan.sources)


CASES: dict[str, list[Any]] = {
    "valid": [call(), result(sources=sources(40)),
              answer([claim(citations=[cite("s3", "page 3 says"), cite("s7", "not there")])])],
    "bad sources": [call(), result(sources=[*sources(10), 7, {"id": "x", "uri": ""},
                                            *sources(10, 10), {"id": "s1", "uri": "u",
                                                               "content": "dup"}]),
                    answer([claim(citations=[cite("s3", "page 3")])])],
    "failed with sources": [call(), result(sources=sources(20), ok=False), answer()],
    "answer not last": [call(), answer([claim(citations=[cite(f"s{n}", f"page {n}")])
                                        for n in range(30)]),
                        result(sources=sources(30))],
    "result last": [call(), answer([claim(citations=[cite(f"s{n}", f"page {n}")])
                                    for n in range(0, 30, 3)]),
                    result(sources=[*sources(30), *sources(5)])],
    "result last, cited twice": [call(), call("c2"), result(sources=sources(30)),
                                 answer([claim(citations=[cite("s4", "page 4 says"),
                                                          cite("s5", "missing")])]),
                                 result("c2", sources=sources(30, 30))],
    "answer cites unknown": [call(), result(sources=sources(12)),
                             answer([claim(citations=[cite("nope", "page")]) for _ in range(9)])],
    "bad json": [call(), json.dumps(result(sources=sources(20)))[:-1] + ",}", answer()],
    "nan": [call(), json.dumps(result(sources=sources(20)))[:-1] + ', "x": NaN}', answer()],
    "extra data": [call(), json.dumps(result(sources=sources(20))) + " {}", answer()],
    "bom": [call(), "\ufeff" + json.dumps(result(sources=sources(20))),
            answer([claim(citations=[cite("s2", "page 2")])])],
    "not an object": [call(), json.dumps([result(sources=sources(20))]), answer()],
    # A lone surrogate (TC123) is refused on a long line as on a short one.
    "lone surrogate in a source": [call(), result(sources=[*sources(10), source(
        "x", "https://example.com/x", "bad \ud800"), *sources(10, 10)]),
        answer([claim(citations=[cite("s3", "page 3")])])],
    "lone surrogate in the answer": [call(), result(sources=sources(20)),
                                     answer([claim(citations=[cite("s3", "page \udfff")])
                                             for _ in range(9)])],
    "lone surrogate in a field": [call(), {**result(sources=sources(20)), "note": "\udbff"},
                                  answer()],
}


@pytest.mark.parametrize("events_", CASES.values(), ids=CASES.keys())
def test_a_long_line_read_in_chunks_gives_the_verdicts_of_the_line_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events_: list[Any]) -> None:
    path = write_trace(tmp_path / "run.trace.jsonl", events_)
    assert_same(*both_ways(path, monkeypatch))


def test_json_keeps_the_last_of_two_sources_keys(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = json.dumps(sources(10))
    line = json.dumps(result(sources=sources(10, 10)))[:-1] + f', "sources": {first}}}'
    path = write_trace(tmp_path / "run.trace.jsonl",
                       [call(), line, answer([claim(citations=[cite("s3", "page 3")])])])
    whole, chunked = both_ways(path, monkeypatch)
    assert_same(whole, chunked)
    assert not chunked.findings  # s3 is in the last sources array


def test_a_line_that_is_not_utf8_is_tc102_either_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = json.dumps(result(sources=sources(20))).encode()[:-2] + b'\xff"}'
    path = write_trace(tmp_path / "run.trace.jsonl", [call(), line, answer()])
    whole, chunked = both_ways(path, monkeypatch)
    assert_same(whole, chunked)
    assert [f.code.code for f in chunked.scan.findings][:1] == ["TC102"]


def sources_on_one_line(path: Path, count: int) -> Path:
    """A trace whose one tool result holds ``count`` sources on one line."""
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(call()) + "\n")
        out.write('{"type": "tool_result", "run_id": "r1", "call_id": "c1", "ok": true, '
                  '"sources": [')
        for n in range(count):
            out.write(("" if n == 0 else ", ") + json.dumps(
                {"id": f"s{n}", "uri": f"https://example.com/{n}",
                 "content": f"the words of page {n}"}))
        out.write("]}\n")
        citations = [cite(f"s{n}", f"page {n}") for n in range(0, count, 1000)]
        out.write(json.dumps(answer([claim(citations=citations)])) + "\n")
    return path


@pytest.mark.slow
def test_sources_on_one_line_cost_one_source_not_the_line(tmp_path: Path) -> None:
    """250,000 sources on one line of 20 MB (docs/guides/scale.md: 2,000,000 within 300 MB):
    read whole, the line was its bytes, its text and every source decoded at once."""
    path = sources_on_one_line(tmp_path / "run.trace.jsonl", 250_000)
    assert path.stat().st_size > 18 * MIB
    run = peak_run("check", path, "--evidence", "--json", cwd=tmp_path)
    assert run.exit == 0, run.err[-500:]
    assert json.loads(run.out)["summary"]["captured"]["matched"] == 250
    assert run.peak_bytes < 80 * MIB, run.peak_bytes


def test_a_long_line_unreadable_at_its_second_reading_is_tc101(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_trace(tmp_path / "run.trace.jsonl",
                       [call(), result(sources=sources(40)), answer()])
    for module in (events, sources_module, answer_module):
        monkeypatch.setattr(module, "LONG_LINE", 200)
    real = events.read_long_line

    def then_changed(handle: Any, offset: int) -> Any:
        event = real(handle, offset)

        def unreadable(*args: Any) -> Any:  # the disk went away before the second reading
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(long_lines, "_Text", unreadable)
        return event

    monkeypatch.setattr(events, "read_long_line", then_changed)
    scan = scan_with_evidence(str(path))
    assert [(f.code.code, f.line) for f in scan.scan.findings][:1] == [("TC101", 2)]
