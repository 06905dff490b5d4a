"""The cache file (docs/web-over-time.md#the-cache, docs/web-over-time.md#flaky-sources) on its own:
what it keeps, when it answers, its problems."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from tracecite import cache as cache_module
from tracecite.cache import APPLICATION_ID, SqliteCache, is_flaky
from tracecite.checks.live.records import Fetched
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.findings import Diagnosis
from tracecite.matching import digest

URL = "https://example.org/a"
MISS = Diagnosis(("case", "typography"), quote_chars=2,
                 characters=("U+2019 RIGHT SINGLE QUOTATION MARK",))
"""A quote not found, with its diagnosis (which the cache keeps with the verdict)."""
PAGE = Fetched(200, None, '"v1"', "Mon, 30 Nov 2026 10:00:00 GMT", "a" * 64)


class Clock:
    """A settable time.time()."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def open_cache(path: Path, clock: Clock | None = None, *, max_age: float = 3600,
               fail_after: int = 1) -> SqliteCache:
    return SqliteCache(str(path), max_age=max_age, fail_after=fail_after,
                       now=clock or Clock())


def test_a_missing_file_is_created_marked_as_ours(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = open_cache(path)
    cache.close()
    assert cache.warnings == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"pages", "verdicts", "failures"}


def test_verdicts_are_fresh_then_revalidated_with_the_validators(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "c.sqlite"
    first = open_cache(path, clock)
    assert first.recall(URL, ["q1", "q2"]) is None
    first.remember(URL, PAGE, ["q1", "q2"], [True, MISS])
    first.close()

    second = open_cache(path, clock)
    fresh = second.recall(URL, ["q2", "q1"])
    assert fresh is not None and fresh.validators is None
    assert fresh.verdicts == (MISS, True)  # in the order asked, the miss with its diagnosis
    assert second.recall(URL, ["q1", "q3"]) is None  # a quote never matched needs the page
    # The quote's normalised form is what counts.
    assert second.recall(URL, [" q1\u00a0"]) is not None
    clock.now += 3600
    old = second.recall(URL, ["q1"])
    assert old is not None and old.validators == {
        "If-None-Match": '"v1"', "If-Modified-Since": "Mon, 30 Nov 2026 10:00:00 GMT"}
    second.close()


def test_an_old_entry_without_validators_is_fetched_again(tmp_path: Path) -> None:
    clock = Clock()
    cache = open_cache(tmp_path / "c.sqlite", clock)
    cache.remember(URL, Fetched(200, None, None, None, "b" * 64), ["q"], [True])
    cache.close()
    cache = open_cache(tmp_path / "c.sqlite", clock)
    assert cache.recall(URL, ["q"]) is not None
    clock.now += 7200
    assert cache.recall(URL, ["q"]) is None
    cache.close()


def test_a_304_keeps_the_verdicts_fresh_and_a_changed_page_drops_them(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "c.sqlite"
    cache = open_cache(path, clock)
    cache.remember(URL, PAGE, ["q1"], [True])
    cache.close()
    clock.now += 7200
    cache = open_cache(path, clock)
    cache.revalidated(URL, Fetched(304, None, '"v2"', None, ""))
    cache.close()
    cache = open_cache(path, clock)
    kept = cache.recall(URL, ["q1"])
    assert kept is not None and kept.validators is None and kept.verdicts == (True,)
    # The same text adds verdicts; another text replaces them.
    cache.remember(URL, PAGE, ["q2"], [MISS])
    cache.close()
    cache = open_cache(path, clock)
    assert cache.recall(URL, ["q1", "q2"]) is not None
    cache.remember(URL, Fetched(200, None, None, None, "c" * 64), ["q2"], [True])
    cache.close()
    cache = open_cache(path, clock)
    assert cache.recall(URL, ["q1"]) is None
    assert cache.recall(URL, ["q2"]) is not None
    cache.close()


def test_a_304_takes_the_new_validators_and_loads_in_one_run_count_in_order(
        tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "c.sqlite"
    cache = open_cache(path, clock)
    cache.remember(URL, PAGE, ["q1"], [True])
    cache.remember("https://example.org/gone", PAGE, ["q1"], [True])
    cache.close()
    clock.now += 7200
    cache = open_cache(path, clock)
    cache.revalidated(URL, Fetched(304, None, '"v2"', None, ""))
    cache.revalidated("https://example.org/never-stored", Fetched(304, None, '"v9"', None, ""))
    # Loads of one page in a run count in their order: a new text, then a 304 that keeps it.
    cache.remember("https://example.org/gone", Fetched(200, None, None, None, "d" * 64),
                   ["q2"], [MISS])
    cache.revalidated("https://example.org/gone", Fetched(304, None, None, None, ""))
    cache.close()
    clock.now += 3600
    cache = open_cache(path, clock)
    old = cache.recall(URL, ["q1"])
    assert old is not None and old.validators == {
        "If-None-Match": '"v2"', "If-Modified-Since": "Mon, 30 Nov 2026 10:00:00 GMT"}
    assert cache.recall("https://example.org/never-stored", ["q1"]) is None
    cache.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT text_sha256 FROM pages WHERE uri = ?",
                      ("https://example.org/gone",)).fetchall() == [("d" * 64,)]
    assert db.execute("SELECT quote_sha256, found FROM verdicts WHERE uri = ?",
                      ("https://example.org/gone",)).fetchall() == [(digest("q2"), 0)]
    db.close()
    assert cache.warnings == []


def test_what_a_run_learns_waits_on_disk_not_in_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracemalloc

    monkeypatch.setattr(cache_module, "CHUNK_SIZE", 2048)
    pages, quotes = 300, 100

    def verdicts(page: int) -> list[bool | Diagnosis]:
        return [True if (page + n) % 3 else MISS if n % 2 else False for n in range(quotes)]

    cache = open_cache(tmp_path / "c.sqlite")
    cache.failed("https://example.org/0", FetchError(Code.TIMEOUT, "x"))  # then loaded: fine
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for page in range(pages):
            texts = [f"quote {page} {n}" for n in range(quotes)]
            cache.remember(f"https://example.org/{page}", PAGE, texts, verdicts(page))
            del texts
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # 30,000 verdicts held as Python objects took 4.4 MB; in chunks, one chunk at most.
    assert held < 512 * 1024
    cache.failed("https://example.org/down", FetchError(Code.TIMEOUT, "x"))
    cache.close()
    assert cache.warnings == []
    cache = open_cache(tmp_path / "c.sqlite")
    for page in (0, 1, 150, pages - 1):  # the first chunk, a middle one, the one in memory
        texts = [f"quote {page} {n}" for n in range(quotes)]
        hits = [n for n, v in enumerate(verdicts(page)) if v is not False]
        got = cache.recall(f"https://example.org/{page}", [texts[n] for n in hits])
        assert got is not None and got.verdicts == tuple(verdicts(page)[n] for n in hits)
        # A miss without a diagnosis needs the page again.
        assert cache.recall(f"https://example.org/{page}", texts) is None
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert db.execute("SELECT count(*) FROM verdicts").fetchone()[0] == pages * quotes
    assert db.execute("SELECT uri, count FROM failures").fetchall() == [
        ("https://example.org/down", 1)]
    db.close()
    cache.close()


def test_failures_and_304s_alone_are_staged_too(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of failing or unchanged sources, no quote learnt: memory is bounded as well."""
    clock = Clock()
    path = tmp_path / "c.sqlite"
    cache = open_cache(path, clock)
    for n in range(10):
        cache.remember(f"https://example.org/kept/{n}", PAGE, ["q"], [True])
    cache.close()
    monkeypatch.setattr(cache_module, "CHUNK_SIZE", 8)
    cache = open_cache(path, clock, fail_after=3)
    assert [cache.failed(f"https://down.example/{n}", FetchError(Code.TIMEOUT, "x"))
            for n in range(100)] == [(1, 3)] * 100
    for n in range(10):
        cache.revalidated(f"https://example.org/kept/{n}", Fetched(304, None, '"v3"', None, ""))
    cache.close()
    assert cache.warnings == []
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*), min(count), max(count) FROM failures").fetchone() == (
        100, 1, 1)
    assert {etag for (etag,) in db.execute("SELECT etag FROM pages")} == {'"v3"'}
    db.close()


def test_a_quote_cited_twice_on_a_page_is_kept_once(tmp_path: Path) -> None:
    cache = open_cache(tmp_path / "c.sqlite")
    cache.remember(URL, PAGE, ["q", "q1", "q", " q\u00a0"], [True, MISS, True, True])
    cache.close()
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert sorted(db.execute("SELECT quote_sha256, found FROM verdicts")) == sorted(
        [(digest("q"), 1), (digest("q1"), 0)])
    db.close()


def test_a_staging_failure_is_a_warning_and_the_file_is_left_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.sqlite"
    cache = open_cache(path)
    cache.remember(URL, PAGE, ["q"], [True])
    cache.close()

    monkeypatch.setattr(cache_module, "CHUNK_SIZE", 2)
    monkeypatch.setattr(cache_module._Chunk, "encoded", lambda self: ("a row", "too short"))
    cache = open_cache(path)
    cache.remember("https://example.org/b", PAGE, ["q1", "q2"], [True, True])
    assert cache.failed(URL, FetchError(Code.TIMEOUT, "x")) is None  # the cache is off now
    cache.close()
    assert [w.code for w in cache.warnings] == [Code.CACHE_UNUSABLE]
    assert "cannot stage what this run learns" in cache.warnings[0].message
    db = sqlite3.connect(path)
    assert db.execute("SELECT uri FROM pages").fetchall() == [(URL,)]
    assert db.execute("SELECT count(*) FROM failures").fetchone()[0] == 0
    db.close()


def test_the_key_is_the_stable_uri(tmp_path: Path) -> None:
    cache = open_cache(tmp_path / "c.sqlite")
    cache.remember("HTTPS://Example.ORG:443/%7ea#frag", PAGE, ["q"], [True])
    cache.close()
    cache = open_cache(tmp_path / "c.sqlite")
    assert cache.recall("https://example.org/~a", ["q"]) is not None
    cache.close()


@pytest.mark.parametrize(("error", "flaky"), [
    (FetchError(Code.DNS_FAILURE, "x"), True), (FetchError(Code.CONNECT_FAILED, "x"), True),
    (FetchError(Code.TLS_FAILED, "x"), True), (FetchError(Code.TIMEOUT, "x"), True),
    (FetchError(Code.SOURCE_BLOCKED, "x", status=403), True),
    (FetchError(Code.HTTP_STATUS, "x", status=429), True),
    (FetchError(Code.HTTP_STATUS, "x", status=503), True),
    (FetchError(Code.HTTP_STATUS, "x", status=404), False),
    (FetchError(Code.TOO_LARGE, "x"), False), (FetchError(Code.ADDRESS_REFUSED, "x"), False),
    (FetchError(Code.PARSE_LIMIT, "x"), False),
])
def test_which_failures_are_flaky(error: FetchError, flaky: bool) -> None:
    assert is_flaky(error) is flaky


def test_failures_count_consecutive_runs_and_a_success_resets(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    down = FetchError(Code.HTTP_STATUS, "HTTP status 503", status=503)

    def run(outcome: FetchError | None) -> tuple[int, int] | None:
        cache = open_cache(path, fail_after=3)
        try:
            if outcome is None:
                cache.remember(URL, PAGE, ["q"], [True])
                return None
            return cache.failed(URL, outcome)
        finally:
            cache.close()

    assert [run(down), run(down), run(down)] == [(1, 3), (2, 3), (3, 3)]
    run(None)
    assert run(down) == (1, 3)
    assert run(FetchError(Code.HTTP_STATUS, "gone", status=404)) is None  # never deferred
    assert run(down) == (1, 3)  # ... and it broke the run of failures


def _warning(cache: SqliteCache) -> str:
    assert [f.code for f in cache.warnings] == [Code.CACHE_UNUSABLE]
    return cache.warnings[0].message


def test_a_file_that_is_not_sqlite_is_a_warning_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"not a database at all\n" * 100)
    cache = open_cache(path)
    assert "corrupt or not SQLite" in _warning(cache)
    assert cache.recall(URL, ["q"]) is None
    cache.remember(URL, PAGE, ["q"], [True])
    assert cache.failed(URL, FetchError(Code.TIMEOUT, "x")) is None  # no history: no deferral
    cache.close()
    assert path.read_bytes() == b"not a database at all\n" * 100
    assert len(cache.warnings) == 1


def test_another_applications_database_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE accounts (id INTEGER)")
    db.commit()
    db.close()
    assert "another application" in _warning(open_cache(path))
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 42")
    db.execute("DROP TABLE accounts")
    db.commit()
    db.close()
    assert "another application" in _warning(open_cache(path))


def test_another_schema_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    open_cache(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    assert "schema 99" in _warning(open_cache(path))


SCHEMA_1 = """
CREATE TABLE pages (
    uri TEXT PRIMARY KEY, fetched_at REAL NOT NULL, final_url TEXT, status INTEGER NOT NULL,
    etag TEXT, last_modified TEXT, text_sha256 TEXT NOT NULL);
CREATE TABLE verdicts (
    uri TEXT NOT NULL, quote_sha256 TEXT NOT NULL, found INTEGER NOT NULL,
    PRIMARY KEY (uri, quote_sha256));
CREATE TABLE failures (
    uri TEXT PRIMARY KEY, count INTEGER NOT NULL, failed_at REAL NOT NULL);
"""
"""The layout of the first version of the cache: verdicts without diagnoses."""


def test_a_file_of_the_older_layout_is_upgraded_and_its_misses_need_the_page(
        tmp_path: Path) -> None:
    from tracecite.matching import digest

    path = tmp_path / "c.sqlite"
    clock = Clock()
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO pages VALUES (?, ?, NULL, 200, NULL, NULL, ?)",
               (URL, clock.now, PAGE.text_sha256))
    db.executemany("INSERT INTO verdicts VALUES (?, ?, ?)",
                   [(URL, digest("q1"), 1), (URL, digest("q2"), 0)])
    db.commit()
    db.close()
    cache = open_cache(path, clock)
    assert cache.warnings == []
    kept = cache.recall(URL, ["q1"])
    assert kept is not None and kept.verdicts == (True,)  # a match stands
    assert cache.recall(URL, ["q1", "q2"]) is None  # a miss without its diagnosis: load again
    cache.remember(URL, PAGE, ["q2"], [MISS])
    cache.close()
    cache = open_cache(path, clock)
    kept = cache.recall(URL, ["q1", "q2"])
    assert kept is not None and kept.verdicts == (True, MISS)
    cache.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == cache_module.SCHEMA_VERSION


def test_a_stored_diagnosis_that_is_not_ours_needs_the_page(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    clock = Clock()
    cache = open_cache(path, clock)
    cache.remember(URL, PAGE, ["q1", "q2"], [MISS, MISS])
    cache.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE verdicts SET diagnosis = ?", ('{"kinds": "x", "quote_chars": "2"}',))
    cache = open_cache(path, clock)
    assert cache.recall(URL, ["q1"]) is None
    cache.close()


def test_a_file_locked_too_long_is_a_warning(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT", 0.2)
    path = tmp_path / "c.sqlite"
    open_cache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert "locked" in _warning(open_cache(path))
        # Locked after it was opened: the write at the end is the warning, nothing raises.
        holder.execute("COMMIT")
        cache = open_cache(path)
        cache.remember(URL, PAGE, ["q"], [True])
        holder.execute("BEGIN EXCLUSIVE")
        cache.close()
        assert "cannot be written" in _warning(cache)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_corrupt_page_of_an_otherwise_valid_file_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = open_cache(path)
    cache.remember(URL, PAGE, ["q"], [True])
    cache.close()
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[page_size:] = b"\xff" * (len(data) - page_size)  # every page after the header's
    path.write_bytes(bytes(data))
    cache = open_cache(path)
    assert cache.recall(URL, ["q"]) is None
    cache.close()
    assert cache.warnings and cache.warnings[0].code is Code.CACHE_UNUSABLE


def test_runs_sharing_a_file_at_once_do_not_corrupt_it(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    open_cache(path).close()
    errors: list[object] = []

    def run(n: int) -> None:
        for round_ in range(20):
            cache = open_cache(path)
            for i in range(20):
                url = f"https://example.org/{n}/{round_}/{i}"
                cache.recall(url, ["q"])
                cache.remember(url, PAGE, ["q"], [True])
                cache.failed(f"https://down.example/{i}", FetchError(Code.TIMEOUT, "x"))
            cache.close()
            errors.extend(cache.warnings)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM pages").fetchone()[0] == 4 * 20 * 20


def test_an_entry_from_the_future_is_revalidated(tmp_path: Path) -> None:
    clock = Clock()
    cache = open_cache(tmp_path / "c.sqlite", clock)
    cache.remember(URL, PAGE, ["q"], [True])
    cache.close()
    clock.now -= 86400  # the clock went back a day
    cache = open_cache(tmp_path / "c.sqlite", clock)
    old = cache.recall(URL, ["q"])
    assert old is not None and old.validators is not None
    cache.close()


_WRITER = """
import sys
from tracecite.cache import SqliteCache
from tracecite.checks.live.records import Fetched
page = Fetched(200, None, None, None, "a" * 64)
for round_ in range(15):
    cache = SqliteCache(sys.argv[1], max_age=3600, fail_after=1)
    for i in range(30):
        cache.remember(f"https://example.org/{sys.argv[2]}/{round_}/{i}", page, ["q"], [True])
    cache.close()
    assert not cache.warnings, cache.warnings
"""


def test_two_processes_sharing_a_file_do_not_corrupt_it(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    path = tmp_path / "c.sqlite"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    runs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(n)], env=env,
                             stderr=subprocess.PIPE, text=True) for n in range(2)]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM pages").fetchone()[0] == 2 * 15 * 30
    assert db.execute("SELECT count(*) FROM verdicts").fetchone()[0] == 2 * 15 * 30
