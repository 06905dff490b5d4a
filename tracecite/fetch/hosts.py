"""Requests in flight per host name (SPEC §3 ``--per-host``).

Decisions the specification leaves open:

- At most ``per_host`` requests are in flight to one host name at once, each redirect hop
  counted on the host it goes to; a hop waits for a free slot within the source's deadline
  (TC313 if none frees up).
- Host names are counted apart even when they share an address, as browsers do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError


class HostSlots:
    """At most ``limit`` requests in flight per host name, shared by every thread that holds it.

    ``hold(host, deadline, timeout)`` waits for a free slot on ``host`` and keeps it while its
    block runs. Counts live only while a host has requests in flight, so a run over many hosts
    keeps no state for the hosts it is done with.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._busy: dict[str, int] = {}
        self._freed = threading.Condition()

    @contextmanager
    def hold(self, host: str, deadline: float, timeout: float) -> Iterator[None]:
        """A slot for one request to ``host``, waited for until ``deadline``.

        ``deadline`` is a ``time.monotonic()`` value; ``timeout`` is the seconds it stands for,
        named in the TC313 ``FetchError`` raised when no slot frees up before it.
        """
        with self._freed:
            while self._busy.get(host, 0) >= self._limit:
                left = deadline - time.monotonic()
                if left <= 0:
                    # The host may come from a Location header: it is not echoed.
                    raise FetchError(Code.TIMEOUT, f"no request slot for the host came free "
                                     f"within {timeout:g} s (at most {self._limit} at once)")
                self._freed.wait(left)
            self._busy[host] = self._busy.get(host, 0) + 1
        try:
            yield
        finally:
            with self._freed:
                busy = self._busy[host] - 1
                if busy:
                    self._busy[host] = busy
                else:
                    del self._busy[host]
                self._freed.notify_all()
