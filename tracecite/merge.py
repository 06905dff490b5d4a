"""``tracecite merge``: shards' reports (or any reports of one command) combined into one
(docs/guides/scale.md).

The findings are taken in input order, each once (the input errors every shard reports come once);
``check --docs``'s listings are concatenated in input order; the summaries are added, so the
shards of a run merge into the unsharded run's summary. The exit code follows from the merged
findings as for any run (docs/reference/commands.md); when a shard was stopped by a signal, the
merged report is stopped too (128 + its signal): it is not whole.

Never a verdict out of incomplete or mixed input (docs/guides/scale.md#merging-shards): shards
of another run (their ``run`` digests differ), a report given twice, a shard missing or without
``run`` are TC100 naming the files.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from tracecite.codes import Code
from tracecite.errors import TraceCiteError, UsageError
from tracecite.findings import (
    Changes,
    Finding,
    ListedDocument,
    Report,
    RunDigests,
    Summary,
    warned,
)

# Its home was here: tracecite.api and others still import it from here.
from tracecite.report_reader import read_report_file as read_report_file
from tracecite.settings import file_digest

COMMAND = "merge"


def merge_reports(reports: Sequence[Report], names: Sequence[str] | None = None,
                  contents: Sequence[object] | None = None) -> Report:
    """One report of ``reports``: all of one command (and hook stage), and either all
    unsharded (reports of different inputs, e.g. one per trace) or shards K/N of one run, each
    present once. ``names``: how to call each report in a message (its file); ``contents``: what
    each report is, to find one given twice whatever its name (its file's digest; by default
    the report itself). TC100 naming the files when the reports do not fit together
    (docs/guides/scale.md#merging-shards)."""
    if not reports:
        raise UsageError("no report to merge")
    named = list(names) if names is not None else [f"report {i}"
                                                   for i in range(1, len(reports) + 1)]
    first = reports[0]
    for report, name in zip(reports, named, strict=True):
        if (report.command, report.stage) != (first.command, first.stage):
            raise _mismatch(name, "is a report of another command or stage than the first")
    _check_twice(list(contents) if contents is not None else list(reports), named)
    _check_shards(reports, named)
    findings = tuple(dict.fromkeys(f for r in reports for f in r.findings))
    summary = sum((r.summary for r in reports), Summary())
    notices = tuple(dict.fromkeys(n for r in reports for n in r.notices))
    stopped = [r.stopped_by for r in reports if r.stopped_by is not None]
    merged = Report(first.command, findings, summary, _changes(reports),
                    stopped_by=stopped[0] if stopped else None, stage=first.stage,
                    notices=notices, run=_merged_run(reports, named),
                    documents=_documents(reports))
    return _host_notice(merged)


def _documents(reports: Sequence[Report]) -> tuple[ListedDocument, ...] | None:
    """``check --docs``'s listings, concatenated in input order (each report's documents as it
    lists them); a report without one adds none. None when no report has one."""
    listings = [r.documents for r in reports if r.documents is not None]
    if not listings:
        return None
    return tuple(document for listing in listings for document in listing)


def _check_twice(contents: Sequence[object], names: Sequence[str]) -> None:
    """TC100 for a report given twice: the same content, whatever its name."""
    seen: dict[object, str] = {}
    for content, name in zip(contents, names, strict=True):
        if content in seen:
            raise _mismatch(name, f"is the same report as {seen[content]} (given twice)")
        seen[content] = name


def _merged_run(reports: Sequence[Report], names: Sequence[str]) -> RunDigests | None:
    """The merged report's run: the shards' own; for unsharded reports, a digest of their
    inputs digests (sorted) with their one options digest. None when a report has none (made
    before reports had one): unsharded, it merges as it always did. TC100 for unsharded
    reports of the same inputs (they would count their quotes twice) or of other options."""
    runs = [r.run for r in reports]
    if reports[0].shard is not None:
        return runs[0]  # _check_shards: every shard has the same
    known = [(run, name) for run, name in zip(runs, names, strict=True) if run is not None]
    if len(known) < len(runs):
        return None
    inputs: dict[str, str] = {}
    first_run, first_name = known[0]
    for run, name in known:
        if run.inputs_digest in inputs:
            raise _mismatch(name, f"is a report of the same inputs as {inputs[run.inputs_digest]}"
                                  f": merged, their quotes would count twice")
        inputs[run.inputs_digest] = name
        if run.options_digest != first_run.options_digest:
            raise _mismatch(name, f"was checked with other verdict options than {first_name}")
    sha = hashlib.sha256()
    for digest in sorted(inputs):
        sha.update(digest.encode("ascii") + b"\n")
    return RunDigests(sha.hexdigest(), first_run.options_digest)


def _check_shards(reports: Sequence[Report], names: Sequence[str]) -> None:
    sharded = [r.shard is not None for r in reports]
    if not any(sharded):
        return
    if not all(sharded):
        name = names[sharded.index(False)]
        raise _mismatch(name, "is not a shard's report, and the others are")
    shards = [r.shard for r in reports if r.shard is not None]
    count = shards[0][1]
    seen: dict[int, str] = {}
    first_run = reports[0].run
    for report, (k, n), name in zip(reports, shards, names, strict=True):
        if report.run is None:
            raise _mismatch(name, "is a shard's report without its run's digests (written by "
                                  "an older tracecite): it cannot be told to be of the same "
                                  "run as the others")
        if report.run != first_run:
            what = ("inputs" if first_run is not None
                    and report.run.inputs_digest != first_run.inputs_digest else "options")
            raise _mismatch(name, f"is a shard of another run than {names[0]} (its {what} "
                                  f"differ)")
        if n != count:
            raise _mismatch(name, f"is shard {k}/{n}, not one of {count} shards like the first")
        if k in seen:
            raise _mismatch(name, f"is shard {k}/{n} again (also {seen[k]})")
        seen[k] = name
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in seen]
    if missing:
        raise _mismatch(names[0], f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                                  f"missing: merge needs the reports of every shard (given: "
                                  f"{', '.join(names)})")


def _mismatch(name: str, what: str) -> TraceCiteError:
    """TC100 about the report ``name``: it does not fit with the others."""
    return TraceCiteError(Finding(Code.USAGE, what, file=name))


def _changes(reports: Sequence[Report]) -> Changes | None:
    """``compare`` reports' changes, united (sorted, as compare writes them)."""
    found = [r.changes for r in reports if r.changes is not None]
    if not found:
        return None
    return Changes(*(tuple(sorted({uri for c in found for uri in getattr(c, kind)}))
                     for kind in ("added", "removed", "changed")))


def _host_notice(report: Report) -> Report:
    """A hook report says that no source host resolved when that is true of the whole run,
    not of one shard (docs/hook.md#checking-only-what-changed)."""
    if report.command != "hook":
        return report
    from dataclasses import replace

    from tracecite.hook.stages import OFFLINE_NOTICE, no_host_resolved

    notices = tuple(n for n in report.notices if n != OFFLINE_NOTICE)
    if report.stage not in (None, "offline") and no_host_resolved(report):
        notices += (OFFLINE_NOTICE,)
    return replace(report, notices=notices)


def merge_items(items: Sequence[Report | str], *, warn: Sequence[str] = ()) -> Report:
    """Merge reports, each given as a :class:`Report` or the path of a JSON report (a
    directory stands for the ``*.json`` files in it, in sorted order). A file that cannot be
    read as one is an input error of the merge with its file (exit 1, nothing merged);
    reports that do not fit together raise TC100 (:func:`merge_reports`). Findings with a code
    in ``warn`` are made warnings (docs/web-over-time.md#warnings-and-skips), as a run's are."""
    from dataclasses import replace

    given = [found for item in items for found in _expanded(item)]
    read = [item if not isinstance(item, str) else read_report_file(item) for item in given]
    errors = tuple(r for r in read if isinstance(r, Finding))
    if errors:
        return Report(COMMAND, errors)
    names = [item if isinstance(item, str) else f"report {i}"
             for i, item in enumerate(given, start=1)]
    # A file by its bytes' digest (read a block at a time), a report given as one by itself.
    contents = [("file", file_digest(item)) if isinstance(item, str) else item
                for item in given]
    merged = merge_reports([r for r in read if isinstance(r, Report)], names, contents)
    return replace(merged, findings=warned(merged.findings, warn))


def _expanded(item: Report | str) -> list[Report | str | Finding]:
    """A directory's ``*.json`` files, sorted (TC101 when it has none); anything else as it
    is."""
    if isinstance(item, Report) or not os.path.isdir(item):
        return [item]
    try:
        names = sorted(n for n in os.listdir(item) if n.endswith(".json"))
    except OSError:
        names = []
    if not names:
        return [Finding(Code.INPUT_UNREADABLE, "directory holds no JSON report (*.json)",
                        file=item)]
    return [os.path.join(item, n) for n in names]

