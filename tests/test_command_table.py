"""The one table of commands: the subparsers, the option groups, the library's functions and the
hook's stages all come from it; and no module leans on too many others."""

from __future__ import annotations

import argparse
import ast
import inspect
from pathlib import Path

import pytest

from tracecite import api
from tracecite.checks.kinds import SourceKind
from tracecite.cli import build_parser
from tracecite.command_table import COMMANDS, COMMON_GROUPS, HOOK, Command
from tracecite.errors import UsageError
from tracecite.findings import Report
from tracecite.hook.stages import stage_plan
from tracecite.settings import COMMAND_GROUPS, OPTIONS, STAGES, Settings

PACKAGE = Path(__file__).resolve().parent.parent / "tracecite"

_DUMMY = {"files": ["x.notes"], "reports": ["r.json"], "old": "a.jsonl", "new": "b.jsonl",
          "transcript_format": "anthropic", "out": None}
"""A value for each argument a command takes, to bind its library function's signature."""


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_every_command_has_its_subparser_with_its_arguments_and_groups(command: Command
                                                                       ) -> None:
    parser = _subparsers()[command.name]
    dests = {a.dest for a in parser._actions}
    assert {argument.name for argument in command.arguments} <= dests
    flags = {o.name for o in OPTIONS if o.flag is not None and o.group in command.groups}
    assert flags <= dests
    # Every command takes the common options too; another command's own ones, never.
    common = {o.name for o in OPTIONS if o.flag is not None and o.group in COMMON_GROUPS}
    assert common <= dests
    others = {o.name for o in OPTIONS if o.flag is not None} - flags - common
    assert not others & dests, command.name
    assert COMMAND_GROUPS[command.name] == command.groups


@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_every_command_has_a_library_function_that_takes_its_arguments(command: Command
                                                                       ) -> None:
    function = getattr(api, command.library)
    assert command.library in api.__all__
    assert function.__doc__ and f"``tracecite {command.name}``" in function.__doc__
    values = [_DUMMY[argument.name] for argument in command.arguments]
    inspect.signature(function).bind(*values, settings=Settings())
    assert callable(command.run())
    # Its options are its groups' and the common ones (output-only ones aside): another
    # command's own are refused.
    foreign = next(o.name for o in OPTIONS if o.group not in (*command.groups, *COMMON_GROUPS)
                   and o.group != "action")
    with pytest.raises(UsageError, match=f"{command.name} takes no option '{foreign}'"):
        function(*values, **{foreign: None})


def test_the_hook_stages_come_from_the_table() -> None:
    assert STAGES == HOOK.stage_names == ("offline", "online", "all")
    offline = stage_plan(Settings(stage="offline", verify_files=True))
    assert (offline.evidence, offline.live, offline.stage) == (True, (), "offline")
    for stage in ("online", "all"):
        assert stage_plan(Settings(stage=stage)).live == (SourceKind.WEB,)
        with_files = stage_plan(Settings(stage=stage, verify_files=True))
        assert with_files.live == (SourceKind.WEB, SourceKind.FILE)
        assert (with_files.evidence, with_files.stage, with_files.command) == (True, stage, "hook")
    with pytest.raises(UsageError, match="unknown stage"):
        stage_plan(Settings(stage="sometimes"))


def test_a_library_call_goes_through_the_table(tmp_path: Path) -> None:
    notes = tmp_path / "a.notes"
    notes.write_text("claim: c\nquote: q\nurl: https://example.test/\n", encoding="utf-8")
    report = api.check([notes])
    assert isinstance(report, Report) and report.command == "check" and report.exit_code == 0


ALLOWED_NAMES: dict[str, set[str]] = {
    # An Action input called merge, not the command.
    "action.py": {"merge"},
    # Each kind of source names the command that checks it live (its progress label).
    "checks/kinds.py": {"verify-urls", "verify-files"},
    # The import command's own report.
    "importers/command.py": {"import"},
    # merge's own command; and a report's command field, read back from JSON.
    "merge.py": {"merge", "hook"},
    # A report's command field, read back to word the verdict.
    "reporters/verdict.py": {"import", "check", "hook"},
    # Option groups named after the commands that take them, and the run checks that only
    # verify-files and hook need.
    "settings.py": {"check", "hook", "verify-files"},
}
"""Where a command's name may be written out besides the table: where it is data."""


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exported: set[int] = set()  # __all__ lists functions by name
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            exported |= {id(n) for n in ast.walk(node.value)}
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in exported}


def test_command_names_are_written_in_the_table_only() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name == "command_table.py":
            continue
        written = _string_constants(path) & set(COMMANDS)
        assert written <= ALLOWED_NAMES.get(name, set()), (name, written)


MAX_PACKAGE_IMPORTS = 15


def _package_imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports anywhere (functions and TYPE_CHECKING
    blocks included); ``from tracecite.x import y`` counts ``tracecite.x.y`` when that is a
    module, else ``tracecite.x``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "tracecite"}
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
              and node.module.split(".")[0] == "tracecite"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in modules else node.module)
    return found


def test_no_module_imports_more_than_fifteen_of_the_package() -> None:
    def module_name(path: Path) -> str:
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    for path in paths:
        imported = _package_imports(path, modules) - {module_name(path)}
        assert len(imported) <= MAX_PACKAGE_IMPORTS, (module_name(path), sorted(imported))
