"""A PDF worker process (``python -m tracecite.pdf.worker MEMORY PARENT``): reads PDFs sent on its
standard input and answers each with its pages' text, under the memory cap it sets itself.

The run's process never loads the PDF engine: a PDF that crashes it, spins in it or makes it
allocate without end ends this process only (:class:`tracecite.pdf.reader.PdfReader` then
settles that source, TC323, and starts another worker). A request is a header (the PDF's size,
the page limit and the size of the quotes that follow it, :data:`REQUEST`), the PDF's bytes
and the pickled normalised quotes it is read for (none: every page); an answer is its size
(:data:`ANSWER`) and a pickled ``(status, value)``: ``("pages", (text, …))``,
``("found", pages read)`` when every quote is found, ``("unreadable", reason)`` or
``("missing", "")`` when the engine is not installed. The worker
ends when its standard input closes or its parent is gone.

Given ``FORKS`` (``python -m tracecite.pdf.worker MEMORY PARENT FORKS``), the worker forks a
worker of its own for each pipe triple it names, once the engine is loaded, so that the run
starts one interpreter for all its PDF workers (:data:`FORK_SPEC`). A forked worker serves the
two pipes given to it, starts its answers with its process id (:data:`PID`) and ends when its
lifeline (the third pipe, whose writing end only the run holds) closes: when the run ends it,
or the run is gone. It never depends on the worker that forked it, which may crash on a PDF
of its own; that worker reaps it when both have ended.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import struct
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO, cast

if TYPE_CHECKING:
    import ctypes

REQUEST = struct.Struct("<QII")
"""A request's header: the PDF's size in bytes, the page limit, the size in bytes of the pickled
quotes after the PDF (0: none)."""

ANSWER = struct.Struct("<Q")
"""An answer's header: the size of the pickled answer that follows."""

PID = struct.Struct("<Q")
"""What a forked worker writes first on its answers' pipe: its process id."""

FORK_SPEC = "fork="
"""How the worker's third argument starts: ``fork=R,W,L;R,W,L…``, for each worker to fork the
file descriptors it reads requests on, writes answers on, and watches as its lifeline."""

REAP = 1.0
"""Seconds a worker whose input closed waits for the workers it forked to end (they end with
their lifeline, which the run closes first), so their time is counted as its children's."""


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        piece = stream.read(size - len(data))
        if not piece:
            return None
        data += piece
    return bytes(data)


def _read_body(stream: io.BufferedReader, size: int) -> ctypes.Array[ctypes.c_char] | None:
    """A PDF's ``size`` bytes, read straight into the buffer the engine opens (no copy of a
    PDF of up to 32 MiB on its way in); None if the stream ends first."""
    import ctypes  # here: the run imports this module for its constants, never the engine

    body = (ctypes.c_char * size)()
    view = memoryview(body).cast("B")
    got = 0
    while got < size:
        read = stream.readinto(view[got:])
        if not read:
            return None
        got += read
    return body


def _cap_memory(limit: int) -> None:
    """Cap this process's address space: past it an allocation fails (MemoryError in Python,
    a failed allocation in the engine) instead of taking the machine's memory."""
    try:
        import resource
    except ImportError:  # not on every platform: the time budget still bounds the worker
        return
    if limit > 0:
        # A platform that does not take it (macOS may refuse): the time budget still holds.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def answer(data: bytes | ctypes.Array[ctypes.c_char], max_pages: int,
           quotes: list[str] | None = None) -> tuple[str, Any]:
    """What the worker answers for one PDF (see the module docstring); read for ``quotes``
    that are all found, ``("found", pages read)`` instead of its pages
    (:func:`tracecite.pdf.text.find_quotes`)."""
    from tracecite.pdf.text import PdfUnreadable, find_quotes, read_pages

    try:
        if quotes:
            read = find_quotes(data, max_pages, quotes)
            return ("found", read) if isinstance(read, int) else ("pages", read)
        return "pages", read_pages(data, max_pages)
    except PdfUnreadable as error:
        return "unreadable", str(error)
    except ImportError:
        return "missing", ""
    except MemoryError:
        return "unreadable", "reading the PDF needs more memory than the PDF worker's cap"
    except Exception as error:  # anything else the engine raises: this PDF's, named by kind
        return "unreadable", f"the PDF engine failed on it ({type(error).__name__})"


def fork_spec(pipes: list[tuple[int, int, int]]) -> str:
    """The third argument that has a worker fork one worker for each ``(requests, answers,
    lifeline)`` triple of file descriptors (passed to it open)."""
    return FORK_SPEC + ";".join(",".join(str(fd) for fd in triple) for triple in pipes)


def _parse_forks(arg: str) -> list[tuple[int, int, int]]:
    if not arg.startswith(FORK_SPEC) or arg == FORK_SPEC:
        return []
    triples = [tuple(int(fd) for fd in part.split(",")) for part in arg[len(FORK_SPEC):].split(";")]
    return [(t[0], t[1], t[2]) for t in triples if len(t) == 3]


def _fork(forks: list[tuple[int, int, int]]) -> tuple[int | None, list[int]]:
    """Fork a worker for each triple: in a forked worker, its lifeline (its own pipes now its
    standard input and output); here, None and the forked workers' ids. Every other
    descriptor passed is closed in each process."""
    passed = [fd for triple in forks for fd in triple]
    children: list[int] = []
    for requests, answers, lifeline in forks:
        try:
            pid = os.fork()
        except OSError:  # out of processes: the run sees this worker's pipes close
            continue
        if pid == 0:
            os.dup2(requests, 0)
            os.dup2(answers, 1)
            for fd in passed:
                if fd != lifeline:
                    os.close(fd)
            return lifeline, []
        children.append(pid)
    for fd in passed:
        os.close(fd)
    return None, children


def watch_lifeline(lifeline: int) -> None:
    """End this forked worker once its lifeline closes: the run closed it to end the worker,
    or the run is gone (only it held the writing end)."""
    import select

    poll = select.poll()
    poll.register(lifeline, select.POLLHUP | select.POLLERR)
    while True:
        with contextlib.suppress(InterruptedError):
            if poll.poll():
                break
    os._exit(1)


def _reap(children: list[int]) -> None:
    """Wait up to :data:`REAP` seconds for the workers this one forked to end."""
    import time

    deadline = time.monotonic() + REAP
    left = list(children)
    while left and time.monotonic() < deadline:
        for pid in list(left):
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == 0:
                    continue
            left.remove(pid)
        if left:
            time.sleep(0.001)


def main(argv: list[str] | None = None) -> int:
    """Serve requests until standard input closes."""
    from tracecite.stops import ignore_interrupts
    from tracecite.workers import watch_parent

    args = sys.argv[1:] if argv is None else argv
    ignore_interrupts()
    # The parent's id as it gave it: read here, the parent could already be gone.
    parent = int(args[1]) if len(args) > 1 else os.getppid()
    forks = _parse_forks(args[2]) if len(args) > 2 else []
    if not forks:  # watched from the start; a worker that forks, once it has (no thread then)
        threading.Thread(target=watch_parent, args=(parent,), daemon=True,
                         name="tracecite-watch-parent").start()
    _cap_memory(int(args[0]) if args else 0)
    # The engine is loaded now, while the run is still loading the first PDF, not once it came.
    with contextlib.suppress(ImportError):  # without it, each request answers "missing"
        from tracecite.pdf.engine import pdfium

        pdfium()
    lifeline, children = _fork(forks) if forks else (None, [])
    if lifeline is not None:
        threading.Thread(target=watch_lifeline, args=(lifeline,), daemon=True,
                         name="tracecite-watch-lifeline").start()
        sys.stdout.buffer.write(PID.pack(os.getpid()))
        sys.stdout.buffer.flush()
    elif forks:
        threading.Thread(target=watch_parent, args=(parent,), daemon=True,
                         name="tracecite-watch-parent").start()
    if not forks:
        return _serve()
    code = _serve()
    _reap(children)
    sys.stdout.flush()
    os._exit(code)  # at once: the run waits for this, and nothing is left to clean up


def _serve() -> int:
    requests = cast("io.BufferedReader", sys.stdin.buffer)  # a pipe's: a BufferedReader
    answers = sys.stdout.buffer
    while True:
        header = _read_exactly(requests, REQUEST.size)
        if header is None:
            return 0
        size, max_pages, quotes_size = REQUEST.unpack(header)
        data = _read_body(requests, size)
        pickled = _read_exactly(requests, quotes_size) if data is not None else None
        if data is None or pickled is None:
            return 0
        quotes: list[str] = pickle.loads(pickled) if pickled else []  # the run's own list
        reply = pickle.dumps(answer(data, max_pages, quotes), protocol=pickle.HIGHEST_PROTOCOL)
        del data
        answers.write(ANSWER.pack(len(reply)) + reply)
        answers.flush()


if __name__ == "__main__":
    raise SystemExit(main())
