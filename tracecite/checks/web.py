"""Live web checks: fetch a page through the pinned fetcher and say how to match it
(docs/reference/fetching.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.live.records import Loaded
from tracecite.checks.quotes import LoadInfo
from tracecite.fetch.body import is_json_type
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.hosts import HostSlots
from tracecite.fetch.retry import RetryPolicy
from tracecite.fetch.url_policy import parse_target
from tracecite.pdf import named_pdf

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def kind_of(media_type: str) -> MatchKind:
    """How a response of this media type is matched: HTML, JSON or plain text."""
    if media_type in HTML_TYPES:
        return MatchKind.HTML
    if is_json_type(media_type):
        return MatchKind.JSON
    return MatchKind.TEXT


# Notes cite the same URL many times, and the runner asks for each source's key and then its
# host: each distinct spelling is parsed once. An invalid URL is not cached: it raises each
# time.
_target = lru_cache(maxsize=4096)(parse_target)


def url_key(url: str) -> str:
    """URLs that are the same request share one fetch; an invalid one stands for itself."""
    try:
        return _target(url).url
    except FetchError:
        return url


class WebLoader:
    """Loads web pages through the pinned fetcher, sharing its request slots per host with the
    live run (see :class:`~tracecite.checks.live.records.Loader`), trying a source again after a
    transient failure as ``retry`` says (docs/web-over-time.md#retries)."""

    kind = SourceKind.WEB
    expects_html = True  # web pages are mostly HTML: start the parse workers early

    def __init__(self, fetcher: PinnedFetcher, retry: RetryPolicy | None = None) -> None:
        self._fetcher = fetcher
        self._retry = retry or RetryPolicy()

    @property
    def hosts(self) -> HostSlots:
        """The fetcher's request slots per host."""
        return self._fetcher.hosts

    @property
    def fetcher(self) -> PinnedFetcher:
        """The run's fetcher (archived copies are fetched with it too)."""
        return self._fetcher

    @staticmethod
    def key(url: str) -> str:
        """The request ``url`` stands for (:func:`url_key`)."""
        return url_key(url)

    @staticmethod
    def cites_html(urls: Iterable[str]) -> bool:
        """Unless every URL names a PDF: what a URL serves is known only once it answers, so
        any other may be HTML. (A link named ``.pdf`` that answers with HTML is still parsed,
        in its loader thread: see :meth:`~tracecite.checks.parse_pool.ParsePool.submit`.)"""
        return not all(named_pdf(url) for url in urls)

    @staticmethod
    def host(url: str) -> str | None:
        """The host ``url`` is fetched from first (None for a URL the fetcher refuses)."""
        try:
            return _target(url).host
        except FetchError:
            return None

    def load(self, url: str, *, claimed: bool = False,
             validators: Mapping[str, str] | None = None) -> Loaded:
        """The page at ``url`` and how to match it (raises :class:`FetchError`, with its
        ``attempts``); ``claimed``: the caller holds the slot of ``host(url)``, which the first
        attempt uses and the fetcher frees; ``validators``: conditional headers (a 304 answer
        is a page with status 304 and no text)."""
        page, attempts = self._retry.run(
            lambda attempt: self._fetcher.fetch(url, claimed=claimed and attempt == 1,
                                                validators=validators))
        info = LoadInfo(final_url=page.final_url, attempts=attempts)
        kind = MatchKind.PDF if isinstance(page.text, bytes) else kind_of(page.media_type)
        return Loaded(kind, page.text, info, status=page.status,
                      etag=page.etag, last_modified=page.last_modified, held=page.held)
