"""Messages a newcomer reads: options named the way they were set (a flag, an Action input, a
configuration key), and an HTTP status said once on every reporter's line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, all_outputs, note, write_notes
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite import action
from tracecite.cli import emit
from tracecite.errors import UsageError
from tracecite.findings import Report
from tracecite.settings import Origins

# ---- options named as they were set -----------------------------------------------------------


def _action_message(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch, **inputs: str) -> str:
    """The one TC100 message of an Action step run with these inputs (``fail_after`` is the
    input ``fail-after``), its JSON report on stdout."""
    monkeypatch.chdir(tmp_path)
    for name in action.INPUT_ENV.values():
        monkeypatch.delenv(name, raising=False)
    environ = {action.INPUT_ENV[name.replace("_", "-")]: value for name, value in inputs.items()}
    environ[action.INPUT_ENV["format"]] = "json"
    environ[action.INPUT_ENV["json-file"]] = str(tmp_path / "report.json")
    capsys.readouterr()
    assert action.run(environ) == 1
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["code"] == "TC100"
    message: str = finding["message"]
    return message


def test_action_inputs_are_named_as_inputs(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    write_notes(tmp_path / "a.notes", note())
    message = _action_message(capsys, tmp_path, monkeypatch, paths="a.notes", fail_after="2")
    assert message == "input fail-after needs input cache, which keeps each source's failures"
    message = _action_message(capsys, tmp_path, monkeypatch, paths="a.notes",
                              cache=str(tmp_path))
    assert message.startswith("input cache ") and message.endswith("names a directory, not a file")
    message = _action_message(capsys, tmp_path, monkeypatch, paths="a.notes", all="true")
    assert message == "input paths cannot be combined with input all or input since"
    assert "--" not in message


def test_report_files_and_networks_are_named_as_inputs(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write_notes(tmp_path / "a.notes", note())
    message = _action_message(capsys, tmp_path, monkeypatch, paths="a.notes",
                              sarif_file=str(tmp_path / "missing" / "out.sarif"))
    assert message == "input sarif-file names a path in a directory that does not exist"
    message = _action_message(capsys, tmp_path, monkeypatch, paths="a.notes",
                              allow_net="127.0.0.1/8")
    assert message == ("input allow-net '127.0.0.1/8' has host bits set; did you mean "
                       "127.0.0.0/8?")
    message = _action_message(capsys, tmp_path, monkeypatch, paths="a.notes",
                              connect_to="nonsense")
    assert message.startswith("input connect-to expects HOST:PORT:ADDR:PORT2")


def test_flag_values_are_named_as_flags(cli: Cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "a.notes", note())
    run = cli("check", notes, "--json", "--report-file", f"json:{tmp_path}/missing/r.json")
    assert run.json()["findings"][0]["message"] == (
        "--report-file names a path in a directory that does not exist")
    run = cli("verify-notes", notes, "--json", "--allow-net", "127.0.0.1/8")
    assert run.json()["findings"][0]["message"].startswith(
        "argument --allow-net: '127.0.0.1/8' has host bits set")


def test_no_files_names_the_action_inputs(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)  # not for a pull request either way
    message = _action_message(capsys, tmp_path, monkeypatch)
    assert message == "no files: give input paths, input since or input all"


def test_flags_are_named_as_flags(cli: Cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "a.notes", note())
    run = cli("verify-notes", "--json", "--fail-after", "2", notes)
    assert run.json()["findings"][0]["message"] == (
        "--fail-after needs --cache, which keeps each source's failures")
    run = cli("hook", "--json", "--all", notes)
    assert run.json()["findings"][0]["message"] == (
        "FILE arguments cannot be combined with --all or --since")


def test_configuration_keys_are_named_as_keys(cli: Cli, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".tracecite.toml").write_text("fail_after = 3\n")
    write_notes(tmp_path / "a.notes", note())
    run = cli("hook", "--json", "a.notes")
    assert run.exit == 1
    assert run.json()["findings"][0]["message"] == (
        "config key fail_after needs config key cache, which keeps each source's failures")
    # A flag given for what the configuration also sets is named as the flag.
    run = cli("hook", "--json", "--fail-after", "2", "a.notes")
    assert run.json()["findings"][0]["message"].startswith("--fail-after needs --cache")


def test_report_file_that_cannot_be_written_is_named_as_set(tmp_path: Path) -> None:
    spec = [f"sarif:{tmp_path}"]  # a directory: the open fails
    with pytest.raises(UsageError, match=r"^input sarif-file cannot be written \("):
        emit(Report("hook"), "json", report_files=spec, stdout=_Sink(),
             origins=Origins(action=True))
    with pytest.raises(UsageError, match=r"^--report-file cannot be written \("):
        emit(Report("check"), "json", report_files=spec, stdout=_Sink())


class _Sink:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def test_origins_name_every_kind_of_option() -> None:
    cli_run = Origins(flags=frozenset({"cache"}), config=frozenset({"root", "cache"}))
    assert cli_run.name("cache") == "--cache"
    assert cli_run.name("root") == "config key files_root"
    assert cli_run.name("since") == "--since"
    assert cli_run.name("files") == "FILE arguments"
    assert cli_run.name("cache", like="root") == "config key cache"
    step = Origins(inputs=frozenset({"retries"}), flags=frozenset({"report_files"}),
                   action=True)
    assert step.name("retries") == "input retries"
    assert step.name("files") == "input paths"
    assert step.name("all_files") == "input all"
    assert step.report_file("json") == "input json-file"


# ---- an HTTP status, once ----------------------------------------------------------------------

@pytest.mark.network
@pytest.mark.parametrize("fmt", ["console", "github", "sarif", "json"])
def test_an_http_status_is_said_once_on_every_line(cli: Cli, site: Site, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   fmt: str) -> None:
    url = site.route("/gone", text("not here", status=404))
    monkeypatch.chdir(tmp_path)  # relative names: no number of the temporary folder's in a line
    write_notes(tmp_path / "n.md", note(url=url))
    Path("out").mkdir()
    run, texts = all_outputs(cli, ["verify-notes", *site.flags, "n.md"], fmt, Path("out"),
                             monkeypatch)
    assert run.exit == 2
    lines: list[str] = []
    for where, written in texts.items():
        if "json" in where or "sarif" in where or (where == "stdout" and fmt in ("json",
                                                                                  "sarif")):
            lines += _json_messages(json.loads(written))
        else:
            lines += [line for line in written.splitlines() if "TC315" in line]
    assert len(lines) >= 4, texts  # stdout, the step summary and the report files
    for line in lines:
        assert len(re.findall(r"\b404\b", line)) == 1, line


def _json_messages(document: dict[str, Any]) -> list[str]:
    """The message of each finding of a JSON report, or the text of each SARIF result."""
    if "runs" in document:
        return [r["message"]["text"] for r in document["runs"][0]["results"]]
    return [f["message"] for f in document["findings"]]
