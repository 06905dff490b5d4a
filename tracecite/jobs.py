"""Offline checks of many files in worker processes (``--jobs N``, SPEC §9).

Reading an input (parsing notes, validating a trace, checking its evidence) is CPU-bound pure
Python, and each file is read on its own: many files are read by N worker processes at once.
The files are dealt out in runs of neighbours of about equal size, the largest runs first, and
the results are put back in input order, so a report is the same as a serial run's. Each worker
reads one file at a time and sends back what the report needs of it, never a source's content.

A pool costs tens of milliseconds to start, and each file's result must be sent back: few or
small files are read here, in this process (see :data:`MIN_PARALLEL_BYTES`).
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

RUNS_PER_WORKER = 16
"""How many runs of files each worker gets, on average: more runs balance the work better (a
worker that draws small files takes more of them), fewer cost less to send."""

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
    """``read`` of each item, in order: in ``jobs`` worker processes (None: one per core) when
    there is enough to read (``size``: of an item, in bytes), else here. ``read`` must be a
    module-level function (or a ``functools.partial`` of one) and its results picklable.

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
    """The items cut into runs of neighbours of about equal weight (size plus
    :data:`FILE_WEIGHT` each), about :data:`RUNS_PER_WORKER` per worker; an item heavier than
    a share is a run of its own."""
    weights = [s + FILE_WEIGHT for s in sizes]
    share = max(1, sum(weights) // (workers * RUNS_PER_WORKER))
    runs: list[range] = []
    start, held = 0, 0
    for i, weight in enumerate(weights):
        if held and held + weight > share:
            runs.append(range(start, i))
            start, held = i, 0
        held += weight
    runs.append(range(start, len(weights)))
    return runs


def _read_run(read: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """In a worker: ``read`` each item of one run."""
    return [read(item) for item in items]


def _parallel(read: Callable[[T], R], items: Sequence[T], sizes: Sequence[int],
              workers: int) -> list[R]:
    from concurrent.futures import ProcessPoolExecutor
    from contextlib import nullcontext

    from tracecite.stops import ignore_interrupts, signals_blocked
    from tracecite.workers import end_workers, pool_context

    runs = runs_of(sizes, workers)
    context = pool_context(["tracecite.commands"])
    executor = ProcessPoolExecutor(min(workers, len(runs)), mp_context=context,
                                   initializer=ignore_interrupts)
    futures: dict[int, Future[list[R]]] = {}
    try:
        # Forked workers are forked by the first submit, with the stop signals held until each
        # has set its own handlers (as ParsePool.start does).
        forks = context.get_start_method() == "fork"
        with signals_blocked() if forks else nullcontext():
            heaviest = sorted(range(len(runs)), key=lambda k: -sum(sizes[i] for i in runs[k]))
            for k in heaviest:  # the largest first: the last to finish are small
                futures[k] = executor.submit(_read_run, read, [items[i] for i in runs[k]])
        out: list[R] = []
        for k in range(len(runs)):
            out.extend(_result(futures[k]))
    except KeyboardInterrupt as stop:
        done = _finished(futures, runs)
        end_workers(executor)
        raise ReadStopped(signal_of(stop), done) from None
    except BaseException:  # a bug in a worker, or a worker killed: no other is waited for
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
