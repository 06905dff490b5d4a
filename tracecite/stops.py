"""Stopping a run on SIGINT or SIGTERM (docs/reference/commands.md): the signal becomes an exception
in the main thread, each layer ends what it started (loader threads abandoned, parse workers
terminated), and the report of what finished is still written, with exit code 128 + the signal's
number.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a run."""


class Stopped(KeyboardInterrupt):
    """The run was stopped by ``signum``. A :class:`KeyboardInterrupt`, so code that lets
    Ctrl-C through lets this through too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def signal_of(stop: KeyboardInterrupt) -> int:
    """The signal a stop came from: a plain KeyboardInterrupt is SIGINT."""
    return stop.signum if isinstance(stop, Stopped) else int(signal.SIGINT)


def signal_name(signum: int) -> str:
    """``SIGINT``, ``SIGTERM``, … (the number for one Python does not know)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class StopSignals:
    """While entered (in the main thread; elsewhere it does nothing), SIGINT and SIGTERM raise
    :class:`Stopped` in the main thread, once: a second signal while the run is stopping is
    only recorded, so the stop itself is never interrupted. After :meth:`hold`, signals are only
    recorded (the report is being written). :attr:`signum` is the first signal received.

    The scope of one run of the command line: entered first, beside
    :func:`tracecite.workers.one_run`, before the run starts any thread.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._raising = True
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def hold(self) -> None:
        """From now on a signal is only recorded, never raised."""
        self._raising = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            return
        self.signum = signum
        if self._raising:
            raise Stopped(signum)


class StopToken:
    """The one stop of a run's threads (docs/design/concurrency.md#how-a-stop-reaches-each):
    set once, by the layer that turned a stop signal into a value or ended on a bug; every loop
    that runs on a thread of the run polls it (:meth:`is_set`) between two pieces of work.
    ``signum``: the signal it was set for (None: set because the work ended otherwise)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._wakers: list[Callable[[], None]] = []
        self.signum: int | None = None

    def stop(self, signum: int | None = None) -> None:
        """Set the token (the first call only counts) and wake whoever waits elsewhere (see
        :meth:`on_stop`)."""
        with self._lock:
            if self._event.is_set():
                return
            self.signum = signum
            self._event.set()
            wakers, self._wakers = self._wakers, []
        for wake in wakers:
            wake()

    def is_set(self) -> bool:
        """Whether the run is stopping: nothing new is to start."""
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait at most ``timeout`` seconds for the token; whether it is set."""
        return self._event.wait(timeout)

    def on_stop(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` once the token is set (now, if it is): for a thread that waits on
        something else than the token, such as a free slot of a host."""
        with self._lock:
            if not self._event.is_set():
                self._wakers.append(wake)
                return
        wake()


def ignore_interrupts() -> None:
    """In a worker process: Ctrl-C (sent to the whole process group) is for the parent to
    handle, and the parent ends the worker; SIGTERM ends the worker at once (a forked worker
    would otherwise inherit the parent's handler and raise in the middle of a parse)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # held by the parent while it forked us
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Hold SIGINT and SIGTERM in this thread while the block runs (processes forked in it
    start with them held); one that came meanwhile is delivered at the end."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
