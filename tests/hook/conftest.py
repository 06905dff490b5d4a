"""Shared by the hook's tests: a JSON run, its files, and no Actions environment."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.git_repo import ACTIONS_VARIABLES
from tracecite.cli import main
from tracecite.hook.stages import PUSH_REFS

GOOD_NOTES = "claim: c\nquote: q\nurl: https://example.org/\n"


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    """Run the CLI with ``--json``; the exit code and the parsed report."""
    code = main([*args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def files_in(report: Any) -> set[str]:
    return {f["file"] for f in report["findings"] if f["file"] is not None}


@pytest.fixture(autouse=True)
def _no_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start outside GitHub Actions and outside a pre-commit push, whatever runs them."""
    for name in (*ACTIONS_VARIABLES, *PUSH_REFS):
        monkeypatch.delenv(name, raising=False)

