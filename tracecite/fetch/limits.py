"""The per-source limits of docs/reference/fetching.md and the run's concurrency, in a module light
enough for the CLI to import."""

from __future__ import annotations

from tracecite import __version__

DEFAULT_USER_AGENT = f"tracecite/{__version__}"
"""The User-Agent header when none is set (``--user-agent``, config key ``user_agent``)."""

MAX_TIMEOUT = 20.0
"""Seconds per source: connect, TLS, every redirect and the whole body."""

MAX_BYTES = 2 * 1024 * 1024
"""Bytes of body per source, after content decoding."""

DEFAULT_MAX_PDF_BYTES = MAX_BYTES
"""Bytes of a PDF source by default (``--max-pdf-bytes``): the cap of every source."""

MAX_PDF_BYTES = 32 * 1024 * 1024
"""``--max-pdf-bytes`` at most: the cap a PDF source may be raised to (docs/guides/pdf.md)."""

MAX_REDIRECTS = 5
"""Redirects followed per source; one more is TC308."""

MAX_CONCURRENCY = 64
"""Sources fetched at once, at most (``--concurrency``, the configuration's ``concurrency``).

A loader thread each; pages waiting for a parse are bounded by the same number, so a run holds
at most ``2 × 64 × MAX_BYTES`` (256 MiB) of page text, however many sources it has."""

DEFAULT_CONCURRENCY = 48
"""Sources fetched at once by default: most of what 64 gains on many hosts, with a quarter less
page text in memory at worst (``2 × 48 × MAX_BYTES``); the measurements are in
docs/design/decisions.md#fetching."""

DEFAULT_PER_HOST = 8
"""Requests in flight to one host by default (``--per-host``, the configuration's
``per_host``): a polite crawler's figure (Scrapy's per-domain default; browsers open 6
connections per host, lychee 10), and what TraceCite used for a whole run before."""

DEFAULT_RETRIES = 2
"""Extra attempts per source after a transient failure (``--retries``,
docs/web-over-time.md#retries)."""

MAX_RETRIES = 5
"""``--retries`` at most."""

DEFAULT_MAX_RETRY_WAIT = 30.0
"""Seconds a source may wait for rate limits in all (``--max-retry-wait``,
docs/web-over-time.md#retries)."""

MAX_RETRY_WAIT = 120.0
"""``--max-retry-wait`` at most."""
