"""Request slots per host name: at most N requests in flight to one host at once
(docs/reference/fetching.md).

One :class:`HostSlots` is shared by everything that sends requests for a run: the fetcher holds
a slot for each request it sends (each redirect hop on the host it goes to), and the live runner
claims the slot of a source's first request before handing the source to a loader thread, so
that no thread of its own ever waits on a busy host while another host's source waits. Host
names are counted apart even when they share an address, as browsers do.

A host that answers 429 or 503 is put in back-off (docs/web-over-time.md#politeness-under-pressure):
no request to it starts before its ``Retry-After`` has passed (:meth:`HostSlots.back_off`), and its
limit drops to 1; each 2xx from it doubles the limit again (:meth:`HostSlots.succeeded`), up to the
run's. A ``Retry-After`` longer than the run waits for (``max_back_off``), or none, backs off for
:data:`DEFAULT_BACK_OFF`: the sources that asked fail or retry on their own, and the host's other
sources go on one at a time instead of all waiting for a wait nobody keeps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.limits import DEFAULT_MAX_RETRY_WAIT

DEFAULT_BACK_OFF = 1.0
"""Seconds a host backs off after a 429 or 503 without a ``Retry-After`` it can keep."""


class HostSlots:
    """At most ``limit`` requests in flight per host name, across every thread that shares it.

    Counts live only while a host has requests in flight, and back-off only for hosts that
    asked for it, so a run over many hosts keeps no state for the hosts it is done with.
    ``max_back_off``: the longest ``Retry-After`` a host is backed off for; ``clock`` (a
    ``time.monotonic``) is for tests.
    """

    def __init__(self, limit: int, *, max_back_off: float = DEFAULT_MAX_RETRY_WAIT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._max_back_off = max_back_off
        self._clock = clock
        self._busy: dict[str, int] = {}
        self._limits: dict[str, int] = {}  # hosts whose limit dropped after a 429 or 503
        self._until: dict[str, float] = {}  # hosts in back-off: when it ends
        self._changed = threading.Condition()
        self._changes = 0  # grows with every slot freed, back-off ended, and wake()

    @property
    def limit(self) -> int:
        """Requests in flight to one host at most."""
        return self._limit

    def in_flight(self, host: str) -> int:
        """How many slots of ``host`` are taken now."""
        with self._changed:
            return self._busy.get(host, 0)

    @contextmanager
    def hold(self, host: str, deadline: float | None = None, timeout: float = 0.0,
             ) -> Iterator[None]:
        """A slot for one request to ``host``, waited for as long as it takes (a host in
        back-off or at its limit delays a request, never fails it:
        docs/web-over-time.md#retries), or until ``deadline`` (a ``time.monotonic()`` value)
        when one is given: TC313 if none frees by then (``timeout`` is the time the deadline
        allowed, for the message)."""
        with self._changed:
            while not self._room(host):
                now = self._clock()
                end = self._until.get(host)  # a back-off ending wakes the wait too
                if deadline is not None:
                    left = deadline - now
                    if left <= 0:
                        # The host may come from a Location header: not echoed.
                        raise FetchError(Code.TIMEOUT, self._no_slot(host, timeout))
                    end = deadline if end is None else min(end, deadline)
                self._changed.wait(None if end is None else max(0.0, end - now))
            self._busy[host] = self._busy.get(host, 0) + 1
        with self.claimed(host):
            yield

    def claim(self, host: str) -> bool:
        """Take a slot for one request to ``host`` if one is free now (never waits); whoever
        gets it frees it with :meth:`release` or :meth:`claimed`."""
        with self._changed:
            if not self._room(host):
                return False
            self._busy[host] = self._busy.get(host, 0) + 1
            return True

    def back_off(self, host: str, retry_after: float | None) -> None:
        """``host`` answered 429 or 503, asking to wait ``retry_after`` seconds (None: it did
        not say): no request to it starts before then, and one at a time afterwards."""
        if retry_after is None or retry_after > self._max_back_off:
            retry_after = DEFAULT_BACK_OFF
        with self._changed:
            end = self._clock() + max(0.0, retry_after)
            self._until[host] = max(end, self._until.get(host, end))
            self._limits[host] = 1

    def succeeded(self, host: str) -> None:
        """``host`` answered 2xx: a limit that dropped in back-off doubles, up to the run's."""
        with self._changed:
            limit = self._limits.get(host)
            if limit is None:
                return
            if limit * 2 >= self._limit:
                del self._limits[host]
            else:
                self._limits[host] = limit * 2
            self._changes += 1
            self._changed.notify_all()

    def limit_of(self, host: str) -> int:
        """Requests in flight to ``host`` at most now (below :attr:`limit` after a back-off)."""
        with self._changed:
            return self._limits.get(host, self._limit)

    def backing_off(self, host: str) -> bool:
        """Whether ``host`` is in back-off now: no request to it may start."""
        with self._changed:
            return not self._back_off_over(host)

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
            ends = [end for host, end in list(self._until.items()) if not self._back_off_over(host)]
            if ends:  # a back-off ending is a change too: wake for it
                left = min(ends) - self._clock()
                timeout = left if timeout is None else min(timeout, left)
            self._changed.wait_for(lambda: self._changes != seen, timeout)

    def wake(self) -> None:
        """Wake every thread in :meth:`wait` (for instance, there is nothing left to claim)."""
        with self._changed:
            self._changes += 1
            self._changed.notify_all()

    # -- under the lock -----------------------------------------------------------------------

    def _back_off_over(self, host: str) -> bool:
        """Whether ``host`` is out of back-off; a back-off that just ended counts as a change."""
        end = self._until.get(host)
        if end is None:
            return True
        if self._clock() < end:
            return False
        del self._until[host]
        self._changes += 1
        self._changed.notify_all()
        return True

    def _room(self, host: str) -> bool:
        """Whether a request to ``host`` may start now."""
        return (self._back_off_over(host)
                and self._busy.get(host, 0) < self._limits.get(host, self._limit))

    def _no_slot(self, host: str, timeout: float) -> str:
        if not self._back_off_over(host):
            return (f"the host asked to slow down (HTTP 429 or 503) and its back-off outlasted "
                    f"the deadline of {timeout:g} s")
        return (f"no request slot for the host came free within {timeout:g} s (at most "
                f"{self._limits.get(host, self._limit)} at once)")
