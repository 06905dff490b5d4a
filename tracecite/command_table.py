"""Every ``tracecite`` command, once: one :class:`Command` record each, from which the command
line's subparsers (:func:`tracecite.cli.build_parser`), the option groups each command takes
(:func:`tracecite.settings.add_flags`), the library's functions (:mod:`tracecite.api`) and the
hook's stages (:func:`tracecite.hook.stages.stage_plan`) are all derived
(docs/reference/commands.md).

Cheap to import on purpose: the command line reads it before it knows the command, so a runner
is named here (``module:function``) and imported only when its command runs
(tests/test_startup.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracecite.checks.kinds import SourceKind
from tracecite.run.plan import Plan

if TYPE_CHECKING:
    from tracecite.findings import Report


@dataclass(frozen=True)
class Argument:
    """One of a command's own arguments (its options come from the settings table): a
    positional, or with ``flags`` an option (``-o``/``--out``). ``name`` is the argparse
    destination, and the value is passed to the library function in the arguments' order."""

    name: str
    metavar: str
    help: str
    nargs: str | None = None
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Command:
    """A subcommand: its name and help, the option groups whose flags it takes, its own
    arguments, the :mod:`tracecite.api` function that runs it (the command line calls it too),
    and the runner behind that function."""

    name: str
    help: str
    groups: tuple[str, ...]
    """Option groups of :data:`tracecite.settings.OPTIONS` whose options act on it, in ``--help``
    order (it takes the common ones it lacks as well: :data:`COMMON_GROUPS`)."""
    arguments: tuple[Argument, ...]
    library: str
    """The :mod:`tracecite.api` function's name."""
    runner: str
    """``module:function`` called with the arguments' values and ``settings=``."""
    reads_config: bool = False
    """Whether its settings come from the configuration file as well (docs/hook.md)."""
    stdout_unless: str | None = None
    """The option without which its result goes to stdout (``import`` without ``-o``): then
    the report goes to stderr."""
    inert: tuple[str, ...] = ()
    """Options of its groups that have no effect on it all the same (``verify-files`` fetches
    no web page, so the fetcher's ``user_agent`` means nothing to it): taken like the common
    options it lacks (:data:`COMMON_GROUPS`), with a notice."""
    stages: tuple[Plan, ...] = ()
    """``hook``: each stage's plan, its live checks of web pages followed by those of
    ``file:`` sources when the settings' ``verify_files`` asks (see
    :func:`tracecite.hook.stages.stage_plan`)."""

    def run(self) -> Callable[..., Report]:
        """The runner, imported now."""
        module, _, function = self.runner.partition(":")
        found: Callable[..., Report] = getattr(importlib.import_module(module), function)
        return found

    def stage(self, name: str) -> Plan | None:
        """The plan of the stage ``name`` (None: no such stage)."""
        return next((plan for plan in self.stages if plan.stage == name), None)

    @property
    def stage_names(self) -> tuple[str, ...]:
        """Its stages' names, in order."""
        return tuple(plan.stage for plan in self.stages if plan.stage is not None)


COMMON_GROUPS: tuple[str, ...] = ("read", "load", "web", "output")
"""The groups of the common options, which every command takes (docs/reference/commands.md,
"Common options"), so one command line of shared options serves every command. A command whose
own groups lack one still parses its flags and checks their values as usual (a bad one is
TC100), then drops them, with a notice that they have no effect on it."""

_FILES = Argument("files", "FILE", "notes files, and traces (*.jsonl); documents with --docs",
                  nargs="+")
_TRACES = Argument("files", "TRACE", "traces (*.jsonl)", nargs="+")
_LIVE = ("read", "load", "web", "output")

CHECK = Command("check", "offline: notes format, trace structure, and --evidence",
                ("check", "documents", "read", "output"), (_FILES,), "check",
                "tracecite.run.commands:run_check")
VERIFY_NOTES = Command("verify-notes", "fetch each notes URL; quotes must be on the page", _LIVE,
                       (Argument("files", "NOTES", "notes files", nargs="+"),), "verify_notes",
                       "tracecite.run.commands:run_verify_notes")
VERIFY_URLS = Command("verify-urls", "evidence, then every cited http(s) source re-fetched",
                      _LIVE, (_TRACES,), "verify_urls", "tracecite.run.commands:run_verify_urls")
VERIFY_FILES = Command("verify-files", "evidence, then every cited file: source re-read",
                       ("files", "read", "load", "output"), (_TRACES,), "verify_files",
                       "tracecite.run.commands:run_verify_files",
                       inert=("user_agent", "connect_to", "allow_net", "ca_cert"))
VERIFY_DOCS = Command("verify-docs",
                      "the quotes of Markdown and HTML documents, against their live or local "
                      "sources", ("documents", "files", "read", "load", "web", "output"),
                      (Argument("files", "DOC", "Markdown and HTML documents, or folders of "
                                                "them", nargs="+"),),
                      "verify_docs", "tracecite.run.commands:run_verify_docs")
COMPARE = Command("compare", "compare two traces' captured sources by stable URI",
                  ("read", "output"),
                  (Argument("old", "OLD", "the earlier trace"),
                   Argument("new", "NEW", "the later trace")),
                  "compare", "tracecite.run.commands:run_compare")
HOOK = Command(
    "hook", "pre-commit and the Action: the stage's checks on selected files",
    ("hook", "files", "documents", "read", "load", "web", "output"),
    (Argument("files", "FILE", "files to consider; those no notes/traces glob selects are "
                               "ignored (pre-commit passes every changed file)", nargs="*"),),
    "hook", "tracecite.hook.stages:run_hook", reads_config=True,
    stages=(Plan("hook", evidence=True, stage="offline"),
            Plan("hook", evidence=True, live=(SourceKind.WEB,), stage="online"),
            Plan("hook", evidence=True, live=(SourceKind.WEB,), stage="all")))
MERGE = Command("merge", "combine the JSON reports of a run's shards (--shard K/N) into one",
                ("output",),
                (Argument("reports", "REPORT", "JSON reports of one command: every shard of a "
                                               "--shard run, or runs on different inputs",
                          nargs="+"),),
                "merge", "tracecite.run.commands:run_merge")
IMPORT = Command(
    "import", "vendor transcripts (anthropic, inspect) as traces, one per run",
    ("transcripts", "output"),
    (Argument("transcript_format", "FORMAT", "the transcripts' format: anthropic (Messages API "
                                             "exchanges) or inspect (Inspect AI eval logs)"),
     Argument("files", "FILE", "transcripts", nargs="+"),
     Argument("out", "OUT", "directory to write one trace per run in, created when missing "
                            "(without it, the one run's trace goes to stdout and the report "
                            "to stderr)", flags=("-o", "--out"))),
    "import_transcripts", "tracecite.run.commands:run_import", stdout_unless="out")

COMMANDS: dict[str, Command] = {command.name: command for command in (
    CHECK, VERIFY_NOTES, VERIFY_URLS, VERIFY_FILES, VERIFY_DOCS, COMPARE, HOOK, MERGE,
    IMPORT)}
"""Every command by name, in ``--help`` order."""
