"""PDF worker processes for one run, each PDF read within the PDF limits
(docs/guides/pdf.md#limits): :data:`PARSE_BUDGET` seconds, :data:`MAX_PAGES` pages and
:data:`MEMORY_CAP` bytes of address space per worker.

A worker is a process of its own (:mod:`tracecite.pdf.worker`), started with ``subprocess``
(safe while the run's loader threads hold locks) when a PDF first needs one or ahead of the
run's first PDF (:meth:`PdfReader.start`), and kept for the next PDF. A worker that crashes,
passes the budget or runs out of memory costs the PDF it was reading (:class:`PdfError`,
TC323) and is replaced: never the run, never another PDF (one waiting for that worker goes to
another).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from tracecite.codes import Code
from tracecite.pdf.worker import ANSWER, PID, REAP, REQUEST, fork_spec

PARSE_BUDGET = 10.0
"""Seconds a PDF may take to read, from when its bytes are handed to a worker."""

MAX_PAGES = 2000
"""Pages a PDF may have."""

MEMORY_CAP = 1024 * 1024 * 1024
"""Bytes of address space a PDF worker may map: the interpreter and the engine take about a
fifth of it, and a 32 MiB PDF of a thousand pages reads in the rest."""

ENGINE_MISSING = ("the PDF engine is not installed: pip install 'tracecite[pdf]' "
                  "(docs/guides/pdf.md)")
"""TC324's message."""

_CHUNK = 1 << 20

WORKER_ALLOCATOR = {
    "MALLOC_MMAP_THRESHOLD_": str(32 * 1024 * 1024),
    "MALLOC_TRIM_THRESHOLD_": str(32 * 1024 * 1024),
}
"""The C allocator's settings in a PDF worker's environment (glibc reads them as it starts;
other C libraries ignore them), unless the run's own environment sets them. PDFium grows a
page's character list as it reads the page and frees it after: by default each large block
is mapped from the system and unmapped when freed, and the heap above it given back, so every
page faults in fresh zeroed memory (a fifth of a worker's time on figure 12's reports, most of
it in the kernel). Blocks up to 32 MiB come from the heap and 32 MiB of free heap is kept for
the next page: the pages are read in memory already mapped."""


class PdfError(Exception):
    """A PDF that cannot be read: ``code`` is TC323 (the reason says why) or TC324 (no engine)."""

    def __init__(self, code: Code, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (PdfError, (self.code, self.reason))


def engine_installed() -> bool:
    """Whether the ``pdf`` extra is installed, found without importing the engine."""
    from tracecite.pdf import installed_in

    return installed_in() is not None


def worker_command() -> list[str]:
    """The command line of a PDF worker: this interpreter, running :mod:`tracecite.pdf.worker`
    without the ``site`` module (``-S``): the worker imports only TraceCite and the engine, from
    where this process finds them (:class:`_Worker` puts both on its path), and starts
    without reading every package's ``.pth`` files, some of which run code (coverage's hook,
    the import hook of a setuptools editable install: 13 ms of a 21 ms start), before it can
    read its first PDF."""
    return [sys.executable, "-S", "-m", "tracecite.pdf.worker"]


class _Worker:
    """One worker process and its pipes. It reads one PDF at a time; a second may wait in its
    request pipe meanwhile (:data:`QUEUED`), so it starts on it as soon as it has answered,
    without waiting for the run's thread to hand it over. Answers come back in the order sent:
    each asker reads its own at its turn.

    ``forks``: that many more workers, forked by this one once it has loaded the engine
    (:attr:`forked`, see :mod:`tracecite.pdf.worker`), where the platform forks."""

    def __init__(self, command: list[str], memory: int, forks: int = 0) -> None:
        import tracecite
        from tracecite.pdf import installed_in

        env = dict(os.environ)
        # The worker imports this very package, wherever it was imported from, and the engine
        # from where this process would import it (it starts without `site`).
        here = os.path.dirname(os.path.dirname(os.path.abspath(tracecite.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (here, installed_in(), env.get("PYTHONPATH")) if p)
        for name, value in WORKER_ALLOCATOR.items():
            env.setdefault(name, value)
        theirs: list[tuple[int, int, int]] = []  # the forked workers' ends, passed to this one
        ours: list[tuple[int, int, int]] = []  # the run's ends: requests, answers, lifeline
        try:
            for _ in range(forks if hasattr(os, "fork") else 0):
                requests, answers, lifeline = os.pipe(), os.pipe(), os.pipe()
                theirs.append((requests[0], answers[1], lifeline[0]))
                ours.append((requests[1], answers[0], lifeline[1]))
            # The worker watches this process by its id (docs/design/concurrency.md).
            extra = [fork_spec(theirs)] if theirs else []
            self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
                [*command, str(memory), str(os.getpid()), *extra], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, close_fds=True,
                pass_fds=[fd for triple in theirs for fd in triple], env=env)
        except BaseException:
            for triple in ours:
                for fd in triple:
                    os.close(fd)
            raise
        finally:
            for triple in theirs:  # the worker has them now (or no worker does)
                for fd in triple:
                    os.close(fd)
            theirs.clear()
        assert self.process.stdin is not None and self.process.stdout is not None
        self._requests = self.process.stdin.fileno()
        self._answers = self.process.stdout.fileno()
        self._lifeline: int | None = None
        self._pid: int | None = self.process.pid
        self.forked = [type(self)._of_fork(*triple) for triple in ours]
        self._setup()

    @classmethod
    def _of_fork(cls, requests: int, answers: int, lifeline: int) -> _Worker:
        """A worker that another forks, on the run's ends of its pipes; its id comes first on
        its answers' pipe, once it is forked."""
        worker = cls.__new__(cls)
        worker.process = None
        worker._requests, worker._answers, worker._lifeline = requests, answers, lifeline
        worker._pid = None
        worker.forked = []
        worker._setup()
        return worker

    def _setup(self) -> None:
        self.broken = False  # it died, passed a budget or was killed: it takes nothing more
        self._sending = threading.Lock()
        self._turns = threading.Condition()
        self._pid_read = threading.Lock()
        self._killing = threading.Lock()
        self._sent = 0  # requests written, in order
        self._answered = 0  # answers read, in order
        self._answered_at = 0.0  # when the last one was read: the next PDF's reading began

    def pid(self, wait: float = PARSE_BUDGET) -> int | None:
        """The worker's process id; a forked worker's once it has been forked (waiting up to
        ``wait`` seconds for it), None if it never was."""
        if self._pid is not None or self.broken:
            return self._pid
        with self._pid_read:
            if self._pid is None and not self.broken:
                try:
                    (self._pid,) = PID.unpack(_read_exactly(
                        self._answers, PID.size, time.monotonic() + wait))
                except (PdfError, _Late):  # never forked, or not yet
                    return None
        return self._pid

    def ask(self, data: bytes, max_pages: int, budget: float, quotes: bytes = b""
            ) -> tuple[str, Any]:
        """Send one PDF (with the pickled ``quotes`` it is read for) and wait for its answer,
        at most ``budget`` seconds after the worker
        could start on it (it was sent and the PDF before it answered); raises
        :class:`PdfError` when the worker dies or the budget passes while reading it, and
        :class:`_NotRead` when the worker is gone before it started on it."""
        with self._sending:
            if self.broken:
                raise _NotRead()
            turn = self._sent
            self._sent += 1
            try:
                _write_all(self._requests,
                           REQUEST.pack(len(data), max_pages, len(quotes)), data, quotes)
            except OSError:  # BrokenPipeError: the worker is gone
                self.broken = True
                with self._turns:
                    first = self._answered == turn
                    self._turns.notify_all()
                raise _stopped() if first else _NotRead() from None
            sent = time.monotonic()
        with self._turns:
            while self._answered != turn and not self.broken:
                self._turns.wait()
            if self.broken:  # the PDF before this one ended the worker: this one never began
                raise _NotRead()
            deadline = max(sent, self._answered_at) + budget
            if self.pid(budget) is None:  # a worker whose forking failed: it never began
                self.broken = True
                self._turns.notify_all()
                raise _NotRead()
            try:
                answer = self._read_answer(deadline)
            except BaseException:
                self.broken = True
                self._turns.notify_all()
                raise
            self._answered += 1
            self._answered_at = time.monotonic()
            self._turns.notify_all()
        return answer

    def _read_answer(self, deadline: float) -> tuple[str, Any]:
        header = _read_exactly(self._answers, ANSWER.size, deadline)
        (size,) = ANSWER.unpack(header)
        try:
            answer: tuple[str, Any] = pickle.loads(_read_exactly(self._answers, size, deadline))
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError):  # a garbled answer
            raise _stopped() from None
        return answer

    def kill(self) -> None:
        """Kill the process (whoever reads or writes its pipes then sees them close); a forked
        one by closing its lifeline, which it watches (the run holds the only writing end)."""
        self.broken = True
        if self.process is not None:
            with contextlib.suppress(OSError):  # already reaped
                self.process.kill()
            return
        with self._killing:
            lifeline, self._lifeline = self._lifeline, None
        if lifeline is not None:
            os.close(lifeline)

    def end(self, *, grace: float = 0.0) -> None:
        """End the process and reap it; once no thread uses its pipes. With ``grace``, an idle
        worker is first let go (its input closed): it ends by itself, after reaping the
        workers it forked (so their time is counted as its children's), within ``grace``
        seconds, else it is killed."""
        if self.process is None:
            self.kill()
            for fd in (self._requests, self._answers):
                os.close(fd)
            return
        if grace > 0 and not self.broken and self.process.stdin is not None:
            self.process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace)
        self.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


QUEUED = 2
"""PDFs a worker holds at once: the one it reads and the next, waiting in its pipe."""


class _NotRead(Exception):
    """The worker was gone before it began on this PDF: another worker reads it."""


def _stopped() -> PdfError:
    return PdfError(Code.PDF_UNREADABLE,
                    "the PDF engine stopped while reading it (a crash, or over its memory cap)")


def _write_all(fd: int, *parts: bytes) -> None:
    """Write ``parts`` in order, in one system call where the platform has ``writev``: the
    calling thread then takes the GIL back once, not once a piece, while other threads run."""
    views = [memoryview(part) for part in parts if part]
    while views:
        written = os.writev(fd, views) if hasattr(os, "writev") else os.write(fd, views[0])
        while written:
            step = min(written, len(views[0]))
            views[0] = views[0][step:]
            written -= step
            if not views[0]:
                del views[0]


def _read_exactly(fd: int, size: int, deadline: float) -> bytes:
    data = bytearray()
    while len(data) < size:
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(0.0, left))[0] if left > 0 else []
        if not ready:
            raise _Late()
        piece = os.read(fd, min(_CHUNK, size - len(data)))
        if not piece:
            raise _stopped()
        data += piece
    return bytes(data)


class _Late(Exception):
    """The budget passed before the worker answered."""


class PdfReader:
    """Up to ``workers`` PDF worker processes, shared by a run's loader threads; each PDF is
    read within ``budget`` seconds and ``max_pages`` pages, each worker under ``memory``
    bytes. ``command``: the worker's command line (:func:`worker_command`).

    Workers start with the first PDFs, or ahead of them (:meth:`start`). A PDF goes to an idle
    worker, else behind the PDF of a worker reading only one (:data:`QUEUED`): no worker waits
    for the run's threads between two PDFs."""

    def __init__(self, workers: int = 1, *, budget: float = PARSE_BUDGET,
                 max_pages: int = MAX_PAGES, memory: int = MEMORY_CAP,
                 command: list[str] | None = None) -> None:
        self._budget = budget
        self._max_pages = max_pages
        self._memory = memory
        self._command = command if command is not None else worker_command()
        self._count = max(1, workers)
        self._slots = threading.BoundedSemaphore(QUEUED * self._count)
        self._lock = threading.Lock()
        self._load: dict[_Worker, int] = {}  # each live worker: the PDFs it holds
        self._closed = False
        self._engine = False  # found installed: looked for once a reader, not once a PDF

    def __enter__(self) -> PdfReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start every worker now, when the run knows PDFs are coming: each loads the engine
        while the run goes on loading its first sources. A worker that cannot start is left
        for the first PDF to try again (and report)."""
        if not self._engine_installed():
            return
        with self._lock:
            if self._closed or len(self._load) >= self._count:
                return
            try:
                # One interpreter: the others are forked by it once it has loaded the engine.
                worker = _Worker(self._command, self._memory,
                                 forks=self._count - len(self._load) - 1)
            except OSError:
                return
            for each in (worker, *worker.forked):
                self._load[each] = 0

    def _engine_installed(self) -> bool:
        self._engine = self._engine or engine_installed()
        return self._engine

    def processes(self, *, busy: bool = False) -> list[int]:
        """The process ids of the live workers (``busy``: of those holding a PDF)."""
        with self._lock:
            chosen = [w for w, load in self._load.items()
                      if not w.broken and (load > 0 or not busy)]
        return [pid for pid in (w.pid() for w in chosen) if pid is not None]

    def pages(self, data: bytes) -> tuple[str, ...]:
        """The text of each page of the PDF ``data``, with the PDF rules applied
        (:func:`tracecite.pdf.text.page_text`); raises :class:`PdfError`."""
        from tracecite.pdf.text import page_text

        return tuple(page_text(page) for page in self.raw_pages(data))

    def raw_pages(self, data: bytes) -> tuple[str, ...]:
        """The text of each page of the PDF ``data`` as the engine gives it, before the PDF
        rules; raises :class:`PdfError`."""
        read = self._read(lambda: data, b"")
        assert isinstance(read, tuple)  # read for no quotes: every page
        return read

    def find_quotes_of(self, body: Callable[[], bytes], quotes: Sequence[str]
                       ) -> int | tuple[str, ...]:
        """The PDF that ``body`` gives read for the normalised ``quotes``
        (:func:`tracecite.pdf.text.find_quotes`): the number of pages read when every quote is
        found, else each page's text as :meth:`raw_pages` gives it. ``body`` is called once a
        worker has room for it (a body that waited on disk is read back only then)."""
        return self._read(body, pickle.dumps(list(quotes), protocol=pickle.HIGHEST_PROTOCOL)
                          if quotes else b"")

    def _read(self, body: Callable[[], bytes], quotes: bytes) -> int | tuple[str, ...]:
        if not self._engine_installed():
            raise PdfError(Code.PDF_ENGINE_MISSING, ENGINE_MISSING)
        with self._slots:
            data = body()
            while True:
                worker = self._take()
                try:
                    status, value = worker.ask(data, self._max_pages, self._budget, quotes)
                except _NotRead:  # never begun: another worker reads it
                    continue
                except _Late:
                    worker.kill()
                    raise PdfError(Code.PDF_UNREADABLE,
                                   f"reading the PDF took over {self._budget:g} s") from None
                except BaseException:
                    worker.kill()
                    raise
                finally:
                    self._give_back(worker)
                break
        if status == "pages":
            return tuple(value)
        if status == "found":
            return int(value)
        if status == "missing":
            raise PdfError(Code.PDF_ENGINE_MISSING, ENGINE_MISSING)
        raise PdfError(Code.PDF_UNREADABLE, str(value))

    def _take(self) -> _Worker:
        """The worker to send a PDF to: an idle one, else a new one while there are fewer
        than ``workers``, else the one holding fewest (a slot is held: one has room)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the PDF reader is closed")
            live = [w for w in self._load if not w.broken]
            idle = [w for w in live if self._load[w] == 0]
            if idle:
                worker = idle[0]
            elif len(live) < self._count:
                try:
                    worker = _Worker(self._command, self._memory)
                except OSError as error:  # out of processes, file descriptors or memory
                    raise PdfError(Code.PDF_UNREADABLE, "a PDF worker could not start "
                                   f"({error.strerror or type(error).__name__})") from None
                self._load[worker] = 0
            else:
                worker = min(live, key=self._load.__getitem__)
            self._load[worker] += 1
            return worker

    def _give_back(self, worker: _Worker) -> None:
        """One PDF of ``worker``'s is done; a worker that is broken (or of a closed reader) is
        ended by the last thread that used it."""
        with self._lock:
            self._load[worker] -= 1
            last = self._load[worker] == 0 and (worker.broken or self._closed)
            if last:
                del self._load[worker]
        if last:
            worker.end()

    def close(self) -> None:
        """End every worker now, idle or busy (a PDF under way then fails)."""
        with self._lock:
            self._closed = True
            idle = [w for w, load in self._load.items() if load == 0]
            busy = [w for w, load in self._load.items() if load > 0]
            for worker in idle:
                del self._load[worker]
        # Forked ones first: the worker that forked them then reaps them as it ends.
        for worker in sorted(idle, key=lambda w: w.process is not None):
            worker.end(grace=REAP if worker.forked else 0.0)
        for worker in busy:
            # Killed only: the threads using its pipes see them close; the last of them ends
            # and reaps it (closing the pipes here would pull file descriptors from under them).
            worker.kill()


_shared: list[PdfReader] = []
"""The reader of :func:`shared_reader`'s block, while one is open."""


@contextlib.contextmanager
def shared_reader() -> Iterator[None]:
    """Within the block, :func:`pdf_pages` reads every PDF with one worker, started at the
    first PDF and ended with the block (an import reads its transcripts' PDFs so), instead of
    a worker started and ended for each PDF."""
    with PdfReader(1) as reader:
        _shared.append(reader)
        try:
            yield
        finally:
            _shared.remove(reader)


def pdf_pages(data: bytes, *, reader: PdfReader | None = None) -> tuple[str, ...]:
    """The text of each page of the PDF ``data`` (docs/guides/pdf.md), read in a worker
    process within the PDF limits; raises :class:`PdfError` with the code and the reason.
    For importers: ``reader`` when given, else the one of an open :func:`shared_reader`
    block, else a worker started for this PDF and ended after it."""
    if reader is None and _shared:
        reader = _shared[-1]
    if reader is not None:
        return reader.pages(data)
    with PdfReader(1) as own:
        return own.pages(data)


_early: ContextVar[PdfReader | None] = ContextVar("tracecite_early_pdf", default=None)
"""The PDF workers :func:`started_early` started for this context's run, until the run's
parse pool takes them (:func:`take_early`) or drops them (:func:`drop_early`)."""


@contextlib.contextmanager
def started_early(workers: int) -> Iterator[None]:
    """Within the block, ``workers`` PDF workers are started now, before the run has read its
    inputs (the ``tracecite verify-files`` command, whose sources are often PDFs: before even
    the command line's modules are imported): they load the engine while the run imports,
    reads and checks its traces. The run's parse pool takes them when its sources name PDFs;
    they are ended as soon as the run knows it needs none, else with the block."""
    reader = PdfReader(workers)
    reader.start()
    token = _early.set(reader)
    try:
        yield
    finally:
        _early.reset(token)
        reader.close()  # nothing left if the pool took and closed it


def take_early(workers: int) -> PdfReader | None:
    """The PDF workers started early for this run, if they are ``workers`` of them; the caller
    owns them then (and closes them)."""
    reader = _early.get()
    if reader is None or reader._count != workers:
        return None
    _early.set(None)
    return reader


def drop_early() -> None:
    """End the PDF workers started early for this run now: it reads no PDF, or it forks
    workers of its own next (which must not inherit their pipes)."""
    reader = _early.get()
    if reader is not None:
        _early.set(None)
        reader.close()
