"""The live run (:class:`LiveRun`): the quotes grouped by source, the cache consulted, the
parse workers and loader threads started and ended, on the caller's thread (see
:mod:`tracecite.checks.live`)."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from contextlib import nullcontext

from tracecite.checks.live.loaders import LoaderThreads, LoadLimits
from tracecite.checks.live.records import LiveResult, Loader, NoProgress, Progress
from tracecite.checks.live.tally import Tally, VerdictCache
from tracecite.checks.parse_pool import ParsePool
from tracecite.checks.quotes import QuoteCheck, QuoteChecks, as_checks
from tracecite.pdf import named_pdf
from tracecite.stops import StopToken


class LiveRun:
    """Checks quotes against sources of one kind as they are now, each source loaded once.

    At most ``concurrency`` sources load at once. A quote not in its source is a finding of the
    loader's kind (TC210 or TC211); a source that cannot be loaded makes each of its quotes a
    finding with the loader's :class:`FetchError` code, and one whose HTML cannot be parsed
    within ``parse_budget`` seconds and the parser's limits, TC318. ``progress`` advances once
    per source; ``parse_workers`` (default: one per core) is for tests.

    With a :class:`VerdictCache`, a source whose every quote has a fresh verdict is not loaded (its
    findings are marked ``cached``), one with old verdicts is revalidated, and what is loaded and
    matched is kept; an unavailable source may be deferred as a warning
    (docs/web-over-time.md#flaky-sources).
    """

    def __init__(self, loader: Loader, *, concurrency: int, parse_budget: float,
                 progress: Progress | None = None, parse_workers: int | None = None) -> None:
        self._loader = loader
        self._limits = LoadLimits(concurrency, parse_budget)
        self._progress = progress or NoProgress()
        self._parse_workers = parse_workers

    def check(self, checks: Sequence[QuoteCheck], cache: VerdictCache | None = None, *,
              parser: ParsePool | None = None) -> LiveResult:
        """Load each distinct source of ``checks`` once and match its quotes. A failure of one
        source never fails another; an unexpected exception (a bug) propagates. A stop
        (:class:`KeyboardInterrupt`, see :mod:`tracecite.stops`) ends the parse workers,
        abandons the loads in flight and returns what finished, the rest ``interrupted``
        (docs/design/concurrency.md#partial-results).

        ``parser``: the run's parse pool, its workers perhaps forked before the inputs were read
        (the caller closes it); None: a pool of this check's own."""
        columns = as_checks(checks)
        groups = _grouped(columns, self._loader.key)
        tally = Tally(self._loader.kind, columns, cache=cache)
        groups = tally.recall(groups)
        if cache is not None and not groups:
            return tally.result()  # every verdict came from the cache: no request, no parse
        stop = StopToken()  # the run's: its loader threads poll it
        given = parser
        try:
            with nullcontext(given) if given is not None else ParsePool(
                    self._parse_workers) as parser:
                targets = [columns.target(group[0]) for group in groups.values()]
                pdfs = any(named_pdf(target) for target in targets)
                html = self._loader.cites_html(targets)
                if html or not pdfs:
                    _drop_early_pdf()
                # Before any thread of ours runs (see ParsePool): forked workers must be.
                if html and self._loader.expects_html:
                    parser.start()
                elif html:
                    parser.fork_now()
                if pdfs:
                    parser.start_pdf()  # after the fork: forked workers keep no PDF pipe
                self._progress.start(len(groups))
                try:
                    LoaderThreads(self._loader, columns, groups, parser, self._limits, stop
                                  ).run(tally, self._progress)
                finally:
                    self._progress.stop()
        except KeyboardInterrupt as interrupt:  # the live run's one place: a stop is a value
            from tracecite.stops import signal_of

            if given is not None:
                given.terminate()  # as the pool of its own would be: no parse is waited for
            signum = signal_of(interrupt)
            stop.stop(signum)  # already set by the loaders' end, unless the stop came first
            return tally.result(stopped_by=signum)
        return tally.result()


def _drop_early_pdf() -> None:
    """End the PDF workers started ahead of this run (``verify-files``) when it reads no PDF,
    or forks workers next (they must not inherit the PDF workers' pipes)."""
    import sys

    reader = sys.modules.get("tracecite.pdf.reader")  # not imported: none were started
    if reader is not None:
        reader.drop_early()


def _grouped(checks: QuoteChecks, key: Callable[[str], str]) -> dict[str, array[int]]:
    """The indexes of ``checks`` by the key of their source, the sources in the order first
    cited; each distinct target's key is worked out once."""
    keys: dict[str, str] = {}
    groups: dict[str, array[int]] = {}
    for i in range(len(checks)):
        target = checks.target(i)
        k = keys.get(target)
        if k is None:
            k = keys[target] = key(target)
        group = groups.get(k)
        if group is None:
            group = groups[k] = array("I")
        group.append(i)
    return groups
