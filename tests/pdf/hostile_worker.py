"""A PDF worker whose engine misbehaves as the first argument says, for the hostile-PDF tests:
``crash`` (a segmentation fault in native code), ``hang`` (spins without end), ``memory``
(allocates without end, until the worker's cap stops it). A PDF whose bytes hold ``benign``
is read by the real engine, so one worker serves good and hostile PDFs alike."""

from __future__ import annotations

import sys
from typing import Any


def _misbehave(how: str) -> None:
    if how == "crash":
        import ctypes

        ctypes.string_at(0)  # reads address 0: SIGSEGV
    elif how == "hang":
        while True:
            pass
    elif how == "memory":
        hoard = []
        while True:
            hoard.append(bytearray(64 * 1024 * 1024))


def main() -> int:
    from tracecite.pdf import text, worker

    how = sys.argv.pop(1)
    real = text._read  # what read_pages and find_quotes both read with

    def read(data: Any, max_pages: int, finder: Any) -> Any:
        if b"benign" not in bytes(data):  # the worker hands over a ctypes buffer
            _misbehave(how)
        return real(data, max_pages, finder)

    text._read = read  # type: ignore[assignment]
    return worker.main()


if __name__ == "__main__":
    raise SystemExit(main())
