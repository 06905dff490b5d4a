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
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from tracecite.stops import Stopped, signal_of

if TYPE_CHECKING:  # imported when a pool starts: a small check needs none of them
    from concurrent.futures import Future

T = TypeVar("T")
R = TypeVar("R")

MIN_PARALLEL_BYTES = 8 * 1024 * 1024
"""Below this many bytes in all, inputs are read in this process: a pool of two workers costs
more than it saves (measured: benchmarks/README.md)."""

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


class ReadStopped(Stopped):
    """Reading was stopped by a signal; ``done``: the results that finished, by index."""

    def __init__(self, signum: int, done: dict[int, Any]) -> None:
        super().__init__(signum)
        self.done = done


def cores() -> int:
    """The number of cores this process may run on (``--jobs``' default)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def file_size(path: str) -> int:
    """The size of the file at ``path`` (0 when it cannot be looked at: reading it will say
    why)."""
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return 0


def read_in_order(read: Callable[[T], R], items: Sequence[T], *, jobs: int | None,
                  size: Callable[[T], int]) -> list[R]:
    """``read`` of each item, in order: in ``jobs`` processes, this one and ``jobs - 1``
    workers (None: one per core), when there is enough to read (``size``: of an item, in
    bytes), else here alone. ``read`` must be a module-level function (or a
    ``functools.partial`` of one) and its results picklable.

    A stop signal ends the workers at once and raises :class:`ReadStopped` with the results
    that finished; an error in a worker, or a worker that died, ends the others and is raised
    here.
    """
    workers = jobs if jobs is not None else cores()
    if workers < 2 or len(items) < 2:
        return _serial(read, items)
    sizes = [size(item) for item in items]
    if sum(sizes) < MIN_PARALLEL_BYTES or not _may_start_workers():
        return _serial(read, items)
    return _parallel(read, items, sizes, workers)


def _may_start_workers() -> bool:
    """Whether this process may have worker processes: a daemonic one (a worker of
    ``multiprocessing.Pool``, of Dask's nanny) may not, so there the library reads serially."""
    import multiprocessing

    return not multiprocessing.current_process().daemon


def _serial(read: Callable[[T], R], items: Sequence[T]) -> list[R]:
    done: list[R] = []
    try:
        for item in items:
            done.append(read(item))
    except KeyboardInterrupt as stop:
        raise ReadStopped(signal_of(stop), dict(enumerate(done))) from None
    return done


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
              workers: int) -> list[R]:
    """Read ``items`` in ``workers`` processes: this one and ``workers - 1`` forked workers.

    The runs are taken the heaviest first. Each worker is kept with one run to read and one
    waiting (:data:`QUEUED_PER_WORKER`), and this process reads the next run itself: it would
    otherwise sit idle, and what it reads costs no pickling. The workers get the first runs,
    so a pool always reads something. The runs shrink as they go (:func:`runs_of`), so the
    last ones are light and no process waits long for another.
    """
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor
    from contextlib import nullcontext

    from tracecite.stops import ignore_interrupts, signals_blocked
    from tracecite.workers import end_workers, pool_context

    runs = runs_of(sizes, workers)
    if len(runs) < 2:
        return _serial(read, items)
    to_read = deque(sorted(range(len(runs)), key=lambda k: -sum(sizes[i] for i in runs[k])))
    pool = min(workers, len(runs)) - 1
    context = pool_context(["tracecite.commands"])
    executor = ProcessPoolExecutor(pool, mp_context=context, initializer=ignore_interrupts)
    futures: dict[int, Future[list[R]]] = {}
    queued: list[Future[list[R]]] = []  # the workers' runs not yet back
    here: dict[int, R] = {}  # what this process read, by item index

    def feed() -> None:
        """Queue runs for the workers until each has its share; raise a worker's error."""
        waiting = []
        for future in queued:
            if not future.done():
                waiting.append(future)
            elif future.exception() is not None:
                future.result()  # raises it
        queued[:] = waiting
        while len(queued) < pool * QUEUED_PER_WORKER and to_read:
            k = to_read.popleft()
            futures[k] = executor.submit(_read_run, read, [items[i] for i in runs[k]])
            queued.append(futures[k])

    try:
        # Forked workers are forked by the first submit, with the stop signals held until each
        # has set its own handlers (as ParsePool.start does).
        forks = context.get_start_method() == "fork"
        with signals_blocked() if forks else nullcontext():
            feed()
        while to_read:
            for i in runs[to_read.popleft()]:
                here[i] = read(items[i])
                feed()
        out: list[R] = []
        for k, run in enumerate(runs):
            out.extend(_result(futures[k]) if k in futures else [here[i] for i in run])
    except KeyboardInterrupt as stop:
        done = _finished(futures, runs) | here
        end_workers(executor)
        raise ReadStopped(signal_of(stop), done) from None
    except BaseException:  # a bug, or a worker killed: no other is waited for
        end_workers(executor)
        raise
    executor.shutdown(wait=True)
    return out


def _result(future: Future[list[R]]) -> list[R]:
    """The future's result, looking for a stop signal every :data:`POLL` seconds (a wait
    without a timeout may not let the signal handler run until it is over)."""
    from concurrent.futures import wait

    while not future.done():
        wait((future,), timeout=POLL)
    return future.result()


def _finished(futures: dict[int, Future[list[R]]], runs: Sequence[range]) -> dict[int, R]:
    """The results of every run that finished, by item index."""
    done: dict[int, R] = {}
    for k, future in futures.items():
        if future.done() and not future.cancelled() and future.exception() is None:
            done.update(zip(runs[k], future.result(), strict=True))
    return done
