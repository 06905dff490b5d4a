"""What a live run works with: the loader of one kind of source and what it loads, the
progress it reports to, and the result it returns (see :mod:`tracecite.checks.live`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.quotes import LoadInfo
from tracecite.fetch.hosts import HostSlots
from tracecite.findings import Counts, Finding

if TYPE_CHECKING:  # the fetcher's body module (urllib3) is for web runs only
    from tracecite.fetch.body import Held


class Progress(Protocol):
    """What the runner reports as sources are loaded (a progress bar, or nothing)."""

    def start(self, total: int) -> None:
        """``total`` sources are about to be loaded."""

    def advance(self) -> None:
        """One more source is done."""

    def stop(self) -> None:
        """Loading is over."""


class NoProgress:
    """Shows nothing."""

    def start(self, total: int) -> None:
        """Ignore."""

    def advance(self) -> None:
        """Ignore."""

    def stop(self) -> None:
        """Ignore."""


@dataclass(frozen=True)
class Loaded:
    """A loaded source: how it is matched, its text (a PDF's bytes, for :attr:`MatchKind.PDF`),
    and how it was loaded; for the cache, its status (304: not modified since the validators)
    and validators (web pages only)."""

    kind: MatchKind
    text: str | bytes
    info: LoadInfo = field(default_factory=LoadInfo)
    status: int = 200
    etag: str | None = None
    last_modified: str | None = None
    held: Held | None = field(default=None, compare=False, repr=False)
    """A PDF's share of the budget of PDF bodies loading at once, released once the parse
    pool has the body (:mod:`tracecite.fetch.body`)."""


@dataclass(frozen=True)
class Fetched:
    """What the cache keeps of a successful load: never its text, only the text's digest."""

    status: int
    final_url: str | None
    etag: str | None
    last_modified: str | None
    text_sha256: str


class Loader(Protocol):
    """Loads the sources of one kind for a :class:`~tracecite.checks.live.run.LiveRun`."""

    @property
    def kind(self) -> SourceKind:
        """What the loader reads: what the run's findings say about a quote not found."""

    @property
    def expects_html(self) -> bool:
        """Whether its sources are mostly HTML: the parse workers then start while the first
        sources are still loading, instead of after."""

    def cites_html(self, targets: Iterable[str]) -> bool:
        """Whether any of ``targets`` may need the parse workers (its text is HTML's visible
        text); False keeps a run of plain-text sources from forking workers it never uses."""

    @property
    def hosts(self) -> HostSlots | None:
        """The request slots per host its loads count on (None: no limit per host)."""

    def key(self, target: str) -> str:
        """Which source ``target`` is: targets with the same key are loaded once."""

    def host(self, target: str) -> str | None:
        """The host ``target``'s first request goes to (None: not limited per host)."""

    def load(self, target: str, *, claimed: bool = False,
             validators: Mapping[str, str] | None = None) -> Loaded:
        """The source at ``target``; raises :class:`FetchError` when it cannot be loaded.

        ``claimed``: the caller has claimed a slot of :attr:`hosts` for :meth:`host`'s answer;
        the load uses it for its first request and frees it, whatever happens. ``validators``:
        conditional request headers (from the cache); an answer of 304 has status 304.
        """


@dataclass(frozen=True)
class LiveResult:
    """What a live run found, in the order the sources finished, and its counts;
    ``stopped_by``: the signal that stopped it before every source finished; ``failed``: for
    each finding, the index of its check among the run's checks (the archive looks up those,
    docs/web-over-time.md#archived-copies)."""

    findings: tuple[Finding, ...]
    counts: Counts
    stopped_by: int | None = None
    failed: tuple[int, ...] = ()
