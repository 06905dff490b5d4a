"""Retries (docs/web-over-time.md#retries): which failures are worth another attempt, how long to
wait before it, the server's ``Retry-After``, and the time a source may spend waiting for rate
limits.

Everything that waits or draws a random number takes it from :class:`RetryPolicy`'s fields, so
tests run the policy with a fake clock and never sleep.

Decisions the specification leaves open:

- "Backoff before attempt k": attempts are numbered from 1, so the first retry (attempt 2) waits
  up to 2 s, the second up to 4 s, and so on up to 30 s.
- A 429 without ``Retry-After`` is still a rate limit (it uses no retry): it waits the backoff
  of the next attempt, counted against ``max_wait`` like a ``Retry-After``.
- A source is rate limited at most :data:`MAX_RATE_LIMITED` times, so ``Retry-After: 0``
  answered forever still ends.
- ``Retry-After`` values that are neither delta-seconds nor an HTTP-date are ignored; a date in
  the past is no wait at all.

An attempt is a request sent: the fetcher waits for its host's request slot (a host at its
limit or in back-off, ``tracecite.fetch.hosts``) before the attempt's deadline starts, so no
attempt counted here is one that only waited, and waiting uses up no retry.
"""

from __future__ import annotations

import datetime
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError, TemporaryLookupError
from tracecite.fetch.limits import DEFAULT_MAX_RETRY_WAIT, DEFAULT_RETRIES

__all__ = [
    "MAX_BACKOFF",
    "MAX_RATE_LIMITED",
    "RATE_LIMIT_STATUSES",
    "TRANSIENT_STATUSES",
    "RetryPolicy",
    "backoff",
    "is_rate_limited",
    "is_transient",
    "parse_retry_after",
]

TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""HTTP statuses worth another attempt."""

RATE_LIMIT_STATUSES = frozenset({429, 503})
"""Statuses whose ``Retry-After`` is read, and that put their host in back-off
(docs/web-over-time.md#politeness-under-pressure)."""

MAX_BACKOFF = 30.0
"""Seconds: the backoff's ceiling, however many attempts came before."""

MAX_RATE_LIMITED = 20
"""Rate-limited answers a source takes at most before it fails."""

_DELTA_SECONDS = re.compile(r"[0-9]{1,10}")

T = TypeVar("T")


def is_transient(error: FetchError) -> bool:
    """Whether ``error`` may pass on its own: a broken connection (TC311), one attempt's
    timeout (TC313), a temporary resolver failure (never a name that does not exist) or an
    HTTP status of :data:`TRANSIENT_STATUSES`. Policy refusals, TLS, other statuses, limits,
    content and bot walls are the source's own answer."""
    if error.code in (Code.CONNECT_FAILED, Code.TIMEOUT):
        return True
    if error.code is Code.DNS_FAILURE:
        return isinstance(error, TemporaryLookupError)
    return error.code is Code.HTTP_STATUS and error.status in TRANSIENT_STATUSES


def is_rate_limited(error: FetchError) -> bool:
    """A 429, or a 503 with ``Retry-After``: rate limiting, which uses none of the retries."""
    if error.code is not Code.HTTP_STATUS:
        return False
    return error.status == 429 or (error.status == 503 and error.retry_after is not None)


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` value asks to wait (delta-seconds or an HTTP-date, read at
    ``now``, a ``time.time()`` value); None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if _DELTA_SECONDS.fullmatch(text):
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": still GMT, which every HTTP-date is
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - now)


def backoff(attempt: int, draw: Callable[[], float]) -> float:
    """The wait before attempt ``attempt`` (2 or more): full jitter, a random time in
    [0, min(30, 2^(attempt-1))] seconds; ``draw`` returns a number in [0, 1)."""
    return draw() * min(MAX_BACKOFF, 2.0 ** (attempt - 1))


@dataclass(frozen=True)
class RetryPolicy:
    """How often a source is tried again and how long it waits in between.

    ``retries``: extra attempts after transient failures; ``max_wait``: seconds a source may
    wait for rate limits in all (a longer ``Retry-After`` is not waited for); ``sleep`` and
    ``draw`` (a random number in [0, 1)) are for tests.
    """

    retries: int = DEFAULT_RETRIES
    max_wait: float = DEFAULT_MAX_RETRY_WAIT
    sleep: Callable[[float], None] = time.sleep
    draw: Callable[[], float] = random.random

    def run(self, attempt: Callable[[int], T]) -> tuple[T, int]:
        """Call ``attempt(n)`` (n = 1, 2, …) until it returns, and return what it returned with
        how many attempts it took. A :class:`FetchError` that is not transient, or one after the
        retries or the rate-limit budget are spent, is raised again with ``attempts`` set (and,
        when the server asked for too long a wait, how long in its detail)."""
        state = _State()
        while True:
            state.attempts += 1
            try:
                return attempt(state.attempts), state.attempts
            except FetchError as error:
                wait = self._wait(error, state)
            self.sleep(wait)

    def _wait(self, error: FetchError, state: _State) -> float:
        """The wait before the next attempt, counted in ``state``; raises the final error."""
        if not is_transient(error):
            raise _final(error, state.attempts)
        if not is_rate_limited(error):
            if state.retried >= self.retries:
                raise _final(error, state.attempts)
            state.retried += 1
            return backoff(state.attempts + 1, self.draw)
        asked = error.retry_after
        if asked is not None and asked > self.max_wait:
            raise _final(error, state.attempts, f"the server asked to wait {_seconds(asked)}, "
                         f"more than --max-retry-wait ({_seconds(self.max_wait)})")
        wait = asked if asked is not None else backoff(state.attempts + 1, self.draw)
        state.rate_limited += 1
        if state.waited + wait > self.max_wait or state.rate_limited >= MAX_RATE_LIMITED:
            raise _final(error, state.attempts, f"still rate limited after waiting "
                         f"{_seconds(state.waited)} (--max-retry-wait "
                         f"{_seconds(self.max_wait)} in all)")
        state.waited += wait
        return wait


@dataclass
class _State:
    """One source's attempts so far: all, those that used a retry, those rate limited, and
    the seconds waited for rate limits."""

    attempts: int = 0
    retried: int = 0
    rate_limited: int = 0
    waited: float = 0.0


def _final(error: FetchError, attempts: int, note: str | None = None) -> FetchError:
    """``error`` as the source's last word: its attempts, and ``note`` after its detail."""
    detail = error.detail if note is None else f"{error.detail}; {note}"
    return FetchError(error.code, detail, status=error.status, final_url=error.final_url,
                      retry_after=error.retry_after, attempts=attempts)


def _seconds(value: float) -> str:
    return f"{math.ceil(value * 10) / 10:g} s"  # tenths, rounded up: never less than asked
