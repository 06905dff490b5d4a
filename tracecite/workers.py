"""Worker processes, for the two pools that use them: HTML parsing during live checks
(:class:`~tracecite.checks.parse_pool.ParsePool`) and reading many inputs at once
(``--jobs``, :func:`~tracecite.jobs.read_in_order`); docs/design/concurrency.md has the rules.

Both count cores one way (:func:`cores`), start their workers one way, decided once
(:func:`start_method`), and own their workers through a :class:`WorkerPool`: each worker reports
its process id when it starts and watches its parent, so a stopped run ends its workers at once
(:meth:`WorkerPool.end`) and a parent that dies, even by ``kill -9``, leaves no worker behind.
``multiprocessing`` and ``concurrent.futures`` are imported only when a pool starts: they are not
for a small offline check to pay for.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.connection import Connection
    from multiprocessing.context import BaseContext

WATCH_PARENT = 0.5
"""Seconds between two looks of a worker at whether its parent is still there."""

LOST_GRACE = 1.0
"""Seconds a worker may be gone, its work still pending, before :meth:`WorkerPool.check_workers`
counts it lost: the executor's own thread notices a dead worker within milliseconds."""

_run_alone: ContextVar[bool | None] = ContextVar("tracecite_run_alone", default=None)
"""Whether the run of this context started alone on the main thread (see :func:`one_run`);
None: no run decided it."""


def cores() -> int:
    """The number of cores this process may run on: its affinity mask where the platform has
    one (a container or ``taskset`` may allow fewer than the machine has), never more than
    the machine's count, else every core. ``--jobs``' default and the parse workers' number."""
    machine = os.cpu_count() or 1
    try:
        return max(1, min(machine, len(os.sched_getaffinity(0))))
    except AttributeError:  # not on every platform
        return machine


@contextlib.contextmanager
def one_run() -> Iterator[None]:
    """Within the block, every pool of the run starts its workers the one way decided on
    entry (:func:`start_method`): enter it at the run's start, on the run's thread, before the
    run starts any thread of its own (the command line does, see
    :class:`~tracecite.stops.StopSignals`; so does every :mod:`tracecite.api` call). Inside a
    run already decided (the command line calling the library), the run's decision stands.
    Imports nothing: an offline check pays nothing."""
    if _run_alone.get() is not None:
        yield
        return
    token = _run_alone.set(_alone_now())
    try:
        yield
    finally:
        _run_alone.reset(token)


def _alone_now() -> bool:
    """Whether forking here, now, is safe: on Linux, on the main thread, no other thread."""
    return (sys.platform == "linux" and threading.current_thread() is threading.main_thread()
            and threading.active_count() == 1)


def start_method() -> str:
    """How this run starts worker processes (docs/design/concurrency.md#start-method).

    ``fork`` when the run started on Linux on the main thread with no other thread running
    (cheap, and safe: no other thread can hold a lock a child would inherit; the pools then
    fork their workers before the run starts its own threads); otherwise ``forkserver`` where
    there is one (safe while threads hold locks, but a new interpreter), else the platform's
    default. Decided once per run by :func:`one_run`; outside one (a library call, a pool used
    on its own), decided by the same rule when the run's pool is made, on the run's thread:
    a library caller calling from a thread of its own gets ``forkserver``.
    """
    alone = _run_alone.get()
    if alone is None:
        alone = _alone_now()
    return "fork" if alone else threads_start_method()


def threads_start_method() -> str:
    """How to start worker processes while threads of this process run (a pool's manager
    thread, loader threads): ``forkserver`` where there is one, else the platform's default;
    never ``fork``, whose child would inherit the locks those threads hold."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        return "forkserver"
    return multiprocessing.get_start_method()


def pool_context(preload: Sequence[str], method: str | None = None) -> BaseContext:
    """The context to start workers with ``method`` (default: :func:`start_method`); a
    forkserver imports ``preload`` once rather than every worker."""
    import multiprocessing

    context = multiprocessing.get_context(method if method is not None else start_method())
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(list(preload))
    return context


def _start_worker(report: Any, stop: Connection, prepare: Any) -> None:
    """In a new worker: hand the stop signals to the parent, report this process's id, watch
    the parent, then run ``prepare`` (the pool's own initializer, or None)."""
    from tracecite.stops import ignore_interrupts

    ignore_interrupts()
    report.put(os.getpid())
    parent = os.getppid()  # this process's or the forkserver's, which ends with it
    threading.Thread(target=watch_parent, args=(parent, stop), daemon=True,
                     name="tracecite-watch-parent").start()
    if prepare is not None:
        prepare()


def watch_parent(parent: int, stop: Connection | None = None) -> None:
    """End this worker process once its parent is gone (the worker is then some other
    process's child), or its pool is ended (``stop``, a pipe, becomes readable): never a worker
    left running for no one. Looked at once at the start, since the parent may have died before
    the worker's first line ran. A pipe, not a ``multiprocessing.Event``: setting an event waits
    for every waiter to wake, and a worker that was killed never does."""
    while os.getppid() == parent:
        if stop is None:
            time.sleep(WATCH_PARENT)
        elif stop.poll(WATCH_PARENT):
            break
    os._exit(1)


class WorkerPool:
    """A :class:`~concurrent.futures.ProcessPoolExecutor` of ``workers`` processes started
    with ``method`` (``preload``: what a forkserver imports once), whose workers this pool
    owns: each reports its process id as it starts and ends itself when the pool is ended or
    its parent is gone. ``initializer``: run in each worker after that."""

    def __init__(self, workers: int, *, method: str, preload: Sequence[str],
                 initializer: Any = None) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = pool_context(preload, method)
        self.forks = context.get_start_method() == "fork"
        self._report = context.SimpleQueue()
        self._stop, self._stopping = context.Pipe(duplex=False)  # read end, write end
        self._pids: set[int] = set()  # the workers that reported
        self._gone_since: float | None = None  # when check_workers first saw one gone
        # Processes this one started before the pool: never the pool's.
        self._before = {p.pid for p in multiprocessing.active_children()}
        self.executor: ProcessPoolExecutor = ProcessPoolExecutor(
            workers, mp_context=context,
            initializer=partial(_start_worker, self._report, self._stop, initializer))

    def check_workers(self, grace: float = LOST_GRACE) -> None:
        """Raise ``BrokenProcessPool`` once a worker has been gone for ``grace`` seconds while
        its pool's work is still awaited: call it between waits for that work.

        The executor notices a worker that died on its own, and fails its work at once, unless
        the worker died in the middle of writing a result (killed by the kernel's
        out-of-memory killer, by hand): the executor's thread then waits in ``recv`` for the
        rest of the message, and nothing else would end the run's wait for its work. The
        caller ends the pool (:meth:`end`), and the run's error boundary reports the loss."""
        import multiprocessing
        import time
        from concurrent.futures.process import BrokenProcessPool

        while not self._report.empty():
            self._pids.add(self._report.get())
        alive = {p.pid for p in multiprocessing.active_children()}
        if not self._pids - alive:
            return
        now = time.monotonic()
        if self._gone_since is None:
            self._gone_since = now
        elif now - self._gone_since >= grace:
            raise BrokenProcessPool("a worker process ended in the middle of sending a result")

    def shutdown(self) -> None:
        """End the workers once the work queued is done, and wait for them."""
        self.executor.shutdown(wait=True, cancel_futures=True)
        self._close_pipes()

    def end(self, grace: float = 1.0) -> None:
        """Stop now: end every worker (work under way is abandoned, its future fails) and
        cancel the work not begun; a worker still alive after ``grace`` seconds is killed."""
        import multiprocessing
        import time

        self._stopping.send_bytes(b"stop")  # a worker not reported yet ends itself at once
        deadline = time.monotonic() + grace
        ended: list[Any] = []
        while True:
            while not self._report.empty():
                self._pids.add(self._report.get())
            # This process's own records of the processes it started (public, and they reap
            # them): a reported id is only ever looked up among them, never signalled blindly.
            started = [p for p in multiprocessing.active_children() if p.pid not in self._before]
            for process in started:
                if process.pid in self._pids and process not in ended:
                    process.terminate()
                    ended.append(process)
            # A worker still starting reports before anything else: wait for it, briefly.
            if all(p.pid in self._pids for p in started) or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        _ended(ended, max(0.0, deadline - time.monotonic()))
        _close_result_writer(self.executor)
        # The workers are gone, so the executor's own thread ends at once: waiting for it means
        # Python's exit never wakes a thread that is closing its pipe (3.11 races there, and
        # prints an EBADF traceback after the report).
        self.executor.shutdown(wait=True, cancel_futures=True)
        self._close_pipes()

    def _close_pipes(self) -> None:
        self._report.close()
        self._stop.close()
        self._stopping.close()


def _close_result_writer(executor: ProcessPoolExecutor) -> None:
    """Close this process's write end of ``executor``'s result pipe, once its workers are gone.

    A worker ended while it wrote a result (a stop, a kill after the grace, the kernel's
    out-of-memory killer) leaves half a message in the pipe, and the executor's thread waits in
    ``recv`` for the rest. It would wait for ever: this process holds a write end too, so the
    pipe never ends, and ``shutdown`` and Python's exit both wait for that thread. With this
    end closed as well, the read meets the pipe's end, the executor counts itself broken and
    its thread ends. Nothing in this process writes results, and complete messages still in the
    pipe are read first. ``_result_queue`` is the executor's own (CPython 3.8 and later); where
    it is not there, nothing is done."""
    writer = getattr(getattr(executor, "_result_queue", None), "_writer", None)
    if writer is not None:
        writer.close()


def _ended(processes: Sequence[Any], grace: float) -> None:
    """Wait up to ``grace`` seconds for ``processes`` to end; kill those that did not."""
    import time

    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join(1.0)  # a killed process ends at once
