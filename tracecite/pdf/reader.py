"""PDF worker processes for one run, each PDF read within the PDF limits
(docs/guides/pdf.md#limits): :data:`PARSE_BUDGET` seconds, :data:`MAX_PAGES` pages and
:data:`MEMORY_CAP` bytes of address space per worker.

A worker is a process of its own (:mod:`tracecite.pdf.worker`), started with ``subprocess``
(safe while the run's loader threads hold locks) when a PDF first needs one, and kept for the
next PDF. A worker that crashes, passes the budget or runs out of memory costs the PDF it was
reading (:class:`PdfError`, TC323) and is replaced: never the run, never another PDF.
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
from collections.abc import Iterator
from typing import Any

from tracecite.codes import Code
from tracecite.pdf.worker import ANSWER, REQUEST

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
    from importlib.util import find_spec

    try:
        return find_spec("pypdfium2") is not None
    except (ImportError, ValueError):  # ValueError: a module hidden in sys.modules
        return False


def worker_command() -> list[str]:
    """The command line of a PDF worker: this interpreter, running :mod:`tracecite.pdf.worker`."""
    return [sys.executable, "-m", "tracecite.pdf.worker"]


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, command: list[str], memory: int) -> None:
        import tracecite

        env = dict(os.environ)
        # The worker imports this very package, wherever it was imported from.
        here = os.path.dirname(os.path.dirname(os.path.abspath(tracecite.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        # The worker watches this process by its id (docs/design/concurrency.md).
        self.process = subprocess.Popen(
            [*command, str(memory), str(os.getpid())], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, close_fds=True,
            env=env)

    def ask(self, data: bytes, max_pages: int, budget: float) -> tuple[str, Any]:
        """Send one PDF and wait for its answer, at most ``budget`` seconds after it was sent;
        raises :class:`PdfError` when the worker dies or the budget passes."""
        assert self.process.stdin is not None and self.process.stdout is not None
        request = self.process.stdin.fileno()
        try:
            _write_all(request, REQUEST.pack(len(data), max_pages))
            _write_all(request, data)
        except OSError:  # BrokenPipeError: the worker is gone
            raise _stopped() from None
        deadline = time.monotonic() + budget
        answers = self.process.stdout.fileno()
        header = _read_exactly(answers, ANSWER.size, deadline)
        (size,) = ANSWER.unpack(header)
        try:
            answer: tuple[str, Any] = pickle.loads(_read_exactly(answers, size, deadline))
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError):  # a garbled answer
            raise _stopped() from None
        return answer

    def end(self) -> None:
        """Kill the process and reap it."""
        with contextlib.suppress(OSError):  # already reaped
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def _stopped() -> PdfError:
    return PdfError(Code.PDF_UNREADABLE,
                    "the PDF engine stopped while reading it (a crash, or over its memory cap)")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:_CHUNK]):]


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
    bytes. ``command``: the worker's command line (:func:`worker_command`)."""

    def __init__(self, workers: int = 1, *, budget: float = PARSE_BUDGET,
                 max_pages: int = MAX_PAGES, memory: int = MEMORY_CAP,
                 command: list[str] | None = None) -> None:
        self._budget = budget
        self._max_pages = max_pages
        self._memory = memory
        self._command = command if command is not None else worker_command()
        self._slots = threading.BoundedSemaphore(max(1, workers))
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False

    def __enter__(self) -> PdfReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pages(self, data: bytes) -> tuple[str, ...]:
        """The text of each page of the PDF ``data``, with the PDF rules applied
        (:func:`tracecite.pdf.text.page_text`); raises :class:`PdfError`."""
        from tracecite.pdf.text import page_text

        return tuple(page_text(page) for page in self.raw_pages(data))

    def raw_pages(self, data: bytes) -> tuple[str, ...]:
        """The text of each page of the PDF ``data`` as the engine gives it, before the PDF
        rules; raises :class:`PdfError`."""
        if not engine_installed():
            raise PdfError(Code.PDF_ENGINE_MISSING, ENGINE_MISSING)
        with self._slots:
            worker = self._take()
            try:
                status, value = worker.ask(data, self._max_pages, self._budget)
            except _Late:
                self._discard(worker)
                raise PdfError(Code.PDF_UNREADABLE,
                               f"reading the PDF took over {self._budget:g} s") from None
            except BaseException:
                self._discard(worker)
                raise
            self._give_back(worker)
        if status == "pages":
            return tuple(value)
        if status == "missing":
            raise PdfError(Code.PDF_ENGINE_MISSING, ENGINE_MISSING)
        raise PdfError(Code.PDF_UNREADABLE, str(value))

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise RuntimeError("the PDF reader is closed")
            worker = self._idle.pop() if self._idle else None
            if worker is None:
                try:
                    worker = _Worker(self._command, self._memory)
                except OSError as error:  # out of processes, file descriptors or memory
                    raise PdfError(Code.PDF_UNREADABLE, "a PDF worker could not start "
                                   f"({error.strerror or type(error).__name__})") from None
            self._busy.add(worker)
            return worker

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            if not self._closed:
                self._idle.append(worker)
                return
        worker.end()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
        worker.end()

    def close(self) -> None:
        """End every worker now, idle or busy (a PDF under way then fails)."""
        with self._lock:
            self._closed = True
            idle, busy = [*self._idle], [*self._busy]
            self._idle.clear()
        for worker in idle:
            worker.end()
        for worker in busy:
            # Killed only: the thread reading its answer sees the pipe close, then ends and
            # reaps it itself (closing the pipes here would pull its file descriptors from
            # under that read).
            with contextlib.suppress(OSError):
                worker.process.kill()


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
