"""verify-notes as its own process: the path a user's run takes (parse workers forked before any
thread starts), which in-process tests with threaded servers never reach."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import html_site

PAGES = {f"/p{i}": f"<html><body><p>Page {i} says <b>hello</b> world {i}.</p>"
                    f"<script>secret {i}</script></body></html>" for i in range(6)}


@pytest.fixture
def port(site_requests: list[str]) -> Iterator[int]:
    with html_site({path: page.encode() for path, page in PAGES.items()}, site_requests) as port:
        yield port


def test_verify_notes_in_its_own_process(tmp_path: Path, port: int,
                                         site_requests: list[str]) -> None:
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
    assert sorted(site_requests) == sorted(PAGES)  # p1, cited twice, fetched once
