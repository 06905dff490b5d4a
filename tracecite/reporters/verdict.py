"""The verdict of a run in plain words (docs/reference/reports.md#honest-summaries): what failed,
what was verified, and, when no quote was verified, why not and how to verify them. Every format
shows this one sentence, so no report says "passed" when nothing was verified.

For example::

    failed: 3 quotes not found, 1 source unavailable; 10 quotes verified on live pages
    passed: 8 quotes verified against captured content, 4 on live pages
    nothing verified: 11 notes records format-checked; their quotes are verified online: …
    nothing verified: no file selected

A quote checked against its capture and again live is verified once in each kind of check, so
the kinds are counted apart, never added up into one number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.findings import EXIT_INPUT, Finding, Report, Summary

PASSED, FAILED, NOTHING, STOPPED = "passed", "failed", "nothing verified", "stopped"
"""The verdict's first words: every check passed, something failed, no quote was verified, or
a signal stopped the run."""

EXIT_WORDS = {0: "nothing failed", 1: "input or usage error", 2: "findings",
              3: "internal error"}
"""What each exit code means (docs/reference/commands.md), for ``exit 2: findings``."""

_WHERE = {"captured": "against captured content", "live": "on live pages",
          "files": "in local files"}


@dataclass(frozen=True)
class Verdict:
    """A run's verdict: ``head`` (one of passed, failed, nothing verified, stopped by SIG…) and
    ``detail``, what that rests on; ``str()`` joins them with a colon."""

    head: str
    detail: str

    def __str__(self) -> str:
        return f"{self.head}: {self.detail}" if self.detail else self.head


def summary_line(report: Report) -> str:
    """The end of a run in one line: the command, its verdict in plain words and the exit code
    with what it means."""
    return f"{command_line(report)}: {verdict(report)}; {exit_words(report.exit_code)}"


def exit_words(code: int) -> str:
    """An exit code with what it means: ``exit 2: findings``, ``exit 130: stopped by SIGINT``."""
    if code in EXIT_WORDS:
        return f"exit {code}: {EXIT_WORDS[code]}"
    if code > 128:
        from tracecite.stops import signal_name

        return f"exit {code}: stopped by {signal_name(code - 128)}"
    return f"exit {code}"


def command_line(report: Report) -> str:
    """The command and, for the hook, its stage: ``tracecite hook --stage online``."""
    stage = f" --stage {report.stage}" if report.stage else ""
    return f"tracecite {report.command}{stage}"


# What a finding of each code is, in the verdict: (one, many), in the order they are named.
_KINDS: tuple[tuple[tuple[str, str], frozenset[Code]], ...] = tuple(
    (words, frozenset(codes)) for words, codes in (
        (("internal error", "internal errors"), [Code.INTERNAL_ERROR]),
        (("usage error", "usage errors"), [Code.USAGE]),
        (("git error", "git errors"), [Code.GIT_FAILED]),
        (("configuration error", "configuration errors"), [Code.CONFIG_INVALID]),
        (("unusable cache", "unusable caches"), [Code.CACHE_UNUSABLE]),
        (("file not selected", "files not selected"), [Code.NOT_SELECTED]),
        (("unreadable input", "unreadable inputs"), [Code.INPUT_UNREADABLE, Code.INPUT_NOT_UTF8]),
        (("element that cannot be imported", "elements that cannot be imported"),
         [Code.IMPORT_UNSUPPORTED]),
        (("run skipped", "runs skipped"), [Code.IMPORT_SKIPPED]),
        (("notes format error", "notes format errors"),
         [c for c in Code if c.code.startswith("TC11")]),
        (("trace structure error", "trace structure errors"),
         [c for c in Code if c.code[:4] in ("TC12", "TC13")]),
        (("broken document citation", "broken document citations"),
         [Code.DOC_CITATION_INVALID]),
        (("answer without claims", "answers without claims"), [Code.EVIDENCE_NO_CLAIMS]),
        (("claim without citations", "claims without citations"), [Code.EVIDENCE_UNCITED_CLAIM]),
        (("quote not found", "quotes not found"),
         [Code.QUOTE_NOT_IN_CAPTURE, Code.QUOTE_NOT_ON_PAGE, Code.QUOTE_NOT_IN_FILE]),
        (("citation of a source not captured", "citations of sources not captured"),
         [Code.SOURCE_NOT_CAPTURED]),
        (("citation of a source never read", "citations of sources never read"),
         [Code.CITES_UNREAD_SOURCE]),
        (("source unavailable", "sources unavailable"),
         [c for c in Code if c.code.startswith("TC3")]),
        (("source added", "sources added"), [Code.SOURCE_ADDED]),
        (("source removed", "sources removed"), [Code.SOURCE_REMOVED]),
        (("source changed", "sources changed"), [Code.SOURCE_CHANGED]),
    ))


_COMPARE = frozenset({Code.SOURCE_ADDED, Code.SOURCE_REMOVED, Code.SOURCE_CHANGED})


def count(n: int, words: tuple[str, str]) -> str:
    """``n`` and the singular or plural of ``words``: ``1 trace citation``, ``2 runs``."""
    return f"{n} {words[0] if n == 1 else words[1]}"




def codes_that_occur(findings: Iterable[Finding]) -> list[tuple[Code, int]]:
    """Each code among ``findings`` with how many times it occurs, in code order: one "how
    to fix" line each (the console's ``fix:`` lines, the step summary's)."""
    seen: dict[Code, int] = {}
    for finding in findings:
        seen[finding.code] = seen.get(finding.code, 0) + 1
    return sorted(seen.items(), key=lambda item: item[0].code)


def what_was_found(findings: Iterable[Finding]) -> str:
    """Findings counted by what they are: ``3 quotes not found, 1 source unavailable``.

    An unavailable source counts once however many records or citations it fails (by its URI).
    """
    findings = list(findings)
    parts = []
    for words, codes in _KINDS:
        these = [f for f in findings if f.code in codes]
        if not these:
            continue
        if words[0] == "source unavailable":
            n = len({f.uri if f.uri is not None else id(f) for f in these})
        else:
            n = len(these)
        parts.append(count(n, words))
    known = frozenset().union(*(codes for _, codes in _KINDS))
    other = sum(1 for f in findings if f.code not in known)
    if other:
        parts.append(count(other, ("other finding", "other findings")))
    return ", ".join(parts)


def what_was_verified(report: Report) -> str:
    """Quotes found in their sources, per kind of check: ``8 quotes verified against captured
    content, 4 on live pages`` (empty when none was)."""
    parts: list[str] = []
    for kind, counts in report.summary.kinds().items():
        if counts.matched:
            noun = "" if parts else (" quote" if counts.matched == 1 else " quotes") + " verified"
            parts.append(f"{counts.matched}{noun} {_WHERE[kind]}")
    return ", ".join(parts)


def what_was_not_checked(report: Report) -> str:
    """Quotes that no check looked at, and why: ``3 skipped, 11 unchanged`` (empty: none)."""
    total = {name: 0 for name in ("skipped", "unchanged", "interrupted")}
    for counts in report.summary.kinds().values():
        for name in total:
            total[name] += getattr(counts, name)
    parts = [f"{n} {name}" for name, n in total.items() if n]
    return ", ".join(parts)


def _unverified_inputs(report: Report) -> list[str]:
    """What was only read, never verified: notes records no live check looked at, and trace
    citations ``check`` did not match without ``--evidence``."""
    s = report.summary
    out = []
    if s.records and not s.live:
        how = "--stage online" if report.command == "hook" else "tracecite verify-notes"
        records = count(s.records, ("notes record", "notes records"))
        out.append(f"{records} format-checked; their quotes are verified online: {how}")
    if report.command == "import" and s.runs:
        out.append(f"{count(s.runs, ('run', 'runs'))} imported "
                   f"({count(s.citations, ('citation', 'citations'))}); quotes are checked "
                   "with tracecite check --evidence, verify-urls or verify-files")
    if report.command == "import" and s.not_importable:
        out.append(f"{count(s.not_importable, ('citation', 'citations'))} not importable: "
                   "they cite spans of the answer, not quotes")
    if report.command == "import":
        out.extend(_import_counts(s))
    if s.document_citations and not (s.live or s.files):
        how = "--stage online" if report.command == "hook" else "tracecite verify-docs"
        cited = count(s.document_citations, ("document citation", "document citations"))
        out.append(f"{cited} read; their quotes are verified against their sources: {how}")
    if s.citations and not s.captured and report.command == "check":
        citations = count(s.citations, ("citation", "citations"))
        out.append(f"trace structure checked ({citations}); quotes are checked with --evidence")
    return out


def _import_counts(s: Summary) -> list[str]:
    """What ``import`` read and did not write: uncited, refused and skipped runs, and the
    unknown blocks it left out (docs/guides/importers.md)."""
    out = []
    if s.uncited:
        out.append(f"{count(s.uncited, ('run', 'runs'))} not written: "
                   "the answer cites nothing")
    if s.refused:
        out.append(f"{count(s.refused, ('run', 'runs'))} not imported")
    if s.skipped:
        out.append(f"{count(s.skipped, ('run', 'runs'))} without an answer")
    if s.ignored_blocks:
        out.append(f"{count(s.ignored_blocks, ('unknown block', 'unknown blocks'))} ignored: "
                   "nothing cites them")
    return out


def verdict(report: Report) -> Verdict:
    """The run's verdict in plain words, from its command, stage, summary, findings and exit
    code (see the module's docstring for examples)."""
    errors = [f for f in report.findings if f.severity == "error"]
    warnings = [f for f in report.findings if f.severity == "warning"]
    parts: list[str] = []
    changes = report.changes
    # compare: what changed comes from the changes themselves, warned or not.
    found = [f for f in errors if changes is None or f.code not in _COMPARE]
    if found:
        parts.append(what_was_found(found))
    if changes is not None:
        parts.append(f"sources compared by stable URI: {len(changes.added)} added, "
                     f"{len(changes.removed)} removed, {len(changes.changed)} changed"
                     if changes.added or changes.removed or changes.changed
                     else "no captured source was added, removed or changed")
    verified = what_was_verified(report)
    if verified:
        parts.append(verified)
    cached = sum(counts.cached for counts in report.summary.kinds().values())
    if cached:
        parts.append(f"{count(cached, ('verdict', 'verdicts'))} cached")
    not_checked = what_was_not_checked(report)
    # After an input error nothing else ran (docs/reference/commands.md): no advice on how to verify
    # the rest. Except in import, where the runs that could be imported are written beside those
    # refused (an input that stopped the import wrote none, and counts none).
    stopped = any(f.exit == EXIT_INPUT for f in errors) and report.command != "import"
    read_only = ([] if report.changes is not None or report.stopped_by is not None or stopped
                 else _unverified_inputs(report))
    parts.extend(read_only)
    if not (errors or verified or read_only or report.changes is not None):
        if report.command == "hook" and report.summary.inputs == 0:
            parts.append("no file selected")
        elif not (not_checked or warnings):
            parts.append("no quote was checked")
    if not_checked:
        parts.append(f"not checked: {not_checked}")
    if warnings:
        parts.append(f"{count(len(warnings), ('warning', 'warnings'))}: "
                     f"{what_was_found(warnings)}")
    if report.stopped_by is not None:
        from tracecite.stops import signal_name

        head = f"{STOPPED} by {signal_name(report.stopped_by)}"
    elif errors:
        head = FAILED
    elif verified or report.changes is not None:
        head = PASSED
    else:
        head = NOTHING
    return Verdict(head, "; ".join(parts))
