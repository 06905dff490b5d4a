"""``--connect-to HOST:PORT:ADDR:PORT2`` rules (docs/reference/commands.md common options), in a
module below the option checks (:func:`tracecite.values.connect_to` parses with it) and the
fetcher's options (:mod:`tracecite.fetch.options`, which checks its values with them)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

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
