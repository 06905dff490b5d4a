"""Worker processes, for the two pools that use them: HTML parsing during live checks
(:class:`~tracecite.checks.parse_pool.ParsePool`) and reading many inputs at once
(``--jobs``, :func:`~tracecite.commands.read_inputs`).

Both start their workers the same way (:func:`pool_context`) and end them the same way when a run is
stopped (:func:`end_workers`, docs/reference/commands.md). Imported only when a pool is about to
start: ``multiprocessing`` and ``concurrent.futures`` are not for a small offline check to pay for.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from multiprocessing.context import BaseContext


def pool_context(preload: Sequence[str]) -> BaseContext:
    """How to start worker processes from here, now.

    ``fork`` on Linux while no other thread runs: cheap, and safe, since no other thread can
    hold a lock the child would inherit (with ``fork``, ProcessPoolExecutor forks every worker
    before it starts threads of its own). Otherwise ``forkserver`` where there is one, which
    is safe while threads hold locks but costs a new interpreter (``preload``: modules it
    imports once rather than every worker); else the platform's default.
    """
    if sys.platform == "linux" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(preload))
        return context
    return multiprocessing.get_context()


def end_workers(executor: Executor, grace: float = 1.0) -> None:
    """Stop ``executor`` now: end every worker process (work under way is abandoned, its
    future fails) and cancel the work not begun; a worker still alive after ``grace`` seconds
    is killed."""
    # Python before 3.14 has no public way to end the workers (3.14: terminate_workers).
    processes = list((getattr(executor, "_processes", None) or {}).values())
    for process in processes:
        process.terminate()
    executor.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join(grace)
