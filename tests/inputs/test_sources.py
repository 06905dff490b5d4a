"""The source spool: ids, URIs and contents kept on disk until the evidence check reads them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracecite.inputs.sources import SourceStore
from tracecite.model import SourceRef


@pytest.fixture
def store() -> Iterator[SourceStore]:
    kept = SourceStore(keep_content=True)
    yield kept
    kept.close()


def test_add_and_read_back(store: SourceStore) -> None:
    store.add("a", "https://a/", "alpha", 2)
    store.add("b", "file:b.txt", "", 3)
    store.add("c", "https://c/", "gamma \u00e9 \ud800", 3)
    assert len(store) == 3
    assert "a" in store and "z" not in store
    assert store.ref("b") == SourceRef("b", "file:b.txt", 3)
    assert store.content("b") == ""
    assert store.content("c") == "gamma \u00e9 \ud800"
    assert store.content("a") == "alpha"


def test_first_id_wins(store: SourceStore) -> None:
    store.add("a", "https://first/", "one", 1)
    store.add("a", "https://second/", "two", 2)
    assert len(store) == 1
    assert store.ref("a") == SourceRef("a", "https://first/", 1)
    assert store.content("a") == "one"


def test_reads_between_adds_do_not_overwrite(store: SourceStore) -> None:
    store.add("a", "u1", "first content", 1)
    assert store.content("a") == "first content"
    store.add("b", "u2", "second", 2)
    assert store.ref("a").uri == "u1"
    store.add("c", "u3", "third", 3)
    assert [store.content(i) for i in ("c", "b", "a")] == ["third", "second", "first content"]


def test_spool_order(store: SourceStore) -> None:
    for n, name in enumerate("dbca"):
        store.add(name, f"u{name}", name * 3, n)
    assert store.in_spool_order({"a", "b", "c"}) == ["b", "c", "a"]
    assert store.in_spool_order(set()) == []


def test_without_content() -> None:
    store = SourceStore(keep_content=False)
    store.add("a", "https://a/", "not kept", 1)
    assert store.ref("a").uri == "https://a/"
    with pytest.raises(RuntimeError):
        store.content("a")
    store.close()
    store.close()  # closing twice is fine


def test_empty_store_closes() -> None:
    store = SourceStore(keep_content=True)
    assert len(store) == 0
    store.close()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=5), st.text(), st.text()), max_size=20))
def test_round_trip(entries: list[tuple[str, str, str]]) -> None:
    store = SourceStore(keep_content=True)
    try:
        expected: dict[str, tuple[str, str, int]] = {}
        for line, (source_id, uri, content) in enumerate(entries, start=1):
            store.add(source_id, uri, content, line)
            expected.setdefault(source_id, (uri, content, line))
        for source_id, (uri, content, line) in expected.items():
            assert store.ref(source_id) == SourceRef(source_id, uri, line)
            assert store.content(source_id) == content
    finally:
        store.close()
