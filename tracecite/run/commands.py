"""The commands as plain functions from inputs and :class:`~tracecite.settings.Settings` to a
:class:`Report`: the runners that :data:`tracecite.command_table.COMMANDS` names, which
:mod:`tracecite.api` calls (docs/reference/commands.md). Those that read notes and traces are a
:class:`~tracecite.run.plan.Plan` run by :func:`~tracecite.run.assemble.run_checks`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TextIO

from tracecite.checks.kinds import SourceKind
from tracecite.command_table import (
    CHECK,
    COMPARE,
    IMPORT,
    VERIFY_DOCS,
    VERIFY_FILES,
    VERIFY_NOTES,
    VERIFY_URLS,
)
from tracecite.findings import Report, Summary, warned
from tracecite.model import is_trace
from tracecite.run.assemble import run_checks, stamped
from tracecite.run.inputs import split_inputs
from tracecite.run.plan import Plan
from tracecite.surroundings import expand_directories

if TYPE_CHECKING:
    from tracecite.settings import Settings


def run_check(paths: Sequence[str], settings: Settings) -> Report:
    """Offline: notes format, trace structure and, with ``settings.evidence``, every quote in
    its captured content; documents' citations read and broken ones reported (TC140). A named
    file is a trace by its ``.jsonl`` suffix, else notes, or with ``settings.docs`` a document;
    a directory stands for the files under it that the globs select, each of the kind its glob
    says (docs/guides/documents.md)."""
    given = expand_directories(paths)
    # --docs: the named files that are not traces are documents; a directory's files are of
    # the kind their glob says either way.
    named = {p for p in paths if not os.path.isdir(p)} if settings.docs else set()
    documents = [p for p in given.paths
                 if p in given.documents or (p in named and not is_trace(p))]
    chosen = set(documents)
    notes, traces = split_inputs([p for p in given.paths if p not in chosen])
    return run_checks(Plan(CHECK.name, evidence=settings.evidence, list_documents=True), notes,
                      traces, settings, unread=given.findings, documents=documents)


def run_verify_notes(paths: Sequence[str], settings: Settings) -> Report:
    """Fetch each notes URL once; every quote must be in its page's visible text (TC210). A
    directory stands for the files under it that the notes globs select."""
    given = expand_directories(paths, traces=False, documents=False)
    return run_checks(Plan(VERIFY_NOTES.name, live=(SourceKind.WEB,)), given.paths, (), settings,
                      unread=given.findings)


def run_verify_urls(paths: Sequence[str], settings: Settings) -> Report:
    """Evidence check, then every cited http(s) source re-fetched and matched (TC210). A
    directory stands for the files under it that the traces globs select."""
    given = expand_directories(paths, notes=False, documents=False)
    return run_checks(Plan(VERIFY_URLS.name, evidence=True, live=(SourceKind.WEB,)), (),
                      given.paths, settings, unread=given.findings)


def run_verify_files(paths: Sequence[str], settings: Settings) -> Report:
    """Evidence check, then every cited ``file:`` source re-read under the root (TC211). A
    directory stands for the files under it that the traces globs select."""
    given = expand_directories(paths, notes=False, documents=False)
    return run_checks(Plan(VERIFY_FILES.name, evidence=True, live=(SourceKind.FILE,)), (),
                      given.paths, settings, unread=given.findings)


def run_verify_docs(paths: Sequence[str], settings: Settings) -> Report:
    """Every citation of the documents checked against its source as it is now: web pages
    fetched (TC210), local files read under the root (TC211). A directory stands for the
    documents under it that the documents globs select (docs/guides/documents.md)."""
    given = expand_directories(paths, notes=False, traces=False)
    return run_checks(Plan(VERIFY_DOCS.name, live=(SourceKind.WEB, SourceKind.FILE)), (), (),
                      settings, unread=given.findings, documents=given.paths)


def run_compare(old: str, new: str, settings: Settings) -> Report:
    """Compare two traces' captured contents by stable URI (TC400–TC402)."""
    from tracecite.checks.compare import compare_traces

    digests: dict[str, str] = {}
    findings, changes = compare_traces(old, new, jobs=settings.jobs, digests=digests)
    return stamped(Report(COMPARE.name, warned(findings, settings.warn), Summary(inputs=2),
                          changes), (old, new), settings, digests)


def run_merge(reports: Sequence[Report | str], settings: Settings) -> Report:
    """One report of several (docs/guides/scale.md), each a :class:`Report` or the path of a
    JSON report; ``settings.warn`` as for the other commands."""
    from tracecite.merge import merge_items

    return merge_items(reports, warn=settings.warn)


TRANSCRIPT_GLOBS: dict[str, tuple[str, ...]] = {
    "anthropic": ("*.json", "*.jsonl"),
    "inspect": ("*.eval", "*.json"),
}
"""The files a directory given to ``import FORMAT`` stands for, by format: the names its
transcripts are saved under (docs/guides/importers.md)."""


@dataclass(frozen=True)
class _TranscriptGlobs:
    """The globs of a directory of transcripts, in the form the directory walk takes."""

    traces: tuple[str, ...]
    notes: tuple[str, ...] = ()
    documents: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    config_base: str = "."


def run_import(transcript_format: str, paths: Sequence[str], out: str | None,
               settings: Settings, stream: TextIO | None = None) -> Report:
    """Vendor transcripts as traces, one per run, under ``out`` (None: the one run's trace to
    ``stream``); ``settings.max_member_bytes`` bounds an archive member and
    ``settings.skip_unsupported`` makes a run that cannot be imported a warning. A directory
    stands for the files under it named as the format's transcripts are
    (:data:`TRANSCRIPT_GLOBS`); one that holds none is a TC106 warning, as for the other
    commands."""
    from tracecite.importers.command import run_import as import_transcripts
    from tracecite.inputs.directories import expand_with

    globs = TRANSCRIPT_GLOBS.get(transcript_format)
    if globs is None:  # a format with no importer: the importer's TC100 says so
        return stamped(import_transcripts(transcript_format, paths, out, stream,
                                          max_member_bytes=settings.max_member_bytes,
                                          skip_unsupported=settings.skip_unsupported),
                       paths, settings)
    given = expand_with(paths, _TranscriptGlobs(globs, config_base=os.getcwd()))
    none = (f"no {transcript_format} transcript in this directory: no file under it is named "
            f"{' or '.join(globs)}")
    unread = tuple(replace(f, message=none) for f in given.findings)
    files = list(given.paths)
    report = (Report(IMPORT.name, (), Summary(inputs=0)) if unread and not files else
              import_transcripts(transcript_format, files, out, stream,
                                 max_member_bytes=settings.max_member_bytes,
                                 skip_unsupported=settings.skip_unsupported))
    return stamped(replace(report, findings=(*unread, *report.findings)), files, settings)
