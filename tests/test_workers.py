"""The worker pools' processes (tracecite/workers.py): a stopped pool ends at once, whatever
state its workers left their pipes in."""

from __future__ import annotations

import sys

import pytest

from tests.stopping import run_alone

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the pool forks on Linux only")


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_pool_ends_though_a_worker_died_in_the_middle_of_a_result(method: str) -> None:
    """A worker ended while it writes a result (a stop, a kill after the grace, the kernel's
    out-of-memory killer) leaves half a message in the result pipe. The executor's thread then
    waits for the rest, which never comes while this process holds the pipe's other end: ending
    the pool used to wait for that thread for ever (about one early stop of ``check --jobs 2``
    in a thousand hung so). The half message is written here, as a dying worker would leave
    it."""
    result = run_alone(f"""
        import os, struct, time
        from tracecite.workers import WorkerPool

        pool = WorkerPool(1, method={method!r}, preload=[])
        assert pool.executor.submit(os.getpid).result(timeout=10) != os.getpid()
        # A header announcing 1,000 bytes, then 10 of them: the executor's thread reads it.
        os.write(pool.executor._result_queue._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
        time.sleep(0.2)
        started = time.monotonic()
        pool.end()
        print(f"ended in {{time.monotonic() - started:.2f}} s")
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ended in ")
    assert "Traceback" not in result.stderr


def test_a_pool_ended_with_no_half_message_ends_as_before() -> None:
    """Ending a pool whose workers are idle or busy with a task: the task's future fails, the
    run goes on, and the interpreter exits at once."""
    result = run_alone("""
        import time
        from tracecite.workers import WorkerPool

        pool = WorkerPool(2, method="fork", preload=[])
        idle = pool.executor.submit(sum, [1, 2])
        assert idle.result(timeout=10) == 3
        busy = pool.executor.submit(time.sleep, 30)
        time.sleep(0.3)
        pool.end()
        print(type(busy.exception(timeout=5)).__name__)
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "BrokenProcessPool"
    assert "Traceback" not in result.stderr


def test_a_wait_for_work_ends_when_its_worker_died_in_the_middle_of_a_result() -> None:
    """In a run, not at its end: a worker killed (the out-of-memory killer, by hand) while it
    wrote a result leaves the executor's thread waiting for the rest of the message, so the
    executor never fails the worker's work. The run's wait for that work looks at the workers
    itself, and fails once one has been gone for the grace; the pool then ends."""
    result = run_alone("""
        import multiprocessing, os, signal, struct, time
        from concurrent.futures.process import BrokenProcessPool
        from tracecite import jobs
        from tracecite.workers import LOST_GRACE, WorkerPool

        pool = WorkerPool(1, method="fork", preload=[])
        work = pool.executor.submit(time.sleep, 60)
        while not multiprocessing.active_children():
            time.sleep(0.01)
        time.sleep(0.2)
        os.write(pool.executor._result_queue._writer.fileno(), struct.pack("!i", 1000) + b"x")
        time.sleep(0.2)
        for worker in multiprocessing.active_children():
            os.kill(worker.pid, signal.SIGKILL)
        started = time.monotonic()
        try:
            jobs._result(work, pool)
        except BrokenProcessPool as error:
            took = time.monotonic() - started
            print(f"{error}; after {took:.1f} s, grace {LOST_GRACE} s")
        pool.end()
        """)
    assert result.returncode == 0, result.stderr
    said, took = result.stdout.split(";")
    assert said == "a worker process ended in the middle of sending a result"
    assert 1.0 <= float(took.split()[1]) < 5.0  # the grace, and a few looks of POLL each
    assert "Traceback" not in result.stderr


def test_a_worker_alive_is_never_counted_lost() -> None:
    """Work that takes longer than the grace, its worker alive: the wait goes on."""
    result = run_alone("""
        import time
        from tracecite import jobs
        from tracecite.workers import WorkerPool

        pool = WorkerPool(1, method="fork", preload=[])
        work = pool.executor.submit(time.sleep, 0.5)
        jobs._result(work, pool)
        for _ in range(3):
            pool.check_workers(grace=0.0)
        print("waited")
        pool.shutdown()
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "waited"
