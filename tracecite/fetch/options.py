"""The fetcher's options (docs/reference/commands.md common options), in a module light enough for
the CLI to build and check them without importing urllib3: ``verify-files`` never fetches."""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network
from typing import TYPE_CHECKING

from tracecite import values
from tracecite.fetch.connect_to import ConnectTo, parse_connect_to
from tracecite.fetch.limits import (
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_PER_HOST,
    DEFAULT_USER_AGENT,
    MAX_BYTES,
    MAX_CONCURRENCY,
    MAX_PDF_BYTES,
    MAX_TIMEOUT,
)

if TYPE_CHECKING:
    import ssl

__all__ = ["ConnectTo", "FetchOptions", "parse_connect_to"]

_CHECKS: dict[str, values.Check] = {
    "timeout": values.seconds,
    "max_bytes": values.whole(1, MAX_BYTES),
    "max_pdf_bytes": values.whole(1, MAX_PDF_BYTES),
    "per_host": values.whole(1, MAX_CONCURRENCY),
    "user_agent": values.user_agent,
    "max_retry_wait": values.wait,
}
"""The checks of the settings table's rows of these options (:data:`tracecite.settings.OPTIONS`),
with the same bounds."""


@dataclass(frozen=True)
class FetchOptions:
    """Limits and private-deployment options for one run (docs/reference/commands.md common
    options)."""

    timeout: float = MAX_TIMEOUT
    max_bytes: int = MAX_BYTES
    max_pdf_bytes: int = MAX_BYTES
    """The cap of a PDF body (docs/guides/pdf.md), when larger than ``max_bytes``."""
    per_host: int = DEFAULT_PER_HOST
    user_agent: str = DEFAULT_USER_AGENT
    connect_to: tuple[ConnectTo, ...] = ()
    allow_net: tuple[IPv4Network | IPv6Network, ...] = ()
    ca_cert: str | None = None
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT  # the longest Retry-After a host backs off for
    ca_bundle: ssl.SSLContext | None = field(default=None, compare=False, repr=False)
    """``ca_cert`` as the settings check loaded it (None: the fetcher loads it), so that a run
    reads the bundle once; the fetcher that is given it makes it its own."""

    def __post_init__(self) -> None:
        # The option checks are the settings table's own (tracecite.values); a library caller that
        # builds options by hand gets the same refusals as the command line (a user agent with a
        # line break would be a header injection).
        for name, check in _CHECKS.items():
            try:
                check(getattr(self, name))
            except ValueError as exc:
                raise ValueError(f"{name} {exc}") from None
