"""The fetcher's options (docs/reference/commands.md common options), in a module light enough for
the CLI to build and check them without importing urllib3: ``verify-files`` never fetches."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network

from tracecite.fetch.limits import (
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_PER_HOST,
    DEFAULT_USER_AGENT,
    MAX_BYTES,
    MAX_TIMEOUT,
)

_PORT = re.compile(r"[0-9]{1,5}")
_HOST_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]{0,252})")


@dataclass(frozen=True)
class ConnectTo:
    """curl's ``--connect-to HOST:PORT:ADDR:PORT2``: a request for HOST:PORT goes to ADDR:PORT2.

    ADDR stands in for HOST's DNS answer, so the address policy judges ADDR.
    """

    host: str
    port: int
    address: str
    address_port: int


def parse_connect_to(spec: str) -> ConnectTo:
    """Parse ``HOST:PORT:ADDR:PORT2`` (ADDR an IP literal, IPv6 in brackets); ValueError if bad."""
    # Read after the option's name, however it was given (--connect-to, the Action's input).
    usage = f"expects HOST:PORT:ADDR:PORT2 with ADDR an IP address, got {spec!r}"
    host, sep1, rest = spec.partition(":")
    port_text, sep2, rest = rest.partition(":")
    if not (sep1 and sep2):
        raise ValueError(usage)
    if rest.startswith("["):
        address_text, bracket, tail = rest[1:].partition("]")
        if not bracket or not tail.startswith(":"):
            raise ValueError(usage)
        address_port_text = tail[1:]
        if ":" not in address_text:
            raise ValueError(f"{usage}: only IPv6 addresses go in brackets")
    else:
        address_text, sep3, address_port_text = rest.rpartition(":")
        if not sep3:
            raise ValueError(usage)
        if ":" in address_text:
            raise ValueError(f"{usage}: write an IPv6 address in brackets, like [::1]")
    host = host.lower()
    if not _HOST_NAME.fullmatch(host):
        raise ValueError(f"{usage}: HOST must be a host name or IPv4 address")
    if "%" in address_text:
        raise ValueError(f"{usage}: zone ids are not allowed")
    try:
        address = ipaddress.ip_address(address_text)
    except ValueError:
        raise ValueError(f"{usage}: {address_text!r} is not an IP address") from None
    return ConnectTo(host, _parse_port(port_text, usage), str(address), _parse_port(
        address_port_text, usage))


def _parse_port(text: str, usage: str) -> int:
    port = int(text) if _PORT.fullmatch(text) else 0
    if not 1 <= port <= 65535:
        raise ValueError(f"{usage}: {text!r} is not a port number (1-65535)")
    return port


@dataclass(frozen=True)
class FetchOptions:
    """Limits and private-deployment options for one run (docs/reference/commands.md common
    options)."""

    timeout: float = MAX_TIMEOUT
    max_bytes: int = MAX_BYTES
    per_host: int = DEFAULT_PER_HOST
    user_agent: str = DEFAULT_USER_AGENT
    connect_to: tuple[ConnectTo, ...] = ()
    allow_net: tuple[IPv4Network | IPv6Network, ...] = ()
    ca_cert: str | None = None
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT  # the longest Retry-After a host backs off for

    def __post_init__(self) -> None:
        # The settings table is the one check of these values; a library caller that builds
        # options by hand gets the same refusals as the command line (a user agent with a line
        # break would be a header injection).
        from tracecite.settings import BY_NAME

        for name in ("timeout", "max_bytes", "per_host", "user_agent", "max_retry_wait"):
            try:
                BY_NAME[name].check(getattr(self, name))
            except ValueError as exc:
                raise ValueError(f"{name} {exc}") from None
