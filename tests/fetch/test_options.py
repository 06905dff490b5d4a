"""Tests of the fetch options: ``--connect-to`` rules and the ranges `FetchOptions` accepts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fetch.conftest import MiB
from tracecite.fetch.limits import DEFAULT_PER_HOST, MAX_BYTES, MAX_CONCURRENCY, MAX_TIMEOUT
from tracecite.fetch.options import ConnectTo, FetchOptions, parse_connect_to

# --------------------------------------------------------------------------------------------
# parse_connect_to


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("example.test:443:127.0.0.1:8443", ConnectTo("example.test", 443, "127.0.0.1", 8443)),
        ("Example.TEST:80:[::1]:8080", ConnectTo("example.test", 80, "::1", 8080)),
        ("93.184.216.34:443:10.1.2.3:443", ConnectTo("93.184.216.34", 443, "10.1.2.3", 443)),
        ("a.test:80:[2001:DB8:0::1]:1", ConnectTo("a.test", 80, "2001:db8::1", 1)),
        ("a.test:80:127.0.0.1:65535", ConnectTo("a.test", 80, "127.0.0.1", 65535)),
    ],
)
def test_parse_connect_to_accepts(spec: str, expected: ConnectTo) -> None:
    assert parse_connect_to(spec) == expected


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "example.test",
        "example.test:443:127.0.0.1",
        "example.test:443:localhost:443",  # ADDR must be an IP literal
        "example.test:443:::1:443",  # IPv6 without brackets
        "example.test:443:[127.0.0.1]:443",  # brackets are for IPv6 only
        "example.test:443:[::1]443",
        "example.test:443:[::1:443",
        "example.test:443:[fe80::1%eth0]:443",  # zone id
        "example.test:443:0177.0.0.1:443",  # non-canonical IPv4
        "example.test:443:127.1:443",
        "example.test:0:127.0.0.1:443",
        "example.test:65536:127.0.0.1:443",
        "example.test:+443:127.0.0.1:443",
        "example.test: 443:127.0.0.1:443",
        "example.test:443:127.0.0.1:",
        "example.test::127.0.0.1:443",
        ":443:127.0.0.1:443",  # curl's empty-HOST wildcard is not supported
        "exa mple.test:443:127.0.0.1:443",
        "[::1]:443:127.0.0.1:443",
        "example.test:443:127.0.0.1:4430000",
    ],
)
def test_parse_connect_to_refuses(spec: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT:ADDR:PORT2"):
        parse_connect_to(spec)


# --------------------------------------------------------------------------------------------
# FetchOptions


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": 0},
        {"timeout": -1},
        {"timeout": MAX_TIMEOUT + 0.001},
        {"timeout": float("nan")},
        {"max_bytes": 0},
        {"max_bytes": MAX_BYTES + 1},
        {"per_host": 0},
        {"per_host": MAX_CONCURRENCY + 1},
        {"user_agent": ""},
        {"user_agent": "evil\r\nX-Injected: 1"},
        {"user_agent": "caf\u00e9"},
    ],
)
def test_fetch_options_refuse_out_of_range_values(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        FetchOptions(**options)


def test_fetch_options_defaults() -> None:
    options = FetchOptions()
    assert options.timeout == MAX_TIMEOUT == 20.0
    assert options.max_bytes == MAX_BYTES == 2 * MiB
    assert options.per_host == DEFAULT_PER_HOST == 8
    assert options.user_agent.startswith("tracecite/")
    assert options.connect_to == options.allow_net == ()
    assert options.ca_cert is None
