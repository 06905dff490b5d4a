"""The source index (where each source is) and reading a line's sources again from the file."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracecite.inputs import sources
from tracecite.inputs.sources import IdTable, SourceIndex, TraceChangedError, read_sources_at


@pytest.fixture(params=[sources.SMALL_IDS, 1, 3], ids=["dict", "compact", "dict-then-compact"])
def small_ids(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Id tables made in the test hold up to this many ids in a dict, then the compact form:
    each test of them runs in both forms and across the move from one to the other."""
    monkeypatch.setattr(sources, "SMALL_IDS", request.param)
    limit: int = request.param
    return limit


def _result_line(sources: list[tuple[str, str, str]]) -> bytes:
    event = {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True,
             "sources": [{"id": i, "uri": u, "content": c} for i, u, c in sources]}
    return json.dumps(event).encode() + b"\n"


def _write(path: Path, lines: list[bytes]) -> list[int]:
    offsets, offset = [], 0
    for line in lines:
        offsets.append(offset)
        offset += len(line)
    path.write_bytes(b"".join(lines))
    return offsets


def _read(path: Path, index: SourceIndex, source_id: str) -> tuple[str, str]:
    with path.open("rb") as handle:
        return read_sources_at(handle, index.offset(source_id))[source_id]


def test_index_reads_sources_back(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    offsets = _write(path, [b'{"type":"x"}\n',
                            _result_line([("a", "https://a/", "alpha"), ("b", "file:b", "")]),
                            _result_line([("c", "https://c/", "gamma \u00e9 \U0001f600")])])
    index = SourceIndex()
    index.add("a", offsets[1])
    index.add("b", offsets[1])
    index.add("c", offsets[2])
    index.add("a", offsets[2])  # the first one with an id wins
    assert len(index) == 3 and "a" in index and "z" not in index
    assert _read(path, index, "b") == ("file:b", "")
    assert _read(path, index, "c") == ("https://c/", "gamma \u00e9 \U0001f600")
    assert _read(path, index, "a") == ("https://a/", "alpha")
    assert index.offset("a") == offsets[1]


def test_a_line_holds_all_its_sources_the_first_of_an_id_counting(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _write(path, [_result_line([("a", "u1", "x"), ("b", "u2", "y"), ("a", "u3", "z")])])
    with path.open("rb") as handle:
        assert read_sources_at(handle, 0) == {"a": ("u1", "x"), "b": ("u2", "y")}


def test_a_changed_file_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    _write(path, [_result_line([("a", "u", "x")])])
    path.write_bytes(b"not json any more\n")
    with path.open("rb") as handle, pytest.raises(TraceChangedError):
        read_sources_at(handle, 0)


def test_a_source_not_captured_is_read_back_without_content(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"sources": [{"id": "a", "uri": "u", "content": null},'
                     b' {"id": "b", "uri": "v", "content": "x"}]}\n')
    with path.open("rb") as handle:
        assert read_sources_at(handle, 0) == {"a": ("u", None), "b": ("v", "x")}


@pytest.mark.parametrize("line", [
    b"{}\n", b"[]\n", b'{"sources": 3}\n', b'{"sources": [{"id": 1, "uri": "u", "content": ""}]}\n',
    b'{"sources": [{"id": "a", "uri": "u", "content": 5}]}\n',
    b'{"sources": [{"id": "a", "uri": "u", "content": [null]}]}\n',
    b'{"sources": [{"id": "a", "uri": "u"}]}\n', b"\xff\n", b"",
])
def test_read_sources_at_refuses_lines_that_are_not_results(tmp_path: Path, line: bytes) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(line)
    with path.open("rb") as handle, pytest.raises(TraceChangedError):
        read_sources_at(handle, 0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=5), st.text(), st.text()), min_size=1, max_size=8))
def test_round_trip(entries: list[tuple[str, str, str]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        offsets = _write(path, [_result_line([e]) for e in entries])
        index = SourceIndex()
        expected: dict[str, tuple[str, str]] = {}
        for (source_id, uri, content), offset in zip(entries, offsets, strict=True):
            index.add(source_id, offset)
            expected.setdefault(source_id, (uri, content))
        for source_id, (uri, content) in expected.items():
            assert _read(path, index, source_id) == (uri, content)


def test_an_index_of_many_sources_finds_each_and_no_other(small_ids: int) -> None:
    index = SourceIndex()
    for n in range(5000):
        assert index.add(f"s{n}", 10 * n)
    assert not index.add("s17", 1)  # the first one with an id wins
    assert len(index) == 5000
    assert [index.offset(f"s{n}") for n in (0, 17, 4999)] == [0, 170, 49990]
    assert "s5000" not in index and "" not in index
    with pytest.raises(KeyError):
        index.offset("s5000")


def test_ids_whose_hashes_collide_stay_apart(monkeypatch: pytest.MonkeyPatch,
                                            small_ids: int) -> None:
    monkeypatch.setattr(sources, "hash", lambda key: 7, raising=False)
    table = IdTable()
    assert [table.add(k) for k in ("a", "b", "a", "c\ud800", "b")] == [
        True, True, False, True, False]
    assert [table.number(k) for k in ("a", "b", "c\ud800", "d")] == [0, 1, 2, -1]


def test_an_index_is_the_same_in_another_process() -> None:
    """String hashes differ between processes: an unpickled index hashes its ids again."""
    import pickle
    import subprocess
    import sys

    script = ("import pickle, sys\nfrom tracecite.inputs.sources import SourceIndex\n"
              "index = SourceIndex()\n"
              "for n in range(300):\n    index.add(f'id-{n}-\\u00e9', n)\n"
              "sys.stdout.buffer.write(pickle.dumps(index))\n")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True,
                          env=env)
    index = pickle.loads(done.stdout)
    assert len(index) == 300
    assert [index.offset(f"id-{n}-\u00e9") for n in (0, 150, 299)] == [0, 150, 299]
    assert "id-300-\u00e9" not in index
    assert index.add("id-300-\u00e9", 300) and not index.add("id-7-\u00e9", 1)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=4), max_size=200))
def test_an_id_table_is_a_set_numbered_in_order(small_ids: int, keys: list[str]) -> None:
    table = IdTable()
    firsts = list(dict.fromkeys(keys))
    assert [table.add(k) for k in keys] == [
        k not in keys[:i] for i, k in enumerate(keys)]
    assert [table.number(k) for k in firsts] == list(range(len(firsts)))
    assert len(table) == len(firsts) and list(table) == firsts
    again = pickle.loads(pickle.dumps(table))
    assert list(again) == firsts and len(again) == len(firsts)
    assert [again.number(k) for k in firsts] == list(range(len(firsts)))
    assert again.add("\ud800 new") and again.number("\ud800 new") == len(firsts)
    wanted = [*keys[::2], "\ud800 absent", "", *keys[1::3]]
    assert table.missing(wanted) == {k for k, key in enumerate(wanted) if table.number(key) < 0}


def test_an_index_tells_which_ids_it_lacks(monkeypatch: pytest.MonkeyPatch,
                                           small_ids: int) -> None:
    monkeypatch.setattr(sources, "hash", lambda key: len(key), raising=False)  # collisions
    index = SourceIndex()
    for n in range(40):
        index.add(f"s{n}", n)
    assert index.unknown(["s1", "t1", "s39", "s40", "s1", "", "s3"]) == {1, 3, 5}
    assert index.unknown([]) == set()


def test_an_id_table_moves_to_the_compact_form_at_its_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "SMALL_IDS", 4)
    table = IdTable()
    for n in range(3):
        table.add(f"k{n}")
    assert table._small is not None  # three ids: still a dict
    table.add("k3")
    assert table._small is None and bytes(table._ids) == b"k0k1k2k3"
    assert [table.number(f"k{n}") for n in range(5)] == [0, 1, 2, 3, -1]
