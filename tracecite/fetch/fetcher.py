"""The pinned fetcher: GET one http(s) URL safely, following redirects by hand
(docs/reference/fetching.md).

Every hop runs the same pipeline: URL rules (``parse_target``) → ``--connect-to`` override or one
name lookup → address policy → a connection to exactly the address that was checked, with the
original host name as ``Host``, TLS SNI and certificate name. Nothing in here looks a name up a
second time: the pools are keyed by IP address and open their sockets to that IP literal directly
(``tracecite.fetch.connection``).

One deadline covers a whole attempt at a source: the name lookups (each on a daemon thread of its
own, since ``getaddrinfo`` has no timeout: ``lookups``), every connect, TLS handshake, request,
redirect and the body. The wait for a request slot on a host is not part of it: the deadline runs
from when the request goes out (docs/web-over-time.md#retries).

The pieces, each in its own module: ``connection`` (sockets under the deadline, the pinned pools,
TLS), ``failures`` (what the network raised → registry codes), ``body`` (type, charset, codings,
caps, the text) and ``hosts`` (requests in flight per host name).

Decisions the specification leaves open:

- Several different ``Location`` (or ``Refresh``) headers are TC310. ``Location`` and
  ``Refresh`` bytes are read as UTF-8 (falling back to Latin-1).
- A 204, 205 or 206 (TraceCite never asks for a range) has no page to check: TC315.
- Refreshes (``tracecite.fetch.refresh``) are hops like redirects; bot walls
  (``tracecite.fetch.walls``) are recognised on the final status.
- A failure after at least one redirect carries ``final_url``: the URL of the hop that failed.
- A kept-alive connection that the server closed just as it was reused is retried once on a new
    connection to the same validated address; nothing else is retried here (a source's retries are
    its loader's, ``tracecite.fetch.retry``). A 429 or 503 backs its host off
    (``HostSlots.back_off``) and each 2xx lets it speed up again
    (docs/web-over-time.md#politeness-under-pressure).
"""

from __future__ import annotations

import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from ipaddress import IPv4Address, IPv6Address
from types import TracebackType

from urllib3 import BaseHTTPResponse, HTTPConnectionPool
from urllib3.exceptions import ClosedPoolError
from urllib3.util import Timeout

from tracecite.codes import Code
from tracecite.fetch.address_policy import AddressPolicy, Resolver, system_resolver
from tracecite.fetch.body import (
    ACCEPT,
    ACCEPT_ENCODING,
    ByteBudget,
    Held,
    drain_short_body,
    read_body,
    read_head,
)
from tracecite.fetch.ca_bundle import load_ca_bundle
from tracecite.fetch.connection import (
    FetchClock,
    PinnedHTTPConnectionPool,
    PinnedHTTPSConnectionPool,
    enforced,
    tls_context,
)
from tracecite.fetch.errors import FetchError
from tracecite.fetch.failures import NETWORK_EXCEPTIONS, is_stale_connection, network_failure
from tracecite.fetch.hosts import HostSlots
from tracecite.fetch.limits import MAX_REDIRECTS
from tracecite.fetch.lookups import Lookups
from tracecite.fetch.options import ConnectTo, FetchOptions
from tracecite.fetch.refresh import MAX_REFRESH_DELAY, meta_refresh, refresh_target
from tracecite.fetch.retry import RATE_LIMIT_STATUSES, parse_retry_after
from tracecite.fetch.url_policy import Target, follow_redirect, parse_target
from tracecite.fetch.walls import BODY_LOOK, blocked, find_wall

__all__ = ["Page", "PinnedFetcher"]

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_NOTHING_TO_CHECK = frozenset({204, 205, 206})  # no content, reset content, a range never asked for
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})  # where a meta refresh counts
_MAX_POOLS = 64  # least recently used pools beyond this are closed


@dataclass(frozen=True)
class Page:
    """A fetched page: final URL, status, media type (``""`` when absent) and UTF-8 text, or a
    PDF's bytes (docs/guides/pdf.md); ``final_url`` is the final URL again when the source was
    redirected (by ``Location`` or a refresh), None when it was not."""

    url: str
    status: int
    media_type: str
    text: str | bytes
    final_url: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    """The page's validators, for a conditional request next time
    (docs/web-over-time.md#the-cache)."""
    held: Held | None = field(default=None, compare=False, repr=False)
    """A PDF's share of the fetcher's budget of PDF bodies loading at once
    (:mod:`tracecite.fetch.body`): released by whoever hands the body over, or when the page
    is dropped."""


_PoolKey = tuple[str, str, int, str]  # scheme, IP address, port, host name (SNI and Host)


@dataclass
class _Pools:
    """Connection pools keyed by ``_PoolKey``, least recently used first."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    by_key: OrderedDict[_PoolKey, HTTPConnectionPool] = field(default_factory=OrderedDict)
    closed: bool = False


class PinnedFetcher:
    """Fetches http(s) pages under docs/reference/fetching.md's rules; thread-safe, reuses
    connections.

    ``resolver`` answers ``(host, port)`` with IP strings; tests inject one so that nothing
    outside loopback is ever asked or reached. ``pdf_loads``: the budget of PDF bodies loading
    at once (:mod:`tracecite.fetch.body`), the fetcher's own by default.
    """

    def __init__(self, options: FetchOptions, resolver: Resolver = system_resolver, *,
                 pdf_loads: ByteBudget | None = None) -> None:
        self._options = options
        self._resolver = resolver
        self._pdf_loads = ByteBudget() if pdf_loads is None else pdf_loads
        self._policy = AddressPolicy(allow=options.allow_net)
        # The bundle now (a ValueError when it cannot be loaded): the one the run's settings
        # check loaded, or read here; the system store is added with the first https pool.
        self._ca_bundle = options.ca_bundle
        if self._ca_bundle is None and options.ca_cert is not None:
            self._ca_bundle = load_ca_bundle(options.ca_cert)
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
        self._hosts = HostSlots(options.per_host, max_back_off=options.max_retry_wait)
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

    def fetch(self, url: str, *, claimed: bool = False,
              validators: Mapping[str, str] | None = None) -> Page:
        """GET ``url`` and return its text; raises ``FetchError`` with the registry code.

        ``claimed``: the caller has claimed a slot of :attr:`hosts` for the URL's host
        (``parse_target(url).host``); the first hop uses it instead of waiting, and frees it.
        ``validators``: ``If-None-Match``/``If-Modified-Since`` headers sent with each hop; a
        final 304 is then a :class:`Page` with status 304 and no text.
        """
        clock = FetchClock(time.monotonic() + self._options.timeout, self._options.timeout)
        with enforced(clock):
            target = parse_target(url)
            for redirects in range(MAX_REDIRECTS + 1):
                try:
                    # Each hop holds a slot on its own host until its body is read or dropped.
                    with self._slot(target.host, clock, claimed=claimed and not redirects):
                        hop = self._hop(target, clock, last=redirects == MAX_REDIRECTS,
                                        validators=validators)
                except FetchError as error:
                    if redirects and error.final_url is None:
                        error.final_url = target.url  # where the redirects ended
                    raise
                if isinstance(hop, Page):
                    return replace(hop, final_url=target.url) if redirects else hop
                target = hop
            raise AssertionError("unreachable")  # pragma: no cover: the last hop never redirects

    @contextmanager
    def _slot(self, host: str, clock: FetchClock, *, claimed: bool) -> Iterator[None]:
        """A request slot on ``host`` for one hop (``claimed``: the caller's, taken before).

        Waiting for it (the host at its limit or in back-off) is no part of the attempt
        (docs/web-over-time.md#retries): the deadline is moved on by the time waited, so it
        runs from when the request goes out, and a busy host delays a source, never fails it.
        """
        if claimed:
            with self._hosts.claimed(host):
                yield
            return
        started = time.monotonic()
        with self._hosts.hold(host):
            clock.deadline += time.monotonic() - started
            yield

    # -- one hop ------------------------------------------------------------------------------

    def _hop(self, target: Target, clock: FetchClock, *, last: bool,
             validators: Mapping[str, str] | None) -> Page | Target:
        """One request: the page, or where a redirect or refresh sends the fetch next (TC308
        when ``last`` and it would go on)."""
        response = self._request(target, clock, validators)
        try:
            if response.status in _REDIRECT_STATUSES:
                next_target = _next(target, _location(response), last=last)
                drain_short_body(response, clock)
                return next_target
            return self._page(target, response, clock, last=last, validators=validators)
        finally:
            # Returns a fully read connection to its pool; closes any other.
            response.close()
            response.release_conn()

    def _request(self, target: Target, clock: FetchClock,
                 validators: Mapping[str, str] | None = None) -> BaseHTTPResponse:
        address, port = self._destination(target, clock)
        # URL ports are always the default
        headers = {**self._headers, **(validators or {}), "Host": target.host}
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
                    self._tls = tls_context(self._ca_bundle)
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

    def _page(self, target: Target, response: BaseHTTPResponse, clock: FetchClock, *,
              last: bool, validators: Mapping[str, str] | None) -> Page | Target:
        status = response.status
        etag, modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
        if status == 304 and validators:
            return Page(url=target.url, status=status, media_type="", text="", etag=etag,
                        last_modified=modified)
        wall = find_wall(status, response.headers, lambda: read_head(response, clock, BODY_LOOK))
        if wall is not None:
            raise blocked(wall, status)
        if not 200 <= status <= 299:
            wait = None
            # the host backs off (docs/web-over-time.md#politeness-under-pressure)
            if status in RATE_LIMIT_STATUSES:
                wait = parse_retry_after(response.headers.get("Retry-After"), time.time())
                self._hosts.back_off(target.host, wait)
            raise FetchError(Code.HTTP_STATUS, f"HTTP status {status}", status=status,
                             retry_after=wait)
        self._hosts.succeeded(target.host)
        if status in _NOTHING_TO_CHECK:
            raise FetchError(Code.HTTP_STATUS, f"HTTP status {status} has no page to check",
                             status=status)
        header = _one_value(response, "Refresh")
        refresh = None if header is None else refresh_target(header)
        refreshed = _refreshed(target, refresh, last=last)
        if refreshed is not None:
            drain_short_body(response, clock)
            return refreshed
        media_type, text, held = read_body(response, clock, self._options.max_bytes,
                                           self._options.max_pdf_bytes, self._pdf_loads)
        if media_type in _HTML_TYPES and isinstance(text, str):
            refreshed = _refreshed(target, meta_refresh(text), last=last)
            if refreshed is not None:
                return refreshed
        return Page(url=target.url, status=status, media_type=media_type, text=text, etag=etag,
                    last_modified=modified, held=held)


def _next(target: Target, location: str | None, *, last: bool) -> Target:
    """The hop a redirect to ``location`` leads to; TC308 when ``last``."""
    if last:
        raise FetchError(Code.REDIRECT_LIMIT, f"more than {MAX_REDIRECTS} redirects")
    return follow_redirect(target, location)


def _refreshed(target: Target, refresh: tuple[int, str | None] | None, *, last: bool,
               ) -> Target | None:
    """The hop a refresh leads to, or None when it is not followed (none, too slow, or to the
    page itself)."""
    if refresh is None or refresh[0] > MAX_REFRESH_DELAY or refresh[1] is None:
        return None
    next_target = follow_redirect(target, refresh[1])
    if next_target.url == target.url:
        return None  # a reload would repeat for ever: the page is checked as it is
    if last:
        raise FetchError(Code.REDIRECT_LIMIT, f"more than {MAX_REDIRECTS} redirects")
    return next_target


def _location(response: BaseHTTPResponse) -> str | None:
    """The redirect's target as sent: one distinct ``Location`` value, or None without one."""
    return _one_value(response, "Location")


def _one_value(response: BaseHTTPResponse, name: str) -> str | None:
    """The one distinct value of header ``name`` (``Location``, ``Refresh``), or None."""
    values = response.headers.getlist(name)
    if len(set(values)) > 1:
        raise FetchError(Code.REDIRECT_INVALID, f"several different {name} headers")
    if not values:
        return None
    try:  # http.client decodes header bytes as Latin-1; servers mean UTF-8
        return values[0].encode("latin-1").decode("utf-8")
    except UnicodeError:
        return values[0]
