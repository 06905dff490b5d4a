"""The bundled examples give the results the README promises."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, Cli
from tracecite import __version__


@pytest.mark.parametrize("argv, exit_code, codes", [
    (["check", "passing.jsonl", "--evidence"], 0, []),
    (["passing.jsonl", "--evidence"], 0, []),
    (["check", "changed.jsonl"], 0, []),
    (["check", "changed.jsonl", "--evidence"], 2, ["TC202"]),  # its capture changed
    (["check", "failing-evidence.jsonl", "--evidence"], 2, ["TC201", "TC202"]),
    (["check", "failing-evidence.jsonl"], 0, []),
    (["check", "failing-format.jsonl"], 1, ["TC123", "TC126", "TC131"]),
    (["check", "failing-format.jsonl", "--evidence"], 1, ["TC123", "TC126", "TC131"]),
    (["check", "notes.md"], 0, []),
    (["check", "notes-broken.md"], 1, ["TC111", "TC112", "TC113", "TC113", "TC114"]),
    (["compare", "passing.jsonl", "changed.jsonl"], 2, ["TC402"]),
    (["compare", "passing.jsonl", "passing.jsonl"], 0, []),
])
def test_example(cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str], exit_code: int,
                 codes: list[str]) -> None:
    monkeypatch.chdir(EXAMPLES)
    run = cli(*argv, "--json")
    assert run.exit == exit_code
    assert sorted(run.codes()) == codes


def test_example_compare_changes(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    changes = cli("compare", "passing.jsonl", "changed.jsonl", "--json").json()["changes"]
    assert changes == {"added": [], "removed": [],
                       "changed": ["https://www.iana.org/help/example-domains"]}


def test_module_entry_point_version() -> None:
    done = subprocess.run([sys.executable, "-m", "tracecite", "--version"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tracecite {__version__}"


def test_module_entry_point_runs_an_example() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracecite", "check", "failing-evidence.jsonl", "--evidence"],
        cwd=EXAMPLES, capture_output=True, text=True, check=False, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(EXAMPLES.parent)},
    )
    assert done.returncode == 2, done.stderr
    assert "TC202" in done.stdout and "TC201" in done.stdout
