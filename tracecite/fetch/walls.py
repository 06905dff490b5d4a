"""Bot and challenge walls: a final 401, 403 or 503 that a bot-management service sent instead of
the page is TC319 ``source-blocked``, not TC315 (docs/web-over-time.md#bot-walls).

The marks are one table, ``MARKS``. Each names a header (and the values that count, matched
whole and case-insensitively after trimming), the statuses it counts on, and, where the header
alone also appears on ordinary error pages, a pattern that must be in the first
``BODY_LOOK`` bytes of the body:

- ``server: cloudflare`` is on every response a Cloudflare-fronted site sends, its origin's own
  403s and 503s (an outage, which is worth retrying) included, and so is ``cf-ray``: only the
  markers of Cloudflare's challenge and block pages in the body make it a wall. A challenge
  served with ``cf-mitigated: challenge`` needs no look at the body.
- ``x-sucuri-id`` is on every response through Sucuri's proxy: it counts with a 403 only, the
  status Sucuri's firewall blocks with.
- ``x-amzn-waf-action`` also counts on a 202 and a 405: AWS WAF answers its challenge with
  ``202 Accepted`` and its CAPTCHA with ``405 Method Not Allowed`` (AWS WAF developer guide,
  "CAPTCHA and Challenge action behavior"), so on 401, 403 and 503 alone the mark would never
  be seen. The 202 is the one 2xx that is a wall, not a page.

Header values are matched, never copied: the finding names the service from this table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError

__all__ = ["BODY_LOOK", "MARKS", "WALL_STATUSES", "Headers", "WallMark", "blocked", "find_wall"]

WALL_STATUSES = frozenset({401, 403, 503})
"""The final statuses a wall is recognised on (docs/web-over-time.md#bot-walls); one mark adds AWS
WAF's two."""

_AWS_WAF_STATUSES = WALL_STATUSES | {202, 405}

BODY_LOOK = 32 * 1024
"""Bytes of an error page's body looked at for a mark that needs the body."""

_ANY = re.compile(r".*", re.DOTALL)  # the header's presence is the mark

# Cloudflare's challenge ("Just a moment...") and block ("Attention Required!") pages.
_CLOUDFLARE_PAGE = re.compile(
    rb"/cdn-cgi/challenge-platform/|window\._cf_chl_opt|cf-browser-verification|cf_chl_"
    rb"|<title>Just a moment\.\.\.</title>|<title>Attention Required! \| Cloudflare</title>",
    re.IGNORECASE,
)


class Headers(Protocol):
    """Response headers as urllib3 holds them: every value of a name, case-insensitively."""

    def getlist(self, key: str) -> list[str]:
        """The values of header ``key``, in order (empty when absent)."""


@dataclass(frozen=True)
class WallMark:
    """One sign of a wall: ``header`` with a value ``value`` matches whole, on one of
    ``statuses``, and ``body`` (when set) found in the first ``BODY_LOOK`` bytes."""

    service: str
    header: str
    value: re.Pattern[str]
    statuses: frozenset[int] = WALL_STATUSES
    body: re.Pattern[bytes] | None = None

    def matches_headers(self, status: int, headers: Headers) -> bool:
        """Whether the status and the headers carry this mark (the body aside)."""
        return status in self.statuses and any(
            self.value.fullmatch(value.strip()) for value in headers.getlist(self.header))


def _value(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


MARKS: tuple[WallMark, ...] = (
    WallMark("Cloudflare", "cf-mitigated", _value("challenge")),
    WallMark("Cloudflare", "server", _value("cloudflare"), frozenset({403, 503}), _CLOUDFLARE_PAGE),
    WallMark("AWS WAF", "x-amzn-waf-action", _ANY, _AWS_WAF_STATUSES),
    WallMark("Akamai", "server", _value("AkamaiGHost"), frozenset({403})),
    WallMark("DataDome", "x-datadome", _ANY),
    WallMark("DataDome", "server", _value("DataDome")),
    WallMark("Sucuri", "x-sucuri-block", _ANY),
    WallMark("Sucuri", "x-sucuri-id", _ANY, frozenset({403})),
)
"""Every mark of a wall; the first that matches names the service."""

_STATUSES = frozenset().union(*(mark.statuses for mark in MARKS))


def find_wall(status: int, headers: Headers, body_head: Callable[[], bytes],
              ) -> WallMark | None:
    """The first mark in ``MARKS`` that a final response carries, or None.

    ``body_head`` returns the first ``BODY_LOOK`` bytes of the body; it is called at most once,
    and only when a mark that needs the body matches the status and headers.
    """
    if status not in _STATUSES:
        return None
    head: bytes | None = None
    for mark in MARKS:
        if not mark.matches_headers(status, headers):
            continue
        if mark.body is None:
            return mark
        if head is None:
            head = body_head()[:BODY_LOOK]
        if mark.body.search(head):
            return mark
    return None


def blocked(mark: WallMark, status: int) -> FetchError:
    """The TC319 finding for a wall: what happened and the remedies
    (docs/web-over-time.md#bot-walls)."""
    return FetchError(
        Code.SOURCE_BLOCKED,
        f"HTTP status {status}: the site refused an automated client ({mark.service} bot or "
        "challenge wall); try another --user-agent, list the URL in skip_urls, or report it as "
        "a warning (--warn TC319)",
        status=status,
    )
