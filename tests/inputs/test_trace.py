"""The trace reader: one entry point that owns the file, the answer read ahead from the last
line, the second pass over the cited lines, the quote tester it drives, and streaming memory."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import answer, call, cite, claim, result, source, write_trace
from tracecite.findings import Finding
from tracecite.inputs import trace
from tracecite.inputs.sources import read_sources_at
from tracecite.inputs.trace import QuoteTester, quotes_by_source, read_trace, scan_trace


@dataclass
class Recorder:
    """A quote tester that records what the reader asks of it and waits for what it is told.

    ``on_wait(n)`` runs at the start of the n-th ``wait_for`` (1-based); ``fail_on`` is a source
    id whose test raises, as a broken check would."""

    calls: list[tuple[Any, ...]] = field(default_factory=list)
    wanted: dict[str, tuple[str, ...]] = field(default_factory=dict)
    on_wait: Callable[[int], object] | None = None
    fail_on: str | None = None

    def wait_for(self, quotes: dict[str, tuple[str, ...]]) -> None:
        self.calls.append(("wait_for", dict(quotes)))
        if self.on_wait is not None:
            self.on_wait(sum(1 for c in self.calls if c[0] == "wait_for"))
        self.wanted = quotes

    def test(self, source_id: str, uri: str, content: str | None) -> None:
        self.calls.append(("test", source_id, uri, content))
        if source_id == self.fail_on:
            raise RuntimeError("a bug in the check")
        self.wanted.pop(source_id, None)

    @property
    def waiting(self) -> bool:
        return bool(self.wanted)

    def tested(self) -> list[str]:
        """The ids handed to :meth:`test`, in order."""
        return [c[1] for c in self.calls if c[0] == "test"]

    def waits(self) -> list[dict[str, tuple[str, ...]]]:
        """What each ``wait_for`` was given."""
        return [c[1] for c in self.calls if c[0] == "wait_for"]


def _fd_count() -> int | None:
    """Open file descriptors of this process (Linux), or None where that is not known."""
    folder = "/proc/self/fd"
    return len(os.listdir(folder)) if os.path.isdir(folder) else None


@dataclass
class Opened:
    """Every handle the reader got from ``open_input``, and the descriptors open before."""

    handles: list[BinaryIO]
    fds_before: int | None

    def all_closed(self) -> bool:
        """Whether every handle the reader opened is closed and no descriptor is left open."""
        return all(h.closed for h in self.handles) and _fd_count() == self.fds_before


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Opened:
    """A test double around the reader's ``open_input`` that keeps each handle it returns."""
    record = Opened([], _fd_count())
    original = trace.open_input

    def recording(path: str, **options: Any) -> BinaryIO | Finding:
        got = original(path, **options)
        if not isinstance(got, Finding):
            record.handles.append(got)
        return got

    monkeypatch.setattr(trace, "open_input", recording)
    return record


def _events() -> list[Any]:
    """Three results (the second one uncited), the answer citing the first and third."""
    return [call(), result(sources=[source("a", "https://a/", "alpha beta"),
                                    source("b", "https://b/", "gamma")]),
            call("c2"), result("c2", sources=[source("u", "https://u/", "uncited")]),
            call("c3"), result("c3", sources=[source("d", "https://d/", "delta")]),
            answer([claim(citations=[cite("d", "delta"), cite("a", "alpha"), cite("b", "gamma")]),
                    claim(citations=[cite("a", "beta"), cite("a", "alpha")])])]


DONE = {"type": "done", "run_id": "r1"}
WANTED = {"d": ("delta",), "a": ("alpha", "beta"), "b": ("gamma",)}


def _line_offsets(path: Path) -> list[int]:
    lines = path.read_bytes().splitlines(keepends=True)
    return [sum(len(line) for line in lines[:k]) for k in range(len(lines))]


# ---- the quote tester: what the reader asks of it ---------------------------------------------

def test_with_the_answer_last_the_tester_sees_every_source_as_it_streams_by(
        tmp_path: Path, opened: Opened, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_trace(tmp_path / "t.jsonl", _events())
    reads: list[int] = []
    monkeypatch.setattr(trace, "read_sources_at", lambda h, o, w=None: reads.append(o) or {})
    tester = Recorder()
    scanned = read_trace(str(path), tester=tester)
    assert scanned.valid and scanned.answer_read_ahead and scanned.reread_error is None
    # Told what to expect before any source went by, then handed every source once, in order.
    assert tester.calls[0] == ("wait_for", WANTED)
    assert tester.tested() == ["a", "b", "u", "d"]
    assert tester.calls[1] == ("test", "a", "https://a/", "alpha beta")
    assert not tester.waiting
    assert reads == []  # no second pass
    assert len(opened.handles) == 1 and opened.all_closed()


def test_with_the_answer_last_each_line_is_decoded_once(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.inputs import answer as answer_module
    from tracecite.inputs import events

    path = write_trace(tmp_path / "t.jsonl", _events())
    decoded: list[str] = []
    loads, visit = events.loads, answer_module.visit_claims
    fast = events.fast_loads
    if fast(b"{}") is events.REFUSED:
        monkeypatch.setattr(events, "loads", lambda line: decoded.append("line") or loads(line))
    else:  # the fast extra's decoder takes every line here
        monkeypatch.setattr(events, "fast_loads", lambda raw: decoded.append("line") or fast(raw))
    monkeypatch.setattr(answer_module, "visit_claims",
                        lambda text, see: decoded.append("answer") or visit(text, see))
    scanned = read_trace(str(path), tester=Recorder())
    assert scanned.valid and scanned.answer_read_ahead
    assert decoded == ["answer"] + ["line"] * 6


def test_the_second_pass_when_the_answer_is_not_last(tmp_path: Path, opened: Opened,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The cited lines are read again after the validating pass, each once, in file order;
    the uncited one is not read."""
    path = write_trace(tmp_path / "t.jsonl", [*_events(), DONE, ""])
    reads: list[int] = []

    def counted(handle: BinaryIO, offset: int, wanted: Any = None
                ) -> dict[str, tuple[str, str | None]]:
        reads.append(offset)
        return read_sources_at(handle, offset, wanted)

    monkeypatch.setattr(trace, "read_sources_at", counted)
    tester = Recorder()
    scanned = read_trace(str(path), tester=tester)
    assert scanned.valid and not scanned.answer_read_ahead and scanned.reread_error is None
    assert tester.waits() == [WANTED]  # asked only once the answer was known
    assert tester.calls[0][0] == "wait_for"
    assert tester.tested() == ["a", "b", "d"]
    offsets = _line_offsets(path)
    assert reads == [offsets[1], offsets[5]]
    assert len(opened.handles) == 2 and opened.all_closed()


def test_a_trace_that_is_not_valid_gets_no_second_pass(tmp_path: Path, opened: Opened) -> None:
    path = write_trace(tmp_path / "t.jsonl", [call(), *_events(), DONE])  # call c1 twice
    tester = Recorder()
    scanned = read_trace(str(path), tester=tester)
    assert [f.code.code for f in scanned.findings] == ["TC125"]
    assert tester.calls == []
    assert len(opened.handles) == 1 and opened.all_closed()


def test_without_a_tester_nothing_is_read_ahead_or_again(tmp_path: Path, opened: Opened,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_trace(tmp_path / "t.jsonl", _events())
    monkeypatch.setattr(trace, "read_final_answer", lambda *a: pytest.fail("read ahead"))
    seen: list[str] = []
    scanned = scan_trace(str(path), sink=lambda source_id, *_: seen.append(source_id))
    assert scanned.valid and not scanned.answer_read_ahead
    assert seen == ["a", "b", "u", "d"]
    assert len(opened.handles) == 1 and opened.all_closed()


def test_a_tester_and_a_sink_both_see_the_sources(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", _events())
    seen: list[str] = []
    tester = Recorder()
    read_trace(str(path), tester=tester, sink=lambda source_id, *_: seen.append(source_id))
    assert seen == tester.tested() == ["a", "b", "u", "d"]


@pytest.mark.parametrize("last", [True, False], ids=["answer-last", "answer-not-last"])
def test_a_source_not_captured_is_handed_to_the_tester_without_content(tmp_path: Path,
                                                                       last: bool) -> None:
    events = [call(), result(sources=[source("a", "https://a/", None),
                                      source("b", "https://b/", "gamma")]),
              answer([claim(citations=[cite("a", "alpha"), cite("b", "gamma")])])]
    path = write_trace(tmp_path / "t.jsonl", events if last else [*events, DONE])
    tester = Recorder()
    scanned = read_trace(str(path), tester=tester)
    assert scanned.valid and scanned.answer_read_ahead is last
    assert [c for c in tester.calls if c[0] == "test"] == [
        ("test", "a", "https://a/", None), ("test", "b", "https://b/", "gamma")]
    assert not tester.waiting


def test_an_answer_changed_after_it_was_read_ahead_is_tested_again(tmp_path: Path,
                                                                   opened: Opened) -> None:
    """The last line changed between the read-ahead and the validating pass: the tester starts
    over with the answer the file holds now, and the cited lines are read again."""
    big = source("a", "https://a/", "alpha " + "x" * 300_000)  # past any read buffer
    head = [call(), result(sources=[big, source("b", "https://b/", "gamma")])]
    path = write_trace(tmp_path / "t.jsonl",
                       [*head, answer([claim(citations=[cite("a", "alpha")])])])
    changed = [*head, answer([claim(citations=[cite("b", "gamma")])])]
    tester = Recorder(on_wait=lambda n: n == 1 and write_trace(path, changed))
    scanned = read_trace(str(path), tester=tester)
    assert scanned.valid and not scanned.answer_read_ahead and scanned.reread_error is None
    assert tester.waits() == [{"a": ("alpha",)}, {"b": ("gamma",)}]
    assert [c.quote for c in scanned.citations] == ["gamma"]
    assert not tester.waiting
    assert len(opened.handles) == 2 and opened.all_closed()


# ---- the reader closes what it opens, on every path --------------------------------------------

@pytest.mark.parametrize("damage", ["not-json", "source-gone", "removed"])
def test_a_trace_changed_between_passes(tmp_path: Path, opened: Opened, damage: str) -> None:
    """Rewritten (or removed) after it was validated, before the cited lines are read again:
    one TC101 for the tester, and nothing left open."""
    path = write_trace(tmp_path / "t.jsonl", [*_events(), DONE])

    def change(_: int) -> None:
        if damage == "not-json":
            path.write_text("{}\n" * 10)
        elif damage == "source-gone":  # the lines are still results, but "d" is not there
            text = path.read_text().replace('"id": "d"', '"id": "e"')
            path.write_text(text)
        else:
            path.unlink()

    scanned = read_trace(str(path), tester=Recorder(on_wait=change))
    assert scanned.valid
    assert scanned.reread_error is not None
    assert (scanned.reread_error.code.code, scanned.reread_error.file) == ("TC101", str(path))
    assert len(opened.handles) == (1 if damage == "removed" else 2)
    assert opened.all_closed()


@pytest.mark.parametrize("what", ["missing", "directory"])
def test_an_input_that_cannot_be_opened(tmp_path: Path, opened: Opened, what: str) -> None:
    path = tmp_path / "t.jsonl"
    if what == "directory":
        path.mkdir()
    tester = Recorder()
    scanned = read_trace(str(path), tester=tester)
    assert [f.code.code for f in scanned.findings] == ["TC101"]
    assert tester.calls == [] and opened.handles == [] and opened.all_closed()


class _Failing:
    """A trace handle whose reads fail after ``lines`` lines, as a disk that goes away."""

    def __init__(self, handle: BinaryIO, lines: int) -> None:
        self._handle = handle
        self._lines = lines

    def readline(self, size: int = -1) -> bytes:
        if self._lines == 0:
            raise OSError(5, "Input/output error")
        self._lines -= 1
        return self._handle.readline(size)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _Failing:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


@pytest.mark.parametrize("last", [True, False], ids=["answer-last", "answer-not-last"])
def test_a_read_that_fails_midway(tmp_path: Path, opened: Opened,
                                  monkeypatch: pytest.MonkeyPatch, last: bool) -> None:
    path = write_trace(tmp_path / "t.jsonl", _events() if last else [*_events(), DONE])
    real = trace.open_input  # the recording double

    def failing(name: str, **options: Any) -> Any:
        got = real(name, **options)
        return got if isinstance(got, Finding) else _Failing(got, 2)

    monkeypatch.setattr(trace, "open_input", failing)
    tester = Recorder()
    scanned = read_trace(str(path), tester=tester)
    assert [(f.code.code, f.line) for f in scanned.findings] == [("TC101", 2)]
    assert scanned.reread_error is None  # the trace is not valid: no second pass
    assert len(opened.handles) == 1 and opened.all_closed()


@pytest.mark.parametrize("last", [True, False], ids=["answer-last", "answer-not-last"])
def test_an_error_in_the_tester_still_closes_the_files(tmp_path: Path, opened: Opened,
                                                       last: bool) -> None:
    path = write_trace(tmp_path / "t.jsonl", _events() if last else [*_events(), DONE])
    with pytest.raises(RuntimeError):
        read_trace(str(path), tester=Recorder(fail_on="b"))
    assert len(opened.handles) == (1 if last else 2)
    assert opened.all_closed()


def test_quotes_by_source() -> None:
    cited = [("a", "x"), ("b", None), ("a", "y"), ("a", "x"), ("c", "z"), ("b", "w")]
    assert quotes_by_source(cited) == {"a": ("x", "y"), "c": ("z",), "b": ("w",)}
    assert quotes_by_source([("a", None)]) == {}


@given(st.lists(st.tuples(st.sampled_from("abc"), st.none() | st.integers(0, 12).map(str)),
                max_size=60))
def test_quotes_by_source_are_each_sources_distinct_quotes_in_order(
        cited: list[tuple[str, str | None]]) -> None:
    expected: dict[str, list[str]] = {}
    for source_id, quote in cited:
        if quote is not None and quote not in expected.setdefault(source_id, []):
            expected[source_id].append(quote)
    assert quotes_by_source(cited) == {
        source_id: tuple(quotes) for source_id, quotes in expected.items() if quotes}


def test_the_evidence_tester_is_a_quote_tester() -> None:
    from tracecite.checks.evidence import _QuoteTester

    tester: QuoteTester = _QuoteTester(keep_uris=False)
    assert not tester.waiting
    tester.wait_for({"s1": ("quick",)})
    assert tester.waiting
    tester.test("s1", "https://example.com/a", "the quick fox")
    assert not tester.waiting


# ---- streaming --------------------------------------------------------------------------------

def _big_trace(path: Path, megabytes: int, *, after_answer: bool = False) -> int:
    """Write a trace of about ``megabytes`` MB: many results with 8 KB sources; the answer cites
    every 50th result, and every seventh of those quotes is not in its source."""
    filler = ("lorem ipsum dolor sit amet, caf\u00e9 na\u00efve \u00a0 " * 200)[:8000]
    target = megabytes * 1024 * 1024
    written = 0
    n = 0
    with path.open("w", encoding="utf-8") as out:
        while written < target:
            sources = [{"id": f"s{n}-{k}", "uri": f"https://example.com/{n}/{k}",
                        "content": f"{n} {k} {filler}"} for k in range(4)]
            lines = (json.dumps(call(f"c{n}")) + "\n"
                     + json.dumps(result(f"c{n}", sources=sources), ensure_ascii=False) + "\n")
            out.write(lines)
            written += len(lines.encode())
            n += 1
        claims = [claim(citations=[cite(f"s{i}-1", f"{i} 1 lorem ipsum" if i % 7 else "absent")])
                  for i in range(0, n, 50)]
        out.write(json.dumps(answer(claims)) + "\n")
        if after_answer:
            out.write(json.dumps({"type": "end", "run_id": "r1"}) + "\n")
    return n


@pytest.fixture(scope="module")
def big_traces(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """Two traces of more than 60 MB: the answer last, and the answer followed by an event."""
    folder = tmp_path_factory.mktemp("big")
    last, not_last = folder / "last.jsonl", folder / "not-last.jsonl"
    results = _big_trace(last, 60)
    _big_trace(not_last, 60, after_answer=True)
    assert last.stat().st_size > 60 * 1024 * 1024
    return last, not_last, results


def _peak(run: Any) -> tuple[Any, int, float]:
    """Run ``run()`` and return its result, peak traced memory and seconds."""
    started = time.monotonic()
    tracemalloc.start()
    try:
        value = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak, time.monotonic() - started


def test_streaming_memory(big_traces: tuple[Path, Path, int]) -> None:
    path, _, results = big_traces
    scanned, peak, elapsed = _peak(lambda: scan_trace(str(path)))
    assert scanned.findings == ()
    assert len(scanned.sources) == results * 4
    last = f"s{results - 1}-3"
    with path.open("rb") as handle:
        _, content = read_sources_at(handle, scanned.sources.offset(last))[last]
    assert content.startswith(f"{results - 1} 3 lorem")
    assert peak < 20 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
    assert elapsed < 30, f"{elapsed:.1f} s"


@pytest.mark.parametrize("which", [0, 1], ids=["answer-last", "answer-not-last"])
def test_evidence_memory(big_traces: tuple[Path, Path, int], which: int) -> None:
    """``check --evidence`` on a large trace, in one pass or in two: memory stays small."""
    from tracecite.checks.evidence import scan_with_evidence

    path, results = big_traces[which], big_traces[2]
    checked, peak, elapsed = _peak(lambda: scan_with_evidence(str(path)))
    cited = range(0, results, 50)
    assert checked.scan.findings == ()
    assert checked.summary.checked == len(cited)
    assert checked.summary.not_found == sum(1 for i in cited if i % 7 == 0)
    assert {f.code.code for f in checked.findings} == {"TC202"}
    assert peak < 20 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
    assert elapsed < 30, f"{elapsed:.1f} s"
