"""The budget of PDF bodies loading at once: the budget itself, and what the fetcher reserves
from it (loopback only for the latter, see conftest.py)."""

from __future__ import annotations

import gc
import gzip
import threading
import time

import pytest

from tests.fetch.conftest import HTML, MakeFetcher, fetch_error
from tests.fetch.servers import HTTPTestServer, Reply
from tracecite.codes import Code
from tracecite.fetch.body import ByteBudget, Held
from tracecite.fetch.fetcher import Page

PDF = b"%PDF-1.7\n" + bytes(range(256)) * 40  # 10,249 bytes
PDF_TYPE = (("Content-Type", "application/pdf"),)


def _in_thread(work: object) -> tuple[threading.Thread, list[object]]:
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(work()), daemon=True)  # type: ignore[operator]
    thread.start()
    return thread, done


def _waits_for(budget: ByteBudget, size: int, *released: Held, used: int) -> object:
    """A reservation of ``size`` in another thread waits (``used`` bytes still held) until
    ``released`` are given back, and is granted then: returned, so that it is still held."""
    thread, done = _in_thread(lambda: budget.reserve(size))
    thread.join(0.3)
    assert done == [] and budget.used == used
    for held in released:
        held.release()
    thread.join(5)
    assert len(done) == 1
    return done[0]


# --------------------------------------------------------------------------------------------
# The budget


def test_reservations_that_fit_are_granted_at_once() -> None:
    budget = ByteBudget(100)
    first, second = budget.reserve(60), budget.reserve(40)
    assert budget.used == 100
    first.release()
    second.release()
    assert budget.used == 0


def test_a_reservation_that_does_not_fit_waits_for_a_release() -> None:
    budget = ByteBudget(100)
    first = budget.reserve(80)
    granted = _waits_for(budget, 30, first, used=80)
    assert budget.used == 30 and granted is not None


def test_a_reservation_larger_than_the_budget_is_granted_when_nothing_is_held() -> None:
    budget = ByteBudget(100)
    held = budget.reserve(500)
    _waits_for(budget, 1, held, used=500)


def test_a_thread_that_holds_a_reservation_never_waits_for_another() -> None:
    budget = ByteBudget(100)
    first = budget.reserve(80)
    second = budget.reserve(80)  # this thread would otherwise wait for itself for ever
    granted = _waits_for(budget, 10, first, second, used=160)  # another thread still waits
    assert budget.used == 10 and granted is not None


def test_a_release_counts_once_and_a_dropped_reservation_is_released() -> None:
    budget = ByteBudget(100)
    held = budget.reserve(70)
    held.release()
    held.release()
    assert budget.used == 0
    budget.reserve(50)  # dropped at once, never released by hand
    gc.collect()
    assert budget.used == 0


def test_a_reservation_may_be_given_back_inside_a_reserve_of_the_same_thread() -> None:
    # The garbage collector may drop a reservation (and so give it back) at any point of any
    # thread, reserve() included: that must not wait for the lock this thread holds.
    budget = ByteBudget(100)
    held = budget.reserve(10)

    def collected_inside_reserve() -> None:
        with budget._changed:
            held.release()

    thread, done = _in_thread(collected_inside_reserve)
    thread.join(5)
    assert done == [None] and budget.used == 0


# --------------------------------------------------------------------------------------------
# What the fetcher reserves


@pytest.mark.network
@pytest.mark.parametrize("headers", [PDF_TYPE, ()], ids=["typed", "untyped"])
def test_a_pdf_holds_its_length_until_it_is_released(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, headers: tuple[tuple[str, str], ...],
) -> None:
    http_server.routes["/report.pdf"] = Reply(200, headers, PDF)
    budget = ByteBudget(1 << 20)
    page = make_fetcher(http=http_server.port, pdf_loads=budget).fetch(
        "http://example.test/report.pdf")
    assert page.text == PDF and page.held is not None
    assert budget.used == len(PDF)  # its Content-Length, not the whole cap
    page.held.release()
    assert budget.used == 0


@pytest.mark.network
def test_a_compressed_pdf_holds_the_whole_cap(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (*PDF_TYPE, ("Content-Encoding", "gzip")),
                                    gzip.compress(PDF))
    budget = ByteBudget(1 << 20)
    page = make_fetcher(http=http_server.port, pdf_loads=budget,
                        max_bytes=50_000, max_pdf_bytes=100_000).fetch("http://example.test/")
    assert page.text == PDF and budget.used == 100_000  # its decoded size is not known


@pytest.mark.network
def test_pages_and_failed_pdfs_hold_nothing(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/page"] = Reply(200, HTML, b"<p>text</p>")
    http_server.routes["/big.pdf"] = Reply(200, PDF_TYPE, PDF + b"x" * 5000)
    http_server.routes["/gone.pdf"] = Reply(404, PDF_TYPE, PDF)
    budget = ByteBudget(1 << 20)
    fetcher = make_fetcher(http=http_server.port, pdf_loads=budget, max_bytes=1000,
                           max_pdf_bytes=len(PDF) + 10)
    assert fetcher.fetch("http://example.test/page").held is None
    assert fetch_error(fetcher, "http://example.test/big.pdf").code is Code.TOO_LARGE
    assert fetch_error(fetcher, "http://example.test/gone.pdf").code is Code.HTTP_STATUS
    gc.collect()
    assert budget.used == 0


@pytest.mark.network
def test_a_pdf_waits_for_room_and_the_wait_is_not_the_sites_time(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/a.pdf"] = Reply(200, PDF_TYPE, PDF)
    http_server.routes["/b.pdf"] = Reply(200, PDF_TYPE, PDF)
    budget = ByteBudget(len(PDF))  # room for one of them
    fetcher = make_fetcher(http=http_server.port, pdf_loads=budget, timeout=1)
    first = fetcher.fetch("http://example.test/a.pdf")
    thread, done = _in_thread(lambda: fetcher.fetch("http://example.test/b.pdf"))
    thread.join(1.5)  # longer than the fetch's whole timeout
    assert done == [] and budget.used == len(PDF)
    started = time.monotonic()
    assert first.held is not None
    first.held.release()
    thread.join(5)
    assert time.monotonic() - started < 1
    second = done[0]
    assert isinstance(second, Page) and second.text == PDF  # not TC313 after its wait
    assert budget.used == len(PDF)
