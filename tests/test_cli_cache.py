"""The cache, skip_urls and --fail-after end to end (docs/web-over-time.md#warnings-and-skips,
docs/web-over-time.md#flaky-sources): the CLI against a local site that counts its requests and
answers conditional ones."""

from __future__ import annotations

import contextlib
import http.server
import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, note, write_notes
from tracecite import cache as cache_module

PAGE = b"<html><body><p>Quotes must appear <b>word for word</b> in the source.</p></body></html>"
FOUND = "Quotes must appear word for word"
MISSING = "this sentence is not on the page"


@dataclass
class Site:
    """What the site serves by path, and every request it was sent."""

    port: int = 0
    pages: dict[str, tuple[int, bytes, str | None]] = field(default_factory=dict)
    """By path: status, body, ETag (None: none sent)."""
    requests: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """Path, If-None-Match, If-Modified-Since."""

    def url(self, path: str) -> str:
        return f"http://docs.test{path}"

    @property
    def net(self) -> list[str]:
        return ["--connect-to", f"docs.test:80:127.0.0.1:{self.port}",
                "--allow-net", "127.0.0.0/8", "--no-progress"]


LAST_MODIFIED = "Mon, 30 Nov 2026 10:00:00 GMT"


@contextlib.contextmanager
def serving(site: Site) -> Iterator[Site]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            tag, since = self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
            site.requests.append((self.path, tag, since))
            status, body, etag = site.pages.get(self.path, (404, b"", None))
            if etag is not None and tag == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            if etag is not None:
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", LAST_MODIFIED)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    site.port = server.server_address[1]
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    with serving(Site(pages={"/page": (200, PAGE, '"v1"')})) as running:
        yield running


def _notes(tmp_path: Path, site: Site, *records: tuple[str, str]) -> Path:
    text = "---\n".join(note(quote=q, url=site.url(p)) for p, q in records)
    return write_notes(tmp_path / "cite.notes", text)


def _findings(report: dict[str, Any]) -> list[tuple[str, bool | None]]:
    return [(f["code"], f.get("cached")) for f in report["findings"]]


def test_a_second_run_within_max_age_makes_no_request(cli: Cli, tmp_path: Path,
                                                       site: Site) -> None:
    notes = _notes(tmp_path, site, ("/page", FOUND), ("/page", MISSING))
    cache = tmp_path / "verdicts.sqlite"
    first = cli("verify-notes", "--json", "--cache", cache, *site.net, notes)
    assert first.exit == 2 and _findings(first.json()) == [("TC210", None)]
    assert len(site.requests) == 1
    second = cli("verify-notes", "--json", "--cache", cache, *site.net, notes)
    assert len(site.requests) == 1  # nothing asked: both verdicts were fresh
    assert second.exit == 2 and _findings(second.json()) == [("TC210", True)]
    live = second.json()["summary"]["live"]
    assert (live["checked"], live["matched"], live["not_found"], live["cached"]) == (2, 1, 1, 2)
    strip = {"cached"}
    assert ([{k: v for k, v in f.items() if k not in strip} for f in first.json()["findings"]]
            == [{k: v for k, v in f.items() if k not in strip}
                for f in second.json()["findings"]])


def test_old_verdicts_are_revalidated_and_a_304_keeps_them(cli: Cli, tmp_path: Path,
                                                          site: Site) -> None:
    notes = _notes(tmp_path, site, ("/page", FOUND), ("/page", MISSING))
    cache = tmp_path / "verdicts.sqlite"
    assert cli("verify-notes", "--json", "--cache", cache, *site.net, notes).exit == 2
    again = cli("verify-notes", "--json", "--cache", cache, "--cache-max-age", "0s",
                *site.net, notes)
    assert site.requests == [("/page", None, None), ("/page", '"v1"', LAST_MODIFIED)]
    assert again.exit == 2 and _findings(again.json()) == [("TC210", True)]
    assert again.json()["summary"]["live"]["cached"] == 2
    # A changed page (a new ETag) is fetched and matched again.
    site.pages["/page"] = (200, PAGE.replace(b"Quotes", b"Claims"), '"v2"')
    changed = cli("verify-notes", "--json", "--cache", cache, "--cache-max-age", "0s",
                  *site.net, notes)
    assert site.requests[-1] == ("/page", '"v1"', LAST_MODIFIED)
    assert _findings(changed.json()) == [("TC210", None), ("TC210", None)]
    assert changed.json()["summary"]["live"]["cached"] == 0


def test_a_changed_quote_needs_the_page(cli: Cli, tmp_path: Path, site: Site) -> None:
    cache = tmp_path / "verdicts.sqlite"
    notes = _notes(tmp_path, site, ("/page", FOUND))
    assert cli("verify-notes", "--json", "--cache", cache, *site.net, notes).exit == 0
    notes = _notes(tmp_path, site, ("/page", FOUND), ("/page", "appear word for word in"))
    run = cli("verify-notes", "--json", "--cache", cache, *site.net, notes)
    assert run.exit == 0 and len(site.requests) == 2
    assert run.json()["summary"]["live"]["cached"] == 0
    # Both verdicts are now kept.
    cli("verify-notes", "--json", "--cache", cache, *site.net, notes)
    assert len(site.requests) == 2


def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE photos (id INTEGER)")
    db.commit()
    db.close()


@pytest.mark.parametrize("problem", ["garbage", "foreign", "locked"])
def test_an_unusable_cache_is_tc105_and_the_verdicts_stand(
        cli: Cli, tmp_path: Path, site: Site, monkeypatch: pytest.MonkeyPatch,
        problem: str) -> None:
    notes = _notes(tmp_path, site, ("/page", FOUND), ("/page", MISSING))
    plain = cli("verify-notes", "--json", *site.net, notes)
    cache = tmp_path / "verdicts.sqlite"
    holder = None
    if problem == "garbage":
        cache.write_bytes(b"\x00garbage" * 512)
    elif problem == "foreign":
        _foreign(cache)
    else:
        monkeypatch.setattr(cache_module, "BUSY_TIMEOUT", 0.2)
        cli("verify-notes", "--json", "--cache", cache, *site.net, notes)
        holder = sqlite3.connect(cache, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
    before = cache.read_bytes()
    try:
        run = cli("verify-notes", "--json", "--cache", cache, *site.net, notes)
    finally:
        if holder is not None:
            holder.execute("ROLLBACK")
            holder.close()
    assert run.exit == plain.exit == 2
    report = run.json()
    assert [f["code"] for f in report["findings"]] == ["TC105", "TC210"]
    warning = report["findings"][0]
    assert (warning["severity"], warning["exit"]) == ("warning", 0)
    assert report["findings"][1] == plain.json()["findings"][0]
    assert report["summary"]["live"] == plain.json()["summary"]["live"]
    assert cache.read_bytes() == before  # a file that is not ours is never written


def test_only_a_cache_problem_is_exit_0(cli: Cli, tmp_path: Path, site: Site) -> None:
    notes = _notes(tmp_path, site, ("/page", FOUND))
    cache = tmp_path / "verdicts.sqlite"
    _foreign(cache)
    run = cli("verify-notes", "--json", "--cache", cache, *site.net, notes)
    assert run.exit == 0 and run.json()["summary"]["live"]["matched"] == 1


def test_the_cache_keeps_no_page_text_quote_or_claim(cli: Cli, tmp_path: Path,
                                                     site: Site) -> None:
    page = (b"<html><body><p>CANARYPAGEX and the CANARYQUOTEX words</p>"
            b"<script>CANARYSCRIPTX</script></body></html>")
    site.pages["/c"] = (200, page, '"c1"')
    text = "---\n".join([
        note(claim="CANARYCLAIMX one", quote="the CANARYQUOTEX words", url=site.url("/c")),
        note(claim="CANARYCLAIMX two", quote="CANARYMISSINGX", url=site.url("/c")),
        note(claim="CANARYCLAIMX three", quote=FOUND, url=site.url("/page")),
        # Near misses, whose diagnoses the cache keeps (docs/reference/reports.md#near-misses):
        # kinds, counts, names.
        note(claim="CANARYCLAIMX four", quote="THE CANARYQUOTEX WORDS", url=site.url("/c")),
        note(claim="CANARYCLAIMX five", quote="the CANARYQUOTEX words’ CANARYMISSINGX",
             url=site.url("/c")),
        note(claim="CANARYCLAIMX six", quote="CANARYSCRIPTX", url=site.url("/c")),
    ])
    notes = write_notes(tmp_path / "c.notes", text)
    cache = tmp_path / "verdicts.sqlite"
    assert cli("verify-notes", "--json", "--cache", cache, *site.net, notes).exit == 2
    with sqlite3.connect(cache) as db:
        stored = sorted(json.loads(d)["kinds"][0] for (d,) in db.execute(
            "SELECT diagnosis FROM verdicts WHERE diagnosis IS NOT NULL"))
    db.close()
    assert stored == ["case", "hidden", "none", "partial"]
    data = cache.read_bytes()
    assert len(data) > 0
    for canary in (b"CANARYPAGEX", b"CANARYQUOTEX", b"CANARYCLAIMX", b"CANARYMISSINGX",
                   b"CANARYSCRIPTX", b"Quotes must", b"word for word"):
        assert canary not in data and canary.lower() not in data.lower()
    for leftover in tmp_path.glob("verdicts.sqlite*"):
        assert leftover == cache  # no journal left behind


def test_fail_after_defers_flaky_failures_until_consecutive_runs(cli: Cli, tmp_path: Path,
                                                                 site: Site) -> None:
    site.pages["/down"] = (503, b"busy", None)
    notes = _notes(tmp_path, site, ("/down", FOUND), ("/page", MISSING), ("/gone", FOUND))
    cache = tmp_path / "verdicts.sqlite"

    def run() -> tuple[int, dict[str, dict[str, Any]]]:
        # No retries: the count of failed runs is what is tested, not the waits between tries.
        result = cli("verify-notes", "--json", "--cache", cache, "--cache-max-age", "0s",
                     "--fail-after", "2", "--retries", "0", *site.net, notes)
        return result.exit, {f["uri"]: f for f in result.json()["findings"]}

    code, found = run()
    # The 503 waits; the quote not found and the 404 never do.
    assert code == 2
    down = found[site.url("/down")]
    assert (down["code"], down["severity"], down["failures"], down["fail_after"]) == (
        "TC315", "warning", 1, 2)
    assert found[site.url("/page")]["severity"] == "error"
    assert "failures" not in found[site.url("/page")]
    gone = found[site.url("/gone")]
    assert (gone["code"], gone["severity"], gone.get("failures")) == ("TC315", "error", None)
    notes = _notes(tmp_path, site, ("/down", FOUND))
    assert run()[1][site.url("/down")]["severity"] == "error"  # a second run in a row
    code, found = run()
    assert code == 2 and found[site.url("/down")]["failures"] == 3
    site.pages["/down"] = (200, PAGE, None)
    assert run() == (0, {})  # a success resets the count
    site.pages["/down"] = (503, b"busy", None)
    code, found = run()
    assert code == 0 and found[site.url("/down")]["failures"] == 1


def test_skip_urls_are_never_fetched_and_counted_skipped(cli: Cli, tmp_path: Path,
                                                          site: Site) -> None:
    notes = _notes(tmp_path, site, ("/page", FOUND), ("/private/a", FOUND),
                   ("/private/b/c", MISSING))
    run = cli("verify-notes", "--json", "--skip-url", "http://docs.test/private/**",
              *site.net, notes)
    assert run.exit == 0 and [path for path, _, _ in site.requests] == ["/page"]
    live = run.json()["summary"]["live"]
    assert (live["checked"], live["matched"], live["skipped"]) == (1, 1, 2)
    one = cli("verify-notes", "--json", "--skip-url", "http://docs.test/private/*",
              *site.net, notes)
    assert one.json()["summary"]["live"]["skipped"] == 1  # * stays in one segment


def test_skip_urls_from_the_configuration(cli: Cli, tmp_path: Path, site: Site,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracecite.toml").write_text(
        'skip_urls = ["http://*.test/**"]\ncache = "state/cache.sqlite"\nfail_after = 2\n'
        'cache_max_age = "12h"\n', encoding="utf-8")
    (tmp_path / "state").mkdir()
    notes = _notes(tmp_path, site, ("/page", FOUND))
    run = cli("hook", "--json", "--stage", "online", *site.net, notes)
    assert run.exit == 0 and site.requests == []
    assert run.json()["summary"]["live"]["skipped"] == 1
    assert (tmp_path / "state" / "cache.sqlite").exists()


@pytest.mark.parametrize(("argv", "words"), [
    (["--cache-max-age", "soon"], "duration"),
    (["--cache-max-age=-1d"], "duration"),
    (["--fail-after", "0"], "from 1 to 1000"),
    (["--fail-after=-3"], "from 1 to 1000"),
    (["--fail-after", "2"], "needs --cache"),
    (["--cache", "{dir}"], "names a directory"),
    (["--cache", "{dir}/missing/c.sqlite"], "does not exist"),
    (["--skip-url", ""], "URL globs"),
])
def test_bad_settings_are_tc100(cli: Cli, tmp_path: Path, argv: list[str], words: str) -> None:
    notes = write_notes(tmp_path / "a.notes", note())
    run = cli("verify-notes", "--json", *[a.format(dir=tmp_path) for a in argv], notes)
    assert run.exit == 1
    (finding,) = run.json()["findings"]
    assert finding["code"] == "TC100" and words in finding["message"]


@pytest.mark.parametrize(("text", "words"), [
    ('cache_max_age = "a week"', "duration"),
    ("cache_max_age = 7", "duration"),
    ("fail_after = 0", "from 1 to 1000"),
    ('skip_urls = "https://a b/"', "URL globs"),
])
def test_bad_configuration_is_tc104(cli: Cli, tmp_path: Path, text: str, words: str,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracecite.toml").write_text(text + "\n", encoding="utf-8")
    run = cli("hook", "--json", "a.notes")
    assert run.exit == 1
    (finding,) = run.json()["findings"]
    assert finding["code"] == "TC104" and words in finding["message"]


def test_the_action_inputs(tmp_path: Path) -> None:
    from tracecite import action
    from tracecite.errors import UsageError
    from tracecite.settings import action_values

    env = {action.INPUT_ENV["skip-urls"]: "https://twitter.com/**,\nhttps://*.example.org/**",
           action.INPUT_ENV["cache"]: " .tracecite-cache.sqlite ",
           action.INPUT_ENV["fail-after"]: "3"}
    given = action_values(action.read_inputs(env))
    assert given["skip_urls"] == ("https://twitter.com/**", "https://*.example.org/**")
    assert (given["cache"], given["fail_after"]) == (".tracecite-cache.sqlite", 3)
    with pytest.raises(UsageError, match="input fail-after must be from 1 to 1000"):
        action_values(action.read_inputs({action.INPUT_ENV["fail-after"]: "0"}))
