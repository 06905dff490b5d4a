"""The common options on every command: one command line of shared options serves them all.
A common option that has no effect on a command is checked as anywhere (a bad value is TC100),
then named in one notice: a dim line on stderr for the console, the report's notices in every
other format. A configuration file's values never say so."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, answer, call, cite, claim, jsonl, result, valid_events
from tracecite import api
from tracecite.cli import build_parser, emit
from tracecite.command_table import COMMANDS, COMMON_GROUPS
from tracecite.findings import Report
from tracecite.settings import OPTIONS, acts_on, inert_options

TRACE_OK = jsonl(valid_events())

# One valid value for each common flag that takes one.
_VALUES: dict[str, str] = {
    "--format": "json", "--report-file": "json:r.json", "--sarif-category": "ci",
    "--warn": "TC210", "--timeout": "5", "--max-bytes": "1000", "--max-pdf-bytes": "1000",
    "--concurrency": "2", "--user-agent": "ci", "--connect-to": "a.test:443:127.0.0.1:8443",
    "--allow-net": "127.0.0.0/8", "--ca-cert": __file__, "--shard": "1/2", "--per-host": "2",
    "--retries": "1", "--max-retry-wait": "5", "--skip-url": "https://a.test/**",
    "--cache": "c.sqlite", "--cache-max-age": "1h", "--fail-after": "2", "--jobs": "1",
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_parses_every_common_option(command: str) -> None:
    common = [o for o in OPTIONS if o.flag is not None and o.group in COMMON_GROUPS]
    argv = [command, "x"]
    for option in common:
        assert option.flag is not None
        argv += [option.flag] if option.switch else [option.flag, _VALUES[option.flag]]
    if command == "import":
        argv.insert(1, "anthropic")
    if command == "compare":
        argv.insert(1, "y")
    parsed = build_parser(only=command).parse_args(argv)
    assert parsed.per_host == 2 and parsed.jobs == 1 and parsed.cache == "c.sqlite"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_lists_only_the_options_that_act_and_says_the_others_are_taken(command: str
                                                                           ) -> None:
    parser = build_parser(only=command)
    child = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    shown = child.format_help()
    inert = [o.flag for o in inert_options(command) if o.flag is not None]
    for option in OPTIONS:
        if option.flag is not None and acts_on(command, option):
            assert re.search(rf"{option.flag}(?![\w-])", shown), option.flag
    usage = child.format_usage()
    for flag in inert:
        assert not re.search(rf"{flag}(?![\w-])", usage), flag
    assert ("common options that have no effect" in shown) == bool(inert)


def test_the_commands_that_fetch_nothing_take_the_fetch_options_without_effect() -> None:
    for command in ("check", "compare", "merge", "import"):
        assert "per_host" in {o.name for o in inert_options(command)}
        assert "timeout" in {o.name for o in inert_options(command)}
    assert {o.name for o in inert_options("verify-files")} == {
        "per_host", "retries", "max_retry_wait", "skip_urls", "cache", "cache_max_age",
        "fail_after", "archive", "user_agent", "connect_to", "allow_net", "ca_cert"}
    assert inert_options("verify-urls") == inert_options("hook") == ()
    assert "jobs" not in {o.name for o in inert_options("compare")}  # compare reads with workers


def test_per_host_for_files_is_a_notice_in_json(cli: Cli, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.jsonl").write_bytes(TRACE_OK)
    run = cli("verify-files", "a.jsonl", "--per-host", "2", "--per-host", "3", "--json")
    assert run.exit == 0, run.out
    assert run.json()["notices"] == ["--per-host has no effect on verify-files"]
    assert run.err == ""


def test_the_console_says_it_once_on_stderr(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "a.jsonl"
    trace.write_bytes(TRACE_OK)
    run = cli("check", trace, "--timeout", "5", "--allow-net", "127.0.0.0/8",
              "--allow-net", "10.0.0.0/8")
    assert run.exit == 0
    assert run.err == ("tracecite: note: --timeout has no effect on check\n"
                       "tracecite: note: --allow-net has no effect on check\n")
    assert "note:" not in run.out and "has no effect" not in run.out
    assert cli("check", trace, "--timeout", "5", "--quiet").err == ""


def test_a_report_file_keeps_the_notice_beside_the_console(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "a.jsonl"
    trace.write_bytes(TRACE_OK)
    out = tmp_path / "r.json"
    run = cli("check", trace, "--retries", "1", "--report-file", f"json:{out}")
    assert run.exit == 0 and "--retries has no effect on check" in run.err
    assert json.loads(out.read_text())["notices"] == ["--retries has no effect on check"]


def test_the_dim_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr("tracecite.cli._is_color", lambda stream: True)
    emit(Report("check", notices=("--timeout has no effect on check",)), "console",
         stdout=io.StringIO(), aside=("--timeout has no effect on check",))
    err = capsys.readouterr().err
    assert "\x1b[2m" in err and "--timeout has no effect on check" in err


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_other_formats_carry_it_as_the_reports_other_notices(cli: Cli, tmp_path: Path,
                                                             fmt: str) -> None:
    trace = tmp_path / "a.jsonl"
    trace.write_bytes(TRACE_OK)
    run = cli("check", trace, "--cache-max-age", "1h", "--format", fmt)
    assert run.exit == 0 and run.err == ""
    assert "--cache-max-age has no effect on check" in run.out


def test_compare_merge_and_import_take_the_fetch_options(cli: Cli, tmp_path: Path) -> None:
    trace = tmp_path / "a.jsonl"
    trace.write_bytes(TRACE_OK)
    run = cli("compare", trace, trace, "--user-agent", "ci", "--jobs", "1", "--json")
    assert run.exit == 0 and run.json()["notices"] == ["--user-agent has no effect on compare"]
    report = tmp_path / "r.json"
    report.write_text(cli("check", trace, "--json").out)
    run = cli("merge", report, "--concurrency", "4", "--json")
    assert run.exit == 0 and run.json()["notices"] == ["--concurrency has no effect on merge"]
    run = cli("import", "anthropic", Path(__file__).parents[1] / "examples/anthropic/exchange.json",
              "-o", tmp_path / "out", "--max-bytes", "100", "--json")
    assert run.exit == 0, run.out
    assert run.json()["notices"] == ["--max-bytes has no effect on import"]


def test_an_option_without_effect_changes_nothing(cli: Cli, tmp_path: Path) -> None:
    # check --shard 2/2: offline findings would be shard 1's, were the shard applied.
    trace = tmp_path / "a.jsonl"
    trace.write_bytes(jsonl([call(), result(), answer([claim(citations=[cite(quote="nope")])])]))
    plain = cli("check", trace, "--evidence", "--json").json()
    sharded = cli("check", trace, "--evidence", "--shard", "2/2", "--json").json()
    assert sharded["findings"] == plain["findings"] and sharded["exit_code"] == 2
    assert sharded["shard"] is None and sharded["run"] == plain["run"]
    assert sharded["notices"] == ["--shard has no effect on check"]


def test_a_configuration_file_says_nothing(cli: Cli, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path(".tracecite.toml").write_text("per_host = 2\ntimeout = 5\nretries = 1\n")
    Path("runs").mkdir()
    Path("runs/a.jsonl").write_bytes(TRACE_OK)
    run = cli("check", "runs", "--json")  # a directory: the configuration is read
    assert run.exit == 0 and "notices" not in run.json()
    run = cli("check", "runs")
    assert run.err == ""


def test_the_library_takes_them_too(tmp_path: Path) -> None:
    trace = tmp_path / "a.jsonl"
    trace.write_bytes(TRACE_OK)
    report = api.check([trace], per_host=2, cache=tmp_path / "c.sqlite")
    assert report.exit_code == 0
    assert report.notices == ("per_host= has no effect on check",
                              "cache= has no effect on check")
    options: dict[str, Any] = {"per_host": 0}
    with pytest.raises(api.UsageError, match="per_host= must be from 1 to 64"):
        api.check([trace], **options)
