"""``--archive`` end to end (docs/web-over-time.md#archived-copies): verify-notes, verify-urls and
the hook's online stage against a local site and a stand-in archive, both reached only through
``--connect-to``, ``--allow-net`` and ``--ca-cert``. The archive adds to findings; it never changes
a verdict, a count or an exit code."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.archive_server import (  # noqa: F401 - archive_fixture is a fixture
    JSON_TYPE,
    StandInArchive,
    archive_fixture,
)
from tests.conftest import (
    Cli,
    CliResult,
    answer,
    call,
    cite,
    claim,
    note,
    result,
    source,
    write_notes,
    write_trace,
)
from tests.fetch.servers import Reply
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    closed_port,
    html,
    no_dns_fixture,
    site_fixture,
    text,
)

pytestmark = pytest.mark.network

QUOTE = "quick brown fox"
HAS_IT = "<p>The quick brown fox jumps over the lazy dog.</p>"
LOST_IT = "<p>This page was rewritten since.</p>"
TS = "20230115093000"


def notes(tmp_path: Path, *urls: str, name: str = "n.notes") -> Path:
    return write_notes(tmp_path / name, "\n".join(note(quote=QUOTE, url=u) for u in urls))


def flags(site: Site, archive: StandInArchive) -> list[str]:
    return [*site.flags, *archive.flags, "--retries", "0"]


def without_archive(report: dict[str, Any]) -> dict[str, Any]:
    """The report as a run without --archive writes it: no archive member, the message as
    the live check wrote it."""
    findings = []
    for finding in report["findings"]:
        finding = {k: v for k, v in finding.items() if k != "archive"}
        finding["message"] = finding["message"].split("; the Internet Archive's")[0]
        findings.append(finding)
    return {**report, "findings": findings}


def both_ways(cli: Cli, *argv: Any) -> tuple[CliResult, CliResult]:
    """The same run without and with ``--archive``; the verdicts, counts and exit codes are
    the same."""
    plain = cli(*argv)
    archived = cli(*argv, "--archive")
    assert archived.exit == plain.exit
    assert without_archive(archived.json()) == plain.json()
    return plain, archived


def test_a_page_that_lost_its_quote_names_the_snapshot_that_has_it(
        cli: Cli, site: Site, archive: StandInArchive, tmp_path: Path) -> None:
    url = site.route("/story", html(LOST_IT))
    snapshot = archive.add(url, TS, HAS_IT)
    path = notes(tmp_path, url)
    plain, archived = both_ways(cli, "verify-notes", path, "--json", *flags(site, archive))
    assert plain.exit == 2
    [finding] = archived.json()["findings"]
    assert finding["code"] == "TC210" and finding["line"] == 2
    assert finding["archive"] == {"url": snapshot, "timestamp": TS, "found": True}
    assert finding["message"].startswith("quote is not in the page's visible text; ")
    assert finding["message"].endswith(f"; the Internet Archive's snapshot {snapshot} has the "
                                       f"quote")
    # Only the run with --archive asked the archive: one API request, one snapshot.
    assert len(archive.api_queries()) == 1
    assert archive.snapshot_paths() == [f"/web/{TS}id_/{url}"]


def test_the_console_line_names_the_snapshot(cli: Cli, site: Site, archive: StandInArchive,
                                             tmp_path: Path) -> None:
    url = site.route("/story", html(LOST_IT))
    snapshot = archive.add(url, TS, HAS_IT)
    run = cli("verify-notes", notes(tmp_path, url), "--archive", *flags(site, archive))
    assert run.exit == 2
    [line] = [line for line in run.out.splitlines() if line.startswith("  ") and "TC210" in line]
    assert line.startswith(f"  {tmp_path / 'n.notes'}:2  TC210 quote-not-on-page  record 1: "
                           f"quote is not in the page's visible text; ")
    assert line.endswith(f"; the Internet Archive's snapshot {snapshot} has the quote "
                         f"[uri {url}]")
    assert QUOTE not in run.out + run.err


def test_a_snapshot_without_the_quote(cli: Cli, site: Site, archive: StandInArchive,
                                      tmp_path: Path) -> None:
    url = site.route("/story", html(LOST_IT))
    snapshot = archive.add(url, TS, "<p>Another text altogether.</p>")
    _, archived = both_ways(cli, "verify-notes", notes(tmp_path, url), "--json",
                            *flags(site, archive))
    [finding] = archived.json()["findings"]
    assert finding["archive"] == {"url": snapshot, "timestamp": TS, "found": False}
    assert "Archive" not in finding["message"]


@pytest.mark.parametrize("api", [None, Reply(503, JSON_TYPE, b"{}"),
                                 Reply(200, JSON_TYPE, b"<html>not json</html>")],
                         ids=["no-snapshot", "api-down", "garbage"])
def test_a_failed_lookup_adds_nothing(cli: Cli, site: Site, archive: StandInArchive,
                                      tmp_path: Path, api: Reply | None) -> None:
    url = site.route("/story", html(LOST_IT))
    if api is not None:
        archive.add(url, TS, HAS_IT)
        archive.api = api
    plain, archived = both_ways(cli, "verify-notes", notes(tmp_path, url), "--json",
                                *flags(site, archive))
    assert archived.json() == plain.json()
    assert archive.snapshot_paths() == []


def test_pages_gone_or_unreachable_are_looked_up_and_others_not(
        cli: Cli, site: Site, archive: StandInArchive, tmp_path: Path) -> None:
    gone = site.route("/gone", text("gone", status=410))
    missing = site.route("/missing", text("missing", status=404))
    broken = site.route("/broken", text("oops", status=500))
    walled = site.route("/walled", Reply(403, (("Content-Type", "text/html"),
                                               ("cf-mitigated", "challenge")), b"<p>wait</p>"))
    fine = site.route("/fine", html(HAS_IT))
    down = "https://down.test/page"
    for url in (gone, missing, broken, walled, fine, down):
        archive.add(url, TS, HAS_IT)
    path = notes(tmp_path, gone, missing, broken, walled, fine, down)
    argv = ["verify-notes", path, "--json", *flags(site, archive),
            "--connect-to", f"down.test:443:127.0.0.1:{closed_port()}"]
    plain, archived = both_ways(cli, *argv)
    report = archived.json()
    assert plain.exit == 2
    looked_up = {f["uri"]: (f["code"], f.get("status"), "archive" in f)
                 for f in report["findings"]}
    assert looked_up == {gone: ("TC315", 410, True), missing: ("TC315", 404, True),
                         broken: ("TC315", 500, False), walled: ("TC319", 403, False),
                         down: ("TC311", None, True)}
    asked = sorted(q["url"][0] for q in archive.api_queries())
    assert asked == sorted([gone, missing, down])
    assert report["summary"] == plain.json()["summary"]


def test_a_traces_capture_time_is_the_timestamp_asked_for(
        cli: Cli, site: Site, archive: StandInArchive, tmp_path: Path) -> None:
    url = site.route("/story", html(LOST_IT))
    other = site.route("/other", html(LOST_IT))
    archive.add(url, TS, HAS_IT)
    archive.add(other, TS, HAS_IT)
    trace = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[
            source("s1", url, HAS_IT, captured_at="2024-05-01T12:00:00+02:00"),
            source("s2", other, HAS_IT)]),
        answer([claim(citations=[cite("s1", QUOTE), cite("s2", QUOTE)])])])
    _, archived = both_ways(cli, "verify-urls", trace, "--json", *flags(site, archive))
    assert archived.exit == 2
    queries = {q["url"][0]: q.get("timestamp") for q in archive.api_queries()}
    assert queries == {url: ["20240501100000"], other: None}
    assert [f["archive"]["found"] for f in archived.json()["findings"]] == [True, True]


def test_no_lookup_without_archive(cli: Cli, site: Site, archive: StandInArchive,
                                   tmp_path: Path) -> None:
    url = site.route("/story", html(LOST_IT))
    archive.add(url, TS, HAS_IT)
    run = cli("verify-notes", notes(tmp_path, url), "--json", *flags(site, archive))
    assert run.codes() == ["TC210"]
    assert "archive" not in run.json()["findings"][0]
    assert archive.requests == []


def test_the_hook_takes_archive_from_the_configuration(
        cli: Cli, site: Site, archive: StandInArchive, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = site.route("/story", html(LOST_IT))
    archive.add(url, TS, HAS_IT)
    monkeypatch.chdir(tmp_path)
    config = tmp_path / ".tracecite.toml"
    config.write_text("archive = true\n", encoding="utf-8")
    path = notes(tmp_path, url, name="refs.notes.md")
    run = cli("hook", "--stage", "online", "--config", config, "--json", path,
              *flags(site, archive))
    assert run.exit == 2
    assert run.json()["findings"][0]["archive"]["found"] is True
    config.write_text("archive = false\n", encoding="utf-8")
    assert "archive" not in cli("hook", "--stage", "online", "--config", config, "--json",
                                path, *flags(site, archive)).json()["findings"][0]
    config.write_text('archive = "yes"\n', encoding="utf-8")
    bad = cli("hook", "--stage", "online", "--config", config, "--json", path)
    assert bad.exit == 1 and bad.codes() == ["TC104"]


def test_a_stop_during_the_lookups_still_writes_the_report(
        cli: Cli, site: Site, archive: StandInArchive, tmp_path: Path) -> None:
    url = site.route("/story", html(LOST_IT))
    archive.add(url, TS, HAS_IT)
    archive.delay = 5  # the API answers after the stop
    threading.Timer(0.8, signal.pthread_kill,
                    (threading.main_thread().ident, signal.SIGINT)).start()
    started = time.monotonic()
    run = cli("verify-notes", notes(tmp_path, url), "--json", "--archive",
              *flags(site, archive))
    assert time.monotonic() - started < 4
    report = run.json()
    assert run.exit == report["exit_code"] == 130
    [finding] = report["findings"]
    assert finding["code"] == "TC210" and "archive" not in finding
    assert report["summary"]["live"]["not_found"] == 1
