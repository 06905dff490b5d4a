"""PDFs waiting for a PDF worker (docs/guides/pdf.md#limits): past the bytes a run keeps of
them in memory, the others wait in a temporary file that has no name, each read as if it had
waited in memory; the loader that handed one over keeps no copy of it."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from tests.pdf.make_pdfs import Made
from tracecite.checks.kinds import MatchKind
from tracecite.checks.parse_pool import HandedOver, ParsePool, Verdict
from tracecite.fetch.body import ByteBudget
from tracecite.findings import Diagnosis
from tracecite.matching import normalise
from tracecite.pdf.reader import PdfError, PdfReader


class Held:
    """Every PDF read waits at a gate until it opens; the temporary files made meanwhile."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        self.arrived = threading.Semaphore(0)
        self.files: list[Any] = []
        real, made_file = PdfReader.find_quotes_of, tempfile.TemporaryFile

        def held_back(reader: PdfReader, body: Callable[[], bytes],
                      quotes: Sequence[str]) -> int | tuple[str, ...]:
            self.arrived.release()
            self.gate.wait(30)
            return real(reader, body, quotes)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.files.append(made_file(*args, **kwargs))
            return self.files[-1]

        monkeypatch.setattr(PdfReader, "find_quotes_of", held_back)
        monkeypatch.setattr(tempfile, "TemporaryFile", counted)

    def wait_for(self, count: int) -> None:
        for _ in range(count):
            assert self.arrived.acquire(timeout=30)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    gated = Held(monkeypatch)
    yield gated
    gated.gate.set()


def _submit_all(pool: ParsePool, bodies: list[bytes], quotes: list[str],
                threads: ThreadPoolExecutor) -> list[Future[list[Verdict]]]:
    # Each loader thread hands its PDF over and waits for its verdicts, as the live run does.
    return [threads.submit(lambda b=body: pool.submit(MatchKind.PDF, HandedOver(b),
                                                      quotes).result())
            for body in bodies]


def test_past_the_bytes_held_pdfs_wait_on_disk(pdfs: dict[str, Made], held: Held) -> None:
    made = pdfs["one-column"]
    data = made.path.read_bytes()
    quotes = [normalise(made.found[0]), normalise("a sentence that is in no PDF at all")]
    with ParsePool(1, pdf_held=len(data) + 1) as pool, ThreadPoolExecutor(6) as threads:
        futures = _submit_all(pool, [data] * 6, quotes, threads)
        held.wait_for(6)
        assert len(held.files) == 5  # one body fits in memory, the five others wait on disk
        held.gate.set()
        for future in futures:
            found, missed = future.result(30)
            assert found is True and isinstance(missed, Diagnosis)
    assert all(f.closed for f in held.files)  # read back, then gone


def test_a_pdf_that_cannot_be_read_fails_alone(pdfs: dict[str, Made], held: Held) -> None:
    made = pdfs["one-column"]
    data = made.path.read_bytes()
    quotes = [normalise(made.found[0])]
    with ParsePool(1, pdf_held=1) as pool, ThreadPoolExecutor(3) as threads:
        futures = _submit_all(pool, [data, b"%PDF-1.7 not really", data], quotes, threads)
        held.wait_for(3)
        assert len(held.files) == 2
        held.gate.set()
        assert futures[0].result(30) == futures[2].result(30) == [True]
        with pytest.raises(PdfError) as caught:
            futures[1].result(30)
        assert "damaged" in caught.value.reason


def test_stopping_drops_the_pdfs_waiting_on_disk(pdfs: dict[str, Made], held: Held) -> None:
    data = pdfs["one-column"].path.read_bytes()
    pool = ParsePool(1, pdf_held=1)
    with ThreadPoolExecutor(4) as threads:
        futures = _submit_all(pool, [data] * 4, ["x"], threads)
        held.wait_for(4)
        pool.terminate()
        assert len(held.files) == 3 and all(f.closed for f in held.files)
        held.gate.set()
        assert all(isinstance(f.exception(30), (PdfError, RuntimeError)) for f in futures)


def test_a_body_handed_over_is_taken_once() -> None:
    handed = HandedOver(b"%PDF-1.7")
    assert handed.take() == b"%PDF-1.7"
    with pytest.raises(RuntimeError):
        handed.take()


def test_a_pdf_gives_its_loading_budget_back_once_the_pool_counts_it(
        pdfs: dict[str, Made], held: Held) -> None:
    # The budget of PDFs loading at once bounds the bodies before the pool has them; from then
    # on the pool's own bound holds (memory, then disk): waiting for a worker holds none of it.
    made = pdfs["one-column"]
    data = made.path.read_bytes()
    budget = ByteBudget(10 * len(data))
    with ParsePool(1, pdf_held=len(data) + 1) as pool, ThreadPoolExecutor(3) as threads:
        futures = [threads.submit(lambda: pool.submit(
            MatchKind.PDF, HandedOver(data, budget.reserve(len(data))),
            [normalise(made.found[0])]).result()) for _ in range(3)]
        held.wait_for(3)  # in memory, on disk, on disk; none of them read yet
        assert budget.used == 0
        held.gate.set()
        assert [future.result(30) for future in futures] == [[True]] * 3
