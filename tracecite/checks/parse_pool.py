"""Matching quotes in a loaded source (:func:`match_quotes`), and the worker processes that do
it for HTML and PDF (:class:`ParsePool`).

Turning HTML into visible text is CPU-bound pure Python, so when there is more than one core it
runs in a pool of worker processes: parsing overlaps loading and uses every core. A PDF is
always read in a PDF worker process (:mod:`tracecite.pdf.reader`), even on one core: the engine
is native code, and a PDF that crashes or exhausts it must cost that source only.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Generic, TypeVar

from tracecite.checks.kinds import MatchKind
from tracecite.codes import Code
from tracecite.fetch.limits import MAX_TIMEOUT
from tracecite.findings import Diagnosis
from tracecite.matching import MatchText, normalise
from tracecite.model import TextDirective

if TYPE_CHECKING:  # concurrent.futures is imported when sources are loaded: `check` needs none
    from concurrent.futures import Future

    from tracecite.checks.diagnosis import HtmlPage
    from tracecite.fetch.body import Held
    from tracecite.pdf.reader import PdfReader
    from tracecite.workers import WorkerPool


Verdict = bool | Diagnosis
"""What matching says of one quote: True when it is found; for a quote that is not, its
:class:`~tracecite.findings.Diagnosis` (False: not found, and not diagnosed)."""

T = TypeVar("T")


class Settled(Generic[T]):
    """Work done by the time it is handed back, as a future that is over: what
    :meth:`ParsePool.submit` returns for what it does in the calling thread (a PDF, which waits
    for its worker; a page matched here). ``concurrent.futures`` is imported only for the pool
    of HTML workers, and ``logging`` with it: a run that starts none loads neither."""

    __slots__ = ("_error", "_value")

    def __init__(self, value: T | None = None, error: Exception | None = None) -> None:
        self._value = value
        self._error = error

    def result(self) -> T:
        """The work's value; raises what the work raised."""
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set whenever there is no error

    def add_done_callback(self, fn: Callable[[Settled[T]], object]) -> None:
        """Call ``fn`` with this at once: the work is over."""
        fn(self)




def match_quotes(kind: MatchKind, text: str | bytes, quotes: Sequence[str], *,
                 budget: float = MAX_TIMEOUT) -> list[Verdict]:
    """For each normalised quote, True when it is in the source (HTML on its visible text, JSON in
    its raw text or in one of its decoded string values, anything else as it is), else why not
    (docs/reference/reports.md#near-misses): the diagnosis runs only for the quotes that miss, on
    the page tree already parsed, and it never turns a miss into a match.

    HTML gets ``budget`` seconds to parse; past it, or past the parser's other limits, this
    raises :class:`~tracecite.visible.ParseLimitError`. A plain function of plain
    values, so a worker process can run it. A PDF (``text`` its bytes) is read in a PDF worker
    started for it (:class:`ParsePool` keeps its PDF workers for the next PDF instead), and
    raises :class:`~tracecite.pdf.reader.PdfError` when it cannot be read.
    """
    if isinstance(text, bytes):
        from tracecite.pdf.reader import PdfReader

        with PdfReader(1) as reader:
            return _pdf_verdicts(reader, lambda: text, quotes)
    page: HtmlPage | None = None  # the parsed page, kept for the diagnosis of a miss
    if kind is MatchKind.HTML:
        from tracecite.checks.diagnosis import HtmlPage
        from tracecite.visible import parse_visible

        root, visible = parse_visible(text, budget=budget)
        texts = [MatchText(visible)]
        page = HtmlPage(root, text)
    elif kind is MatchKind.JSON:
        # Each string value on its own: joined, normalisation would turn the line breaks
        # between values into spaces and let a quote match across two of them.
        values = _json_strings(text)
        texts = [MatchText(text), *(MatchText(value) for value in values)]
    else:
        texts = [MatchText(text)]
    directives = _directives(quotes)
    plain = visible if kind is MatchKind.HTML else text
    found = [_directive_found(plain, directives[i]) if i in directives
             else any(t.contains(q) for t in texts) for i, q in enumerate(quotes)]
    if all(found):
        return list(found)
    from tracecite.checks.diagnosis import Diagnoser

    if kind is MatchKind.HTML:
        diagnoser = Diagnoser([normalise(visible)], page)
    elif kind is MatchKind.JSON:
        # The string values apart (a NUL, which normalising keeps, between each two).
        diagnoser = Diagnoser([normalise(text), "\x00".join(normalise(v) for v in values)])
    else:
        diagnoser = Diagnoser([normalise(text)])
    return [True if hit else diagnoser.diagnose(
                _missing_part(plain, directives[i]) if i in directives else q)
            for i, (q, hit) in enumerate(zip(quotes, found, strict=True))]


def _directives(quotes: Sequence[str]) -> dict[int, TextDirective]:
    """The text directives among ``quotes``, by index (docs/guides/documents.md)."""
    if not any(q.startswith("\x00") for q in quotes):
        return {}  # no directive: the module that reads them is not needed
    from tracecite.checks.documents import directive_of

    return {i: d for i, q in enumerate(quotes) if (d := directive_of(q)) is not None}


def _directive_found(text: str, directive: TextDirective) -> bool:
    from tracecite.text_directive import directive_found

    return directive_found(text, directive)


def _missing_part(text: str, directive: TextDirective) -> str:
    """What a diagnosis of a missed directive looks for: its first part not on the page, or
    (each part there, not in the directive's order) its start with the prefix and suffix."""
    matched = MatchText(text)
    for part in (directive.start, directive.end):
        if part is not None and not matched.contains(normalise(part)):
            return normalise(part)
    return normalise(" ".join(p for p in (directive.prefix, directive.start, directive.suffix)
                              if p))


def match_pages(raw: Sequence[str], quotes: Sequence[str]) -> list[Verdict]:
    """For each normalised quote, True when it is in a PDF's text (the ``raw`` text of each
    page as the engine gave it, made :func:`tracecite.pdf.text.page_text`, joined by a
    newline), else why not: the diagnosis names the pages (docs/guides/pdf.md#near-misses)."""
    from tracecite.pdf.text import page_text

    pages = tuple(page_text(page) for page in raw)
    text = "\n".join(pages)
    matcher = MatchText(text)
    found = [matcher.contains(q) for q in quotes]
    if all(found):
        return list(found)
    from tracecite.checks.diagnosis import Diagnoser, PdfPages

    diagnoser = Diagnoser([normalise(text)], pdf=PdfPages(tuple(raw), pages))
    return [True if hit else diagnoser.diagnose(q) for q, hit in zip(quotes, found, strict=True)]


def _pdf_verdicts(reader: PdfReader, body: Callable[[], bytes], quotes: Sequence[str]
                  ) -> list[Verdict]:
    """:func:`match_pages` of the PDF that ``body`` gives, read by one of ``reader``'s workers
    for ``quotes``: when the worker finds every one, it sends no pages (True for each)."""
    read = reader.find_quotes_of(body, quotes)
    return [True] * len(quotes) if isinstance(read, int) else match_pages(read, quotes)


def _json_strings(text: str) -> list[str]:
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []  # a JSON type whose body is not JSON: the raw text only
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return out


def _match_in_worker(kind: MatchKind, text: str, quotes: Sequence[str],
                     budget: float) -> list[Verdict]:
    """``match_quotes`` in a parse worker, with the cyclic garbage collector paused.

    html5lib's tree is full of reference cycles, and collections during a parse keep scanning
    the growing tree: pausing them makes the parse cheaper. A worker runs nothing else
    meanwhile, and the first collection after the parse frees the whole tree.
    """
    import gc

    gc.disable()
    try:
        return match_quotes(kind, text, quotes, budget=budget)
    finally:
        gc.enable()


def _lost_worker(error: BaseException | None) -> bool:
    """Whether ``error`` says a worker process of the pool is gone (``BrokenProcessPool``):
    then the pool is ended, never waited for."""
    import sys

    process = sys.modules.get("concurrent.futures.process")  # loaded with any worker pool
    return process is not None and isinstance(error, process.BrokenProcessPool)


def _prepare_worker() -> None:
    """Import the HTML parser in a new worker, before its first page arrives."""
    import tracecite.visible  # noqa: F401


def _nothing() -> None:
    """A first job, so that forked workers are forked now (see ParsePool.fork_now)."""


PDF_HELD = 64 * 1024 * 1024
"""Bytes of PDF bodies a run keeps in memory while they wait for a PDF worker or are with one;
a body that would pass it waits in an unlinked temporary file (:class:`_Spooled`). With
``--max-pdf-bytes`` up to 32 MiB and dozens of loaders waiting for a worker, the waiting bodies
alone could otherwise take a gigabyte."""


class HandedOver:
    """A PDF body handed to the parse pool: once :meth:`take` has it, nothing else holds it (the
    loader keeps this wrapper, never the bytes), so a body that waits on disk is not also
    kept in memory by the caller's frame."""

    def __init__(self, data: bytes, held: Held | None = None) -> None:
        self._data: bytes | None = data
        self._held = held  # its share of the budget of PDFs loading (tracecite.fetch.body)

    def take(self) -> bytes:
        """The body, once; the wrapper is empty after."""
        data, self._data = self._data, None
        if data is None:
            raise RuntimeError("the PDF body was already taken")
        return data

    def release(self) -> None:
        """Give back the body's share of the budget of PDFs loading: the pool counts it now."""
        held, self._held = self._held, None
        if held is not None:
            held.release()


class _Spooled:
    """A PDF body waiting on disk, in a temporary file that has no name (unlinked as it is
    made): it goes when it is read back or closed, or with the process, however it ends."""

    def __init__(self, data: bytes) -> None:
        import tempfile

        self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by take() or close()
        try:
            self._file.write(data)
        except BaseException:
            self._file.close()
            raise

    def take(self) -> bytes:
        """The body, read back; the file is gone after."""
        try:
            self._file.seek(0)
            return self._file.read()
        finally:
            self._file.close()

    def close(self) -> None:
        """Drop the body unread."""
        self._file.close()


class _PdfBodies:
    """The PDF bodies of one run between their load and their worker's answer: at most
    ``held`` bytes of them in memory (one body always may), the others in :class:`_Spooled`
    files until a worker has room for them."""

    def __init__(self, held: int) -> None:
        self._held = held
        self._in_memory = 0
        self._lock = threading.Lock()
        self._spooled: set[_Spooled] = set()

    def read(self, reader: PdfReader, handed: HandedOver, quotes: Sequence[str]
             ) -> list[Verdict]:
        """Match ``quotes`` in the PDF ``handed`` over, read by one of ``reader``'s workers;
        raises :class:`~tracecite.pdf.reader.PdfError`."""
        try:
            data = handed.take()
            size = len(data)
            with self._lock:
                kept = self._in_memory == 0 or self._in_memory + size <= self._held
                if kept:
                    self._in_memory += size
            spooled = None if kept else self._spool(data)
        finally:
            handed.release()  # counted here from now on, in memory or on disk
        if spooled is not None:
            del data  # on disk now: the only copy in memory goes

            def body() -> bytes:
                assert spooled is not None
                return self._read_back(spooled)
        else:
            def body() -> bytes:
                return data
        try:
            return _pdf_verdicts(reader, body, quotes)
        finally:
            with self._lock:
                if spooled is None:
                    self._in_memory -= size
                else:
                    self._spooled.discard(spooled)
            if spooled is not None:
                spooled.close()

    def _spool(self, data: bytes) -> _Spooled | None:
        try:
            spooled = _Spooled(data)
        except OSError:  # no room on disk either: it waits in memory, as it would have
            with self._lock:
                self._in_memory += len(data)
            return None
        with self._lock:
            self._spooled.add(spooled)
        return spooled

    @staticmethod
    def _read_back(spooled: _Spooled) -> bytes:
        from tracecite.pdf.reader import PdfError

        try:
            return spooled.take()
        except (OSError, ValueError):  # ValueError: closed, the run is stopping
            raise PdfError(Code.PDF_UNREADABLE, "the PDF could not be read back from the "
                           "temporary file it waited in") from None

    def close(self) -> None:
        """Drop every body still waiting on disk (the run is over or stopping)."""
        with self._lock:
            spooled = [*self._spooled]
            self._spooled.clear()
        for body in spooled:
            body.close()


class _Stage(enum.Enum):
    """Where a :class:`ParsePool`'s workers are."""

    NOT_STARTED = "not started"
    FORKED = "forked"  # by fork_now(): nothing asked of them yet
    TO_PREPARE = "to prepare"  # forked by start(): they import the HTML parser at prepare()
    PREPARED = "prepared"  # asked to import the HTML parser


class ParsePool:
    """Worker processes for HTML parsing, one per core (:func:`~tracecite.workers.cores`),
    started by :meth:`start` (or :meth:`fork_now`) or on first use.

    Their start method is the process's (:func:`~tracecite.workers.start_method`), read when
    the pool is made, on the run's thread. Forked workers must be forked before the run starts
    a thread of its own: the run calls :meth:`start` or :meth:`fork_now` first (see
    :attr:`forks`); a run that started none (it cites no HTML) never forks them later, and
    parses an HTML page that comes anyway in the loader thread. A forkserver starts them from
    a clean process, safe while loader threads hold locks, so they may start on first use. A
    single-core machine parses in the loader thread instead.
    """

    def __init__(self, workers: int | None = None, *, pdf_held: int = PDF_HELD) -> None:
        from tracecite.workers import cores, start_method

        self._workers = workers if workers is not None else cores()
        self._pool: WorkerPool | None = None
        self._lock = threading.Lock()  # loader threads ask for the executor at the same time
        self._closed = False
        self._pdf: PdfReader | None = None  # started with the first PDF
        self._pdf_bodies = _PdfBodies(pdf_held)  # the PDFs waiting for it or with it
        self._stage = _Stage.NOT_STARTED
        # Read here, on the run's thread, never on a loader thread's (see start_method).
        self._method = start_method() if self._workers >= 2 else "none"

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            # the run is stopping (docs/reference/commands.md): no parse is waited for
            self.terminate()
        elif kind is not None and _lost_worker(value):
            self.terminate()  # a worker is gone: the executor's thread may never end by itself
        else:
            self.close()

    @property
    def forks(self) -> bool:
        """Whether this pool's workers would be forked from this process: then they must be
        started (:meth:`start`, :meth:`fork_now`) before the run's threads."""
        return self._method == "fork"

    def check_workers(self) -> None:
        """Raise ``BrokenProcessPool`` once a parse worker has been gone for a while, its parse
        never to come back (:meth:`~tracecite.workers.WorkerPool.check_workers`): the run calls
        it while it waits for parses."""
        pool = self._pool
        if pool is not None:
            pool.check_workers()

    def start(self) -> None:
        """Start the workers now, if parsing would use them, for a run whose sources are mostly
        HTML: each imports the HTML parser while the caller goes on. Forked workers are forked
        now and import it once :meth:`prepare` says the run's first requests are out: before
        that, their imports would compete for the cores with this process while it sends them.
        A forkserver's workers start, and import it, now.

        On a pool whose workers were forked already (:meth:`fork_now`, before the run read
        its inputs), nothing is forked again: the workers import the parser at :meth:`prepare`.
        """
        if self.forks:
            self._launch(prepare=False)
            if self._stage is _Stage.FORKED:
                self._stage = _Stage.TO_PREPARE
        else:
            self._launch(prepare=True)

    def fork_now(self) -> None:
        """Fork the workers now, if parsing would use forked workers, without having them
        import the HTML parser: a run whose sources are seldom HTML calls this before its
        threads start, since forking later, while they run, would not be safe. A run calls it
        before it reads its inputs, too, so that the workers hold none of what it reads (each
        forked worker's resident set counts the pages it shares with this process)."""
        if self.forks:
            self._launch(prepare=False)

    @property
    def launched(self) -> bool:
        """Whether the workers were started (:meth:`start`, :meth:`fork_now`): then this
        process has a thread of the pool's, and anything it forks later is unsafe."""
        return self._stage is not _Stage.NOT_STARTED

    def start_pdf(self) -> None:
        """Start the PDF workers now, when the run's sources name PDFs: each loads the PDF
        engine while the run loads its first sources (:meth:`PdfReader.start`)."""
        self._pdf_reader().start()

    def prepare(self) -> None:
        """Have the workers :meth:`start` forked import the HTML parser now (the live run calls
        this once its loader threads are sending their first requests); else nothing."""
        if self._stage is not _Stage.TO_PREPARE:
            return
        self._stage = _Stage.PREPARED
        executor = self._get_pool().executor
        for _ in range(self._workers):  # a worker per job while none idle
            executor.submit(_prepare_worker)

    def _launch(self, *, prepare: bool) -> None:
        if self._workers < 2 or self._stage is not _Stage.NOT_STARTED:
            return
        self._stage = _Stage.PREPARED if prepare else _Stage.FORKED
        from contextlib import nullcontext

        from tracecite.stops import signals_blocked

        pool = self._get_pool()
        # Forked workers are forked here, with the stop signals held until each has set its own
        # handlers: a Ctrl-C now never reaches a worker still running ours. (Not for a
        # forkserver, which would keep them held for good.)
        with signals_blocked() if pool.forks else nullcontext():
            for _ in range(self._workers if prepare else 1):  # a worker per job while none idle
                pool.executor.submit(_prepare_worker if prepare else _nothing)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the parse pool is closed")

    def _get_pool(self) -> WorkerPool:
        with self._lock:
            self._check_open()
            if self._pool is None:
                from tracecite.workers import WorkerPool

                # Imported once in a forkserver rather than by every worker.
                self._pool = WorkerPool(self._workers, method=self._method,
                                        preload=["tracecite.checks.parse_pool",
                                                 "tracecite.visible"])
            return self._pool

    def submit(self, kind: MatchKind, text: str | bytes | HandedOver, quotes: Sequence[str], *,
               budget: float = MAX_TIMEOUT) -> Future[list[Verdict]] | Settled[list[Verdict]]:
        """``match_quotes`` in a worker process when it pays (HTML with 2+ cores, and workers
        started for it where they are forked); otherwise it runs here and the future is
        already done. A PDF (``text`` its bytes, best :class:`HandedOver`) is read by one of
        the pool's PDF workers within the PDF limits, the calling thread waiting for it (a PDF
        that cannot be read: the future holds a :class:`~tracecite.pdf.reader.PdfError`);
        while it waits, past ``pdf_held`` bytes of PDFs in memory, it waits in an unlinked
        temporary file (:class:`_PdfBodies`)."""
        if kind is MatchKind.HTML and self._workers >= 2 and isinstance(text, str):
            if self.launched or not self.forks:
                return self._get_pool().executor.submit(_match_in_worker, kind, text,
                                                        list(quotes), budget)
            # Workers that would be forked now, with the run's threads running, never are:
            # a run that started none (it cited no HTML) parses an HTML answer here instead.
            self._check_open()
        try:
            if isinstance(text, (bytes, HandedOver)):
                handed = HandedOver(text) if isinstance(text, bytes) else text
                del text
                return Settled(self._pdf_bodies.read(self._pdf_reader(), handed, quotes))
            return Settled(match_quotes(kind, text, quotes, budget=budget))
        except Exception as error:  # handed to whoever reads the result
            return Settled(error=error)

    def _pdf_reader(self) -> PdfReader:
        with self._lock:
            if self._closed:
                raise RuntimeError("the parse pool is closed")
            if self._pdf is None:
                from tracecite.pdf.reader import PdfReader, take_early

                count = max(1, self._workers)
                self._pdf = take_early(count) or PdfReader(count)
            return self._pdf

    def _end_pdf(self) -> None:
        with self._lock:
            reader, self._pdf = self._pdf, None
        if reader is not None:
            reader.close()
        self._pdf_bodies.close()

    def close(self) -> None:
        """Stop the workers."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        self._end_pdf()
        if pool is not None:
            pool.shutdown()

    def terminate(self, grace: float = 1.0) -> None:
        """Stop now: end every worker (a parse under way is abandoned, its future fails) and
        cancel the parses not begun; a worker still alive after ``grace`` seconds is killed."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        self._end_pdf()
        if pool is not None:
            pool.end(grace)
