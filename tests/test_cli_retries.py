"""Retries through the command line (docs/web-over-time.md#retries): ``--retries`` and
``--max-retry-wait`` (and their configuration keys and Action input) reach the run, bad values are
TC100, and the JSON report carries ``attempts`` on findings and counts ``retried`` sources in the
live summary.

The backoff's random waits are made zero, so nothing here sleeps for long."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.conftest import Cli, note, write_notes
from tests.fetch.servers import Reply, Request
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.fetch import retry
from tracecite.settings import action_values, resolve

pytestmark = pytest.mark.network

PAGE = "The quick brown fox jumps over the lazy dog."
QUOTE = "quick brown fox"


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every backoff is drawn as zero seconds."""
    monkeypatch.setattr(retry, "backoff", lambda attempt, draw: 0.0)


class Flaky:
    """Answers ``first`` to the first ``times`` requests, then the page."""

    def __init__(self, first: Reply, times: int = 1) -> None:
        self.first, self.times, self.seen = first, times, 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Reply:
        with self.lock:
            self.seen += 1
            return self.first if self.seen <= self.times else text(PAGE)


def verify(cli: Cli, tmp_path: Path, site: Site, *urls: str, flags: tuple[str, ...] = ()
           ) -> dict[str, object]:
    path = write_notes(tmp_path / "n.md", "\n".join(note(quote=QUOTE, url=u) for u in urls))
    return cli("verify-notes", path, "--json", *site.flags, *flags).json()


@pytest.mark.parametrize("flags", [("--retries", "-1"), ("--retries", "6"),
                                   ("--max-retry-wait", "500"), ("--max-retry-wait", "-1")])
def test_bad_values_are_tc100(cli: Cli, tmp_path: Path, flags: tuple[str, str]) -> None:
    path = write_notes(tmp_path / "n.md", note())
    run = cli("verify-notes", path, "--json", *flags)
    assert run.exit == 1
    assert run.codes() == ["TC100"]


def test_the_settings_come_from_flags_the_configuration_and_the_action() -> None:
    settings = resolve("hook", {})
    assert (settings.retries, settings.max_retry_wait) == (2, 30.0)
    assert settings.fetch_options().max_retry_wait == 30.0
    settings = resolve("hook", {"retries": 0}, action=action_values({"retries": "4"}),
                       config={"retries": 3, "max_retry_wait": 60})
    assert (settings.retries, settings.max_retry_wait) == (0, 60.0)
    assert resolve("hook", {}, action=action_values({"retries": "4"})).retries == 4


def test_a_503_that_recovers_passes_and_counts_as_retried(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    flaky = site.route("/flaky", Flaky(text("down", status=503)))
    steady = site.route("/steady", text(PAGE))
    report = verify(cli, tmp_path, site, flaky, steady)
    assert report["exit_code"] == 0 and report["findings"] == []
    live = report["summary"]["live"]  # type: ignore[index]
    assert (live["matched"], live["retried"]) == (2, 1)


def test_a_source_that_keeps_failing_says_how_many_attempts(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/down", text("down", status=502))
    report = verify(cli, tmp_path, site, url, flags=("--retries", "3"))
    [finding] = report["findings"]  # type: ignore[misc]
    assert (finding["code"], finding["status"], finding["attempts"]) == ("TC315", 502, 4)
    assert report["summary"]["live"]["retried"] == 1  # type: ignore[index]
    assert site.paths == ["/down"] * 4


def test_no_retries_means_one_attempt(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/down", text("down", status=500))
    report = verify(cli, tmp_path, site, url, flags=("--retries", "0"))
    [finding] = report["findings"]  # type: ignore[misc]
    assert finding["attempts"] == 1 and site.paths == ["/down"]  # one, and said
    assert report["summary"]["live"]["retried"] == 0  # type: ignore[index]


def test_a_retry_after_beyond_max_retry_wait_is_reported_not_waited_for(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/busy", Reply(429, (("Retry-After", "45"),), b"slow down"))
    report = verify(cli, tmp_path, site, url, flags=("--max-retry-wait", "10"))
    [finding] = report["findings"]  # type: ignore[misc]
    assert finding["code"] == "TC315" and finding["status"] == 429
    assert "asked to wait 45 s, more than --max-retry-wait (10 s)" in finding["message"]
    assert site.paths == ["/busy"]


def test_every_web_finding_says_its_attempts_one_included(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    # A consumer tells "one request" from "not a web finding": attempts is on every finding
    # about a web source, and equals the requests the server saw for it.
    missing = site.route("/missing", text("nothing of the sort here"))
    gone = site.route("/gone", text("gone", status=404))
    flaky = site.route("/flaky", Flaky(text("down", status=503)))
    path = write_notes(tmp_path / "n.md", "\n".join(
        [note(quote=QUOTE, url=missing), note(quote=QUOTE, url=gone),
         note(quote="not on the page at all", url=flaky)]))
    report = cli("verify-notes", path, "--json", *site.flags).json()
    found = {f["uri"]: (f["code"], f["attempts"]) for f in report["findings"]}  # type: ignore[union-attr]
    assert found == {missing: ("TC210", 1), gone: ("TC315", 1), flaky: ("TC210", 2)}
    for url, (_, attempts) in found.items():
        assert site.paths.count(url.removeprefix(f"https://{HOST}")) == attempts

