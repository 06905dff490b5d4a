"""``tracecite.api`` (docs/guides/scale.md): the commands as functions returning a frozen, picklable
:class:`Report`, with no global state; the command line is a thin layer over them."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import pickle
import signal
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    EXAMPLES,
    Cli,
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
from tests.fetch.servers import Reply, Request
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite import api
from tracecite.codes import Code
from tracecite.errors import ConfigError, TraceCiteError, UsageError
from tracecite.findings import Finding, Report

PAGE = "The quick brown fox jumps over the lazy dog."


def _site_options(site: Site) -> dict[str, Any]:
    """The keyword options that reach the test site (the flags of ``site.flags``)."""
    flags = site.flags
    return {"connect_to": [flags[1], flags[3]], "allow_net": [flags[5]],
            "ca_cert": flags[7]}


# ---- reports --------------------------------------------------------------------------------

def test_check_gives_the_report_the_command_line_writes(cli: Cli) -> None:
    paths = [str(EXAMPLES / "failing-evidence.trace.jsonl"), str(EXAMPLES / "citations.notes.md")]
    report = api.check(paths, evidence=True)
    assert report.exit_code == 2
    assert {f.code for f in report.findings} == {Code.EVIDENCE_UNCITED_CLAIM,
                                                 Code.QUOTE_NOT_IN_CAPTURE}
    assert report.to_json() == cli("check", "--evidence", *paths, "--json").json()
    assert json.loads(json.dumps(report.to_json())) == report.to_json()


def test_findings_are_in_the_order_of_the_json_and_the_console(cli: Cli) -> None:
    """Input errors first, then by file and position, as the reports show them; the run found
    the broken notes' findings record by record, not line by line."""
    paths = [str(EXAMPLES / "failing-evidence.trace.jsonl"), str(EXAMPLES / "broken.notes.md")]
    report = api.check(paths, evidence=True, jobs=1)
    shown = cli("check", "--evidence", *paths, "--json").json()["findings"]
    assert [(f.code.code, f.file, f.line) for f in report.findings] == [
        (f["code"], f["file"], f["line"]) for f in shown]
    assert report.findings[0].code.exit == 1 and report.findings[-1].code.exit == 2
    console = cli("check", "--evidence", *paths).out
    assert [line.split()[1] for line in console.splitlines() if line.startswith("  ")] == [
        f.code.code for f in report.findings]


def test_input_errors_are_in_the_report_not_raised(tmp_path: Path) -> None:
    report = api.check([str(EXAMPLES / "failing-format.trace.jsonl"), str(tmp_path / "gone.notes")])
    assert report.exit_code == 1
    assert Code.INPUT_UNREADABLE in {f.code for f in report.findings}


def test_compare_and_paths_as_path_objects() -> None:
    report = api.compare(EXAMPLES / "passing.trace.jsonl", EXAMPLES / "changed.trace.jsonl")
    assert report.exit_code == 2 and report.changes is not None
    assert report.changes.changed == ("https://www.iana.org/help/example-domains",)
    assert api.check([EXAMPLES / "passing.trace.jsonl"], evidence=True).exit_code == 0


def test_hook_with_files_and_a_configuration(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracecite.toml").write_text('traces = ["*.jsonl"]\n', encoding="utf-8")
    write_trace(tmp_path / "run.jsonl", [call(), result(), answer(claims=[
        claim(citations=[cite(quote="not in the capture")])])])
    report = api.hook(["run.jsonl"])
    assert report.stage == "offline" and report.exit_code == 2
    assert [f.code for f in report.findings] == [Code.QUOTE_NOT_IN_CAPTURE]


# ---- options --------------------------------------------------------------------------------

@pytest.mark.parametrize(("call_it", "message"), [
    (lambda: api.verify_urls([], timeout=50), "timeout= must be more than 0"),
    (lambda: api.verify_urls([], concurrency="8"), "concurrency= must be a whole number"),
    (lambda: api.verify_notes([], shard="3/2"), "shard= must be K/N"),
    (lambda: api.verify_notes([], tmeout=5), "verify-notes takes no option 'tmeout'"),
    (lambda: api.check([], shard="1/3/2"), "shard= must be K/N"),  # common: checked anyway
    (lambda: api.check([], root="."), "check takes no option 'root'"),
    (lambda: api.check([], format="json"), "check takes no option 'format'"),
    (lambda: api.check([], report_files=["json:r.json"]), "takes no option 'report_files'"),
    (lambda: api.verify_notes([], fail_after=3), "fail_after= needs cache="),
    (lambda: api.verify_notes([], warn=["TC100"]), "warn= must name codes that fail"),
    (lambda: api.check("notes.md"), "a list of paths, not one path"),
])
def test_a_bad_option_raises_usage_error_with_its_tc100_finding(call_it: Any,
                                                                message: str) -> None:
    with pytest.raises(UsageError, match=message) as raised:
        call_it()
    assert raised.value.finding.code is Code.USAGE


def test_options_are_checked_by_the_settings_rows(site: Site, tmp_path: Path) -> None:
    url = site.route("/p", text(PAGE))
    notes = write_notes(tmp_path / "a.notes", note(url=url) + "\n" + note(url=url + "x"))
    report = api.verify_notes([notes], timeout=5, retries=0, warn=("TC315",),
                              cache=tmp_path / "c.sqlite", **_site_options(site))
    assert report.exit_code == 0 and [f.code for f in report.findings] == [Code.HTTP_STATUS]
    assert report.findings[0].severity == "warning"
    assert (tmp_path / "c.sqlite").exists()


def test_a_configuration_problem_raises_tracecite_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("timeout = [", encoding="utf-8")
    with pytest.raises(TraceCiteError) as raised:
        api.hook(["x.notes"], config=bad)
    assert raised.value.finding.code is Code.CONFIG_INVALID


# ---- frozen and picklable -------------------------------------------------------------------

def test_reports_are_frozen_and_picklable(site: Site, tmp_path: Path) -> None:
    url = site.route("/p", text("Not the words."))
    notes = write_notes(tmp_path / "a.notes", note(quote="quick brown fox", url=url))
    report = api.verify_notes([notes], archive=False, **_site_options(site))
    assert report.findings[0].diagnosis is not None
    assert pickle.loads(pickle.dumps(report)) == report
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.command = "x"  # type: ignore[misc]


@pytest.mark.parametrize("error", [
    UsageError("bad"), ConfigError(Finding(Code.CONFIG_INVALID, "bad", file="c.toml", line=2))])
def test_errors_cross_processes_whole(error: TraceCiteError) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and again.finding == error.finding
    assert str(again) == str(error)


def _check_in_worker(path: str) -> Report:
    return api.check([path], evidence=True)


def test_calls_in_worker_processes_send_their_reports_back() -> None:
    paths = [str(EXAMPLES / name)
             for name in ("passing.trace.jsonl", "failing-evidence.trace.jsonl")]
    context = multiprocessing.get_context("spawn")  # nothing inherited from this process
    with ProcessPoolExecutor(2, mp_context=context) as pool:
        reports = list(pool.map(_check_in_worker, paths))
    assert reports == [api.check([p], evidence=True) for p in paths]
    assert [r.exit_code for r in reports] == [0, 2]


# ---- no global state ----------------------------------------------------------------------

def test_two_calls_at_once_in_threads_give_their_own_reports(site: Site,
                                                             tmp_path: Path) -> None:
    seen = threading.Barrier(2, timeout=10)

    def both_in_flight(request: Request) -> Reply:
        seen.wait()  # each call's request waits for the other's: they overlap
        return text(PAGE if request.path == "/good" else "Other words entirely.")

    good, bad = site.route("/good", both_in_flight), site.route("/bad", both_in_flight)
    notes = write_notes(tmp_path / "good.notes", note(url=good))
    trace = write_trace(tmp_path / "bad.jsonl", [call(), result(sources=[
        source("s1", bad, PAGE)]), answer()])
    options = _site_options(site)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(api.verify_notes, [notes], **options)
        second = pool.submit(api.verify_urls, [trace], **options)
        reports = first.result(timeout=30), second.result(timeout=30)
    assert [r.exit_code for r in reports] == [0, 2]
    assert reports[0].summary.live.matched == 1 and not reports[0].findings
    assert [(f.code, f.file) for f in reports[1].findings] == [
        (Code.QUOTE_NOT_ON_PAGE, str(trace))]


def test_a_call_prints_nothing_and_installs_no_signal_handler(
        site: Site, tmp_path: Path, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    handlers: list[object] = []

    def record(request: Request) -> Reply:
        handlers.append(signal.getsignal(signal.SIGINT))  # while the call runs
        return text(PAGE)

    url = site.route("/p", record)
    notes = write_notes(tmp_path / "a.notes", note(url=url))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")  # the command line's default format: unread
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    before = signal.getsignal(signal.SIGINT)
    report = api.verify_notes([notes], **_site_options(site))
    assert report.exit_code == 0 and handlers == [before]
    assert capfd.readouterr() == ("", "")
    assert not (tmp_path / "summary.md").exists()


def test_a_shard_says_which_it_is(site: Site, tmp_path: Path) -> None:
    urls = [site.route(f"/p{i}", text(PAGE)) for i in range(6)]
    notes = write_notes(tmp_path / "a.notes", "\n".join(note(url=u) for u in urls))
    reports = [api.verify_notes([notes], shard=f"{k}/2", **_site_options(site))
               for k in (1, 2)]
    assert [r.shard for r in reports] == [(1, 2), (2, 2)]
    merged = api.merge(reports)
    assert merged.shard is None
    assert merged.summary == api.verify_notes([notes], **_site_options(site)).summary


# ---- the command line is a layer over the api -------------------------------------------------

@pytest.mark.parametrize(("argv", "function"), [
    (["check", "x.notes"], "check"), (["verify-notes", "x.notes"], "verify_notes"),
    (["verify-urls", "x.jsonl"], "verify_urls"), (["verify-files", "x.jsonl"], "verify_files"),
    (["compare", "a.jsonl", "b.jsonl"], "compare"), (["hook", "x.notes"], "hook"),
    (["merge", "r.json"], "merge"),
])
def test_every_command_runs_through_the_api(cli: Cli, monkeypatch: pytest.MonkeyPatch,
                                            argv: list[str], function: str) -> None:
    calls: list[tuple[Any, ...]] = []

    def stand_in(*args: Any, settings: Any = None, **options: Any) -> Report:
        calls.append((*args, settings, options))
        return Report(argv[0])

    monkeypatch.setattr(api, function, stand_in)
    assert cli(*argv, "--json").exit == 0
    (*arguments, settings, options), = calls
    assert options == {} and settings.format == "json"  # the settings, resolved once
    assert [str(a) for a in arguments[0]] == argv[1:] if function != "compare" else (
        arguments == argv[1:])


def test_the_command_line_passes_its_resolved_settings(cli: Cli,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def stand_in(paths: Any, *, settings: Any = None, **options: Any) -> Report:
        seen.append((list(paths), settings))
        return Report("verify-notes")

    monkeypatch.setattr(api, "verify_notes", stand_in)
    assert cli("verify-notes", "x.notes", "--timeout", "3", "--shard", "2/5").exit == 0
    (paths, settings), = seen
    assert paths == ["x.notes"] and settings.timeout == 3.0 and settings.shard == (2, 5)


def test_ctrl_c_while_sources_are_checked_returns_what_finished(site: Site,
                                                                tmp_path: Path) -> None:
    """No handler of the api's: Python's own KeyboardInterrupt stops the checks, and the
    call still returns the report, the unfinished sources counted ``interrupted``."""
    release = threading.Event()

    def interrupt(request: Request) -> Reply:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, handled by Python's default handler
        release.wait(10)  # answered after the stop: the check does not wait for it
        return text(PAGE)

    url = site.route("/slow", interrupt)
    notes = write_notes(tmp_path / "a.notes", note(url=url))
    try:
        report = api.verify_notes([notes], **_site_options(site))
    finally:
        release.set()
    assert report.stopped_by == signal.SIGINT and report.exit_code == 130
    assert report.summary.live.interrupted == 1
