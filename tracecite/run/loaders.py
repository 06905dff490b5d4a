"""What the live checks load sources through: the run's cache of web verdicts
(docs/web-over-time.md#the-cache), and the loader of one kind of source, pages through the run's
fetcher or files under the root."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tracecite.checks.kinds import SourceKind
from tracecite.errors import UsageError

if TYPE_CHECKING:  # imported where used: `check` needs none of them (see tests/test_startup.py)
    from tracecite.cache import SqliteCache
    from tracecite.checks.live.records import Loader
    from tracecite.settings import Settings


def _cache(settings: Settings) -> SqliteCache | None:
    """The run's cache of web verdicts, when one is set (a problem with it is a warning)."""
    if settings.cache is None:
        return None
    from tracecite.cache import SqliteCache
    from tracecite.settings import options_digest

    return SqliteCache(settings.cache, max_age=settings.cache_max_age,
                       fail_after=settings.fail_after, options=options_digest(settings))


@contextmanager
def _loader(kind: SourceKind, settings: Settings, rendered: frozenset[str] = frozenset()
            ) -> Iterator[Loader]:
    """The loader of ``kind``: pages through the run's fetcher (closed afterwards), or files
    under the root (``rendered``: the targets of Markdown read on their rendered text)."""
    if kind is SourceKind.FILE:
        from tracecite.checks.files import FileLoader

        yield FileLoader(settings.root, settings.max_bytes, settings.max_pdf_bytes,
                         rendered=rendered)
        return
    from tracecite.checks.web import WebLoader
    from tracecite.fetch.fetcher import PinnedFetcher
    from tracecite.fetch.retry import RetryPolicy

    try:
        fetcher = PinnedFetcher(settings.fetch_options())
    except ValueError as exc:  # the only thing the constructor checks is the CA bundle
        raise UsageError(str(exc)) from None
    with fetcher:
        yield WebLoader(fetcher, RetryPolicy(settings.retries, settings.max_retry_wait))


