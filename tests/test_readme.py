"""The README is the front door: its commands are the ones CI and users really run."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from tracecite.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
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


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_and_option_is_documented(name: str) -> None:
    assert f"tracecite {name}" in README
    for action in _subparsers()[name]._actions:
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                assert f"`{option}" in README, f"{name} {option} is not in the README"
