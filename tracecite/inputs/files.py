"""Opening input files, with TC101/TC102 findings instead of exceptions."""

from __future__ import annotations

import codecs
import hashlib
import os
import stat
import threading
from collections.abc import Callable
from os import fdopen
from os import open as os_open
from typing import BinaryIO

from tracecite.codes import Code
from tracecite.findings import Finding


def open_input(path: str, *, buffering: int = -1) -> BinaryIO | Finding:
    """Open ``path`` for binary reading (``buffering``: the read buffer's size in bytes, as
    :func:`open` takes it), or say why it cannot be (TC101).

    Only regular files: a FIFO would block, a device could be read for ever. The file is opened
    without waiting (``O_NONBLOCK``) and then examined, so nothing swapped in between a check
    and the open can block the run.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os_open(path, flags)
    except FileNotFoundError:
        return Finding(Code.INPUT_UNREADABLE, "input file does not exist" + _pattern_hint(path),
                       file=path)
    except UnicodeEncodeError:  # a lone surrogate from a Python string, not a file system's
        return Finding(Code.INPUT_UNREADABLE, "the file name holds a lone surrogate, which is "
                       "not text: no file has that name", file=path)
    except ValueError:  # a NUL, which no command line can pass: a caller's string
        return Finding(Code.INPUT_UNREADABLE, "the file name holds a NUL character: no file "
                       "has that name", file=path)
    except OSError as exc:
        if os.path.isdir(path):  # where directories cannot be opened at all (Windows)
            return Finding(Code.INPUT_UNREADABLE, "input is a directory", file=path)
        return unreadable(path, exc)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        return Finding(Code.INPUT_UNREADABLE, f"input is {what}", file=path)
    return fdopen(fd, "rb", buffering=buffering)  # the caller closes it


def _pattern_hint(path: str) -> str:
    """For a missing file whose name holds ``*``, ``?`` or ``[``: most likely a pattern the
    shell left as it was."""
    if any(char in path for char in "*?["):
        return "; the shell did not expand it: no file matches, or it was quoted"
    return ""


def read_text(path: str) -> str | Finding:
    """The whole file as text (UTF-8, a leading BOM kept for the parser), or a TC101/TC102
    finding."""
    opened = open_input(path)
    if isinstance(opened, Finding):
        return opened
    try:
        with opened:
            data = opened.read()
    except OSError as exc:
        return unreadable(path, exc)
    return decode_utf8(data, path)


def decode_utf8(data: bytes, path: str) -> str | Finding:
    """Decode UTF-8, or locate the first bad byte as TC102. A leading BOM stays in the text
    (the parser drops it: one place, so a second BOM is content) and is not counted.

    The column counts characters (code points), like every other column TraceCite reports.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = 1 + data.count(b"\n", 0, exc.start)
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        # Everything before the first bad byte decodes.
        before = data[line_start:exc.start]
        if line_start == 0:
            before = before.removeprefix(codecs.BOM_UTF8)
        column = len(before.decode("utf-8")) + 1
        return Finding(
            Code.INPUT_NOT_UTF8,
            "input is not valid UTF-8",
            file=path,
            line=line,
            column=column,
        )


def unreadable(path: str, exc: OSError) -> Finding:
    """TC101 for the input at ``path``, which the OS would not let be read."""
    return Finding(Code.INPUT_UNREADABLE, unreadable_message(exc), file=path)


def unreadable_message(exc: OSError) -> str:
    """What TC101 says of an input the OS would not let be read."""
    return f"input cannot be read ({os_reason(exc)})"


def os_reason(exc: OSError) -> str:
    """A short, stable reason for an OS error (no path, which the finding already has)."""
    return exc.strerror or type(exc).__name__


_UNREADABLE = hashlib.sha256(b"unreadable").hexdigest()
""":func:`file_digest` of a file that cannot be read, or is no regular file."""


def file_digest(path: str) -> str:
    """SHA-256 (hex) of the regular file at ``path``, read a block at a time (never held
    whole); that of the word ``unreadable`` when it cannot be read or is not a regular file (a
    device or a FIFO is never read: the run reports it as TC101)."""
    sha = hashlib.sha256()
    try:
        # Non-blocking: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):  # ValueError: a name no file can have (a NUL, a surrogate)
        return _UNREADABLE
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):  # a directory is never handed to a file object
            return _UNREADABLE
        buffer = bytearray(max(_SMALLEST_BLOCK, min(status.st_size, DIGEST_BLOCK)))
        view = memoryview(buffer)
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as stream:
            while size := stream.readinto(buffer):
                sha.update(view[:size])
    except OSError:
        return _UNREADABLE
    finally:
        os.close(fd)
    return sha.hexdigest()


DIGEST_BLOCK = 4 * 1024 * 1024
"""Bytes read at a time by :func:`file_digest`, into one buffer. Hashed on a thread beside the
run's reading, each read and each update wait for the GIL when they return, while the reading
holds it: with 1 MiB at a time a 150 MB trace's digest waited so often that it ended after
the reading (about 0.4 s, for 0.1 s of hashing), and the run waited for it."""

_SMALLEST_BLOCK = 64 * 1024


DIGEST_ALONGSIDE_BYTES = 4 * 1024 * 1024
"""From this size on, :func:`digest_alongside` hashes a file on a thread of its own."""


def digest_alongside(path: str) -> Callable[[], str]:
    """The :func:`file_digest` of ``path``, begun now and had from the function returned.

    A run's digest of its inputs (docs/reference/reports.md#the-run) was a second pass over
    every file after the checks, in the main process: a file of :data:`DIGEST_ALONGSIDE_BYTES`
    or more is hashed on a thread of its own instead, while the caller reads it (the reads and
    SHA-256 release the GIL, so the hashing takes another core, and the file is in the page
    cache for both). Ask for the result before anything forks: the thread ends with it.
    """
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError):
        size = 0
    if size < DIGEST_ALONGSIDE_BYTES:
        return lambda: file_digest(path)
    found: list[str] = []
    thread = threading.Thread(target=lambda: found.append(file_digest(path)),
                              name="tracecite-digest", daemon=True)
    thread.start()

    def result() -> str:
        thread.join()
        return found[0] if found else file_digest(path)  # the thread failed: say it here

    return result
