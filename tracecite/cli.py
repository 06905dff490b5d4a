"""The ``tracecite`` command line: parse options, run one command, report, exit.

This module is the one error boundary: a bad command line is TC100 (exit 1); anything
unexpected is TC900 (exit 3) with one line asking for a bug report (the traceback only with
``--debug``). Everything else is a finding in the report.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, TextIO

from tracecite import __version__
from tracecite.codes import Code
from tracecite.errors import UsageError
from tracecite.fetch.limits import (
    DEFAULT_CONCURRENCY,
    DEFAULT_PER_HOST,
    MAX_BYTES,
    MAX_CONCURRENCY,
    MAX_TIMEOUT,
)
from tracecite.findings import EXIT_INPUT, EXIT_INTERNAL, Finding, Report
from tracecite.reporters import REPORTERS, OutputStyle
from tracecite.reporters.escape import printable
from tracecite.streams import is_terminal, write_stderr

if TYPE_CHECKING:  # the live commands' modules, imported when a command needs them
    from tracecite.commands import LiveOptions
    from tracecite.fetch.options import FetchOptions

BUG_REPORT = "this is a bug in TraceCite; please report it at https://github.com/tracecite/tracecite/issues"


class _Exit(Exception):
    """argparse asked to exit (``--help``, ``--version``) with this status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is TC100 with exit 1 instead of printing and exiting 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            write_stderr(message)
        raise _Exit(status)


@dataclass(frozen=True)
class Command:
    """A subcommand: its help, how it adds its arguments, and how it runs."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], Report]


# ---- option helpers -------------------------------------------------------------------------

def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    group.add_argument("--format", choices=sorted(REPORTERS), default=None,
                       help="report format (default: github when GITHUB_ACTIONS=true, "
                            "else console)")
    group.add_argument("--json", action="store_const", const="json", dest="format",
                       help="same as --format json")
    group.add_argument("--report-file", action="append", default=[], metavar="FORMAT:PATH",
                       help="also write the report in FORMAT to PATH (repeatable)")
    group.add_argument("--quiet", "-q", action="store_true",
                       help="console: print nothing when every check passes; no progress bar")
    group.add_argument("--debug", action="store_true",
                       help="show a traceback for internal errors")


def _add_fetch_options(parser: argparse.ArgumentParser, *, web: bool = True) -> None:
    """The options of commands that load sources; ``web``: also those only web fetches use."""
    group = parser.add_argument_group("fetching")
    group.add_argument("--no-progress", action="store_true",
                       help="no progress bar (there is none unless stderr is a terminal)")
    group.add_argument("--timeout", type=float, default=MAX_TIMEOUT, metavar="SECONDS",
                       help=f"deadline per source, at most {MAX_TIMEOUT:g} (default)")
    group.add_argument("--max-bytes", type=_positive_int, default=MAX_BYTES, metavar="N",
                       help=f"body cap after decoding, at most {MAX_BYTES} (default)")
    group.add_argument("--concurrency", type=_positive_int, default=DEFAULT_CONCURRENCY,
                       metavar="N", help=f"sources fetched at once (default "
                                         f"{DEFAULT_CONCURRENCY}, at most {MAX_CONCURRENCY})")
    if web:
        group.add_argument("--per-host", type=_positive_int, default=DEFAULT_PER_HOST,
                           metavar="N", help=f"requests in flight to one host at once, "
                                             f"redirects included (default {DEFAULT_PER_HOST}, "
                                             f"at most {MAX_CONCURRENCY})")
    group.add_argument("--user-agent", default=None, metavar="STR",
                       help="User-Agent header (default: tracecite/VERSION)")
    group.add_argument("--connect-to", action="append", default=[],
                       metavar="HOST:PORT:ADDR:PORT2",
                       help="connect to ADDR:PORT2 for HOST:PORT, keeping the URL, Host, SNI "
                            "and certificate check of HOST (repeatable; curl's meaning)")
    group.add_argument("--allow-net", action="append", default=[], metavar="CIDR",
                       help="let addresses in CIDR pass the address policy (repeatable)")
    group.add_argument("--ca-cert", default=None, metavar="FILE",
                       help="trust this PEM CA bundle in addition to the system store")


def fetch_options(args: argparse.Namespace) -> FetchOptions:
    """The fetcher's options from the command line (TC100 for a bad value)."""
    from tracecite.fetch.address_policy import parse_allow_net
    from tracecite.fetch.options import FetchOptions, parse_connect_to

    if not 0 < args.timeout <= MAX_TIMEOUT:
        raise UsageError(f"--timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds")
    if args.max_bytes > MAX_BYTES:
        raise UsageError(f"--max-bytes must be at most {MAX_BYTES}")
    if args.concurrency > MAX_CONCURRENCY:
        raise UsageError(f"--concurrency must be at most {MAX_CONCURRENCY}")
    per_host = getattr(args, "per_host", DEFAULT_PER_HOST)  # verify-files fetches nothing
    if per_host > MAX_CONCURRENCY:
        raise UsageError(f"--per-host must be at most {MAX_CONCURRENCY}")
    try:
        connect_to = tuple(parse_connect_to(spec) for spec in args.connect_to)
        allow_net = tuple(parse_allow_net(spec) for spec in args.allow_net)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.ca_cert is not None and not os.path.isfile(args.ca_cert):
        raise UsageError("--ca-cert names no readable file")
    extra = {}
    if args.user_agent is not None:
        if not args.user_agent.isprintable() or not args.user_agent.isascii():
            raise UsageError("--user-agent must be printable ASCII")
        extra["user_agent"] = args.user_agent
    try:
        return FetchOptions(timeout=args.timeout, max_bytes=args.max_bytes,
                            per_host=per_host, connect_to=connect_to, allow_net=allow_net,
                            ca_cert=args.ca_cert, **extra)
    except ValueError as exc:  # FetchOptions checks its own bounds (e.g. user agent length)
        raise UsageError(str(exc)) from None


def live_options(args: argparse.Namespace, label: str) -> LiveOptions:
    """Everything a live command needs from its command line."""
    from tracecite.commands import LiveOptions
    from tracecite.progress import progress_for

    return LiveOptions(
        fetch=fetch_options(args),
        concurrency=args.concurrency,
        root=getattr(args, "root", "."),
        progress=progress_for(enabled=not (args.no_progress or args.quiet), label=label),
    )


# ---- the commands ---------------------------------------------------------------------------

def _configure_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="notes files, and traces (*.jsonl)")
    parser.add_argument("--evidence", action="store_true",
                        help="every quote must be in its source's captured content")


def _run_check(args: argparse.Namespace) -> Report:
    from tracecite.commands import run_check

    return run_check(args.files, evidence=args.evidence)


def _configure_verify_notes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="NOTES", help="notes files")
    _add_fetch_options(parser)


def _run_verify_notes(args: argparse.Namespace) -> Report:
    from tracecite.commands import run_verify_notes

    return run_verify_notes(args.files, live_options(args, "verify-notes"))


def _configure_verify_urls(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="TRACE", help="traces (*.jsonl)")
    _add_fetch_options(parser)


def _run_verify_urls(args: argparse.Namespace) -> Report:
    from tracecite.commands import run_verify_urls

    return run_verify_urls(args.files, live_options(args, "verify-urls"))


def _configure_verify_files(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="TRACE", help="traces (*.jsonl)")
    parser.add_argument("--root", default=".", metavar="DIR",
                        help="directory that file: paths resolve against and must stay in "
                             "(default: the current directory)")
    _add_fetch_options(parser, web=False)


def _run_verify_files(args: argparse.Namespace) -> Report:
    from tracecite.commands import run_verify_files

    if not os.path.isdir(args.root):
        raise UsageError("--root names no directory")
    return run_verify_files(args.files, live_options(args, "verify-files"))


def _configure_compare(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="the earlier trace")
    parser.add_argument("new", metavar="NEW", help="the later trace")


def _run_compare(args: argparse.Namespace) -> Report:
    from tracecite.commands import run_compare

    return run_compare(args.old, args.new)


def _configure_hook(parser: argparse.ArgumentParser) -> None:
    from tracecite.hook import add_arguments

    add_arguments(parser)
    _add_fetch_options(parser)
    # Unset means "not on the command line": the configuration file fills these in (flags win).
    parser.set_defaults(timeout=None, max_bytes=None, concurrency=None, per_host=None)


def _run_hook(args: argparse.Namespace) -> Report:
    from tracecite.hook import run_hook

    return run_hook(args, lambda label: live_options(args, label))


COMMANDS: dict[str, Command] = {
    "check": Command("offline: notes format, trace structure, and --evidence",
                     _configure_check, _run_check),
    "verify-notes": Command("fetch each notes URL; quotes must be on the page",
                            _configure_verify_notes, _run_verify_notes),
    "verify-urls": Command("evidence, then every cited http(s) source re-fetched",
                           _configure_verify_urls, _run_verify_urls),
    "verify-files": Command("evidence, then every cited file: source re-read",
                            _configure_verify_files, _run_verify_files),
    "compare": Command("compare two traces' captured sources by stable URI",
                       _configure_compare, _run_compare),
    "hook": Command("pre-commit and the Action: the stage's checks on selected files",
                    _configure_hook, _run_hook),
}
"""Every subcommand by name."""


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
            command.configure(child)
            _add_output_options(child)
    return parser


def _with_command(argv: list[str]) -> list[str]:
    """The bare form ``tracecite FILE…`` is ``tracecite check FILE…``."""
    if argv and argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
        return ["check", *argv]
    return argv


# ---- output ---------------------------------------------------------------------------------

def _default_format() -> str:
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "console"


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
    return is_terminal(stream) and "NO_COLOR" not in os.environ


def emit(report: Report, fmt: str, *, quiet: bool = False, report_files: Sequence[str] = (),
         stdout: TextIO | None = None) -> None:
    """Write the report to each ``FORMAT:PATH`` report file, then to stdout in ``fmt``, and with
    ``github`` also the Markdown step summary to ``$GITHUB_STEP_SUMMARY`` when it is set.

    Report files come first: one that cannot be written is a usage error (TC100), reported
    instead of this report, so stdout never carries two. A step summary that cannot be written
    only earns a warning: the annotations and the log still say everything.
    """
    for spec in report_files:
        file_format, _, path = spec.partition(":")
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(REPORTERS[file_format](report, OutputStyle()))
        except OSError as exc:
            reason = exc.strerror or 'error'
            raise UsageError(f"--report-file cannot be written ({reason})") from None
    out = stdout if stdout is not None else sys.stdout
    if out is not None:  # None: Python started with stdout closed (``>&-``)
        out.write(REPORTERS[fmt](report, OutputStyle(color=_is_color(out), quiet=quiet)))
        out.flush()
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if fmt == "github" and summary_path:
        from tracecite.reporters.github import step_summary

        try:
            with open(summary_path, "a", encoding="utf-8") as handle:
                handle.write(step_summary(report))
        except OSError as exc:
            write_stderr("tracecite: warning: the step summary ($GITHUB_STEP_SUMMARY) cannot "
                             f"be written ({exc.strerror or 'error'})\n")


def _check_report_files(specs: Sequence[str]) -> None:
    for spec in specs:
        file_format, colon, path = spec.partition(":")
        if not colon or file_format not in REPORTERS or not path:
            raise UsageError(f"--report-file takes FORMAT:PATH with FORMAT one of "
                             f"{', '.join(sorted(REPORTERS))}")
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise UsageError("--report-file names a path in a directory that does not exist")
        if os.path.isdir(path):
            raise UsageError("--report-file names a directory, not a file")


def _fail(argv: Sequence[str], code: Code, message: str, command: str) -> int:
    """Report an error that stopped the run, in the format asked for where possible."""
    fmt = _guess_format(argv)
    report = Report(command, (Finding(code, message),))
    if fmt == "console":
        # argparse's messages quote the command line, which may hold hostile file names.
        write_stderr(f"tracecite: {code.code} {code.label}: {printable(message)}\n")
    else:
        with contextlib.suppress(OSError):  # the report is best effort here
            emit(report, fmt)
    return report.exit_code


# ---- entry point ----------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """Run ``tracecite`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    args_list = _with_command(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args_list
    command = args_list[0] if args_list and args_list[0] in COMMANDS else "tracecite"
    try:
        parser = build_parser(only=command if command in COMMANDS else None)
        args = parser.parse_args(args_list)
        if args.command is None:
            raise UsageError("no command or file given (see 'tracecite --help')")
        _check_report_files(args.report_file)
        report = COMMANDS[args.command].run(args)
        emit(report, args.format or _default_format(), quiet=args.quiet,
             report_files=args.report_file)
        return report.exit_code
    except _Exit as done:
        return done.status
    except UsageError as exc:
        return _fail(args_list, Code.USAGE, str(exc), command)
    except KeyboardInterrupt:
        write_stderr("tracecite: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); nothing more can be said to it.
        sys.stderr.close()
        return EXIT_INPUT
    except Exception as exc:  # the one place unexpected errors are caught
        if debug:
            traceback.print_exc()
        _fail(args_list, Code.INTERNAL_ERROR, f"{type(exc).__name__}: {BUG_REPORT}", command)
        return EXIT_INTERNAL
