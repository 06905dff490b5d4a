"""The per-source limits of SPEC §4, in a module light enough for the CLI to import."""

MAX_TIMEOUT = 20.0
"""Seconds per source: connect, TLS, every redirect and the whole body."""

MAX_BYTES = 2 * 1024 * 1024
"""Bytes of body per source, after content decoding."""

MAX_REDIRECTS = 5
"""Redirects followed per source; one more is TC308."""

MAX_CONCURRENCY = 64
"""Sources fetched at once, at most (``--concurrency``, the configuration's ``concurrency``)."""
