"""Name lookups under a deadline (docs/web-over-time.md#politeness-under-pressure): ``getaddrinfo``
has no timeout of its own, so each lookup runs on a daemon thread of its own and the caller waits
only as long as its source may.

A lookup that outlives its source is abandoned, never joined: the thread ends whenever the
resolver answers, and the interpreter does not wait for it at exit. Names that never answer
cannot starve anyone else: there is no shared pool of threads for them to exhaust.
"""

from __future__ import annotations

import threading

from tracecite.codes import Code
from tracecite.fetch.address_policy import Resolver
from tracecite.fetch.errors import FetchError

__all__ = ["Lookups"]


class _Pending:
    """One lookup in flight: its answer (or error) once the resolver returns."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answers: list[str] = []
        self.error: BaseException | None = None


class Lookups:
    """Runs ``resolver(host, port)`` calls, each on a daemon thread, under the caller's deadline.

    Bounded: at most one thread per distinct ``(host, port)`` runs at a time. A name whose
    lookup is still pending is not looked up again; a later caller waits on the same pending
    lookup (within its own deadline) and shares its answer. So the threads stuck on names that
    never answer are at most the number of distinct names the run has asked for, however many
    sources cite them or how often; no thread outlives its resolver call.
    """

    def __init__(self, resolver: Resolver) -> None:
        self._resolver = resolver
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, int], _Pending] = {}

    def pending(self) -> int:
        """How many lookups are running now (for tests and diagnostics)."""
        with self._lock:
            return len(self._pending)

    def lookup(self, host: str, port: int, timeout: float, *, shown_timeout: float) -> list[str]:
        """The resolver's answers for ``host``, waiting at most ``timeout`` seconds; past it,
        :class:`FetchError` TC313 (``shown_timeout``: the deadline the message names). The
        resolver's own errors are raised here, in the caller's thread."""
        key = (host, port)
        with self._lock:
            pending = self._pending.get(key)
            if pending is None:
                pending = self._pending[key] = _Pending()
                threading.Thread(target=self._resolve, args=(key, pending), daemon=True,
                                 name=f"tracecite-lookup-{host[:40]}").start()
        if not pending.done.wait(max(0.0, timeout)):
            raise FetchError(Code.TIMEOUT, f"no answer for {host} within {shown_timeout:g} s")
        error = pending.error
        if isinstance(error, FetchError):  # a copy each (of its own class: a temporary
            raise error.copy() from None   # failure stays retryable): a caller may annotate it
        if error is not None:
            raise error
        return list(pending.answers)

    def _resolve(self, key: tuple[str, int], pending: _Pending) -> None:
        try:
            pending.answers = list(self._resolver(*key))
        except BaseException as error:  # handed to every caller waiting for this lookup
            pending.error = error
        finally:
            with self._lock:
                del self._pending[key]
            pending.done.set()

