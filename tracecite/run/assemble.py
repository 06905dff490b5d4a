"""The one report assembly, :func:`run_checks`: read every input, stop on a format error, then
the evidence and the live checks a :class:`~tracecite.run.plan.Plan` asks for. The summary counts
each kind of check apart (docs/reference/reports.md): the same inputs give the same numbers
whichever command or stage reads them."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from tracecite.checks.kinds import SourceKind
from tracecite.command_table import HOOK
from tracecite.findings import EXIT_INPUT, Counts, Finding, Report, RunDigests, Summary, warned
from tracecite.run.inputs import has_input_errors, read_inputs
from tracecite.run.live import _check_live, _live_checks
from tracecite.run.plan import Plan

if TYPE_CHECKING:
    from tracecite.checks.parse_pool import ParsePool
    from tracecite.settings import Settings


def run_checks(plan: Plan, notes: Sequence[str], traces: Sequence[str],
               settings: Settings, *, unread: Sequence[Finding] = (),
               documents: Sequence[str] = ()) -> Report:
    """The one report assembly: read every input, stop on a format error, then the evidence
    and the live checks the plan asks for; each kind of check counted apart. ``unread``:
    input errors found before reading (a directory that selects no file), reported first;
    ``documents``: Markdown and HTML documents, read in ``settings.document_forms``
    (docs/guides/documents.md)."""
    with _parse_pool_first(plan, documents) as parser:
        return _checked(plan, notes, traces, settings, unread, documents, parser)


@contextmanager
def _parse_pool_first(plan: Plan, documents: Sequence[str]) -> Iterator[ParsePool | None]:
    """The run's parse pool, its workers forked now, before the inputs are read, when the live
    checks of documents would fork them (None otherwise: each live check starts its own).
    Forked after the reading, each worker's resident set counted the pages of citations it
    shares with this process (docs/performance.md, figure 11); a pool's thread runs from now
    on, so the ``--jobs`` workers that read the inputs start from a forkserver instead."""
    if not (plan.live and documents):
        yield None
        return
    from tracecite.checks.parse_pool import ParsePool

    with ParsePool() as parser:
        parser.fork_now()
        yield parser if parser.launched else None


def _checked(plan: Plan, notes: Sequence[str], traces: Sequence[str], settings: Settings,
             unread: Sequence[Finding], documents: Sequence[str], parser: ParsePool | None
             ) -> Report:
    """:func:`run_checks`, the live checks parsing in ``parser`` when there is one."""
    method = None
    if parser is not None:
        from tracecite.workers import threads_start_method

        method = threads_start_method()  # the pool's thread runs: never fork now
    inputs = read_inputs(notes, traces, evidence=plan.evidence, keep_uris=bool(plan.live),
                         jobs=settings.jobs, documents=documents,
                         forms=settings.document_forms, method=method)
    # The signal that stopped the run (docs/reference/commands.md): what was read is reported,
    # and nothing is fetched.
    stopped_by = inputs.stopped_by
    findings = [*unread, *inputs.format_findings(), *inputs.evidence_findings()]
    summary = inputs.summary()
    listed = None
    if plan.list_documents and inputs.documents:
        from tracecite.checks.documents import listing

        listed = tuple(listing(d) for d in inputs.documents)
    if not offline_shard(settings):
        # Offline findings and counts are shard 1's (docs/guides/scale.md), so merged shards count
        # them once; the input errors that stop every shard are reported by each (merge drops the
        # duplicates), so no shard passes having checked nothing.
        findings = [f for f in findings if f.exit == EXIT_INPUT]
        summary = Summary()
    # nothing is fetched (docs/reference/commands.md)
    if stopped_by is not None or has_input_errors(findings):
        return stamped(Report(plan.command, warned(findings, settings.warn), summary,
                              stopped_by=stopped_by, stage=plan.stage, documents=listed),
                       [*notes, *traces, *documents], settings, dict(inputs.digests))
    # Only this shard's sources (docs/guides/scale.md), then only the records a diff touches
    # (docs/hook.md#checking-only-what-changed).
    inputs, unchanged = inputs.in_shard(settings.shard).changed_only(plan.changed_lines)
    if plan.live:  # each link resolved once, for all the live checks (an offline run has none)
        inputs = inputs.with_document_checks(settings.root)
    live_findings: list[Finding] = []
    for kind in plan.live:
        of_kind = inputs
        if kind is SourceKind.FILE and not plan.trace_files:
            of_kind = replace(inputs, traces=())  # the documents' local sources only
        if kind is SourceKind.FILE and not (of_kind.traces or of_kind.documents):
            continue  # only traces and documents cite file: sources
        if stopped_by is None:
            checked = _check_live(of_kind, settings, kind, _label(plan.command, kind),
                                  parser=parser)
            live_findings += checked.findings
            counts, stopped_by = checked.counts, checked.stopped_by
        else:  # stopped before this check began: each of its quotes is interrupted
            checks, skipped = _live_checks(of_kind, kind, settings)
            counts = Counts(skipped=skipped, interrupted=len(checks))
        if kind is SourceKind.WEB:
            counts += Counts(unchanged=unchanged)
        summary += Summary(live=counts) if kind is SourceKind.WEB else Summary(files=counts)
    findings += inputs.located(live_findings)
    return stamped(Report(plan.command, warned(findings, settings.warn), summary,
                          stopped_by=stopped_by, stage=plan.stage, documents=listed),
                   [*notes, *traces, *documents], settings, dict(inputs.digests))


def stamped(report: Report, paths: Iterable[str], settings: Settings,
            known: Mapping[str, str] | None = None) -> Report:
    """``report`` with its run's digests (docs/reference/reports.md#the-run): of the input
    ``paths`` and of the options that decide verdicts. Every shard of a run gets the same.
    ``known``: the SHA-256 of files hashed already, by path (as they were read)."""
    from tracecite.settings import options_digest

    return replace(report, run=RunDigests(inputs_digest(paths, known), options_digest(settings)))


def inputs_digest(paths: Iterable[str], known: Mapping[str, str] | None = None) -> str:
    """SHA-256 (hex) of the sorted input paths, each with its contents' SHA-256
    (docs/reference/reports.md#the-run); each file is read a block at a time, unless
    ``known`` has its digest (by path) from the reading."""
    from tracecite.inputs.files import file_digest

    hashed = {os.path.normpath(p): digest for p, digest in (known or {}).items()}
    sha = hashlib.sha256()
    for path in sorted({os.path.normpath(p) for p in paths}):
        digest = hashed.get(path) or file_digest(path)
        # One JSON line per input: no path can pass for another path and digest.
        sha.update(json.dumps([path, digest]).encode("utf-8") + b"\n")
    return sha.hexdigest()


def offline_shard(settings: Settings) -> bool:
    """Whether this run reports the offline findings: an unsharded run, or shard 1 (
    docs/guides/scale.md)."""
    return settings.shard is None or settings.shard[0] == 1


def _label(command: str, kind: SourceKind) -> str:
    """What the progress bar calls a live check: the command, or the hook's stage of it."""
    if command != HOOK.name:
        return command
    return "fetching pages" if kind is SourceKind.WEB else kind.command


