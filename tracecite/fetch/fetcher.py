"""The pinned fetcher: GET one http(s) URL safely, following redirects by hand (SPEC §4).

Every hop runs the same pipeline: URL rules (``parse_target``) → ``--connect-to`` override or one
name lookup → address policy → a connection to exactly the address that was checked, with the
original host name as ``Host``, TLS SNI and certificate name. Nothing in here looks a name up a
second time: the pools are keyed by IP address and open their sockets to that IP literal directly
(``tracecite.fetch.connection``).

One deadline covers a whole source: the name lookups (each on a daemon thread of its own, since
``getaddrinfo`` has no timeout: ``lookups``), the wait for a request slot on each host, every
connect, TLS handshake, request, redirect and the body.

The pieces, each in its own module: ``connection`` (sockets under the deadline, the pinned pools,
TLS), ``failures`` (what the network raised → registry codes), ``body`` (type, charset, codings,
caps, the text) and ``hosts`` (requests in flight per host name).

Decisions the specification leaves open:

- Several different ``Location`` headers are TC310. ``Location`` bytes are read as UTF-8 (falling
  back to Latin-1).
- A kept-alive connection that the server closed just as it was reused is retried once on a new
  connection to the same validated address; nothing else is ever retried.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv6Address
from types import TracebackType

from urllib3 import BaseHTTPResponse, HTTPConnectionPool
from urllib3.exceptions import ClosedPoolError
from urllib3.util import Timeout

from tracecite.codes import Code
from tracecite.fetch.address_policy import AddressPolicy, Resolver, system_resolver
from tracecite.fetch.body import ACCEPT, ACCEPT_ENCODING, drain_short_body, read_body
from tracecite.fetch.connection import (
    FetchClock,
    PinnedHTTPConnectionPool,
    PinnedHTTPSConnectionPool,
    check_ca_bundle,
    enforced,
    tls_context,
)
from tracecite.fetch.errors import FetchError
from tracecite.fetch.failures import NETWORK_EXCEPTIONS, is_stale_connection, network_failure
from tracecite.fetch.hosts import HostSlots
from tracecite.fetch.limits import MAX_REDIRECTS
from tracecite.fetch.lookups import Lookups
from tracecite.fetch.options import ConnectTo, FetchOptions
from tracecite.fetch.url_policy import Target, follow_redirect, parse_target

__all__ = ["Page", "PinnedFetcher"]

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_MAX_POOLS = 64  # least recently used pools beyond this are closed


@dataclass(frozen=True)
class Page:
    """A fetched page: final URL, status, media type (``""`` when absent) and UTF-8 text."""

    url: str
    status: int
    media_type: str
    text: str


_PoolKey = tuple[str, str, int, str]  # scheme, IP address, port, host name (SNI and Host)


@dataclass
class _Pools:
    """Connection pools keyed by ``_PoolKey``, least recently used first."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    by_key: OrderedDict[_PoolKey, HTTPConnectionPool] = field(default_factory=OrderedDict)
    closed: bool = False


class PinnedFetcher:
    """Fetches http(s) pages under SPEC §4's rules; thread-safe, reuses connections.

    ``resolver`` answers ``(host, port)`` with IP strings; tests inject one so that nothing
    outside loopback is ever asked or reached.
    """

    def __init__(self, options: FetchOptions, resolver: Resolver = system_resolver) -> None:
        self._options = options
        self._resolver = resolver
        self._policy = AddressPolicy(allow=options.allow_net)
        if options.ca_cert is not None:
            # Check the bundle now, cheaply; the full context (which reads the system store)
            # is built with the first https pool.
            check_ca_bundle(options.ca_cert)
        self._tls: ssl.SSLContext | None = None
        self._connect_to: dict[tuple[str, int], ConnectTo] = {}
        for rule in options.connect_to:
            self._connect_to.setdefault((rule.host, rule.port), rule)  # first match wins, as curl
        self._headers = {
            "User-Agent": options.user_agent,
            "Accept": ACCEPT,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        self._pools = _Pools()
        self._hosts = HostSlots(options.per_host)
        # getaddrinfo has no timeout of its own: each lookup runs on a daemon thread (never
        # joined, never pooled: see Lookups) so the deadline still holds.
        self._lookups = Lookups(resolver)

    def __enter__(self) -> PinnedFetcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection; the fetcher cannot be used afterwards."""
        with self._pools.lock:
            self._pools.closed = True
            pools = list(self._pools.by_key.values())
            self._pools.by_key.clear()
        for pool in pools:
            pool.close()
        # Lookups still running are abandoned: their threads are daemons and end on their own.

    @property
    def per_host(self) -> int:
        """Requests in flight to one host at most (``FetchOptions.per_host``)."""
        return self._options.per_host

    @property
    def hosts(self) -> HostSlots:
        """The request slots per host that every fetch counts on (see ``fetch``'s ``claimed``)."""
        return self._hosts

    def fetch(self, url: str, *, claimed: bool = False) -> Page:
        """GET ``url`` and return its text; raises ``FetchError`` with the registry code.

        ``claimed``: the caller has claimed a slot of :attr:`hosts` for the URL's host
        (``parse_target(url).host``); the first hop uses it instead of waiting, and frees it.
        """
        clock = FetchClock(time.monotonic() + self._options.timeout, self._options.timeout)
        with enforced(clock):
            target = parse_target(url)
            for redirects in range(MAX_REDIRECTS + 1):
                # Each hop holds a slot on its own host until its body is read or dropped.
                with (self._hosts.claimed(target.host) if claimed and not redirects
                      else self._hosts.hold(target.host, clock.deadline, clock.timeout)):
                    response = self._request(target, clock)
                    try:
                        if response.status not in _REDIRECT_STATUSES:
                            return self._page(target, response, clock)
                        if redirects == MAX_REDIRECTS:
                            break
                        target = follow_redirect(target, _location(response))
                        drain_short_body(response, clock)
                    finally:
                        # Returns a fully read connection to its pool; closes any other.
                        response.close()
                        response.release_conn()
            raise FetchError(Code.REDIRECT_LIMIT, f"more than {MAX_REDIRECTS} redirects")

    # -- one hop ------------------------------------------------------------------------------

    def _request(self, target: Target, clock: FetchClock) -> BaseHTTPResponse:
        address, port = self._destination(target, clock)
        headers = {**self._headers, "Host": target.host}  # URL ports are always the default
        for attempt in (1, 2):
            pool = self._pool(target, address, port)
            remaining = clock.remaining()
            clock.begin_attempt()
            try:
                return pool.urlopen(
                    "GET",
                    target.path,
                    headers=headers,
                    retries=False,
                    redirect=False,
                    assert_same_host=False,
                    timeout=Timeout(connect=remaining, read=remaining),
                    preload_content=False,
                    decode_content=False,
                    release_conn=False,
                )
            except NETWORK_EXCEPTIONS as exc:
                # Retried once: a pool evicted by another thread between lookup and use, or
                # a kept-alive connection the server closed before this request was sent.
                retry = isinstance(exc, ClosedPoolError) or (
                    not clock.opened and is_stale_connection(exc))
                if attempt == 2 or not retry:
                    raise network_failure(exc, clock) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _destination(self, target: Target, clock: FetchClock,
                     ) -> tuple[IPv4Address | IPv6Address, int]:
        """The one validated address (and port) this hop connects to."""
        rule = self._connect_to.get((target.host, target.port))
        if rule is not None:
            answers: list[str] = [rule.address]
            port = rule.address_port
        elif target.ip is not None:
            answers = [str(target.ip)]
            port = target.port
        else:
            answers = self._lookup(target, clock)
            port = target.port
        address = self._policy.pick(target, answers)
        if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # the same host, reached without dual-stack sockets
        return address, port

    def _lookup(self, target: Target, clock: FetchClock) -> list[str]:
        return self._lookups.lookup(target.host, target.port, clock.remaining(),
                                    shown_timeout=clock.timeout)

    def _pool(self, target: Target, address: IPv4Address | IPv6Address, port: int,
              ) -> HTTPConnectionPool:
        key: _PoolKey = (target.scheme, str(address), port, target.host)
        evicted = None
        with self._pools.lock:
            if self._pools.closed:
                raise RuntimeError("PinnedFetcher.fetch() called after close()")
            pool = self._pools.by_key.get(key)
            if pool is not None:
                self._pools.by_key.move_to_end(key)
                return pool
            if target.scheme == "https":
                if self._tls is None:
                    self._tls = tls_context(self._options.ca_cert)
                pool = PinnedHTTPSConnectionPool(
                    str(address), port, maxsize=self._options.per_host, retries=False,
                    ssl_context=self._tls, server_hostname=target.host,
                )
            else:
                pool = PinnedHTTPConnectionPool(str(address), port,
                                                maxsize=self._options.per_host, retries=False)
            self._pools.by_key[key] = pool
            if len(self._pools.by_key) > _MAX_POOLS:
                _, evicted = self._pools.by_key.popitem(last=False)
        if evicted is not None:
            evicted.close()  # idle connections close now, busy ones when released
        return pool

    def _page(self, target: Target, response: BaseHTTPResponse, clock: FetchClock) -> Page:
        status = response.status
        if not 200 <= status <= 299:
            raise FetchError(Code.HTTP_STATUS, f"HTTP status {status}", status=status)
        media_type, text = read_body(response, clock, self._options.max_bytes)
        return Page(url=target.url, status=status, media_type=media_type, text=text)


def _location(response: BaseHTTPResponse) -> str | None:
    """The redirect's target as sent: one distinct ``Location`` value, or None without one."""
    values = response.headers.getlist("Location")
    if len(set(values)) > 1:
        raise FetchError(Code.REDIRECT_INVALID, "several different Location headers")
    if not values:
        return None
    try:  # http.client decodes header bytes as Latin-1; servers mean UTF-8
        return values[0].encode("latin-1").decode("utf-8")
    except UnicodeError:
        return values[0]
