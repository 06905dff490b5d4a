"""The live checks' wiring: the quotes to check against sources of one kind, run by
:class:`~tracecite.checks.live.LiveRun` through the loader of that kind and the cache of web
verdicts (:mod:`tracecite.run.loaders`), with the Internet Archive's copies of pages that changed
(docs/web-over-time.md)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tracecite.checks.kinds import SourceKind
from tracecite.findings import Counts
from tracecite.run.inputs import Inputs
from tracecite.run.loaders import _cache, _loader

if TYPE_CHECKING:  # imported where used: `check` needs none of them (see tests/test_startup.py)
    from tracecite.checks.live.records import LiveResult, Loader
    from tracecite.checks.parse_pool import ParsePool
    from tracecite.checks.quotes import QuoteChecks
    from tracecite.settings import Settings


def _live_checks(inputs: Inputs, kind: SourceKind, settings: Settings
                 ) -> tuple[QuoteChecks, int]:
    """The quotes to check against sources of ``kind``, and how many are skipped: citations of other
    kinds, and web pages that ``skip_urls`` match (docs/reference/commands.md,
    docs/web-over-time.md#warnings-and-skips). Notes records are read from their columns
    (docs/guides/scale.md: memory), citations made into checks one by one."""
    from tracecite.checks.quotes import CheckList, JoinedChecks, NoteChecks, QuoteCheck

    parts: list[QuoteChecks] = ([NoteChecks(n.records) for n in inputs.notes]
                                if kind is SourceKind.WEB else [])
    if kind is SourceKind.WEB and any(n.records for n in inputs.notes):
        from tracecite.checks.documents import directive_checks

        # A notes URL's text directive is a second quote of its record
        # (docs/guides/documents.md).
        parts.append(CheckList([c for n in inputs.notes for c in directive_checks(n.records)]))
    cited: list[QuoteCheck] = []
    skipped = 0
    for citation, uri, captured_at in inputs.cited():
        if kind.takes(uri):
            cited.append(QuoteCheck.from_citation(citation, uri, captured_at))
        else:
            skipped += 1
    parts.append(CheckList(cited))
    if inputs.documents:
        documented, not_checked = inputs.documents_checks(settings.root).of_kind(kind)
        parts.append(CheckList(documented))
        skipped += not_checked
    checks: QuoteChecks = JoinedChecks(parts)
    if kind is SourceKind.WEB and settings.skip_urls:
        from tracecite.checks.skip_urls import skips, url_glob

        globs = [url_glob(pattern) for pattern in settings.skip_urls]
        kept = checks.where(lambda target: not skips(target, globs))
        skipped += len(checks) - len(kept)
        checks = kept
    return checks, skipped


def _check_live(inputs: Inputs, settings: Settings, kind: SourceKind, label: str, *,
                parser: ParsePool | None = None) -> LiveResult:
    """Check each quote against its source of ``kind`` as it is now, each distinct source loaded
    once however many records or citations cite it (a page that notes and traces both cite is
    fetched once). Skipped sources are counted (docs/reference/commands.md,
    docs/web-over-time.md#warnings-and-skips); web verdicts go through the cache
    (docs/web-over-time.md#the-cache). A check stopped by a signal returns what it found before,
    with the signal as its ``stopped_by``. ``parser``: the run's parse pool (see
    :func:`~tracecite.run.assemble.run_checks`); None: the check starts its own."""
    from tracecite.checks.live.run import LiveRun
    from tracecite.progress import progress_for

    checks, skipped = _live_checks(inputs, kind, settings)
    progress = progress_for(enabled=settings.progress, label=label)
    cache = _cache(settings) if kind is SourceKind.WEB else None
    rendered: frozenset[str] = frozenset()
    if kind is SourceKind.FILE and inputs.documents:
        from tracecite.checks.documents import markdown_targets

        # Documents' Markdown sources are matched on their rendered text; a trace's file:
        # sources on their text as it is (docs/guides/documents.md).
        rendered = markdown_targets([checks[i] for i in range(len(checks))
                                     if checks[i].record is not None])
    try:
        with _loader(kind, settings, rendered) as loader:
            result = LiveRun(loader, concurrency=settings.concurrency,
                             parse_budget=settings.timeout, progress=progress
                             ).check(checks, cache, parser=parser)
            if settings.archive and result.stopped_by is None:
                result = _with_archive(result, checks, loader, settings)
    finally:
        if cache is not None:
            cache.close()  # what the run learnt is written, stopped or not
    return replace(result, findings=(*(cache.warnings if cache is not None else []),
                                     *result.findings),
                   counts=result.counts + Counts(skipped=skipped))


def _with_archive(result: LiveResult, checks: QuoteChecks, loader: Loader,
                  settings: Settings) -> LiveResult:
    """The result, its findings about pages that changed or are gone with what the Internet Archive
    holds of them (docs/web-over-time.md#archived-copies); web pages only. A stop during the lookups
    keeps what they found and stops the run."""
    from tracecite.checks.web import WebLoader

    if not isinstance(loader, WebLoader):
        return result
    from tracecite.checks.archive import with_archive

    failed = [checks[i] for i in result.failed]  # the checks of the findings only
    archived = with_archive(result.findings, failed, loader.fetcher, budget=settings.timeout)
    return replace(result, findings=archived.findings, stopped_by=archived.stopped_by)
