"""What a newcomer trips on at the command line: the options every command takes, an unknown
option named with the command's own --help, `import` of a directory, and `import --format`
writing the report, never a trace, to stdout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Cli, note, write_notes
from tracecite.command_table import COMMANDS

EXCHANGE = EXAMPLES / "anthropic" / "exchange.json"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_takes_the_output_options(cli: Cli, command: str) -> None:
    """`--no-progress`, `--quiet`, `--json` and `--format` parse for every command (a run
    without its arguments is the usual "required" usage error, not "unrecognized")."""
    run = cli(command, "--no-progress", "--quiet", "--format", "json")
    assert run.exit == 1
    message = run.json()["findings"][0]["message"]
    assert "unrecognized" not in message, message


def test_check_takes_no_progress(cli: Cli, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_notes(tmp_path / "a.notes", note())
    assert cli("check", "a.notes", "--no-progress").exit == 0


@pytest.mark.parametrize("command", ["check", "compare", "merge", "verify-notes"])
def test_an_unknown_option_is_named_with_the_commands_help(cli: Cli, command: str) -> None:
    run = cli(command, "x", "y", "--bogus")
    assert run.exit == 1 and run.out == ""
    assert run.err == (f"tracecite: TC100 usage: unrecognized arguments: --bogus (see "
                       f"'tracecite {command} --help')\n")


@pytest.mark.parametrize(("argv", "named"), [
    (["check", "--bogus"], "--bogus"),
    (["--bogus"], "--bogus"),  # the bare form
    (["verify-notes", "--bogus=1", "-Z"], "--bogus=1 -Z"),
    (["compare", "--evidense"], "--evidense"),
])
def test_an_unknown_option_is_named_before_a_missing_file(
    cli: Cli, argv: list[str], named: str,
) -> None:
    """The option is what to fix: naming the FILE it left out would send the user looking
    for the wrong mistake."""
    command = argv[0] if argv[0] in COMMANDS else "check"
    run = cli(*argv)
    assert run.exit == 1 and run.out == ""
    assert run.err == (f"tracecite: TC100 usage: unrecognized arguments: {named} (see "
                       f"'tracecite {command} --help')\n")


@pytest.mark.parametrize("argv", [
    ["check"],
    ["check", "--no-prog"],  # a prefix of --no-progress, as argparse takes it
    ["check", "--jobs=2", "-q"],
])
def test_known_options_leave_the_missing_file_named(cli: Cli, argv: list[str]) -> None:
    message = cli(*argv, "--json").json()["findings"][0]["message"]
    assert message.startswith("the following arguments are required: FILE"), message


def test_what_follows_a_double_dash_is_a_file(cli: Cli) -> None:
    run = cli("check", "--json", "--", "--bogus")
    assert run.json()["findings"][0]["code"] == "TC101"  # no such file, not an option


def test_the_bare_form_names_check_help(cli: Cli) -> None:
    run = cli("x.notes", "--bogus", "--json")
    assert run.json()["findings"][0]["message"].endswith("(see 'tracecite check --help')")


def test_import_takes_a_directory(cli: Cli, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "saved" / "deep").mkdir(parents=True)
    shutil.copy(EXCHANGE, tmp_path / "saved" / "deep" / "exchange.json")
    (tmp_path / "saved" / "notes.txt").write_text("not a transcript\n", encoding="utf-8")
    run = cli("import", "anthropic", "saved", "-o", "out", "--json")
    assert (run.exit, run.codes()) == (0, [])
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["exchange.trace.jsonl"]
    assert cli("check", "--evidence", "out").exit == 0
    # Without -o the one run's trace goes to stdout, as for a file.
    assert json.loads(cli("import", "anthropic", "saved").out.splitlines()[0])["type"]


def test_import_of_a_directory_without_transcripts_is_tc106(cli: Cli, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.txt").write_text("x\n", encoding="utf-8")
    run = cli("import", "inspect", "empty", "logs", "-o", "out", "--json")
    assert run.exit == 0
    findings = run.json()["findings"]
    assert [(f["code"], f["file"]) for f in findings] == [("TC106", "empty"), ("TC106", "logs")]
    assert findings[0]["message"] == ("no inspect transcript in this directory: no file under "
                                      "it is named *.eval or *.json")
    assert "Traceback" not in run.err


@pytest.mark.parametrize("fmt", [["--format", "sarif"], ["--json"], ["--format", "github"]])
def test_import_with_a_format_never_mixes_the_report_with_a_trace(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: list[str]) -> None:
    """`import --format sarif > f`: stdout holds the report alone. Without -o the trace has
    nowhere to go, which the report says (TC100); with -o the traces go there."""
    monkeypatch.chdir(tmp_path)
    run = cli("import", "anthropic", EXCHANGE, *fmt)
    assert run.exit == 1
    assert "request-documents" not in run.out  # the trace's first call id
    assert "give -o OUT" in run.out
    run = cli("import", "anthropic", EXCHANGE, "-o", "out", *fmt)
    assert run.exit == 0 and "request-documents" not in run.out  # no event of the trace
    if fmt[-1] == "sarif":
        assert json.loads(run.out)["version"] == "2.1.0"
    assert (tmp_path / "out" / "exchange.trace.jsonl").is_file()
