"""A stand-in Internet Archive on loopback: the availability API (archive.org) and raw
snapshots (web.archive.org) from one HTTPS server with a certificate for both names, reached
through ``--connect-to`` (`StandInArchive.flags`), like every other server of the suite.

Snapshots are added by URL (`StandInArchive.add`); the API answers with the one it has, or
with `StandInArchive.api` when a test sets it (garbage, a failure, a huge body). Every request
is recorded, and the most requests in flight at once are counted (each is held ``delay``
seconds).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import trustme

from tests.fetch.servers import HTTPTestServer, Reply, Request, Route, server_tls_context

API_HOST = "archive.org"
SNAPSHOT_HOST = "web.archive.org"
JSON_TYPE = (("Content-Type", "application/json"),)
HTML_TYPE = (("Content-Type", "text/html; charset=utf-8"),)


class _Routes(dict[str, Route]):
    """Every path is the archive's: the API (any query) or a snapshot."""

    def __init__(self, archive: StandInArchive) -> None:
        super().__init__()
        self.archive = archive

    def get(self, path: str, default: Any = None) -> Route:  # type: ignore[override]
        return self.archive.answer


class StandInArchive:
    """The archive's two hosts on one local HTTPS server."""

    def __init__(self, ca: trustme.CA) -> None:
        self.server = HTTPTestServer(tls=server_tls_context(ca, API_HOST, SNAPSHOT_HOST))
        self.server.routes = _Routes(self)
        self.snapshots: dict[str, tuple[str, Reply]] = {}
        self.api: Reply | None = None
        self.delay = 0.0
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def add(self, url: str, timestamp: str, body: str | Reply) -> str:
        """Archive ``url`` at ``timestamp``; return the raw snapshot's URL."""
        reply = body if isinstance(body, Reply) else Reply(200, HTML_TYPE, body.encode())
        self.snapshots[url] = (timestamp, reply)
        return f"https://{SNAPSHOT_HOST}/web/{timestamp}id_/{url}"

    @property
    def flags(self) -> list[str]:
        """The ``--connect-to`` options for both hosts (with a site's --allow-net and CA)."""
        return ["--connect-to", f"{API_HOST}:443:127.0.0.1:{self.server.port}",
                "--connect-to", f"{SNAPSHOT_HOST}:443:127.0.0.1:{self.server.port}"]

    @property
    def requests(self) -> list[Request]:
        """Every request the archive got, in order."""
        with self.server.lock:
            return list(self.server.requests)

    def api_queries(self) -> list[dict[str, list[str]]]:
        """The query of each API request, parsed."""
        return [parse_qs(urlsplit(r.path).query) for r in self.requests
                if r.path.startswith("/wayback/available")]

    def snapshot_paths(self) -> list[str]:
        """The path of each snapshot request."""
        return [r.path for r in self.requests if r.path.startswith("/web/")]

    def answer(self, request: Request) -> Reply:
        """The reply to any request, counted in flight while it is held ``delay`` seconds."""
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.delay)
            return self._reply(request)
        finally:
            with self.lock:
                self.now -= 1

    def _reply(self, request: Request) -> Reply:
        host = request.headers.get("host")
        parts = urlsplit(request.path)
        if host == API_HOST and parts.path == "/wayback/available":
            if self.api is not None:
                return self.api
            url = parse_qs(parts.query).get("url", [""])[0]
            closest = self.snapshots.get(url)
            snapshots = {} if closest is None else {"closest": {
                "available": True, "status": "200", "timestamp": closest[0],
                "url": f"http://{SNAPSHOT_HOST}/web/{closest[0]}/{url}"}}
            return Reply(200, JSON_TYPE, json.dumps(
                {"url": url, "archived_snapshots": snapshots}).encode())
        if host == SNAPSHOT_HOST and parts.path.startswith("/web/"):
            timestamp, _, url = request.path[len("/web/"):].partition("id_/")
            found = self.snapshots.get(url)
            if found is not None and found[0] == timestamp:
                return found[1]
        return Reply(404, (("Content-Type", "text/plain"),), b"not archived")


@pytest.fixture(name="archive")
def archive_fixture(ca: trustme.CA) -> Iterator[StandInArchive]:
    """A running stand-in archive, stopped at teardown."""
    archive = StandInArchive(ca)
    archive.server.start()
    try:
        yield archive
    finally:
        archive.server.stop()
