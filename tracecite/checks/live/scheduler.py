"""Which source a loader thread takes next: in the order cited, but never one whose host is
busy while another host's source waits (docs/web-over-time.md#politeness-under-pressure).

The per-host limit and back-off themselves are :class:`~tracecite.fetch.hosts.HostSlots`'
(shared with the fetcher); this module only claims a slot for a source's first request and
waits for one to free. Internal to the live run: the run's loader threads
(:mod:`tracecite.checks.live.loaders`) are its only users.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence

from tracecite.fetch.hosts import HostSlots
from tracecite.stops import StopToken


class _Sources:
    """Hands sources to loader threads in order, preferring those whose host has room: a
    thread whose next source's host is busy takes the first one whose host is not, and waits
    only while every host left is busy.

    The slots are the loader's (``None``: nothing is limited per host, and neither are sources
    without a host): a source is handed out with its first request's slot claimed, and the load
    frees it. Nothing is counted here. ``stop``: the run's stop token; once it is set (or
    :meth:`close` is called) nothing more is handed out.
    """

    def __init__(self, sources: Sequence[tuple[str, str | None]], slots: HostSlots | None,
                 stop: StopToken | None = None) -> None:
        self._slots = slots
        # Hosts in the order first cited (None: not limited), each with its sources in order.
        self._waiting: dict[str | None, deque[str]] = {}
        for k, host in sources:
            self._waiting.setdefault(host if slots is not None else None, deque()).append(k)
        self._lock = threading.Lock()
        self._stop = stop if stop is not None else StopToken()
        if slots is not None:  # a thread waiting for a slot looks at the token again
            self._stop.on_stop(slots.wake)

    def useful_threads(self) -> int:
        """How many loads can ever run at once: beyond that, a thread would only wait."""
        limit = self._slots.limit if self._slots is not None else 0  # read for hosts only
        return sum(len(keys) if host is None else min(len(keys), limit)
                   for host, keys in self._waiting.items())

    def waiting(self) -> bool:
        """Whether sources are left to hand out."""
        with self._lock:
            return bool(self._waiting) and not self._stop.is_set()

    def close(self) -> None:
        """Hand nothing more out (sets the stop token); every ``take`` returns None."""
        self._stop.stop()

    def take(self) -> tuple[str, bool] | None:
        """The next source to load and whether its first request's slot is claimed (waiting
        while every host left is busy), or None when there is none or the run is stopping."""
        while True:
            with self._lock:
                if self._stop.is_set() or not self._waiting:
                    return None
                slots = self._slots
                seen = slots.changes if slots is not None else 0  # before any claim: none missed
                for host, keys in self._waiting.items():
                    if host is None or (slots is not None and slots.claim(host)):
                        k = keys.popleft()
                        if not keys:
                            del self._waiting[host]
                        return k, host is not None
            if slots is not None:  # else every source was handed out above
                slots.wait(seen)
