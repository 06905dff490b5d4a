"""verify-notes as its own process: the path a user's run takes (parse workers forked before any
thread starts), which in-process tests with threaded servers never reach."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

PAGES = {f"/p{i}": f"<html><body><p>Page {i} says <b>hello</b> world {i}.</p>"
                    f"<script>secret {i}</script></body></html>" for i in range(6)}


class _Handler(http.server.BaseHTTPRequestHandler):
    paths: list[str] = []  # noqa: RUF012 - the paths requested, reset by the fixture

    def do_GET(self) -> None:
        _Handler.paths.append(self.path)
        body = PAGES.get(self.path, "").encode()
        self.send_response(200 if self.path in PAGES else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    _Handler.paths = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_verify_notes_in_its_own_process(tmp_path: Path, port: int) -> None:
    notes = tmp_path / "site.notes"
    records = [f"claim: c{i}\nquote: says hello world {i}.\nurl: http://site.test/p{i}\n"
               for i in range(6)]
    records.append("claim: hidden\nquote: secret 1\nurl: http://site.test/p1\n")
    notes.write_text("\n".join(records))
    done = subprocess.run(
        [sys.executable, "-m", "tracecite", "verify-notes", str(notes), "--json",
         "--connect-to", f"site.test:80:127.0.0.1:{port}", "--allow-net", "127.0.0.0/8"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert done.returncode == 2
    assert [(f["code"], f["record"]) for f in report["findings"]] == [("TC210", 7)]
    assert report["summary"]["live"]["matched"] == 6
    assert sorted(_Handler.paths) == sorted(PAGES)  # p1, cited twice, fetched once
