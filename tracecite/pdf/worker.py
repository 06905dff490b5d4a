"""A PDF worker process (``python -m tracecite.pdf.worker MEMORY PARENT``): reads PDFs sent on its
standard input and answers each with its pages' text, under the memory cap it sets itself.

The run's process never loads the PDF engine: a PDF that crashes it, spins in it or makes it
allocate without end ends this process only (:class:`tracecite.pdf.reader.PdfReader` then
settles that source, TC323, and starts another worker). A request is a header (the PDF's size
and the page limit, :data:`REQUEST`) and the PDF's bytes; an answer is its size
(:data:`ANSWER`) and a pickled ``(status, value)``: ``("pages", (text, …))``,
``("unreadable", reason)`` or ``("missing", "")`` when the engine is not installed. The worker
ends when its standard input closes or its parent is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import pickle
import struct
import sys
import threading
from typing import Any, BinaryIO, cast

REQUEST = struct.Struct("<QI")
"""A request's header: the PDF's size in bytes, the page limit."""

ANSWER = struct.Struct("<Q")
"""An answer's header: the size of the pickled answer that follows."""


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


def answer(data: bytes | ctypes.Array[ctypes.c_char], max_pages: int) -> tuple[str, Any]:
    """What the worker answers for one PDF (see the module docstring)."""
    from tracecite.pdf.text import PdfUnreadable, read_pages

    try:
        return "pages", read_pages(data, max_pages)
    except PdfUnreadable as error:
        return "unreadable", str(error)
    except ImportError:
        return "missing", ""
    except MemoryError:
        return "unreadable", "reading the PDF needs more memory than the PDF worker's cap"
    except Exception as error:  # anything else the engine raises: this PDF's, named by kind
        return "unreadable", f"the PDF engine failed on it ({type(error).__name__})"


def main(argv: list[str] | None = None) -> int:
    """Serve requests until standard input closes."""
    from tracecite.stops import ignore_interrupts
    from tracecite.workers import watch_parent

    args = sys.argv[1:] if argv is None else argv
    ignore_interrupts()
    # The parent's id as it gave it: read here, the parent could already be gone.
    parent = int(args[1]) if len(args) > 1 else os.getppid()
    threading.Thread(target=watch_parent, args=(parent,), daemon=True,
                     name="tracecite-watch-parent").start()
    _cap_memory(int(args[0]) if args else 0)
    # The engine is loaded now, while the run is still loading the first PDF, not once it came.
    with contextlib.suppress(ImportError):  # without it, each request answers "missing"
        import pypdfium2  # type: ignore[import-untyped]  # noqa: F401  # no types shipped
    requests = cast("io.BufferedReader", sys.stdin.buffer)  # a pipe's: a BufferedReader
    answers = sys.stdout.buffer
    while True:
        header = _read_exactly(requests, REQUEST.size)
        if header is None:
            return 0
        size, max_pages = REQUEST.unpack(header)
        data = _read_body(requests, size)
        if data is None:
            return 0
        reply = pickle.dumps(answer(data, max_pages), protocol=pickle.HIGHEST_PROTOCOL)
        del data
        answers.write(ANSWER.pack(len(reply)) + reply)
        answers.flush()


if __name__ == "__main__":
    raise SystemExit(main())
