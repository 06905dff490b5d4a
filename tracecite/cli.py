"""The ``tracecite`` command line: parse options, resolve the settings, run one command
through :mod:`tracecite.api` (the same functions a library caller uses), report, exit.

This module is the one error boundary: a user-caused problem (:class:`TraceCiteError`: a bad
command line, configuration or git state) becomes the report's one finding, with exit 1;
anything unexpected is TC900 (exit 3) with one line asking for a bug report (the traceback only
with ``--debug``). Everything else is a finding in the report. :func:`run` returns the
:class:`Report` (the Action takes its outputs from it); :func:`main` returns the exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
import sys
import traceback
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from tracecite import __version__
from tracecite.codes import Code
from tracecite.command_table import CHECK, COMMANDS, Command
from tracecite.errors import TraceCiteError, UsageError
from tracecite.findings import Finding, Report
from tracecite.reporters import REPORTERS, OutputStyle, write_report
from tracecite.reporters.escape import location, printable
from tracecite.settings import Origins, action_values, add_flags, flag_values, inert_notices
from tracecite.stops import StopSignals, signal_name, signal_of, signals_blocked, write_whole
from tracecite.streams import is_terminal, write_stderr
from tracecite.surroundings import read_surroundings, settings_for
from tracecite.workers import one_run

if TYPE_CHECKING:
    from tracecite.settings import Settings

BUG_REPORT = "this is a bug in TraceCite; please report it at https://github.com/tracecite/tracecite/issues"


class _Exit(Exception):
    """argparse asked to exit (``--help``, ``--version``) with this status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` finds it (``COLUMNS`` if set,
    else the terminal of stdout, else 80), without importing :mod:`shutil`."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, with the width its own formatter reads through :mod:`shutil`:
    argparse makes a formatter for every ``add_argument``, and shutil's import (with the
    archive modules it loads) was a few milliseconds of every command line."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is TC100 with exit 1 instead of printing and exiting 2, and
    its help laid out by :class:`_Formatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            write_stderr(message)
        raise _Exit(status)


# ---- the commands ---------------------------------------------------------------------------

def _run_command(command: Command, args: argparse.Namespace, settings: Settings) -> Report:
    """Run ``command`` through its :mod:`tracecite.api` function, with its arguments' values;
    a result that goes to stdout (``args.stdout``) is flushed here."""
    from tracecite import api

    stream: TextIO | None = getattr(args, "stdout", None)
    values = [getattr(args, argument.name) for argument in command.arguments]
    extra = {"stream": stream} if stream is not None else {}
    report: Report = getattr(api, command.library)(*values, settings=settings, **extra)
    if stream is not None:
        try:
            stream.flush()
        except BrokenPipeError:  # the reader left (| head): the result stands
            _reader_gone(stream)
    return report


class _ReportTakesStdout(io.TextIOBase):
    """Where a result bound for stdout goes when a ``--format`` puts the report there
    (``import --format sarif > f`` holds the report alone): writing to it is TC100 asking
    for ``-o``, after the command has said anything else that is wrong with its inputs."""

    def __init__(self, fmt: str) -> None:
        super().__init__()
        self.format = fmt

    def write(self, text: str) -> int:
        raise UsageError(f"--format {self.format} writes the report to stdout, where the "
                         "trace would go without -o: give -o OUT, a directory for the traces")


def _writes_stdout(command: Command, args: argparse.Namespace) -> bool:
    """Whether the command's result goes to stdout with these arguments (``import`` without
    ``-o``)."""
    return command.stdout_unless is not None and getattr(args, command.stdout_unless) is None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser; with ``only``, just that command's arguments are set up (the
    others are listed but not configured: configuring ``hook`` imports most of the package,
    which a quick ``check`` should not pay for)."""
    parser = _Parser(
        prog="tracecite",
        description="Prove that every cited quote appears word for word in its source.",
        epilog="Without a command, 'tracecite FILE… [--evidence]' means 'tracecite check'. "
               "Exit codes: 0 passed, 1 usage or input format error, 2 findings, "
               "3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"tracecite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, command in COMMANDS.items():
        child = sub.add_parser(name, help=command.help, description=command.help)
        if only is None or only == name:
            for argument in command.arguments:
                if argument.flags:
                    child.add_argument(*argument.flags, dest=argument.name, nargs=argument.nargs,
                                       metavar=argument.metavar, help=argument.help)
                else:
                    child.add_argument(argument.name, nargs=argument.nargs,
                                       metavar=argument.metavar, help=argument.help)
            add_flags(child, name)
    return parser


def _unrecognized(unknown: Sequence[str], command: str) -> UsageError:
    # argparse's own message points at the top level's --help; the command's --help is the
    # one that lists what it takes.
    return UsageError(f"unrecognized arguments: {' '.join(unknown)} (see "
                      f"'tracecite {command} --help')")


def _unknown_options(parser: argparse.ArgumentParser, command: str, argv: Sequence[str]
                     ) -> list[str]:
    """The options in ``argv`` (a command's arguments) that ``command`` does not take, as
    argparse would match them: ``--name`` or ``--name=value``, an unambiguous prefix of a
    long option, a short option with its value attached (``-j2``); nothing after ``--``."""
    commands = next((action.choices for action in parser._actions
                     if isinstance(action, argparse._SubParsersAction)), {})
    child = commands.get(command)
    if child is None:
        return []
    known = child._option_string_actions  # argparse keeps no public list of them
    unknown = []
    for token in argv:
        if token == "--":
            break
        if not token.startswith("-") or token == "-" or re.fullmatch(r"-\d[\d.]*", token):
            continue
        name = token.partition("=")[0]
        if name.startswith("--"):
            found = name in known or any(option.startswith(name) for option in known)
        else:
            found = name[:2] in known
        if not found:
            unknown.append(token)
    return unknown


def _with_command(argv: list[str]) -> list[str]:
    """The bare form ``tracecite FILE…`` is ``tracecite check FILE…``; a first argument that
    looks like a mistyped command (see :func:`_mistyped`) is left for
    :func:`_refuse_unknown_command`."""
    if (argv and argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")
            and not _mistyped(argv[0])):
        return [CHECK.name, *argv]
    return argv


def _refuse_unknown_command(argv: Sequence[str]) -> None:
    """TC100 for a first argument :func:`_with_command` left as a mistyped command."""
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        raise UsageError(f"unknown command '{argv[0]}'; did you mean {_mistyped(argv[0])}?")


def _mistyped(word: str) -> str:
    """The commands ``word`` is close to, quoted (``'check'``, ``'a' or 'b'``), when it is no
    file and looks like a command: a word of letters and hyphens, no path, no extension.
    Anything else is a file for the bare form (a missing one is then TC101)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z-]{0,30}", word) or os.path.lexists(word):
        return ""
    import difflib

    scored = sorted(((difflib.SequenceMatcher(None, word.lower(), name).ratio(), name)
                     for name in COMMANDS), reverse=True)
    # The best match, and those nearly as close (``verify`` could be any of three).
    close = [f"'{name}'" for ratio, name in scored if ratio >= max(0.6, scored[0][0] - 0.1)]
    return " or ".join(filter(None, (", ".join(close[:-1]), *close[-1:])))


# ---- output ---------------------------------------------------------------------------------

def _default_format() -> str:
    return read_surroundings().default_format


def _guess_format(argv: Sequence[str]) -> str:
    """The format asked for, read leniently when the command line did not parse."""
    chosen = _default_format()
    for i, arg in enumerate(argv):
        if arg == "--json":
            chosen = "json"
        elif arg == "--format" and i + 1 < len(argv) and argv[i + 1] in REPORTERS:
            chosen = argv[i + 1]
        elif arg.startswith("--format=") and arg[9:] in REPORTERS:
            chosen = arg[9:]
    return chosen


def _is_color(stream: TextIO | None) -> bool:
    return is_terminal(stream) and read_surroundings().color


def emit(report: Report, fmt: str, *, quiet: bool = False, report_files: Sequence[str] = (),
         stdout: TextIO | None = None, origins: Origins | None = None,
         sarif_category: str | None = None, aside: Sequence[str] = ()) -> None:
    """Write the report to each ``FORMAT:PATH`` report file, then to stdout in ``fmt``, and with
    ``github`` also the Markdown step summary to ``$GITHUB_STEP_SUMMARY`` when it is set.

    ``aside``: notices of the report that the console says on stderr, one dim line each
    (unless ``quiet``), instead of among the report's notes on stdout: options that have no
    effect on the command, which are about the command line, not the inputs. Every other
    format, and every report file, keeps them in the report's notices.

    Report files come first: one that cannot be written is a usage error (TC100), reported
    instead of this report, so stdout never carries two (``origins``: how it names the file's
    option). A step summary that cannot be written only earns a warning: the annotations and
    the log still say everything.
    """
    for spec in report_files:
        file_format, _, path = spec.partition(":")
        style = OutputStyle(sarif_category=sarif_category)
        try:
            # Whole or not at all, whatever stops the run; the JSON report a finding at a time.
            write_whole(path, partial(write_report, file_format, report, style))
        except OSError as exc:
            reason = exc.strerror or 'error'
            named = (origins or Origins()).report_file(file_format)
            raise UsageError(f"{named} cannot be written ({reason})") from None
    out = stdout if stdout is not None else sys.stdout
    if fmt == "console" and aside:
        report = dataclasses.replace(report, notices=tuple(
            n for n in report.notices if n not in aside))
        if not quiet:
            _say_aside(aside)
    if out is not None:  # None: Python started with stdout closed (``>&-``)
        write_report(fmt, report, OutputStyle(color=_is_color(out), quiet=quiet,
                                              sarif_category=sarif_category), out)
        out.flush()
    summary_path = read_surroundings().step_summary_path
    if fmt == "github" and summary_path:
        try:
            write_step_summary(report, summary_path)
        except OSError as exc:
            write_stderr("tracecite: warning: the step summary ($GITHUB_STEP_SUMMARY) cannot "
                             f"be written ({exc.strerror or 'error'})\n")


def _say_aside(notices: Sequence[str]) -> None:
    """Each notice as one line on stderr, dim on a terminal that takes colour."""
    lines = [f"tracecite: note: {printable(notice)}" for notice in notices]
    if not _is_color(sys.stderr):
        write_stderr("".join(f"{line}\n" for line in lines))
        return
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", width=10_000,
                      highlight=False, emoji=False, markup=False, soft_wrap=True)
    for line in lines:
        console.print(Text(line, style="dim"))
    write_stderr(buffer.getvalue())


def write_step_summary(report: Report, path: str,
                       environ: Mapping[str, str] | None = None) -> None:
    """Append the report's Markdown step summary to ``path`` (``$GITHUB_STEP_SUMMARY``), its
    links made from ``environ`` (default: this process's); OSError when it cannot be written.
    The one writer of the summary: :func:`emit` for the ``github`` format, the Action's script
    for the others."""
    from tracecite.reporters.github import step_summary

    with open(path, "a", encoding="utf-8") as handle:
        handle.write(step_summary(report, environ))


def _known_format(fmt: str) -> str:
    """The format guessed from the command line, if it is one; else the default."""
    return fmt if fmt in REPORTERS else _default_format()


def _fail(report: Report, fmt: str, *, stdout: TextIO | None = None) -> None:
    """Report an error that stopped the run, in the format asked for where possible (a stop
    before the command began: its empty report)."""
    if fmt == "console" and report.findings:
        # argparse's messages quote the command line, which may hold hostile file names.
        (finding,) = report.findings
        where = location(finding) + ": " if finding.file is not None else ""
        write_stderr(f"tracecite: {where}{finding.code.code} {finding.code.label}: "
                     f"{printable(finding.message)}\n")
    else:
        try:
            emit(report, fmt, stdout=stdout)
        except BrokenPipeError:
            _reader_gone(stdout)
        except OSError:
            pass  # the report is best effort here


# ---- entry points ---------------------------------------------------------------------------

def _settings(command: str, args: argparse.Namespace,
              action_inputs: Mapping[str, str] | None) -> Settings:
    """The run's settings: flags over the Action's inputs over the configuration file."""
    action = action_values(action_inputs) if action_inputs is not None else None
    return settings_for(COMMANDS[command], flag_values(args), action=action)


def run(argv: Sequence[str] | None = None, *, action_inputs: Mapping[str, str] | None = None,
        stdout: TextIO | None = None) -> Report:
    """Run ``tracecite`` with ``argv`` (default: ``sys.argv[1:]``), write its report, and
    return it. ``action_inputs``: the GitHub Action's inputs by name, which stand where flags
    do (a flag still wins).

    SIGINT and SIGTERM (in the main thread) stop the run (docs/reference/commands.md): the report
    still says what finished, the rest counted ``interrupted``, and its exit code is 130 or 143. A
    signal that comes while the report is being written only sets the exit code."""
    return run_with_settings(argv, action_inputs=action_inputs, stdout=stdout)[0]


def run_with_settings(argv: Sequence[str] | None = None, *,
                      action_inputs: Mapping[str, str] | None = None,
                      stdout: TextIO | None = None) -> tuple[Report, Settings | None]:
    """:func:`run`, and the settings the run resolved (None: it stopped before, at a usage
    error or a stop signal); the Action reads ``fail_on_findings`` from them."""
    args_list = _with_command(list(sys.argv[1:] if argv is None else argv))
    command = args_list[0] if args_list and args_list[0] in COMMANDS else "tracecite"
    fmt = (action_inputs or {}).get("format", "").strip() or _guess_format(args_list)
    settings: Settings | None = None
    # The stop signals and how the run's workers start are settled first, before any thread.
    with StopSignals() as stop, one_run():
        try:
            stop.listen()  # a signal held since the entry point's first line is taken here
            _refuse_unknown_command(args_list)
            parser = build_parser(only=command if command in COMMANDS else None)
            try:
                args, unknown = parser.parse_known_args(args_list)
            except UsageError:
                # A missing FILE after a mistyped option: the option is what to fix.
                unknown = _unknown_options(parser, command, args_list[1:])
                if not unknown:
                    raise
                raise _unrecognized(unknown, command) from None
            if unknown:
                raise _unrecognized(unknown, args.command or command)
            if args.command is None:
                raise UsageError("no command or file given (see 'tracecite --help')")
            if _writes_stdout(COMMANDS[command], args):
                if args.format in (None, "console"):
                    # The command's result takes stdout; its report goes to stderr.
                    args.stdout = stdout if stdout is not None else sys.stdout
                    stdout = sys.stderr
                else:  # the report asked for takes stdout: no result may go there
                    args.stdout = _ReportTakesStdout(args.format)
            settings = _settings(command, args, action_inputs)
            report = _run_command(COMMANDS[command], args, settings)
        except _Exit:
            return Report(command), None
        except KeyboardInterrupt as exc:  # a stop outside the live checks (which handle it)
            report = Report(command, stopped_by=signal_of(exc))
            if settings is None:  # stopped before the command began: an empty report
                stop.hold()
                _fail(report, _known_format(fmt), stdout=stdout)
                _say_stopped(report)
                return report, None
        except TraceCiteError as exc:
            report = Report(command, (exc.finding,))
            if settings is None or exc.finding.code is Code.USAGE:
                # The command line is wrong, or the report files are not known yet: one message.
                stop.hold()
                _fail(report, _known_format(fmt), stdout=stdout)
                return report, settings
        except Exception as exc:  # the one place unexpected errors are caught
            # The flag, as resolved; before that, as written (the command line may not parse).
            if settings.debug if settings is not None else "--debug" in args_list:
                traceback.print_exc()
            report = Report(command, (Finding(Code.INTERNAL_ERROR,
                                              f"{type(exc).__name__}: {BUG_REPORT}"),))
            stop.hold()
            _fail(report, _known_format(fmt), stdout=stdout)
            return report, settings
        stop.hold()  # the report is written whole
        report = _write(report, settings, stdout)
        if stop.signum is not None and report.stopped_by is None:
            report = dataclasses.replace(report, stopped_by=stop.signum)
    _say_stopped(report)
    return report, settings


def _write(report: Report, settings: Settings, stdout: TextIO | None) -> Report:
    """Emit the report as the settings ask; the report that stands (a report file that cannot
    be written turns it into that usage error)."""
    try:
        emit(report, settings.format or _default_format(), quiet=settings.quiet,
             report_files=settings.report_files, stdout=stdout, origins=settings.origins,
             sarif_category=settings.sarif_category,
             aside=inert_notices(report.command, settings))
    except BrokenPipeError:
        _reader_gone(stdout)
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.close()
    except TraceCiteError as exc:  # a report file that cannot be written
        failed = Report(report.command, (exc.finding,), stopped_by=report.stopped_by)
        _fail(failed, settings.format or _default_format(), stdout=stdout)
        return failed
    return report


def _reader_gone(stdout: TextIO | None) -> None:
    """The reader of stdout went away (``| head``): nothing more can be said to it, and the
    verdict stands. What is still buffered would fail again at Python's final flush of stdout
    (exit 120), so stdout now goes to the null device, as the Python docs advise."""
    out, real = (stdout if stdout is not None else sys.stdout), sys.__stdout__
    if real is None or out is not real:
        return  # a stream of the caller's: theirs to handle
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, real.fileno())
        finally:
            os.close(devnull)


def _say_stopped(report: Report) -> None:
    if report.stopped_by is not None:
        write_stderr(f"tracecite: stopped by {signal_name(report.stopped_by)}; the report "
                     "covers the sources that finished\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tracecite`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    try:
        return run(argv).exit_code
    except KeyboardInterrupt as stop:  # a stop between the run's own handlers' places
        with signals_blocked():
            return _stopped_outside(argv, signal_of(stop))


def _stopped_outside(argv: Sequence[str] | None, signum: int) -> int:
    """A stop that reached :func:`main` itself: the empty report of a stopped run, in the
    format the command line asks for, and 128 + the signal."""
    args_list = _with_command(list(sys.argv[1:] if argv is None else argv))
    command = args_list[0] if args_list and args_list[0] in COMMANDS else "tracecite"
    report = Report(command, stopped_by=signum)
    _fail(report, _known_format(_guess_format(args_list)))
    _say_stopped(report)
    return report.exit_code


def entry() -> int:
    """The ``tracecite`` command and ``python -m tracecite``: :func:`main`, and then the
    process ends. What it leaves need not be collected one object at a time on the way out
    (frozen, the garbage collector skips it; about 30 ms for a live run:
    docs/design/decisions.md#start-up).
    Library callers and tests call :func:`main`, which leaves the collector as it was."""
    code = main()
    import gc

    gc.freeze()
    return code
