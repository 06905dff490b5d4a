"""Process-wide guards built on audit hooks (PEP 578): they see every socket and every file
opened in any thread, including sockets made by classes that subclass ``socket.socket`` before a
test could monkeypatch it (the fetcher's ``_DeadlineSocket``) and files opened from C.

An audit hook cannot be removed, so one hook is installed on first use and does nothing unless a
guard is active. Guards record what they see; the network guard also refuses (raises
`NetworkRefused`, which is not an ``OSError``, so no code path can mistake it for a network
failure and turn it into a finding: it surfaces as an internal error, exit 3).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_INET = (socket.AF_INET, socket.AF_INET6)


class NetworkRefused(RuntimeError):
    """A guarded test touched the network where it must not."""


@dataclass
class NetworkLog:
    """What the network guard saw; ``violations`` must stay empty."""

    loopback_ok: bool
    sockets: int = 0
    connects: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)


@dataclass
class OpenLog:
    """Every path opened (``open``, ``os.open``, ``io.open_code``) while the guard is active."""

    paths: list[str] = field(default_factory=list)


_lock = threading.Lock()
_network: NetworkLog | None = None
_opens: OpenLog | None = None
_installed = False


def _is_loopback(host: object) -> bool:
    try:
        return ipaddress.ip_address(str(host).partition("%")[0]).is_loopback
    except ValueError:
        return False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    log = _network
    if log is not None and event.startswith("socket."):
        _network_event(log, event, args)
    opens = _opens
    if opens is not None and event == "open" and args and isinstance(args[0], (str, bytes)):
        path = os.fsdecode(args[0])
        opens.paths.append(path)


def _network_event(log: NetworkLog, event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.__new__":
        if len(args) > 1 and args[1] in _INET:
            log.sockets += 1
            if not log.loopback_ok:
                _refuse(log, f"socket({args[1]!r})")
    elif event == "socket.connect":
        address = args[1] if len(args) > 1 else None
        if isinstance(address, tuple):
            log.connects.append(f"{address[0]}:{address[1]}")
            if not (log.loopback_ok and _is_loopback(address[0])):
                _refuse(log, f"connect to {address!r}")
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
                   "socket.gethostbyaddr", "socket.getnameinfo"):
        host = args[0] if args else None
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        if not (log.loopback_ok and _is_loopback(host)):
            _refuse(log, f"{event}({host!r})")


def _refuse(log: NetworkLog, what: str) -> None:
    log.violations.append(what)
    raise NetworkRefused(f"network access in a guarded test: {what}")


def _install() -> None:
    global _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True


@contextmanager
def network_guard(*, loopback_ok: bool = False) -> Iterator[NetworkLog]:
    """Record (and refuse) sockets, connects and name lookups while active.

    ``loopback_ok=False``: any IPv4/IPv6 socket, any connect, any lookup is a violation.
    ``loopback_ok=True``: sockets may be made and may connect to loopback addresses only; a
    lookup is allowed only for a loopback literal (no name ever reaches DNS).
    """
    global _network
    _install()
    log = NetworkLog(loopback_ok=loopback_ok)
    previous, _network = _network, log
    try:
        yield log
    finally:
        _network = previous


@contextmanager
def open_guard() -> Iterator[OpenLog]:
    """Record every path opened while active (relative paths as given)."""
    global _opens
    _install()
    log = OpenLog()
    previous, _opens = _opens, log
    try:
        yield log
    finally:
        _opens = previous
