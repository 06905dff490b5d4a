"""The bytes of PDF bodies a run may hold at once while they load (docs/guides/pdf.md#limits).

A page's text is bounded by the run's loader threads times ``--max-bytes``; a PDF may be raised to
32 MiB (``--max-pdf-bytes``), and dozens of loads of such PDFs at once would hold a gigabyte. So a
PDF's load reserves its size (its ``Content-Length``, or the whole cap when that is unknown or
the body is compressed) from one :class:`ByteBudget` of :data:`PDF_LOADING` bytes before its
body is read, and gives it back once the run's parse pool has the body (which keeps at most its
own 64 MiB of bodies in memory, the rest on disk). A reservation is all or nothing, made
before a single byte is read, and a load that holds one never waits for another: no two loads
can wait on each other.
"""

from __future__ import annotations

import threading

PDF_LOADING = 64 * 1024 * 1024
"""Bytes of PDF bodies being loaded at once, at most (one body of any size always may)."""


class Held:
    """Bytes reserved from a :class:`ByteBudget`: given back once, by :meth:`release`, or when
    the reservation is dropped unreleased (a caller that never hands the body over cannot keep
    the budget for ever)."""

    def __init__(self, budget: ByteBudget, size: int) -> None:
        self._budget: ByteBudget | None = budget
        self.size = size

    def release(self) -> None:
        """Give the bytes back; once (later calls do nothing)."""
        budget, self._budget = self._budget, None
        if budget is not None:
            budget._give_back(self.size)

    def __del__(self) -> None:
        self.release()


class ByteBudget:
    """At most ``total`` bytes reserved at once, across threads; a reservation larger than the
    whole budget is granted when nothing else is held."""

    def __init__(self, total: int = PDF_LOADING) -> None:
        self.total = total
        self._used = 0
        # Reentrant: a reservation dropped by the garbage collector gives its bytes back in
        # whatever thread collects it, which may be inside reserve() here.
        self._changed = threading.Condition(threading.RLock())

    @property
    def used(self) -> int:
        """Bytes reserved now."""
        with self._changed:
            return self._used

    def reserve(self, size: int) -> Held:
        """Reserve ``size`` bytes, waiting until they fit."""
        size = max(0, size)
        with self._changed:
            while self._used and self._used + size > self.total:
                self._changed.wait()
            self._used += size
        return Held(self, size)

    def _give_back(self, size: int) -> None:
        with self._changed:
            self._used -= size
            self._changed.notify_all()
