"""Request slots per host name: at most N requests in flight to one host at once (SPEC §4).

One :class:`HostSlots` is shared by everything that sends requests for a run: the fetcher holds
a slot for each request it sends (each redirect hop on the host it goes to), and the live runner
claims the slot of a source's first request before handing the source to a loader thread, so
that no thread of its own ever waits on a busy host while another host's source waits. Host
names are counted apart even when they share an address, as browsers do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError


class HostSlots:
    """At most ``limit`` requests in flight per host name, across every thread that shares it.

    Counts live only while a host has requests in flight, so a run over many hosts keeps no
    state for the hosts it is done with.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._busy: dict[str, int] = {}
        self._changed = threading.Condition()
        self._changes = 0  # grows with every slot freed, and with every wake()

    @property
    def limit(self) -> int:
        """Requests in flight to one host at most."""
        return self._limit

    def in_flight(self, host: str) -> int:
        """How many slots of ``host`` are taken now."""
        with self._changed:
            return self._busy.get(host, 0)

    @contextmanager
    def hold(self, host: str, deadline: float, timeout: float) -> Iterator[None]:
        """A slot for one request to ``host``, waited for until ``deadline`` (a
        ``time.monotonic()`` value): TC313 if none frees by then (``timeout`` is the time the
        deadline allowed, for the message)."""
        with self._changed:
            while self._busy.get(host, 0) >= self._limit:
                left = deadline - time.monotonic()
                if left <= 0:
                    # The host may come from a Location header: not echoed.
                    raise FetchError(Code.TIMEOUT, f"no request slot for the host came free "
                                     f"within {timeout:g} s (at most {self._limit} at once)")
                self._changed.wait(left)
            self._busy[host] = self._busy.get(host, 0) + 1
        with self.claimed(host):
            yield

    def claim(self, host: str) -> bool:
        """Take a slot for one request to ``host`` if one is free now (never waits); whoever
        gets it frees it with :meth:`release` or :meth:`claimed`."""
        with self._changed:
            busy = self._busy.get(host, 0)
            if busy >= self._limit:
                return False
            self._busy[host] = busy + 1
            return True

    def release(self, host: str) -> None:
        """Free a slot of ``host`` taken by :meth:`claim`."""
        with self._changed:
            busy = self._busy[host] - 1
            if busy:
                self._busy[host] = busy
            else:
                del self._busy[host]
            self._changes += 1
            self._changed.notify_all()

    @contextmanager
    def claimed(self, host: str) -> Iterator[None]:
        """The slot of ``host`` that was claimed before, freed on leaving however that happens."""
        try:
            yield
        finally:
            self.release(host)

    @property
    def changes(self) -> int:
        """A number that grows each time a slot frees (or :meth:`wake` is called): read it
        before trying to :meth:`claim`, and :meth:`wait` with it when nothing could be."""
        with self._changed:
            return self._changes

    def wait(self, seen: int, timeout: float | None = None) -> None:
        """Until :attr:`changes` is past ``seen``, or ``timeout`` seconds have passed."""
        with self._changed:
            self._changed.wait_for(lambda: self._changes != seen, timeout)

    def wake(self) -> None:
        """Wake every thread in :meth:`wait` (for instance, there is nothing left to claim)."""
        with self._changed:
            self._changes += 1
            self._changed.notify_all()
