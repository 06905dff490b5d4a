"""Stopping a run on SIGINT or SIGTERM (docs/reference/commands.md): the signal becomes an exception
in the main thread, each layer ends what it started (loader threads abandoned, parse workers
terminated), and the report of what finished is still written, with exit code 128 + the signal's
number.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any, TextIO

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
    :func:`tracecite.workers.one_run`, before the run starts any thread. Signals the entry point
    held since its first line (``tracecite/__main__.py``) stay held until :meth:`listen`, called
    where a stop can be handled; on exit the handlers and the signal mask are put back as they
    were, so the entry point holds them again to the process's end.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._raising = True
        self._previous: dict[int, Any] = {}
        self._mask: set[int] | None = None
        self._deferred: int | None = None
        self._hook: Callable[[Any], object] = sys.unraisablehook

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
            _listening.append(self)
            self._hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
        return self

    def _unraisable(self, unraisable: Any) -> None:
        """A :class:`Stopped` raised where Python ignores exceptions (a weakref callback, a
        ``__del__``) would be lost, and printed: the signal is sent again instead, and raised
        at the next place that can take it."""
        if isinstance(unraisable.exc_value, Stopped) and self.signum is not None:
            signum, self.signum = self.signum, None
            _send_again(signum)
            return
        self._hook(unraisable)

    def listen(self) -> None:
        """Let the stop signals in (one held meanwhile is taken now, and raises here): call it
        first in the block that handles :class:`Stopped`."""
        if self._previous and hasattr(signal, "pthread_sigmask") and self._mask is None:
            self._mask = set(signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS))

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._mask is not None:
            # Held again first: a signal from now on waits for the entry point (see above).
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
            self._mask = None
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        if self._previous:
            _listening.remove(self)
            sys.unraisablehook = self._hook
        self._previous.clear()

    def hold(self) -> None:
        """From now on a signal is only recorded, never raised."""
        self._raising = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if _in_unraisable_hook(frame):
            _send_again(signum)  # what the hook raises is lost: raised past it instead
            return
        if self.signum is not None:
            return
        if _deferring[0]:
            self._deferred = signum  # raised once the block ends (see signals_deferred)
            return
        self.signum = signum
        if self._raising:
            raise Stopped(signum)

    def _take_deferred(self) -> None:
        signum, self._deferred = self._deferred, None
        if signum is not None:
            self._handle(signum, None)


_UNRAISABLE_HOOK = StopSignals._unraisable.__code__
"""The code of the hook a stop must never be raised in (what it raises is lost)."""

RESEND_DELAY = 0.002
"""Seconds after which a stop caught where it could not be raised is sent again: the hook that
caught it returns within microseconds."""


def _in_unraisable_hook(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside :meth:`StopSignals._unraisable` (the handler is called at
    Python's next check, which may come before the hook has returned)."""
    while frame is not None:
        if frame.f_code is _UNRAISABLE_HOOK:
            return True
        frame = frame.f_back
    return False


def _send_again(signum: int) -> None:
    """Send ``signum`` to the main thread again, past the hook: at once while the main thread
    holds it (it waits there until let in), else from a thread a moment later (raised at
    once, the handler could run before the hook returns, and what it raised would be lost)."""
    if signum in signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        signal.raise_signal(signum)
        return
    main = threading.main_thread().ident

    def later() -> None:
        time.sleep(RESEND_DELAY)
        if main is not None:
            signal.pthread_kill(main, signum)

    try:
        threading.Thread(target=later, name="tracecite-stop-again", daemon=True).start()
    except RuntimeError:  # no new thread at the interpreter's shutdown
        signal.raise_signal(signum)

_listening: list[StopSignals] = []
"""The :class:`StopSignals` entered, innermost last (main thread only)."""

_deferring = [0]
"""How deep the main thread is in :func:`signals_deferred` blocks."""


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """On the main thread, a stop signal that comes while the block runs is raised as it ends,
    never inside it: for what must not be cut half way from Python, such as importing a C
    extension whose initialisation crashes the process when an import inside it is interrupted
    (orjson's does). Elsewhere (no handler raises there) the block just runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _deferring[0] += 1
    try:
        yield
    finally:
        _deferring[0] -= 1
        if not _deferring[0] and _listening:
            _listening[-1]._take_deferred()


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


def signal_held() -> int | None:
    """A stop signal that came while held and is still waiting (see :func:`signals_blocked`),
    without taking it; None if there is none or this platform holds none."""
    if not hasattr(signal, "sigpending"):
        return None
    pending = signal.sigpending()
    return next((int(s) for s in STOP_SIGNALS if s in pending), None)


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


def write_whole(path: str, text: str | Callable[[TextIO], None]) -> None:
    """Write ``text`` (or what it writes to the stream it is given, for a report written a piece
    at a time) to the file at ``path`` whole or not at all (docs/reference/commands.md):
    to a hidden temporary file beside it, renamed over it once written; the temporary file is
    removed on every way out (an error, a stop). A stop signal that comes meanwhile is raised
    once the file is whole or gone (:func:`signals_deferred`). A path that is not a regular file
    (``/dev/stdout``, a pipe) is written as it is; a symbolic link, through to its target.
    OSError when it cannot be written."""
    import stat
    import tempfile

    real = os.path.realpath(path)
    try:
        special = not stat.S_ISREG(os.stat(real).st_mode)
    except OSError:
        special = False  # not there yet (or cannot be looked at: making it will say why)
    if special:
        with open(real, "w", encoding="utf-8") as handle:
            _write(handle, text)
        return
    with signals_deferred():
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(real) or ".",
                                         prefix=f".{os.path.basename(real)}.", suffix=".tmp")
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)  # as open() would have made it
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                _write(handle, text)
            os.replace(temporary, real)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(temporary)
            raise


def _write(handle: TextIO, text: str | Callable[[TextIO], None]) -> None:
    if isinstance(text, str):
        handle.write(text)
    else:
        text(handle)
