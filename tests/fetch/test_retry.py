"""Tests of the retry policy (docs/web-over-time.md#retries) on its own: which failures are retried,
the backoff's bounds, ``Retry-After``, and the rate-limit budget. Nothing here sleeps or touches a
network: the policy gets a fake sleep and a fake random source."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from email.utils import format_datetime

import pytest

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError, TemporaryLookupError
from tracecite.fetch.retry import (
    MAX_RATE_LIMITED,
    RetryPolicy,
    backoff,
    is_rate_limited,
    is_transient,
    parse_retry_after,
)


def status(code: int, retry_after: float | None = None) -> FetchError:
    """The fetcher's error for a non-2xx answer."""
    return FetchError(Code.HTTP_STATUS, f"HTTP status {code}", status=code,
                      retry_after=retry_after)


TRANSIENT = {
    "refused-reset-unreachable": FetchError(Code.CONNECT_FAILED, "ECONNREFUSED"),
    "reset-mid-body": FetchError(Code.CONNECT_FAILED,
                                 "the connection closed before the end of the body"),
    "timeout": FetchError(Code.TIMEOUT, "no complete response within 20 s"),
    "dns-temporary": TemporaryLookupError("'a.test' does not resolve: try again"),
    **{f"http-{n}": status(n) for n in (408, 429, 500, 502, 503, 504)},
}

PERMANENT = {
    "dns-nxdomain": FetchError(Code.DNS_FAILURE, "'a.test' does not resolve: unknown name"),
    "url-invalid": FetchError(Code.URL_INVALID, "bad"),
    "address-refused": FetchError(Code.ADDRESS_REFUSED, "loopback"),
    "redirect-limit": FetchError(Code.REDIRECT_LIMIT, "more than 5 redirects"),
    "redirect-downgrade": FetchError(Code.REDIRECT_DOWNGRADE, "https to http"),
    "tls": FetchError(Code.TLS_FAILED, "certificate rejected"),
    "too-large": FetchError(Code.TOO_LARGE, "over the cap"),
    "content-type": FetchError(Code.CONTENT_TYPE_UNSUPPORTED, "image/png"),
    "charset": FetchError(Code.NOT_UTF8, "latin-1"),
    "parse-limit": FetchError(Code.PARSE_LIMIT, "too many nodes"),
    "bot-wall": FetchError(Code.SOURCE_BLOCKED, "challenge", status=503),
    **{f"http-{n}": status(n) for n in (400, 401, 403, 404, 410, 501, 505)},
}


@pytest.mark.parametrize("error", TRANSIENT.values(), ids=TRANSIENT.keys())
def test_transient_failures_are_retried(error: FetchError) -> None:
    assert is_transient(error)
    sleeps: list[float] = []
    outcomes = iter([error, "page"])
    page, attempts = RetryPolicy(sleep=sleeps.append, draw=lambda: 0.5).run(
        lambda n: _next(outcomes))
    assert (page, attempts) == ("page", 2)
    assert len(sleeps) == 1


@pytest.mark.parametrize("error", PERMANENT.values(), ids=PERMANENT.keys())
def test_other_failures_are_not_retried(error: FetchError) -> None:
    assert not is_transient(error)
    sleeps: list[float] = []
    calls: list[int] = []

    def attempt(n: int) -> str:
        calls.append(n)
        raise error

    with pytest.raises(FetchError) as caught:
        RetryPolicy(sleep=sleeps.append).run(attempt)
    assert (calls, sleeps) == ([1], [])
    assert (caught.value.code, caught.value.detail, caught.value.attempts) == (
        error.code, error.detail, 1)


def _next(outcomes: Iterator[FetchError | str]) -> str:
    outcome = next(outcomes)
    if isinstance(outcome, FetchError):
        raise outcome
    return outcome


def failing(error: FetchError) -> Callable[[int], str]:
    """An attempt that always fails with ``error``."""
    def attempt(n: int) -> str:
        raise error
    return attempt


@pytest.mark.parametrize("retries", [0, 1, 2, 5])
def test_retries_are_extra_attempts_and_the_last_error_says_how_many(retries: int) -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(retries=retries, sleep=sleeps.append, draw=lambda: 0.0)
    with pytest.raises(FetchError) as caught:
        policy.run(failing(status(500)))
    assert caught.value.attempts == retries + 1
    assert (caught.value.code, caught.value.status) == (Code.HTTP_STATUS, 500)
    assert sleeps == [0.0] * retries


def test_backoff_is_full_jitter_up_to_two_to_the_k_minus_one_and_thirty() -> None:
    assert [backoff(k, lambda: 0.0) for k in range(2, 9)] == [0.0] * 7
    assert [backoff(k, lambda: 1.0) for k in range(2, 9)] == [2, 4, 8, 16, 30, 30, 30]
    assert backoff(3, lambda: 0.25) == 1.0
    sleeps: list[float] = []
    almost_one = 0.999999
    with pytest.raises(FetchError):
        RetryPolicy(retries=5, sleep=sleeps.append, draw=lambda: almost_one).run(
            failing(FetchError(Code.CONNECT_FAILED, "ECONNRESET")))
    assert sleeps == pytest.approx([2 * almost_one, 4 * almost_one, 8 * almost_one,
                                    16 * almost_one, 30 * almost_one])
    assert all(0 <= s <= min(30, 2 ** k) for k, s in enumerate(sleeps, start=1))


def test_retry_after_delta_seconds() -> None:
    assert parse_retry_after("120", now=0) == 120.0
    assert parse_retry_after(" 0 ", now=0) == 0.0
    for bad in (None, "", "-1", "1.5", "soon", "1e3", "0x10"):
        assert parse_retry_after(bad, now=0) is None


def test_retry_after_http_date() -> None:
    now = datetime(2026, 12, 1, 10, 0, 0, tzinfo=timezone.utc).timestamp()
    later = format_datetime(datetime(2026, 12, 1, 10, 0, 45, tzinfo=timezone.utc), usegmt=True)
    assert later == "Tue, 01 Dec 2026 10:00:45 GMT"
    assert parse_retry_after(later, now=now) == 45.0
    assert parse_retry_after("Tue, 01 Dec 2026 10:00:45 -0000", now=now) == 45.0
    assert parse_retry_after("Tue, 01 Dec 2026 09:00:00 GMT", now=now) == 0.0  # past: no wait
    assert parse_retry_after("Tuesday, sometime", now=now) is None


def test_retry_after_is_waited_for_instead_of_the_backoff() -> None:
    sleeps: list[float] = []
    outcomes = iter([status(503, retry_after=7), "page"])
    result = RetryPolicy(sleep=sleeps.append, draw=lambda: 0.9).run(lambda n: _next(outcomes))
    assert result == ("page", 2)
    assert sleeps == [7]


def test_a_longer_retry_after_is_not_waited_for_and_the_message_says_how_long() -> None:
    sleeps: list[float] = []
    with pytest.raises(FetchError) as caught:
        RetryPolicy(max_wait=30, sleep=sleeps.append).run(failing(status(429, 3600)))
    assert sleeps == []
    assert caught.value.attempts == 1
    assert caught.value.detail == ("HTTP status 429; the server asked to wait 3600 s, more "
                                   "than --max-retry-wait (30 s)")
    assert caught.value.retry_after == 3600


def test_rate_limiting_uses_none_of_the_retries() -> None:
    sleeps: list[float] = []
    outcomes = iter([status(429, 1), status(503, 2), status(429, None), status(429, 1), "page"])
    result = RetryPolicy(retries=0, sleep=sleeps.append, draw=lambda: 0.5).run(
        lambda n: _next(outcomes))
    assert result == ("page", 5)
    assert sleeps == [1, 2, 4.0, 1]  # a 429 without Retry-After: the backoff of attempt 4
    assert is_rate_limited(status(429)) and is_rate_limited(status(503, 0))
    assert not is_rate_limited(status(503)) and not is_rate_limited(status(500, 5))


def test_a_503_without_retry_after_uses_a_retry() -> None:
    sleeps: list[float] = []
    with pytest.raises(FetchError) as caught:
        RetryPolicy(retries=1, sleep=sleeps.append, draw=lambda: 0.5).run(failing(status(503)))
    assert caught.value.attempts == 2
    assert sleeps == [1.0]


def test_the_time_waited_for_rate_limits_is_bounded_in_all() -> None:
    sleeps: list[float] = []
    with pytest.raises(FetchError) as caught:
        RetryPolicy(retries=5, max_wait=2.5, sleep=sleeps.append).run(failing(status(429, 1)))
    assert sleeps == [1, 1]  # a third second would pass the budget
    assert caught.value.attempts == 3
    assert caught.value.detail == ("HTTP status 429; still rate limited after waiting 2 s "
                                   "(--max-retry-wait 2.5 s in all)")


def test_the_budget_and_the_retries_are_counted_apart() -> None:
    sleeps: list[float] = []
    outcomes = iter([status(500), status(429, 2), status(502), status(429, 2), status(504)])
    with pytest.raises(FetchError) as caught:
        RetryPolicy(retries=2, max_wait=4, sleep=sleeps.append, draw=lambda: 0.0).run(
            lambda n: _next(outcomes))
    assert sleeps == [0.0, 2, 0.0, 2]
    assert (caught.value.status, caught.value.attempts) == (504, 5)


def test_no_wait_for_rate_limits_at_all() -> None:
    with pytest.raises(FetchError) as caught:
        RetryPolicy(max_wait=0, sleep=pytest.fail).run(failing(status(429, 1)))
    assert caught.value.attempts == 1


def test_retry_after_zero_forever_still_ends() -> None:
    sleeps: list[float] = []
    with pytest.raises(FetchError) as caught:
        RetryPolicy(sleep=sleeps.append).run(failing(status(429, 0)))
    assert caught.value.attempts == MAX_RATE_LIMITED
    assert sleeps == [0] * (MAX_RATE_LIMITED - 1)


def test_the_final_error_keeps_what_the_fetcher_said() -> None:
    error = FetchError(Code.HTTP_STATUS, "HTTP status 502", status=502,
                       final_url="https://a.test/moved")
    with pytest.raises(FetchError) as caught:
        RetryPolicy(retries=1, sleep=lambda s: None).run(failing(error))
    final = caught.value
    assert (final.code, final.detail, final.status, final.final_url, final.attempts) == (
        Code.HTTP_STATUS, "HTTP status 502", 502, "https://a.test/moved", 2)


def test_unexpected_exceptions_are_not_retried() -> None:
    calls: list[int] = []

    def attempt(n: int) -> str:
        calls.append(n)
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError):
        RetryPolicy(sleep=pytest.fail).run(attempt)
    assert calls == [1]
