"""Offline checks of many files in worker processes (``--jobs N``, docs/guides/scale.md).

Reading an input (parsing notes, validating a trace, checking its evidence) is CPU-bound pure
Python, and each file is read on its own: many files are read by N processes at once, this one
and N - 1 workers. The files are cut into runs of neighbours that shrink as they go, taken the
heaviest first by whichever process is free, and the results are put back in input order, so
a report is the same as a serial run's. A worker reads one file at a time and sends back what
the report needs of it, never a source's content.

A pool costs tens of milliseconds to start, and each file's result must be sent back: few or
small files are read here, in this process alone (see :data:`MIN_PARALLEL_BYTES`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from tracecite.stops import signal_of
from tracecite.workers import WorkerPool, cores

if TYPE_CHECKING:  # imported when a pool starts: a small check needs none of them
    from concurrent.futures import Future

T = TypeVar("T")
R = TypeVar("R")

MIN_PARALLEL_BYTES = 8 * 1024 * 1024
"""Below this many bytes in all, inputs are read in this process: a pool of two workers costs
more than it saves (measured: docs/design/decisions.md#reading-many-inputs)."""

FILE_WEIGHT = 16 * 1024
"""What opening a file and sending back its result cost, in bytes read: a thousand empty
files are work too."""

RUN_SHARE = 4
"""Each run takes ``1 / (RUN_SHARE × workers)`` of the work not yet dealt out: the runs shrink as
the work goes, so the last ones, which decide how long one process waits for another, are
small."""

SMALLEST_RUN = 64
"""No run of more than one item weighs less than ``1 / (SMALLEST_RUN × workers)`` of the work:
each run costs a few milliseconds to send and to send back."""

QUEUED_PER_WORKER = 2
"""Runs queued for each worker at a time: the one it reads, and the next, so that it never
waits for this process to hand it one."""

POLL = 0.1
"""Seconds between two looks for a stop signal while waiting for a worker."""


@dataclass(frozen=True)
class ReadResult(Generic[R]):
    """What :func:`read_in_order` read: ``done``, the result of each item that finished, by
    index (every item's, unless the reading was stopped); ``stopped_by``: the signal that
    stopped it (docs/design/concurrency.md#partial-results)."""

    done: Mapping[int, R]
    stopped_by: int | None = None

    def results(self) -> list[R]:
        """The results of the items that finished, in input order."""
        return [self.done[i] for i in sorted(self.done)]


def file_size(path: str) -> int:
    """The size of the file at ``path`` (0 when it cannot be looked at: reading it will say
    why)."""
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return 0


def read_in_order(read: Callable[[T], R], items: Sequence[T], *, jobs: int | None,
                  size: Callable[[T], int], method: str | None = None) -> ReadResult[R]:
    """``read`` of each item, in order: in ``jobs`` processes, this one and ``jobs - 1``
    workers (None: one per core), when there is enough to read (``size``: of an item, in
    bytes), else here alone. ``read`` must be a module-level function (or a
    ``functools.partial`` of one) and its results picklable. ``method``: how the workers
    start (default: the run's, :func:`~tracecite.workers.start_method`); a caller whose
    threads run already (another pool's) passes
    :func:`~tracecite.workers.threads_start_method`.

    A stop signal ends the workers at once; the result then holds what finished and the
    signal. An error in a worker, or a worker that died, ends the others and is raised here.
    """
    workers = jobs if jobs is not None else cores()
    if workers >= 2 and len(items) >= 2:
        sizes = [size(item) for item in items]
        if sum(sizes) >= MIN_PARALLEL_BYTES and _may_start_workers():
            return _parallel(read, items, sizes, workers, method)
    return _reading(lambda done: _serial(read, items, done))


def _reading(fill: Callable[[dict[int, R]], None]) -> ReadResult[R]:
    """What ``fill`` read into its dictionary, stopped or not: the one place where reading
    turns a stop signal into a value. The reading runs on the run's thread, so the stop
    reaches it as the :class:`KeyboardInterrupt` itself (docs/design/concurrency.md)."""
    done: dict[int, R] = {}
    try:
        fill(done)
    except KeyboardInterrupt as interrupt:
        return ReadResult(done, signal_of(interrupt))
    return ReadResult(done)


def _may_start_workers() -> bool:
    """Whether this process may have worker processes: a daemonic one (a worker of
    ``multiprocessing.Pool``, of Dask's nanny) may not, so there the library reads serially."""
    import multiprocessing

    return not multiprocessing.current_process().daemon


def _serial(read: Callable[[T], R], items: Sequence[T], done: dict[int, R]) -> None:
    for i, item in enumerate(items):
        done[i] = read(item)


def runs_of(sizes: Sequence[int], workers: int) -> list[range]:
    """The items cut into runs of neighbours by weight (size plus :data:`FILE_WEIGHT` each):
    each run takes a share of the weight not yet in a run (:data:`RUN_SHARE`), but no less than
    the smallest (:data:`SMALLEST_RUN`); an item heavier than a share is a run of its own."""
    weights = [s + FILE_WEIGHT for s in sizes]
    left = sum(weights)
    smallest = max(1, left // (workers * SMALLEST_RUN))
    share = max(smallest, left // (workers * RUN_SHARE))
    runs: list[range] = []
    start, held = 0, 0
    for i, weight in enumerate(weights):
        if held and held + weight > share:
            runs.append(range(start, i))
            left -= held
            share = max(smallest, left // (workers * RUN_SHARE))
            start, held = i, 0
        held += weight
    runs.append(range(start, len(weights)))
    return runs


def _read_run(read: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """In a worker: ``read`` each item of one run."""
    return [read(item) for item in items]


def _parallel(read: Callable[[T], R], items: Sequence[T], sizes: Sequence[int],
              workers: int, method: str | None = None) -> ReadResult[R]:
    """Read ``items`` in ``workers`` processes: this one and ``workers - 1`` forked workers.

    The runs are taken the heaviest first. Each worker is kept with one run to read and one
    waiting (:data:`QUEUED_PER_WORKER`), and this process reads the next run itself: it would
    otherwise sit idle, and what it reads costs no pickling. The workers get the first runs,
    so a pool always reads something. The runs shrink as they go (:func:`runs_of`), so the
    last ones are light and no process waits long for another.
    """
    return _reading(lambda done: _read_in_pool(read, items, sizes, workers, done, method))


def _read_in_pool(read: Callable[[T], R], items: Sequence[T], sizes: Sequence[int],
                  workers: int, done: dict[int, R], method: str | None = None) -> None:
    """:func:`_parallel`'s reading, each result put in ``done`` by index as it is known."""
    from collections import deque
    from contextlib import nullcontext

    from tracecite.stops import signals_blocked, signals_deferred
    from tracecite.workers import start_method

    runs = runs_of(sizes, workers)
    if len(runs) < 2:
        _serial(read, items, done)
        return
    to_read = deque(sorted(range(len(runs)), key=lambda k: -sum(sizes[i] for i in runs[k])))
    workers_here = min(workers, len(runs)) - 1
    pool = WorkerPool(workers_here, method=method if method is not None else start_method(),
                      preload=["tracecite.run.inputs"])
    futures: dict[int, Future[list[R]]] = {}
    queued: list[Future[list[R]]] = []  # the workers' runs not yet back

    def feed() -> None:
        """Queue runs for the workers until each has its share; raise a worker's error. A
        stop is raised as it ends, never inside the executor's or a future's lock (_result)."""
        with signals_deferred():
            waiting = []
            for future in queued:
                if not future.done():
                    waiting.append(future)
                elif future.exception() is not None:
                    future.result()  # raises it
            queued[:] = waiting
            # The last run waiting is this process's to read: queued for a worker too, two large
            # files (compare's two traces) were both read by the one worker, this process idle.
            while len(queued) < workers_here * QUEUED_PER_WORKER and len(to_read) > 1:
                k = to_read.popleft()
                futures[k] = pool.executor.submit(_read_run, read, [items[i] for i in runs[k]])
                queued.append(futures[k])

    try:
        # Forked workers are forked by the first submit, with the stop signals held until each
        # has set its own handlers (as ParsePool.start does).
        with signals_blocked() if pool.forks else nullcontext():
            feed()
        while to_read:
            for i in runs[to_read.popleft()]:
                done[i] = read(items[i])
                feed()
        for future in futures.values():
            _result(future, pool)
    except BaseException:  # a stop, a bug, or a worker killed: no worker is waited for
        done.update(_finished(futures, runs))
        pool.end()
        raise
    done.update(_finished(futures, runs))
    pool.shutdown()


def _result(future: Future[list[R]], pool: WorkerPool) -> None:
    """Wait for the future, looking for a stop signal every :data:`POLL` seconds (a wait
    without a timeout may not let the signal handler run until it is over), and at ``pool``'s
    workers (a worker lost while it sent its result fails the wait,
    :meth:`~tracecite.workers.WorkerPool.check_workers`); raise its error.

    A stop is raised between two waits, never inside one: ``concurrent.futures.wait`` takes
    each future's lock in a ``__enter__`` of its own, and a stop raised there left the lock
    held, so the executor's thread waited for it for ever when it settled the future, and the
    pool's shutdown for that thread (one early stop of ``check --jobs 2`` in about 700)."""
    from concurrent.futures import wait

    from tracecite.stops import signals_deferred

    while True:
        with signals_deferred():
            if future.done():
                future.result()
                return
            wait((future,), timeout=POLL)
            pool.check_workers()


def _finished(futures: dict[int, Future[list[R]]], runs: Sequence[range]) -> dict[int, R]:
    """The results of every run that finished, by item index."""
    done: dict[int, R] = {}
    for k, future in futures.items():
        if future.done() and not future.cancelled() and future.exception() is None:
            done.update(zip(runs[k], future.result(), strict=True))
    return done
