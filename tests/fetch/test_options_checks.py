"""`FetchOptions` checks its values with the settings table's checks: the same bounds refuse the
same values, whichever way the options are built."""

from __future__ import annotations

from typing import Any

import pytest

from tracecite.fetch.limits import MAX_BYTES, MAX_CONCURRENCY, MAX_RETRY_WAIT, MAX_TIMEOUT
from tracecite.fetch.options import FetchOptions
from tracecite.settings import BY_NAME

CASES = [
    ("timeout", [0, 0.5, MAX_TIMEOUT, MAX_TIMEOUT + 1, float("nan"), True]),
    ("max_bytes", [0, 1, MAX_BYTES, MAX_BYTES + 1, 1.5]),
    ("per_host", [0, 1, MAX_CONCURRENCY, MAX_CONCURRENCY + 1]),
    ("user_agent", ["", "probe/1.0", "evil\r\nX-Injected: 1", "caf\u00e9", "x" * 1001]),
    ("max_retry_wait", [-1, 0, MAX_RETRY_WAIT, MAX_RETRY_WAIT + 1]),
]


def _refusal(check: Any) -> str | None:
    try:
        check()
    except ValueError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize(("name", "tried"), CASES, ids=[name for name, _ in CASES])
def test_the_fetch_options_refuse_what_the_settings_refuse(name: str, tried: list[Any]) -> None:
    for value in tried:
        by_settings = _refusal(lambda: BY_NAME[name].check(value))  # noqa: B023
        by_options = _refusal(lambda: FetchOptions(**{name: value}))  # noqa: B023
        expected = None if by_settings is None else f"{name} {by_settings}"
        assert by_options == expected, value
