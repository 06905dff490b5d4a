"""TraceCite as a library (docs/guides/scale.md): the commands as functions from paths and keyword
options to a :class:`~tracecite.findings.Report`.

::

    from tracecite import api

    report = api.check(["examples/passing.trace.jsonl"], evidence=True)  # in a clone
    report.exit_code          # 0, 1 (an input is malformed), 2 (findings)
    report.to_json()          # the --json object (docs/reference/reports.md), as a dict

    report = api.verify_urls(["examples/"], timeout=10, concurrency=16, cache="rot.sqlite")

Options are the command line's, by the names of the settings table
(:data:`tracecite.settings.OPTIONS`): ``timeout=``, ``concurrency=``, ``evidence=``,
``cache=``, ``warn=[...]``, ``shard="2/4"``, …, with the same checks and bounds as the flags.
A function takes the options of its command (its record's option groups in
:data:`tracecite.command_table.COMMANDS`, the table every command is defined in) and the
common options, as the command line does: one that has no effect on the command is checked,
then named in the report's notices (``per_host= has no effect on check``). The output
options (``format``, ``report_files``, ``quiet``, ``debug``, ``sarif_category``,
``no_progress``) are the command line's: a library call prints nothing and writes no report
file; format a report with ``report.to_json()`` or :data:`tracecite.reporters.REPORTERS`.

Errors:

- A problem of the inputs (a malformed notes file or trace, a missing file) is a finding in
  the returned report, with exit code 1, as on the command line; so are quotes not found
  (exit 2).
- A bad option (an unknown name, another command's own option, a value out of bounds) raises
  :class:`UsageError` (its ``finding`` is TC100); ``hook`` raises :class:`TraceCiteError` for a
  configuration file it cannot use (TC104) or a git state it cannot read (TC103). Both carry
  the finding the command line would report, in ``error.finding``.

No global state: a call prints nothing, shows no progress bar, installs no signal handler,
never changes the current directory and reads no environment variable, except ``hook``
without files, which finds a pull request's base from the Actions environment
(``GITHUB_ACTIONS``, ``GITHUB_BASE_REF``, … as :func:`tracecite.hook.git.pull_request_base`
reads them), as the command line does. Relative paths are relative to the current directory.
Calls may run at once in threads and in processes; a :class:`Report` is frozen and
picklable, so it can be sent back from a worker process (so are the errors). Signals are the
caller's: a ``KeyboardInterrupt`` while sources are being checked ends the checks in flight
and the call returns the report of what finished (``report.stopped_by`` is SIGINT, the exit
code 130), as on the command line; one at any other moment propagates as usual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, TextIO

from tracecite.command_table import (
    CHECK,
    COMPARE,
    HOOK,
    IMPORT,
    MERGE,
    VERIFY_DOCS,
    VERIFY_FILES,
    VERIFY_NOTES,
    VERIFY_URLS,
    Command,
)
from tracecite.errors import TraceCiteError, UsageError
from tracecite.findings import Report
from tracecite.settings import BY_NAME, Settings, inert_notices, takes
from tracecite.surroundings import settings_for

__all__ = ["Report", "TraceCiteError", "UsageError", "check", "compare", "hook",
           "import_transcripts", "merge", "read_report", "verify_docs", "verify_files",
           "verify_notes", "verify_urls"]

_OUTPUT_ONLY = frozenset({"format", "report_files", "quiet", "debug", "sarif_category",
                          "no_progress"})
"""Options of the command line's output, which a library call does not take."""


def check(paths: Iterable[str | os.PathLike[str]], *, settings: Settings | None = None,
          **options: Any) -> Report:
    """``tracecite check``: offline, the notes format and trace structure, and with
    ``evidence=True`` every quote in its source's captured content. A directory stands for the
    files under it that the configured globs select. ``settings``: options already resolved
    (the command line's), instead of keyword options."""
    chosen = _settings(CHECK, options, settings)
    return _run(CHECK, chosen, _paths(paths))


def verify_notes(paths: Iterable[str | os.PathLike[str]], *, settings: Settings | None = None,
                 **options: Any) -> Report:
    """``tracecite verify-notes``: fetch each notes URL once; every quote must be in its
    page's visible text. ``settings``: as for :func:`check`."""
    chosen = _settings(VERIFY_NOTES, options, settings)
    return _run(VERIFY_NOTES, chosen, _paths(paths))


def verify_urls(paths: Iterable[str | os.PathLike[str]], *, settings: Settings | None = None,
                **options: Any) -> Report:
    """``tracecite verify-urls``: the evidence check, then every cited http(s) source
    re-fetched and matched. ``settings``: as for :func:`check`."""
    chosen = _settings(VERIFY_URLS, options, settings)
    return _run(VERIFY_URLS, chosen, _paths(paths))


def verify_files(paths: Iterable[str | os.PathLike[str]], *, settings: Settings | None = None,
                 **options: Any) -> Report:
    """``tracecite verify-files``: the evidence check, then every cited ``file:`` source
    re-read under ``root=`` (default: the current directory). ``settings``: as for
    :func:`check`."""
    chosen = _settings(VERIFY_FILES, options, settings)
    return _run(VERIFY_FILES, chosen, _paths(paths))


def verify_docs(paths: Iterable[str | os.PathLike[str]], *, settings: Settings | None = None,
                **options: Any) -> Report:
    """``tracecite verify-docs``: every citation of the Markdown and HTML documents checked
    against its source as it is now, web pages fetched and local files read under ``root=``
    (default: the current directory), in the ``document_forms=`` (default: all five;
    docs/guides/documents.md). ``settings``: as for :func:`check`."""
    chosen = _settings(VERIFY_DOCS, options, settings)
    return _run(VERIFY_DOCS, chosen, _paths(paths))


def compare(old: str | os.PathLike[str], new: str | os.PathLike[str], *,
            settings: Settings | None = None, **options: Any) -> Report:
    """``tracecite compare``: the two traces' captured sources by stable URI (added, removed,
    changed in ``report.changes``). ``settings``: as for :func:`check`."""
    chosen = _settings(COMPARE, options, settings)
    return _run(COMPARE, chosen, os.fspath(old), os.fspath(new))


def hook(files: Iterable[str | os.PathLike[str]] = (), *, settings: Settings | None = None,
         **options: Any) -> Report:
    """``tracecite hook``: the stage's checks (``stage="offline"``, ``"online"``, ``"all"``)
    on the files the configured globs select, among ``files``, or those changed since
    ``since=`` (or a pull request's base, on GitHub Actions), or with ``all_files=True``
    every tracked file. The configuration file (``config=``, else ``.tracecite.toml`` or
    ``pyproject.toml`` found as the command line finds it) gives the defaults; keyword
    options win over it. ``settings``: as for :func:`check`."""
    chosen = _settings(HOOK, options, settings)
    return _run(HOOK, chosen, _paths(files))


def merge(reports: Iterable[Report | str | os.PathLike[str]], *,
          settings: Settings | None = None, **options: Any) -> Report:
    """``tracecite merge``: one report of several, findings in order without duplicates and
    summaries added (docs/guides/scale.md): the reports of every shard of a run (each once), or
    unsharded reports of one command (say, one per trace). Each item is a :class:`Report` or the
    path of a JSON report; a file that cannot be read as one is an input error in the returned
    report (exit 1). Reports that do not fit together raise :class:`TraceCiteError` (TC100).
    ``warn=``: as for the other commands."""
    chosen = _settings(MERGE, options, settings)
    return _run(MERGE, chosen, [item if isinstance(item, Report) else os.fspath(item)
                                for item in reports])


def import_transcripts(format: str, paths: Iterable[str | os.PathLike[str]],
                       out: str | os.PathLike[str] | None = None, *,
                       stream: TextIO | None = None, settings: Settings | None = None,
                       **options: Any) -> Report:
    """``tracecite import``: the vendor transcripts at ``paths`` (``format``: ``anthropic`` or
    ``inspect``) as traces, one per run, each a file under the directory ``out`` (created when
    missing); with ``out=None``, the one run's trace is written to ``stream``. Nothing is
    written unless every input imports: an element that cannot be imported is TC107 in the
    returned report (exit 1), as is an input that cannot be read (TC101, TC102). A format
    that cannot be imported (``openai``, ``gemini``, ``perplexity``: they cite spans of the
    answer, not quotes), more than one run without ``out``, or an ``out`` that cannot be
    written raise :class:`UsageError`. ``report.summary.runs`` counts the traces written.
    ``settings``: as for :func:`check`."""
    chosen = _settings(IMPORT, options, settings)
    return _run(IMPORT, chosen, format, _paths(paths), None if out is None else os.fspath(out),
                stream=stream)


def read_report(path: str | os.PathLike[str]) -> Report:
    """The :class:`Report` in a JSON report file (``--json``, ``--report-file json:PATH``);
    :class:`TraceCiteError` (TC101, TC102, with the file) when it cannot be read as one."""
    from tracecite.findings import Finding
    from tracecite.merge import read_report_file

    read = read_report_file(os.fspath(path))
    if isinstance(read, Finding):
        raise TraceCiteError(read)
    return read


# ---- options --------------------------------------------------------------------------------

def _paths(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        raise UsageError("the paths must be a list of paths, not one path")
    return [os.fspath(p) for p in paths]


def _run(command: Command, settings: Settings, *values: object, **extra: object) -> Report:
    """Run ``command``'s runner (its record in the command table names it) on ``values``; a
    live run's report says which shard it is (docs/guides/scale.md), and its findings are in
    the order the JSON report and the console show them (input errors first, then by file
    and position: :meth:`Report.sorted_findings`). How the run's worker processes start is
    decided here, before the run starts a thread (docs/design/concurrency.md#start-method)."""
    from tracecite.workers import one_run

    with one_run():
        report = command.run()(*values, settings=settings, **extra)
    notices = (*report.notices, *inert_notices(command.name, settings))
    return _sharded(replace(report, findings=tuple(report.sorted_findings()), notices=notices),
                    settings)


def _settings(command: Command, options: Mapping[str, Any], settings: Settings | None
              ) -> Settings:
    """The settings of a call: ``settings`` as they are (the command line resolved them), or
    the keyword options, each checked by its row of the settings table, over the
    configuration file (``hook``) over the defaults. No progress bar, ever."""
    if settings is not None:
        if options:
            raise UsageError(f"{command.name}: give settings= or keyword options, not both")
        return settings
    given: dict[str, Any] = {}
    for name, value in options.items():
        row = BY_NAME.get(name)
        if row is None or name in _OUTPUT_ONLY or not takes(command.name, row):
            raise UsageError(f"{command.name} takes no option {name!r}")
        if row.many and isinstance(value, (tuple, list)):
            value = [os.fspath(v) if isinstance(v, os.PathLike) else v for v in value]
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        try:
            given[name] = row.from_config(value)
        except ValueError as exc:
            raise UsageError(f"{name}= {exc}") from None
    given["no_progress"] = True
    return settings_for(command, given, library=True)


def _sharded(report: Report, settings: Settings) -> Report:
    """The report of a live run, saying which shard it is (docs/guides/scale.md)."""
    return replace(report, shard=settings.shard) if settings.shard is not None else report
