"""Archived copies (docs/web-over-time.md#archived-copies): what the Internet Archive still holds of
a page that lost its quote or could not be fetched.

For each finding of a live web check that says the page changed or is gone (:func:`eligible`),
the availability API is asked for the snapshot closest to when the trace captured the source
(or the newest one), that snapshot is fetched in raw form (``id_``: the page as archived,
without the archive's banner or rewritten links) by the run's own fetcher — the same URL rules,
address policy, deadline and size cap as any page — and the finding's quote is matched in it
as the live check matches a page. The finding gains an :class:`ArchiveCopy`, and its message
names the snapshot when the snapshot has the quote. A lookup that fails in any way (a fetch
error, an answer that is not the API's, no snapshot, a parse past its limits) adds nothing:
the archive never changes a verdict or an exit code.

Decisions:

- One lookup per distinct URL and capture time: the quotes of several findings on one page are
  matched in one snapshot.
- The API's answer is untrusted JSON (read under the fetcher's size cap): only
  ``archived_snapshots.closest`` with ``available: true`` and a 14-digit ``timestamp`` counts.
  Its ``url`` is never fetched: the snapshot URL is built from that timestamp and the cited URL.
- The archive redirects a snapshot to the nearest capture it has; the snapshot named is where
  the redirects ended, when that is a snapshot URL of the same form.
- At most :data:`IN_FLIGHT` lookups run at once, each making its requests one after the other:
  at most two requests are in flight to the archive's hosts, whatever ``--per-host`` says.
"""

from __future__ import annotations

import json
import queue
import re
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import quote as percent_encoded

from tracecite.checks.kinds import MatchKind
from tracecite.checks.parse_pool import match_quotes
from tracecite.checks.quotes import QuoteCheck
from tracecite.checks.web import kind_of
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import Page
from tracecite.fetch.limits import MAX_TIMEOUT
from tracecite.fetch.url_policy import parse_target
from tracecite.findings import ArchiveCopy, Finding
from tracecite.pdf.reader import PdfError
from tracecite.stops import StopToken, signal_of
from tracecite.visible.limits import ParseLimitError

AVAILABILITY_API = "https://archive.org/wayback/available"
"""The Internet Archive's availability API: the closest snapshot of a URL."""

SNAPSHOTS = "https://web.archive.org/web/"
"""Where snapshots are: ``SNAPSHOTS + TIMESTAMP + "id_/" + URL`` is one in raw form."""

IN_FLIGHT = 2
"""Requests in flight to the archive's hosts at most."""

_ELIGIBLE = frozenset({Code.QUOTE_NOT_ON_PAGE, Code.DNS_FAILURE, Code.CONNECT_FAILED,
                       Code.TIMEOUT})
_GONE = frozenset({404, 410})
_TIMESTAMP = re.compile(r"[0-9]{14}")
_SNAPSHOT = re.compile(re.escape(SNAPSHOTS) + r"([0-9]{14})id_/")


class Fetcher(Protocol):
    """What the lookups need of the run's :class:`~tracecite.fetch.fetcher.PinnedFetcher`."""

    def fetch(self, url: str) -> Page:
        """The page at ``url``; raises :class:`FetchError`."""


@dataclass(frozen=True)
class ArchiveResult:
    """The findings, those looked up with their archived copy; ``stopped_by``: the signal
    that stopped the lookups (the findings not looked up yet are as they were)."""

    findings: tuple[Finding, ...]
    stopped_by: int | None = None


def eligible(finding: Finding) -> bool:
    """Whether an archived copy is looked for: a quote not on its page (TC210), a page gone
    (TC315 with 404 or 410), or a host that did not answer once the retries were spent (TC307,
    TC311, TC313)."""
    return finding.code in _ELIGIBLE or (finding.code is Code.HTTP_STATUS
                                         and finding.status in _GONE)


def snapshot_url(timestamp: str, url: str) -> str:
    """The raw snapshot of ``url`` at ``timestamp`` (14 digits)."""
    return f"{SNAPSHOTS}{timestamp}id_/{url}"


def availability_url(url: str, timestamp: str | None) -> str:
    """The API request for the snapshot of ``url`` closest to ``timestamp`` (None: newest)."""
    query = f"url={percent_encoded(url, safe='')}"
    if timestamp is not None:
        query += f"&timestamp={timestamp}"
    return f"{AVAILABILITY_API}?{query}"


def closest_timestamp(text: str) -> str | None:
    """The timestamp of the closest available snapshot in an API answer, or None when the
    answer names none or is not of the API's shape."""
    try:
        answer: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    closest = _member(_member(answer, "archived_snapshots"), "closest")
    timestamp = _member(closest, "timestamp")
    if _member(closest, "available") is not True or not isinstance(timestamp, str):
        return None
    return timestamp if _TIMESTAMP.fullmatch(timestamp) else None


def _member(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else None


@dataclass(frozen=True)
class _Lookup:
    """One page to look for in the archive: its canonical URL, and near when (or newest)."""

    url: str
    timestamp: str | None


@dataclass(frozen=True)
class _Snapshot:
    """A snapshot looked at, and each of its lookup's quotes found in it or not."""

    url: str
    timestamp: str
    found: dict[str, bool]


def with_archive(findings: Sequence[Finding], checks: Sequence[QuoteCheck], fetcher: Fetcher,
                 *, budget: float = MAX_TIMEOUT) -> ArchiveResult:
    """``findings`` (of a live web check), each eligible one with the archived copy of its
    page; ``checks``: those the findings are about (a finding is matched to its check by file,
    record or claim and citation, and URI, so the run passes only its failing checks, not every
    quote it matched). One lookup per page and capture time, at most :data:`IN_FLIGHT` at once,
    each snapshot parsed within ``budget`` seconds. A stop (SIGINT, SIGTERM) ends the lookups:
    what finished is kept, and the result says which signal stopped them."""
    by_place = {_place(c.file, c.record, c.claim, c.citation, c.target): c for c in checks}
    wanted: dict[int, tuple[_Lookup, str]] = {}
    quotes: dict[_Lookup, list[str]] = {}
    for index, finding in enumerate(findings):
        check = by_place.get(_place(finding.file, finding.record, finding.claim,
                                    finding.citation, finding.uri))
        if check is None or not eligible(finding):
            continue
        try:
            url = parse_target(check.target).url
        except FetchError:
            continue  # never the case for these codes: the URL was fetched
        lookup = _Lookup(url, check.captured_at)
        wanted[index] = (lookup, check.quote)
        quotes.setdefault(lookup, [])
        if check.quote not in quotes[lookup]:
            quotes[lookup].append(check.quote)
    snapshots, stopped_by = _run(list(quotes), lambda k: _look_up(fetcher, k, quotes[k], budget))
    out = list(findings)
    for index, (lookup, quote) in wanted.items():
        snapshot = snapshots.get(lookup)
        if snapshot is not None:
            out[index] = _annotated(out[index], snapshot, snapshot.found[quote])
    return ArchiveResult(tuple(out), stopped_by)


def _place(file: str | None, record: int | None, claim: int | None, citation: int | None,
           uri: str | None) -> tuple[object, ...]:
    """Where a quote is cited: a live finding names the check it came from this way."""
    return (file, record, claim, citation, uri)


def _annotated(finding: Finding, snapshot: _Snapshot, found: bool) -> Finding:
    message = finding.message
    if found:
        message += f"; the Internet Archive's snapshot {snapshot.url} has the quote"
    return replace(finding, message=message,
                   archive=ArchiveCopy(snapshot.url, snapshot.timestamp, found))


def _look_up(fetcher: Fetcher, lookup: _Lookup, quotes: Sequence[str], budget: float
             ) -> _Snapshot | None:
    """Ask the API, fetch the snapshot it names, match ``quotes`` there (None: any failure)."""
    try:
        answer = fetcher.fetch(availability_url(lookup.url, lookup.timestamp))
        if not isinstance(answer.text, str):  # a PDF where the API's JSON should be
            return None
        timestamp = closest_timestamp(answer.text)
        if timestamp is None:
            return None
        url = snapshot_url(timestamp, lookup.url)
        page = fetcher.fetch(url)
        redirected = _SNAPSHOT.match(page.final_url or "")
        if redirected is not None:  # the archive's nearest capture
            url, timestamp = page.url, redirected.group(1)
        kind = MatchKind.PDF if isinstance(page.text, bytes) else kind_of(page.media_type)
        verdicts = [verdict is True for verdict in
                    match_quotes(kind, page.text, quotes, budget=budget)]
    except (FetchError, ParseLimitError, PdfError):
        return None
    return _Snapshot(url, timestamp, dict(zip(quotes, verdicts, strict=True)))


def _run(lookups: list[_Lookup], look_up: Callable[[_Lookup], _Snapshot | None]
         ) -> tuple[dict[_Lookup, _Snapshot], int | None]:
    """Each lookup on :data:`IN_FLIGHT` daemon threads at most; the snapshots found, and the
    signal that stopped the run (the lookups in flight are then abandoned, never waited for).
    An unexpected exception in a lookup (a bug) is raised here."""
    todo = deque(lookups)
    lock = threading.Lock()
    done: queue.Queue[tuple[_Lookup, _Snapshot | BaseException | None]] = queue.Queue()
    stop = StopToken()  # the lookups' own: set once the run is over, by a stop or a bug

    def work() -> None:
        while not stop.is_set():
            with lock:
                if not todo:
                    return
                lookup = todo.popleft()
            try:
                done.put((lookup, look_up(lookup)))
            except BaseException as error:  # handed to the run, which raises it
                done.put((lookup, error))

    for n in range(min(IN_FLIGHT, len(lookups))):
        threading.Thread(target=work, name=f"tracecite-archive-{n}", daemon=True).start()
    found: dict[_Lookup, _Snapshot] = {}
    try:
        for _ in lookups:
            lookup, outcome = done.get()
            if isinstance(outcome, BaseException):
                raise outcome
            if outcome is not None:
                found[lookup] = outcome
    except KeyboardInterrupt as interrupt:  # the archive's one place: a stop is a value
        stop.stop(signal_of(interrupt))
        return found, stop.signum
    finally:
        stop.stop()  # nothing more starts after a stop or a bug
    return found, None
