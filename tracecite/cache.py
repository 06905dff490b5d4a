"""The cache between runs (docs/web-over-time.md#the-cache) and the history of flaky sources
(docs/web-over-time.md#flaky-sources): one SQLite file.

Per requested web page (by its stable URI, docs/reference/commands.md) the file keeps when it was
fetched, where its redirects ended, its status, ``ETag`` and ``Last-Modified``, a SHA-256 of its
normalised text (the body as fetched, so any change of the page drops its verdicts), and per quote
matched against it a SHA-256 of the normalised quote with its verdict (for a quote not found, its
diagnosis, docs/reference/reports.md#near-misses: kinds, counts, offsets and code point names); and
per source the number of consecutive runs it has failed in. Never page text, quotes or claims.

Schema (``PRAGMA application_id`` marks the file as ours, ``user_version`` is the schema)::

    pages(uri PRIMARY KEY, fetched_at, final_url, status, etag, last_modified, text_sha256,
          options_sha256)
    verdicts(uri, quote_sha256, found, diagnosis, PRIMARY KEY (uri, quote_sha256))
    failures(uri PRIMARY KEY, count, failed_at)

A page's verdicts are kept with the digest of the options that decided them (the report's
``run.options_digest``, docs/web-over-time.md#the-cache): a run with other options finds no
verdict there (the page is loaded and matched again, and its verdicts replace the stored ones).

A cache problem never fails a run and never changes a verdict: a corrupt, foreign or locked
file, or any error while reading or writing it, turns the cache off for the rest of the run
with one TC105 warning. Everything a run learns is written at its end, in one transaction, so
two runs sharing a file only wait for each other's lock. Until then it is kept compactly (a
quote's verdict in 33 bytes) and, past :data:`CHUNK_SIZE` entries, staged a chunk at a time in
a private temporary database beside the connection (on disk, in SQLite's temporary directory):
a run's memory does not grow with the quotes it checks.

A file of schema 1 (verdicts without diagnoses) or 2 (pages without the options digest) is
upgraded in place: its misses have no diagnosis, so a quote that missed there needs its page
again, as a quote never matched does; and its pages have no options digest, which no run's
options give, so every page there is loaded again once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass, field
from typing import TypeVar

from tracecite.checks.compare import stable_uri
from tracecite.checks.live.records import Fetched
from tracecite.checks.live.tally import Remembered
from tracecite.checks.parse_pool import Verdict
from tracecite.checks.quotes import LoadInfo
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.findings import Diagnosis, Finding
from tracecite.matching import digest

APPLICATION_ID = 0x54434354  # "TCCT": a SQLite file that is a TraceCite cache
SCHEMA_VERSION = 3
BUSY_TIMEOUT = 10.0
"""Seconds to wait for another run's lock before the file counts as locked (TC105)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    uri TEXT PRIMARY KEY, fetched_at REAL NOT NULL, final_url TEXT, status INTEGER NOT NULL,
    etag TEXT, last_modified TEXT, text_sha256 TEXT NOT NULL,
    options_sha256 TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS verdicts (
    uri TEXT NOT NULL, quote_sha256 TEXT NOT NULL, found INTEGER NOT NULL, diagnosis TEXT,
    PRIMARY KEY (uri, quote_sha256));
CREATE TABLE IF NOT EXISTS failures (
    uri TEXT PRIMARY KEY, count INTEGER NOT NULL, failed_at REAL NOT NULL);
"""

CHUNK_SIZE = 32 * 1024
"""Entries (quote verdicts, loads, failure counts) kept in memory before they are staged: about
1 MiB of verdicts. Staging is one statement a chunk: every statement lets the run's other
threads take the interpreter, and getting it back can take milliseconds, so a statement a page
or a quote would cost more than the checks."""

FLAKY_CODES = frozenset({Code.DNS_FAILURE, Code.CONNECT_FAILED, Code.TLS_FAILED, Code.TIMEOUT,
                         Code.SOURCE_BLOCKED})
"""Unavailable-source codes a flaky source is forgiven for (TC315 too, for 429 and 5xx)."""

T = TypeVar("T")


def is_flaky(error: FetchError) -> bool:
    """Whether a failure may be the weather rather than the source
    (docs/web-over-time.md#flaky-sources)."""
    if error.code is Code.HTTP_STATUS:
        return error.status is not None and (error.status == 429 or error.status >= 500)
    return error.code in FLAKY_CODES


class CacheUnusable(Exception):
    """The file cannot serve as the cache; the message says why (for TC105)."""


_Page = tuple[str, Fetched, bool, int, int]
"""A load in a chunk: its stable URI, what was fetched, whether its verdicts replace the stored
ones (False for a 304, whose stored text and verdicts stand), and where its quotes' verdicts are
among the chunk's."""


@dataclass
class _Chunk:
    """Part of what this run learned, in the order it was learned (a later load of a page, or
    a later count of its failures, counts over an earlier one)."""

    pages: list[_Page] = field(default_factory=list)
    digests: bytearray = field(default_factory=bytearray)
    """The SHA-256 of each normalised quote, 32 bytes each."""
    found: bytearray = field(default_factory=bytearray)
    """1 for each quote found, 0 for one that was not."""
    diagnoses: dict[int, str] = field(default_factory=dict)
    """By quote: the diagnosis of a miss, as stored (JSON)."""
    failures: list[tuple[str, int]] = field(default_factory=list)
    """Consecutive failed runs by URI (0: the source was fine, its history goes)."""

    def __len__(self) -> int:
        """The quote verdicts in the chunk."""
        return len(self.found)

    @property
    def size(self) -> int:
        """The entries in the chunk: its verdicts, loads and failure counts."""
        return len(self.found) + len(self.pages) + len(self.failures)

    def verdicts(self, start: int, end: int) -> list[tuple[str, int, str | None]]:
        """The verdicts ``start`` to ``end``, as the file keeps them."""
        return [(self.digests[32 * i:32 * i + 32].hex(), self.found[i], self.diagnoses.get(i))
                for i in range(start, end)]

    def encoded(self) -> tuple[str, bytes, bytes, str, str]:
        """The chunk as one row of the staging table."""
        import json

        pages = [[uri, *astuple(fetched), replace, start, end]
                 for uri, fetched, replace, start, end in self.pages]
        return (json.dumps(pages), bytes(self.digests), bytes(self.found),
                json.dumps(self.diagnoses), json.dumps(self.failures))

    @classmethod
    def decoded(cls, pages: str, digests: bytes, found: bytes, diagnoses: str,
                failures: str) -> _Chunk:
        """The chunk staged as this row."""
        import json

        return cls([(uri, Fetched(*fetched), bool(replace), start, end)
                    for uri, *fetched, replace, start, end in json.loads(pages)],
                   bytearray(digests), bytearray(found),
                   {int(i): d for i, d in json.loads(diagnoses).items()},
                   [(uri, count) for uri, count in json.loads(failures)])


class SqliteCache:
    """The cache of one run (a :class:`~tracecite.checks.live.tally.VerdictCache`), on ``path``.

    Used from one thread. Never raises for a problem with the file: :attr:`warnings` then
    holds one TC105 finding and the cache answers as an empty one from then on.
    """

    def __init__(self, path: str, *, max_age: float, fail_after: int, options: str = "",
                 now: Callable[[], float] = time.time) -> None:
        self._path = path
        self._options = options  # the run's options digest: the key of its verdicts
        self._max_age = max_age
        self._fail_after = fail_after
        self._now = now
        self._learned = _Chunk()
        self._staged = False  # whether a chunk has been staged
        self.warnings: list[Finding] = []
        self._db: sqlite3.Connection | None = None
        try:
            self._db = _open(path)
        except CacheUnusable as exc:
            self._unusable(str(exc))

    # -- the VerdictCache protocol ------------------------------------------------------------

    def recall(self, key: str, quotes: Sequence[str]) -> Remembered | None:
        """The stored verdicts of every quote of ``quotes`` on ``key``, with the validators to
        revalidate them (None when they are fresh), or None when some quote has none."""
        uri = stable_uri(key)
        row = self._query(lambda db: db.execute(
            "SELECT fetched_at, final_url, etag, last_modified, options_sha256 FROM pages "
            "WHERE uri = ?", (uri,)).fetchone())
        if row is None:
            return None
        fetched_at, final_url, etag, last_modified, options = row
        if options != self._options:
            # Verdicts of other options (a body cap, a deadline, another rules version, ...):
            # the page must be loaded and matched under this run's (neither used nor
            # revalidated).
            return None
        rows = self._query(lambda db: db.execute(
            "SELECT quote_sha256, found, diagnosis FROM verdicts WHERE uri = ?",
            (uri,)).fetchall()) or []
        found = {h: True if hit else _diagnosis(stored) for h, hit, stored in rows}
        hashes = [_quote_hash(q) for q in quotes]
        if not all(found.get(h) for h in hashes):
            # A quote never matched against this page needs the page, and so does a miss
            # without a diagnosis (written by an older version).
            return None
        validators: dict[str, str] | None = None
        age = self._now() - fetched_at
        if not 0 <= age < self._max_age:  # old, or from the future (a clock that jumped)
            validators = {}
            if etag:
                validators["If-None-Match"] = etag
            if last_modified:
                validators["If-Modified-Since"] = last_modified
            if not validators:
                return None  # old, and nothing to revalidate it with: fetch it again
        return Remembered(tuple(found[h] or False for h in hashes),
                          LoadInfo(final_url if final_url not in (None, key) else None),
                          validators)

    def remember(self, key: str, fetched: Fetched, quotes: Sequence[str],
                 verdicts: Sequence[Verdict]) -> None:
        """Keep a successful load of ``key``: the page's digest and its quotes' verdicts with
        the diagnoses of misses (a changed page drops the verdicts stored for its old text)."""
        uri = stable_uri(key)
        learned = self._learned
        start = len(learned)
        distinct = {_quote_hash(q): v for q, v in zip(quotes, verdicts, strict=True)}
        for quote_hash, verdict in distinct.items():  # a quote cited twice is kept once
            stored = _stored(verdict)
            if stored is not None:
                learned.diagnoses[len(learned)] = stored
            learned.digests += bytes.fromhex(quote_hash)
            learned.found.append(verdict is True)
        learned.pages.append((uri, fetched, True, start, len(learned)))
        learned.failures.append((uri, 0))
        self._stage_when_full()

    def revalidated(self, key: str, fetched: Fetched) -> None:
        """``key`` answered 304: its stored verdicts stand, fresh from now."""
        uri = stable_uri(key)
        at = len(self._learned)
        self._learned.pages.append((uri, fetched, False, at, at))
        self._learned.failures.append((uri, 0))
        self._stage_when_full()

    def failed(self, key: str, error: FetchError) -> tuple[int, int] | None:
        """Count a failure of ``key`` in this run: ``(failures, fail_after)`` for a flaky one
        (consecutive runs it has failed in, this one included), None for any other (whose
        history goes: only consecutive flaky failures count)."""
        uri = stable_uri(key)
        if not is_flaky(error) or self._db is None:
            self._learned.failures.append((uri, 0))
            self._stage_when_full()
            return None
        row = self._query(lambda db: db.execute(
            "SELECT count FROM failures WHERE uri = ?", (uri,)).fetchone())
        if self._db is None:  # the read failed: without a history nothing is deferred
            return None
        count = (row[0] if row else 0) + 1
        self._learned.failures.append((uri, count))
        self._stage_when_full()
        if self._db is None:  # staging failed: the cache is off, nothing is deferred
            return None
        return count, self._fail_after

    # -- writing ------------------------------------------------------------------------------

    def close(self) -> None:
        """Write what this run learned in one transaction and close the file."""
        if self._db is None:
            return
        last, self._learned = self._learned, _Chunk()
        try:
            with _transaction(self._db) as db:
                now = self._now()
                for chunk in self._chunks(db):  # one at a time
                    _write(db, chunk, now, self._options)
                _write(db, last, now, self._options)
        except sqlite3.Error as exc:
            self._unusable(f"cannot be written ({_reason(exc)})")
        finally:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _stage_when_full(self) -> None:
        if self._learned.size >= CHUNK_SIZE:
            self._stage()

    def _stage(self) -> None:
        """Move what is in memory to the staging database (made on first use)."""
        chunk, self._learned = self._learned, _Chunk()
        if self._db is None:
            return
        try:
            if not self._staged:
                self._db.execute("ATTACH DATABASE '' AS stage")
                self._db.execute("CREATE TABLE stage.chunks (pages TEXT NOT NULL, digests BLOB "
                                 "NOT NULL, found BLOB NOT NULL, diagnoses TEXT NOT NULL, "
                                 "failures TEXT NOT NULL)")
                self._staged = True
            self._db.execute("INSERT INTO stage.chunks VALUES (?, ?, ?, ?, ?)", chunk.encoded())
        except sqlite3.Error as exc:
            self._unusable(f"cannot stage what this run learns ({_reason(exc)})")

    def _chunks(self, db: sqlite3.Connection) -> Iterator[_Chunk]:
        """The staged chunks, in the order they were staged."""
        if self._staged:
            for row in db.execute("SELECT * FROM stage.chunks ORDER BY rowid"):
                yield _Chunk.decoded(*row)

    # -- problems -----------------------------------------------------------------------------

    def _query(self, read: Callable[[sqlite3.Connection], T]) -> T | None:
        if self._db is None:
            return None
        try:
            return read(self._db)
        except sqlite3.Error as exc:
            self._unusable(f"cannot be read ({_reason(exc)})")
            return None

    def _unusable(self, why: str) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if not self.warnings:
            self.warnings.append(Finding(
                Code.CACHE_UNUSABLE, f"the cache file {self._path} {why}; this run goes on "
                                     f"without it"))


def _quote_hash(quote: str) -> str:
    # the quote's normalised form, as it is matched (docs/reference/matching.md)
    return digest(quote)


def _reason(exc: sqlite3.Error) -> str:
    return str(exc) or type(exc).__name__


def _open(path: str) -> sqlite3.Connection:
    """The cache file, created (with its schema) when missing or empty; CacheUnusable when it
    is not SQLite, another application's, another schema's or locked too long."""
    try:
        db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise CacheUnusable(f"cannot be opened ({_reason(exc)})") from None
    try:
        with _transaction(db):
            app, version = _marks(db)
            if (app, version) == (0, 0):
                if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise CacheUnusable("is a SQLite database of another application")
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    db.execute(statement)
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif app != APPLICATION_ID:
                raise CacheUnusable("is a SQLite database of another application")
            elif version in (1, 2):  # add what the file lacks (module docstring)
                if version == 1:  # verdicts without diagnoses
                    db.execute("ALTER TABLE verdicts ADD COLUMN diagnosis TEXT")
                db.execute("ALTER TABLE pages ADD COLUMN options_sha256 TEXT NOT NULL "
                           "DEFAULT ''")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise CacheUnusable(f"has schema {version}, not {SCHEMA_VERSION} (written by "
                                    f"another version of tracecite)")
    except sqlite3.OperationalError as exc:  # locked, read-only, out of space, ...
        db.close()
        raise CacheUnusable("is locked by another process" if "locked" in str(exc) else
                            f"cannot be used ({_reason(exc)})") from None
    except sqlite3.DatabaseError as exc:
        db.close()
        raise CacheUnusable(f"is corrupt or not SQLite ({_reason(exc)})") from None
    except CacheUnusable:
        db.close()
        raise
    return db


def _marks(db: sqlite3.Connection) -> tuple[int, int]:
    app = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    return int(app), int(version)


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A write transaction, taken at once (BEGIN IMMEDIATE), committed or rolled back whole."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _write(db: sqlite3.Connection, chunk: _Chunk, now: float, options: str) -> None:
    """Write one chunk of what the run learned into the file, in the caller's transaction,
    under the run's ``options`` digest."""
    for uri, fetched, replace, start, end in chunk.pages:
        _write_page(db, uri, fetched, chunk.verdicts(start, end), replace=replace, now=now,
                    options=options)
    for uri, count in chunk.failures:
        if count:
            db.execute("INSERT OR REPLACE INTO failures VALUES (?, ?, ?)", (uri, count, now))
        else:
            db.execute("DELETE FROM failures WHERE uri = ?", (uri,))


def _write_page(db: sqlite3.Connection, uri: str, fetched: Fetched,
                verdicts: list[tuple[str, int, str | None]], *, replace: bool,
                now: float, options: str) -> None:
    row = db.execute("SELECT text_sha256, options_sha256 FROM pages WHERE uri = ?",
                     (uri,)).fetchone()
    if not replace:  # revalidated: the stored text and verdicts stand
        if row is None or row[1] != options:  # gone, or another run's options took it over
            return
        db.execute("UPDATE pages SET fetched_at = ?, etag = coalesce(?, etag), "
                   "last_modified = coalesce(?, last_modified) WHERE uri = ?",
                   (now, fetched.etag, fetched.last_modified, uri))
        return
    if row is None or tuple(row) != (fetched.text_sha256, options):
        # verdicts of another text, or decided under other options
        db.execute("DELETE FROM verdicts WHERE uri = ?", (uri,))
    db.execute("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (uri, now, fetched.final_url, fetched.status, fetched.etag,
                fetched.last_modified, fetched.text_sha256, options))
    db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?)",
                   [(uri, h, found, stored) for h, found, stored in verdicts])


def _stored(verdict: Verdict) -> str | None:
    """A miss's diagnosis as JSON (kinds, counts, offsets, code point names: never text)."""
    if not isinstance(verdict, Diagnosis):
        return None
    import dataclasses
    import json

    return json.dumps(dataclasses.asdict(verdict), separators=(",", ":"))


def _diagnosis(stored: object) -> Diagnosis | None:
    """A stored diagnosis, or None when there is none (or it is not one of ours)."""
    if not isinstance(stored, str):
        return None
    import json

    try:
        value = json.loads(stored)
        kinds = tuple(str(k) for k in value["kinds"])
        characters = value.get("characters")
        return Diagnosis(
            kinds, quote_chars=_count(value.get("quote_chars")),
            matched_chars=_count(value.get("matched_chars")),
            first_difference=_count(value.get("first_difference")),
            characters=tuple(str(c) for c in characters) if characters is not None else None,
            where=str(value["where"]) if value.get("where") is not None else None,
            cut_short=(str(value["cut_short"]) if value.get("cut_short") is not None
                       else None))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _count(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError("not a count")
