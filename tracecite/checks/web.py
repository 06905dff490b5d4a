"""Live web checks: the texts a quote may match on a fetched page (SPEC §4)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import Page, PinnedFetcher
from tracecite.fetch.url_policy import parse_target
from tracecite.matching import MatchText

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def is_json_type(media_type: str) -> bool:
    """``application/json`` and every ``+json`` type."""
    return media_type == "application/json" or media_type.endswith("+json")


def page_texts(page: Page) -> list[MatchText]:
    """HTML: its visible text. JSON: the raw text and its decoded strings, one per line.
    Anything else: the text as it is."""
    if page.media_type in HTML_TYPES:
        from tracecite.fetch.visible_text import visible_text

        return [MatchText(visible_text(page.text))]
    if is_json_type(page.media_type):
        texts = [MatchText(page.text)]
        try:
            value = json.loads(page.text)
        except (ValueError, RecursionError):
            return texts  # a JSON type with a body that is not JSON: the raw text only
        texts.append(MatchText("\n".join(json_strings(value))))
        return texts
    return [MatchText(page.text)]


def json_strings(value: Any) -> Iterator[str]:
    """Every string value in a decoded JSON document, in document order (keys excluded)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def url_key(url: str) -> str:
    """URLs that are the same request share one fetch; an invalid one stands for itself."""
    try:
        return parse_target(url).url
    except FetchError:
        return url


class WebLoader:
    """Fetches a URL through the pinned fetcher and prepares its texts for matching."""

    def __init__(self, fetcher: PinnedFetcher) -> None:
        self._fetcher = fetcher

    def __call__(self, url: str) -> list[MatchText]:
        """The texts of the page at ``url``; raises :class:`FetchError`."""
        return page_texts(self._fetcher.fetch(url))
