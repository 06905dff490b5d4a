"""The README is the front door: its commands are the ones CI and users really run; and the
command reference (docs/reference/commands.md) documents every command and option."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from tracecite.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS_PAGE = (ROOT / "docs" / "reference" / "commands.md").read_text(encoding="utf-8")
CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _sh_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)


def test_ci_runs_the_readme_test_command() -> None:
    test_commands = [line for block in _sh_blocks(README) for line in block.splitlines()
                     if "pytest" in line and "pip install" in line]
    assert len(test_commands) == 1, "the README shows one command that installs and tests"
    assert test_commands[0].strip() in CI_RUN


def test_quick_start_runs_the_bundled_example() -> None:
    first = _sh_blocks(README)[0].strip()
    assert "pip install" in first and "tracecite check examples/" in first
    example = re.search(r"tracecite check (examples/\S+)", first)
    assert example is not None and (ROOT / example.group(1)).is_file()


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_parser_has_commands() -> None:
    assert len(_subparsers()) >= 8  # check, verify-notes/-urls/-files, compare, hook, merge, import


@pytest.mark.parametrize("name", sorted(_subparsers()))
def test_every_command_and_option_is_documented(name: str) -> None:
    assert f"`tracecite {name}" in COMMANDS_PAGE, f"{name} is not in docs/reference/commands.md"
    for action in _subparsers()[name]._actions:
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                assert f"`{option}" in COMMANDS_PAGE, (
                    f"{name} {option} is not in docs/reference/commands.md")
