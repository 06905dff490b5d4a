"""A local HTTP/1.1 server for the benchmarks: fixed pages, a fixed latency, request counts.

It binds loopback only: 127.0.0.1 on a free port (and, when asked for several addresses,
127.0.0.2, 127.0.0.3, … on the same port, so that a tool without ``--connect-to`` can be given
several hosts). It runs an asyncio loop on a background thread, so hundreds of requests can wait
out their latency at once without a thread each. Every response waits ``latency`` seconds
before it is written (HEAD included); connections are kept alive. The server counts what it
served, so a benchmark can show that each URL was fetched once and how many requests were in
flight at most, overall and per ``Host`` header.

Everything stops by itself: idle connections close after ``idle_timeout`` and the whole
server after ``max_seconds``, even if the benchmark that started it never calls ``stop()``.

    python benchmarks/web_server.py --pages 200 --latency-ms 50   # try it by hand
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType

HTML_TYPE = "text/html; charset=utf-8"
_MAX_HEAD = 64 * 1024


@dataclass
class ServerStats:
    """What the server saw since the last ``reset``."""

    requests: Counter[tuple[str, str]] = field(default_factory=Counter)  # (method, path)
    hosts: Counter[str] = field(default_factory=Counter)  # requests per Host header
    connections: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    host_in_flight: Counter[str] = field(default_factory=Counter)
    host_max_in_flight: Counter[str] = field(default_factory=Counter)
    first_request: float | None = None  # time.perf_counter() when the first request arrived
    last_response: float | None = None  # time.perf_counter() when the last response was sent

    def started(self, method: str, path: str, host: str) -> None:
        """Count a request that has started (the caller holds the server's lock)."""
        if self.first_request is None:
            self.first_request = time.perf_counter()
        self.requests[(method, path)] += 1
        self.hosts[host] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.host_in_flight[host] += 1
        self.host_max_in_flight[host] = max(self.host_max_in_flight[host],
                                            self.host_in_flight[host])

    def fetches(self, method: str = "GET") -> Counter[str]:
        """How many times each path was requested with ``method``."""
        return Counter({path: n for (m, path), n in self.requests.items() if m == method})


class BenchServer:
    """Serves ``pages`` (path → body) on 127.0.0.1 with ``latency`` seconds per response; with
    ``addresses`` > 1 also on 127.0.0.2 … on the same port (``hosts`` lists them all).

    Use as a context manager; ``port`` is known once it is entered. Unknown paths are 404.
    """

    def __init__(self, pages: Mapping[str, bytes], *, latency: float = 0.0,
                 content_type: str = HTML_TYPE, idle_timeout: float = 30.0,
                 max_seconds: float = 900.0, addresses: int = 1) -> None:
        if not 1 <= addresses <= 254:
            raise ValueError("addresses must be from 1 to 254")
        self.hosts = [f"127.0.0.{n}" for n in range(1, addresses + 1)]
        self._pages = dict(pages)
        self._latency = latency
        self._content_type = content_type
        self._idle_timeout = idle_timeout
        self._max_seconds = max_seconds
        self._heads = {path: self._head(200, "OK", len(body)) for path, body in self._pages.items()}
        self.stats = ServerStats()
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: OSError | None = None
        self._lock = threading.Lock()  # stats are read from the benchmark's thread

    def add_page(self, path: str, body: bytes) -> None:
        """Serve ``body`` at ``path`` too (e.g. an index that needs the port)."""
        self._heads[path] = self._head(200, "OK", len(body))
        self._pages[path] = body

    def _head(self, status: int, reason: str, length: int) -> bytes:
        return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {self._content_type}\r\n"
                f"Content-Length: {length}\r\n\r\n").encode("ascii")

    # -- lifetime --------------------------------------------------------------------------

    def __enter__(self) -> BenchServer:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> int:
        """Start serving on a background thread; return the port."""
        self._thread = threading.Thread(target=self._run, name="bench-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the benchmark server did not start")
        if self._error is not None:
            raise RuntimeError(f"the benchmark server cannot listen on {', '.join(self.hosts)}"
                               f": {self._error}")
        return self.port

    def stop(self) -> None:
        """Stop serving and close every connection."""
        if self._loop is not None and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def cpu(self) -> float:
        """CPU seconds the server's thread has used so far (Linux: from ``/proc``; 0 elsewhere):
        on a machine of few cores it shares them with the command it serves."""
        thread = self._thread
        if thread is None or thread.native_id is None:
            return 0.0
        try:
            with open(f"/proc/self/task/{thread.native_id}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def reset(self) -> ServerStats:
        """Return the counts so far and start counting afresh."""
        with self._lock:
            stats, self.stats = self.stats, ServerStats()
        return stats

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        try:
            first = await asyncio.start_server(self._connection, self.hosts[0], 0,
                                               backlog=1024)
            self.port = first.sockets[0].getsockname()[1]
            servers = [first] + [
                await asyncio.start_server(self._connection, host, self.port, backlog=1024)
                for host in self.hosts[1:]]
        except OSError as error:  # e.g. only 127.0.0.1 exists (macOS): start() says so
            self._error = error
            return
        finally:
            self._ready.set()
        # Past max_seconds the benchmark forgot us: stop anyway.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stopped.wait(), self._max_seconds)
        for server in servers:
            server.close()
            # Python 3.12+ also closes kept-alive connections here.
            if hasattr(server, "close_clients"):
                server.close_clients()
        for server in servers:
            await server.wait_closed()

    # -- one connection ----------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        with self._lock:
            self.stats.connections += 1
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                                  self._idle_timeout)
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                        asyncio.TimeoutError, ConnectionError):
                    return
                if len(head) > _MAX_HEAD:
                    return
                keep_alive = await self._respond(head, writer)
                if not keep_alive:
                    return
        except asyncio.CancelledError:
            # The server is stopping with this connection open. Ending quietly keeps Python
            # 3.11 from logging the cancelled task as an "Exception in callback".
            return
        finally:
            writer.close()

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
            body = self._pages.get(path)
            if body is None:
                response = self._head(404, "Not Found", 0)
            else:
                response = self._heads[path] + (b"" if method == "HEAD" else body)
            writer.write(response)
            await writer.drain()
        except ConnectionError:
            return False
        finally:
            with self._lock:
                stats.in_flight -= 1
                stats.host_in_flight[host] -= 1
                stats.last_response = time.perf_counter()
        connection = headers.get("connection", "").lower()
        return connection != "close" and (version == "HTTP/1.1" or connection == "keep-alive")


def parse_request(head: bytes) -> tuple[str, str, str, dict[str, str]] | None:
    """Method, path, version and lower-cased headers of a request head (None if malformed)."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    method, path, version = parts
    headers = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    return method, path, version, headers


def demo_pages(count: int) -> dict[str, bytes]:
    """``count`` small distinct HTML pages at ``/page/0`` … (for trying the server by hand)."""
    return {f"/page/{i}": f"<!doctype html><title>{i}</title><p>Page {i}.</p>".encode()
            for i in range(count)}


def main() -> None:
    """Serve demo pages until the time is up or Ctrl-C."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=60.0, help="stop after this long")
    args = parser.parse_args()
    with BenchServer(demo_pages(args.pages), latency=args.latency_ms / 1000,
                     max_seconds=args.seconds) as server:
        print(f"serving {args.pages} pages on http://127.0.0.1:{server.port}/page/0 … "
              f"for {args.seconds:g} s", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            time.sleep(args.seconds)
        stats = server.stats
    print(f"{sum(stats.requests.values())} requests, at most {stats.max_in_flight} in flight")


if __name__ == "__main__":
    main()
