"""Reading an agent trace (docs/guides/traces.md): :func:`read_trace`, the one way in.

The reader owns the file: it opens it, and everything it opens is closed before it returns,
errors included. Traces end with their answer, so given a :class:`QuoteTester` the reader reads
the last line first (:mod:`tracecite.inputs.answer`), tells the tester which quotes to expect
from which source, and hands it each source as the validating pass streams by
(:mod:`tracecite.inputs.validator`): no content is kept, and each line is decoded once. When the
answer is elsewhere (or its line changed between the two reads), the reader reads just the lines
holding cited sources again, each once, in file order, once the trace is known to be valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import BinaryIO, Protocol

from tracecite.codes import Code
from tracecite.findings import Finding
from tracecite.inputs.answer import quote_columns, read_final_answer
from tracecite.inputs.files import open_input
from tracecite.inputs.sources import SourceIndex, TraceChangedError, read_sources_at
from tracecite.inputs.validator import SourceSink, validate
from tracecite.model import Citation

TRACE_CHANGED = "the trace changed or became unreadable while it was checked"

STREAM_BUFFER = 1 << 20
"""Bytes read at a time by the validating pass, which reads the whole file in order: trace
lines are often longer than the default 8 KiB buffer, which then takes several reads and a
join for each of them."""


class QuoteTester(Protocol):
    """What the reader asks of a check that tests cited quotes against captured contents."""

    def wait_for(self, quotes: dict[str, tuple[str, ...]]) -> None:
        """Start over, forgetting any earlier verdicts: expect these normalised quotes, per
        source id (the mapping is the tester's to keep and change)."""

    def test(self, source_id: str, uri: str, content: str | None) -> None:
        """Test the quotes cited from this source, if it is one still waited for (``content``
        None: the trace did not capture it). Each source is handed over at most once after
        :meth:`wait_for`."""

    @property
    def waiting(self) -> bool:
        """Whether a source is still waited for."""


@dataclass(frozen=True)
class TraceScan:
    """A validated trace: format findings, the answer's citations, and the sources seen."""

    path: str
    findings: tuple[Finding, ...]
    citations: Sequence[Citation]
    citations_per_claim: tuple[int, ...]
    answer_line: int | None
    sources: SourceIndex
    answer_read_ahead: bool = False
    """Whether the answer is the one read ahead from the last line (so the tester saw every
    cited source as the trace streamed by)."""
    reread_error: Finding | None = None
    """TC101 when the cited lines could not be read again for the tester (the trace changed
    or became unreadable after it was validated): the tester's verdicts are then incomplete."""
    captured_at: Mapping[str, str] = field(default_factory=dict)
    """When each source that says so was captured, as 14 UTC digits (``YYYYMMDDhhmmss``), by
    source id (docs/web-over-time.md#archived-copies)."""
    unread: frozenset[str] = frozenset()
    """The sources with ``content: null`` and an ``error``: the agent tried to read them and
    every read failed (docs/guides/traces.md)."""
    answer_offset: int | None = None
    """Where the answer's line starts (a byte offset), to find citations' columns in it."""
    citations_dropped: int = 0
    """How many citations :meth:`without_citations` dropped."""

    @property
    def citation_count(self) -> int:
        """How many valid citations the answer has, dropped ones included."""
        return len(self.citations) + self.citations_dropped

    def without_citations(self) -> TraceScan:
        """This scan without its citations, which only the live checks read (their number
        stays, for the summary): a worker of ``--jobs`` then sends back a tenth of the
        bytes."""
        return replace(self, citations=(), citations_dropped=self.citation_count)

    def located(self, citations: Iterable[Citation]) -> list[Citation]:
        """These citations, each with the column of its ``quote`` value in the answer line where it
        can be found (docs/reference/reports.md#locations). The line is read again once, and walked
        only down to these citations: only citations that get a finding need it."""
        chosen = list(citations)
        if self.answer_offset is None or not chosen:
            return chosen
        columns = quote_columns(self.path, self.answer_offset,
                                {(c.claim, c.citation) for c in chosen})
        # Made anew, not dataclasses.replace: a run can have a hundred thousand of these.
        return [Citation(c.file, c.line, c.claim, c.citation, c.source_id, c.quote,
                         columns.get((c.claim, c.citation))) for c in chosen]

    @property
    def valid(self) -> bool:
        """Whether the trace had no format findings."""
        return not self.findings


def read_trace(path: str, *, tester: QuoteTester | None = None,
               sink: SourceSink | None = None, read_ahead: bool = False) -> TraceScan:
    """Validate a trace file while streaming it; see :class:`TraceScan`.

    ``tester``: if given, it has seen every cited source of a valid trace by the time this
    returns (unless :attr:`TraceScan.reread_error` says otherwise). ``sink`` sees each valid
    source and its content as it goes by (``compare`` hashes contents with it). The answer on
    the last line is read ahead, before the rest, when there is a tester or ``read_ahead``
    says so: its line is then never held beside all that the reading holds by its end (nor,
    when it is long, decoded by the reader of the other lines). Every file opened here is
    closed before this returns or raises: nothing in the scan needs closing.
    """
    opened = open_input(path, buffering=STREAM_BUFFER)
    if isinstance(opened, Finding):
        return TraceScan(path, (opened,), (), (), None, SourceIndex())
    with opened:
        scan = _validate(path, opened, tester, sink, read_ahead=read_ahead)
    if tester is None or not scan.valid or scan.answer_read_ahead:
        return scan
    try:
        _test_cited_again(scan, tester)
    except (TraceChangedError, OSError):
        return replace(scan, reread_error=Finding(Code.INPUT_UNREADABLE, TRACE_CHANGED,
                                                  file=path))
    return scan


def scan_trace(path: str, *, sink: SourceSink | None = None,
               read_ahead: bool = False) -> TraceScan:
    """Validate a trace's structure only: :func:`read_trace` without a tester."""
    return read_trace(path, sink=sink, read_ahead=read_ahead)


def quotes_by_source(cited: Iterable[tuple[str, str | None]]) -> dict[str, tuple[str, ...]]:
    """The quotes cited from each source id, in order and without repeats; a citation without
    a quote (``None``, its quote field was bad) adds nothing."""
    # Tuples, without repeats: a few quotes per source, and a tuple is smaller than a set.
    # Most sources are cited once or twice, so a tuple is made at once and looked through;
    # past _FEW_QUOTES a source's further quotes wait in a list, deduplicated at the end.
    wanted: dict[str, tuple[str, ...]] = {}
    more: dict[str, list[str]] = {}
    for source_id, quote in cited:
        if quote is None:
            continue
        got = wanted.get(source_id)
        if got is None:
            wanted[source_id] = (quote,)
        elif quote in got:
            continue
        elif len(got) < _FEW_QUOTES:
            wanted[source_id] = (*got, quote)
        else:
            more.setdefault(source_id, []).append(quote)
    for source_id, quotes in more.items():
        wanted[source_id] = tuple(dict.fromkeys((*wanted[source_id], *quotes)))
    return wanted


_FEW_QUOTES = 8
"""Quotes of one source kept in a tuple as they come (looked through for repeats)."""


def _validate(path: str, handle: BinaryIO, tester: QuoteTester | None,
              sink: SourceSink | None, *, read_ahead: bool = False) -> TraceScan:
    """The validating pass, with the answer read ahead first when there is a tester (or
    ``read_ahead``)."""
    ahead = tester is not None or read_ahead
    answer = read_final_answer(path, handle) if ahead else None
    if tester is not None and answer is not None:
        draft = answer.draft
        tester.wait_for(quotes_by_source(zip(draft.source_ids, draft.quotes, strict=True)))
        sink = _testing(tester, sink)
    store = SourceIndex()
    checked = validate(path, handle, store, sink=sink, answer=answer)
    return TraceScan(
        path=path,
        findings=tuple(checked.findings),
        citations=checked.citations,
        citations_per_claim=tuple(checked.per_claim),
        answer_line=checked.answer_line,
        sources=store,
        answer_read_ahead=checked.answer_read_ahead,
        captured_at=checked.captured_at,
        unread=frozenset(checked.unread),
        answer_offset=checked.answer_offset,
    )


def _testing(tester: QuoteTester, sink: SourceSink | None) -> SourceSink:
    """A sink that hands each source to ``tester`` (and then to ``sink``, if any)."""
    test = tester.test
    if sink is None:
        return lambda source_id, uri, line, content: test(source_id, uri, content)
    also = sink

    def both(source_id: str, uri: str, line: int, content: str | None) -> None:
        test(source_id, uri, content)
        also(source_id, uri, line, content)

    return both


def _test_cited_again(scan: TraceScan, tester: QuoteTester) -> None:
    """Hand ``tester`` every source the answer cites, reading the lines that hold them again,
    each once, in file order (TraceChangedError or OSError if that fails)."""
    wanted = quotes_by_source((c.source_id, c.quote) for c in scan.citations)
    offsets = sorted({scan.sources.offset(source_id) for source_id in wanted})
    tester.wait_for(wanted)
    opened = open_input(scan.path)  # a regular file still, or it changed
    if isinstance(opened, Finding):
        raise TraceChangedError(opened.message)
    with opened:
        for offset in offsets:
            for source_id, (uri, content) in read_sources_at(opened, offset,
                                                             wanted).items():
                tester.test(source_id, uri, content)
    if tester.waiting:  # a cited source was not on its line any more
        raise TraceChangedError("the trace changed while it was being checked")
