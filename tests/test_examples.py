"""The bundled examples give the results the README promises."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, Cli
from tracecite import __version__


@pytest.mark.parametrize("argv, exit_code, codes", [
    (["check", "passing.trace.jsonl", "--evidence"], 0, []),
    (["passing.trace.jsonl", "--evidence"], 0, []),
    (["check", "changed.trace.jsonl"], 0, []),
    (["check", "changed.trace.jsonl", "--evidence"], 2, ["TC202"]),  # its capture changed
    (["check", "failing-evidence.trace.jsonl", "--evidence"], 2, ["TC201", "TC202"]),
    (["check", "failing-evidence.trace.jsonl"], 0, []),
    (["check", "failing-format.trace.jsonl"], 1, ["TC123", "TC126", "TC131"]),
    (["check", "failing-format.trace.jsonl", "--evidence"], 1, ["TC123", "TC126", "TC131"]),
    (["check", "citations.notes.md"], 0, []),
    (["check", "broken.notes.md"], 1, ["TC111", "TC112", "TC113", "TC113", "TC114"]),
    (["compare", "passing.trace.jsonl", "changed.trace.jsonl"], 2, ["TC402"]),
    (["compare", "passing.trace.jsonl", "passing.trace.jsonl"], 0, []),
])
def test_example(cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str], exit_code: int,
                 codes: list[str]) -> None:
    monkeypatch.chdir(EXAMPLES)
    run = cli(*argv, "--json")
    assert run.exit == exit_code
    assert sorted(run.codes()) == codes


def test_the_examples_folder_is_selected_by_the_default_globs(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tracecite check examples`: every bundled notes file and trace is named as the default
    globs expect, so the folder checks them all (the broken ones give exit 1), never TC106."""
    monkeypatch.chdir(EXAMPLES.parent)
    run = cli("check", "examples", "--json")
    assert run.exit == 1
    assert run.json()["summary"]["inputs"] == 6
    assert sorted(run.codes()) == ["TC111", "TC112", "TC113", "TC113", "TC114", "TC123",
                                   "TC126", "TC131"]
    checked = cli("check", "examples", "--evidence", "--json").json()
    assert {f["file"] for f in checked["findings"]} == {
        "examples/broken.notes.md", "examples/failing-format.trace.jsonl",
        "examples/changed.trace.jsonl", "examples/failing-evidence.trace.jsonl"}


def test_example_compare_changes(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    run = cli("compare", "passing.trace.jsonl", "changed.trace.jsonl", "--json")
    changes = run.json()["changes"]
    assert changes == {"added": [], "removed": [],
                       "changed": ["https://www.iana.org/help/example-domains"]}


def test_module_entry_point_version() -> None:
    done = subprocess.run([sys.executable, "-m", "tracecite", "--version"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tracecite {__version__}"


def test_module_entry_point_runs_an_example() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracecite", "check", "failing-evidence.trace.jsonl", "--evidence"],
        cwd=EXAMPLES, capture_output=True, text=True, check=False, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(EXAMPLES.parent)},
    )
    assert done.returncode == 2, done.stderr
    assert "TC202" in done.stdout and "TC201" in done.stdout
