"""The benchmark server with the weather of the real web: transient faults and a rate limit.

:class:`FaultServer` is :class:`web_server.BenchServer` (loopback only, request counts per path
and per ``Host``, everything stops by itself) with three things added, for figure 5:

- Transient faults, chosen from a seed: a share of the pages (10 % by default) fails on its
  first request and is served normally from the next one on. The faults take turns: a ``503``
  (no ``Retry-After``), a reset mid-body (the status line, the headers and half the body, then
  a TCP reset), a ``429`` with ``Retry-After: 1``, and a gzip body cut short (``gzip-cut``: a
  complete response, its ``Content-Length`` met, whose gzip stream stops halfway).
- Back-off with stalls (``stalled``, by ``Host`` header): every request to such a host takes
  ``stall`` seconds, and the pages planned ``503-wait`` answer their first request ``503`` with
  ``Retry-After: 1`` — the host is in back-off again and again while its slow requests queue.
- A rate limit on some hosts (by ``Host`` header): beyond ``rate`` requests in any one second a
  request is answered ``429`` with ``Retry-After: 1``. A request refused by the rate limit does
  not use up its page's fault: the fault comes with the first request the limit lets through.
- Validators: every page has an ``ETag`` (a hash of its body) and a fixed ``Last-Modified``; a
  ``GET`` with a matching ``If-None-Match`` (or, without one, an ``If-Modified-Since`` not before
  ``Last-Modified``) is answered ``304 Not Modified`` with no body.

``reset()`` returns the counts so far and starts afresh, faults included: every run of a
benchmark meets the same faults.

    python benchmarks/fault_server.py --pages 200 --seconds 60   # try it by hand
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email.utils
import gzip
import hashlib
import random
import socket
import struct
import time
from collections import Counter, deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from web_server import BenchServer, ServerStats, demo_pages, parse_request

FAULTS = ("503", "reset", "429", "gzip-cut")
"""The faults :func:`plan_faults` takes turns with."""
STALL_FAULT = "503-wait"
"""The fault of the stalled hosts' pages (:func:`plan_stalls`)."""
LAST_MODIFIED = email.utils.formatdate(1_700_000_000, usegmt=True)  # 14 Nov 2023, fixed
_LAST_MODIFIED_AT = 1_700_000_000


@dataclass
class FaultStats(ServerStats):
    """What the server saw since the last ``reset``, with what it answered."""

    answers: Counter[str] = field(default_factory=Counter)  # "200", "304", "503", "reset", …
    served: Counter[str] = field(default_factory=Counter)  # requests past the rate limit


def plan_faults(paths: Sequence[str], seed: int, share: float = 0.10) -> dict[str, str]:
    """``share`` of ``paths`` (at random from ``seed``), each with the fault of its first
    request, the kinds of :data:`FAULTS` taking turns."""
    rng = random.Random(seed)
    chosen = rng.sample(list(paths), round(len(paths) * share))
    return {path: FAULTS[n % len(FAULTS)] for n, path in enumerate(chosen)}


def plan_stalls(paths: Sequence[str], seed: int, share: float = 0.25) -> dict[str, str]:
    """``share`` of ``paths`` (a stalled host's pages, at random from ``seed``), each answering
    its first request ``503`` with ``Retry-After: 1``."""
    rng = random.Random(seed + 1)
    return dict.fromkeys(rng.sample(list(paths), round(len(paths) * share)), STALL_FAULT)


class FaultServer(BenchServer):
    """Serves ``pages`` like :class:`BenchServer`; the first request of each path in ``faults``
    fails as its fault says, and the hosts in ``limited`` (``Host`` headers) allow ``rate``
    requests per second."""

    stats: FaultStats

    def __init__(self, pages: Mapping[str, bytes], *, faults: Mapping[str, str],
                 limited: Collection[str] = (), rate: int = 5, latency: float = 0.0,
                 stalled: Collection[str] = (), stall: float = 0.0,
                 max_seconds: float = 900.0, addresses: int = 1) -> None:
        super().__init__(pages, latency=latency, max_seconds=max_seconds, addresses=addresses)
        unknown = set(faults.values()) - {*FAULTS, STALL_FAULT}
        if unknown:
            raise ValueError(f"unknown faults: {', '.join(sorted(unknown))}")
        self._faults = dict(faults)
        self._limited = set(limited)
        self._rate = rate
        self._stalled = set(stalled)
        self._stall = stall
        self._recent: dict[str, deque[float]] = {host: deque() for host in self._limited}
        self._etags = {path: _etag(body) for path, body in self._pages.items()}
        self.stats = FaultStats()

    def __enter__(self) -> FaultServer:
        self.start()
        return self

    def add_page(self, path: str, body: bytes) -> None:
        """Serve ``body`` at ``path`` too."""
        super().add_page(path, body)
        self._etags[path] = _etag(body)

    def reset(self) -> FaultStats:
        """Return the counts so far and start afresh: every fault will strike again."""
        with self._lock:
            stats, self.stats = self.stats, FaultStats()
            for recent in self._recent.values():
                recent.clear()
        return stats

    def _admit(self, host: str) -> bool:
        """Whether the rate limit of ``host`` (if it has one) lets a request through now."""
        recent = self._recent.get(host)
        if recent is None:
            return True
        now = time.monotonic()
        while recent and recent[0] <= now - 1.0:
            recent.popleft()
        if len(recent) >= self._rate:
            return False
        recent.append(now)
        return True

    async def _respond(self, head: bytes, writer: asyncio.StreamWriter) -> bool:
        request = parse_request(head)
        if request is None:
            return False
        method, path, version, headers = request
        host = headers.get("host", "")
        stats = self.stats
        with self._lock:
            stats.started(method, path, host)
        try:
            if self._latency:
                await asyncio.sleep(self._latency)
            if self._stall and host in self._stalled:
                await asyncio.sleep(self._stall)
            with self._lock:
                admitted = self._admit(host)
                first = False
                if admitted and path in self._pages:
                    stats.served[path] += 1
                    first = stats.served[path] == 1
            fault = self._faults.get(path) if first else None
            body = self._pages.get(path)
            if not admitted:
                answer, response = "429 rate limit", _status(429, "Too Many Requests", 1)
            elif body is None:
                answer, response = "404", _status(404, "Not Found")
            elif fault == "503":
                answer, response = "503", _status(503, "Service Unavailable")
            elif fault == "429":
                answer, response = "429", _status(429, "Too Many Requests", 1)
            elif fault == STALL_FAULT:
                answer, response = STALL_FAULT, _status(503, "Service Unavailable", 1)
            elif fault == "gzip-cut":
                cut = gzip.compress(body, mtime=0)
                cut = cut[:len(cut) // 2]  # the framing says this much: the stream stops short
                answer = "gzip-cut"
                response = self._page_head(path, len(cut), coding="gzip") + cut
            elif fault == "reset":
                with self._lock:
                    stats.answers["reset"] += 1
                writer.write(self._page_head(path, len(body)) + body[:len(body) // 2])
                await writer.drain()
                _reset(writer)
                return False
            elif _not_modified(headers, self._etags[path]):
                answer, response = "304", self._page_head(path, None)
            else:
                answer = "200"
                response = self._page_head(path, len(body)) + (b"" if method == "HEAD" else body)
            with self._lock:
                stats.answers[answer] += 1
            writer.write(response)
            await writer.drain()
        except ConnectionError:
            return False
        finally:
            with self._lock:
                stats.in_flight -= 1
                stats.host_in_flight[host] -= 1
        connection = headers.get("connection", "").lower()
        return connection != "close" and (version == "HTTP/1.1" or connection == "keep-alive")

    def _page_head(self, path: str, length: int | None, coding: str | None = None) -> bytes:
        """The head of a page's 200 (``length`` bytes of body, in ``coding`` if given), or of
        its 304 (``None``)."""
        status = "200 OK" if length is not None else "304 Not Modified"
        lines = [f"HTTP/1.1 {status}", f"ETag: {self._etags[path]}",
                 f"Last-Modified: {LAST_MODIFIED}", "Cache-Control: max-age=0"]
        if length is not None:
            lines += [f"Content-Type: {self._content_type}", f"Content-Length: {length}"]
        if coding is not None:
            lines.append(f"Content-Encoding: {coding}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def _etag(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:16]}"'


def _status(code: int, reason: str, retry_after: int | None = None) -> bytes:
    """A short plain-text error response."""
    body = f"{code} {reason}\n".encode("ascii")
    extra = f"Retry-After: {retry_after}\r\n" if retry_after is not None else ""
    return (f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n").encode("ascii") + body


def _not_modified(headers: Mapping[str, str], etag: str) -> bool:
    """Whether a request's validators match the page (RFC 9110 §13.1: ``If-None-Match``
    decides when present, else ``If-Modified-Since``)."""
    if "if-none-match" in headers:
        tags = {tag.strip().removeprefix("W/") for tag in headers["if-none-match"].split(",")}
        return "*" in tags or etag in tags
    since = headers.get("if-modified-since")
    if since is None:
        return False
    try:
        when = email.utils.parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False
    return when.timestamp() >= _LAST_MODIFIED_AT


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close the connection with a TCP reset (no orderly FIN): linger on, for 0 seconds."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def main() -> None:
    """Serve demo pages with faults until the time is up or Ctrl-C."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--limited", action="append", default=[],
                        help="a Host header to rate-limit (repeatable)")
    parser.add_argument("--seconds", type=float, default=60.0, help="stop after this long")
    args = parser.parse_args()
    pages = demo_pages(args.pages)
    faults = plan_faults(sorted(pages), args.seed)
    with FaultServer(pages, faults=faults, limited=args.limited,
                     max_seconds=args.seconds) as server:
        print(f"serving {args.pages} pages on http://127.0.0.1:{server.port}/page/0 … for "
              f"{args.seconds:g} s; faults on the first request of {len(faults)}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            time.sleep(args.seconds)
        stats = server.stats
    print(f"{sum(stats.requests.values())} requests; answers: "
          + ", ".join(f"{n} {a}" for a, n in sorted(stats.answers.items())))


if __name__ == "__main__":
    main()
