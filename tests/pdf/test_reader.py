"""The PDF workers (docs/guides/pdf.md#limits): the generated PDFs read as their text, and a
PDF that crashes, hangs or exhausts the engine costs that PDF only (TC323), never the reader
or the PDFs after it."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.pdf.make_pdfs import Made
from tracecite.codes import Code
from tracecite.matching import MatchText, normalise
from tracecite.pdf.reader import PdfError, PdfReader, pdf_pages

HOSTILE = [sys.executable, str(Path(__file__).with_name("hostile_worker.py"))]


@pytest.fixture(scope="module")
def reader() -> PdfReader:
    with PdfReader(2) as shared:
        yield shared  # type: ignore[misc]


def test_every_sentence_is_found_and_no_altered_one(pdfs: dict[str, Made],
                                                    reader: PdfReader) -> None:
    read = 0
    for name, made in pdfs.items():
        if made.unreadable is not None:
            continue
        pages = reader.pages(made.path.read_bytes())
        assert len(pages) == made.pages, name
        text = MatchText("\n".join(pages))
        for sentence in made.found:
            assert text.contains(normalise(sentence)), (name, sentence)
        for sentence in made.altered:
            assert not text.contains(normalise(sentence)), (name, sentence)
        read += 1
    assert read == 11


@pytest.mark.parametrize(("name", "reason"), [
    ("encrypted-password", "encrypted"), ("image-only", "no text layer"),
    ("truncated", "damaged"),
])
def test_unreadable_pdfs_say_why(pdfs: dict[str, Made], reader: PdfReader, name: str,
                                 reason: str) -> None:
    with pytest.raises(PdfError) as caught:
        reader.pages(pdfs[name].path.read_bytes())
    assert caught.value.code is Code.PDF_UNREADABLE
    assert reason in caught.value.reason


def test_not_a_pdf_at_all_is_damaged(reader: PdfReader) -> None:
    with pytest.raises(PdfError) as caught:
        reader.pages(b"%PDF-1.7 and nothing a PDF has")
    assert (caught.value.code, "damaged" in caught.value.reason) == (Code.PDF_UNREADABLE, True)


def test_the_page_limit(pdfs: dict[str, Made]) -> None:
    with PdfReader(1, max_pages=299) as small, pytest.raises(PdfError) as caught:
        small.pages(pdfs["long"].path.read_bytes())
    assert "300 pages, over the limit of 299" in caught.value.reason
    with PdfReader(1, max_pages=300) as enough:
        assert len(enough.pages(pdfs["long"].path.read_bytes())) == 300


def test_pdf_pages_for_importers(pdfs: dict[str, Made]) -> None:
    pages = pdf_pages(pdfs["page-break"].path.read_bytes())
    assert len(pages) == 2
    with pytest.raises(PdfError):
        pdf_pages(b"not a PDF")


def test_the_error_crosses_processes_whole() -> None:
    import pickle

    error = pickle.loads(pickle.dumps(PdfError(Code.PDF_UNREADABLE, "why")))
    assert (error.code, error.reason) == (Code.PDF_UNREADABLE, "why")


@pytest.mark.parametrize("how", ["crash", pytest.param("hang", marks=pytest.mark.slow),
                                 pytest.param("memory", marks=pytest.mark.slow)])
def test_a_hostile_pdf_costs_that_pdf_only(pdfs: dict[str, Made], how: str) -> None:
    benign = pdfs["one-column"].path.read_bytes() + b"\n%benign\n"
    budget = 2.0 if how == "hang" else 20.0  # only the hang should meet the budget
    with PdfReader(1, budget=budget, memory=512 * 1024 * 1024,
                   command=[*HOSTILE, how]) as reader:
        assert reader.pages(benign)  # the worker reads a good PDF
        started = time.monotonic()
        with pytest.raises(PdfError) as caught:
            reader.pages(b"%PDF-1.7 hostile")
        assert caught.value.code is Code.PDF_UNREADABLE
        assert time.monotonic() - started < budget + 3
        expected = {"crash": "stopped", "hang": "took over 2 s", "memory": "memory"}[how]
        assert expected in caught.value.reason
        # ... and the next PDF is read by a new worker.
        assert reader.pages(benign)


def test_closing_ends_every_worker(pdfs: dict[str, Made]) -> None:
    reader = PdfReader(2)
    reader.pages(pdfs["one-column"].path.read_bytes())
    processes = reader.processes()
    assert processes and all(_alive(p) for p in processes)
    reader.close()
    assert not any(_alive(p) for p in processes)
    with pytest.raises(RuntimeError):
        reader.pages(pdfs["one-column"].path.read_bytes())


@pytest.mark.slow
def test_workers_end_when_their_parent_is_killed(pdfs: dict[str, Made], tmp_path: Path) -> None:
    import os
    import signal
    import subprocess

    # The worker is busy (a PDF that spins in the engine), so only its watch of its parent
    # can end it: an idle one would also see its requests' pipe close.
    script = (
        "import sys, threading, time\n"
        "from tracecite.pdf.reader import PdfReader\n"
        f"reader = PdfReader(1, command={[*HOSTILE, 'hang']!r})\n"
        "threading.Thread(target=reader.pages, args=(b'%PDF-1.7 spin',), daemon=True).start()\n"
        "while not reader.processes(busy=True): time.sleep(0.01)\n"
        "print(reader.processes(busy=True)[0], flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline and _alive(worker):
        time.sleep(0.05)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_a_worker_that_cannot_start_costs_that_pdf_only(pdfs: dict[str, Made]) -> None:
    with (PdfReader(1, command=["/nonexistent/tracecite-pdf-worker"]) as reader,
          pytest.raises(PdfError) as caught):
        reader.pages(pdfs["one-column"].path.read_bytes())
    assert caught.value.code is Code.PDF_UNREADABLE
    assert caught.value.reason.startswith("a PDF worker could not start")


def test_an_engine_error_of_any_kind_is_that_pdfs_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.pdf import text, worker

    def broken(data: bytes, max_pages: int, quotes: object = ()) -> tuple[str, ...]:
        raise ValueError("something inside the engine")

    monkeypatch.setattr(text, "read_pages", broken)
    assert worker.answer(b"%PDF-1.7", 10) == (
        "unreadable", "the PDF engine failed on it (ValueError)")


def test_started_ahead_the_workers_read_the_first_pdfs(pdfs: dict[str, Made]) -> None:
    with PdfReader(2) as reader:
        reader.start()
        started = reader.processes()
        assert len(started) == 2 and all(_alive(p) for p in started)
        data = pdfs["one-column"].path.read_bytes()
        assert reader.pages(data) == reader.pages(data)
        assert reader.processes() == started  # no other worker was needed


def test_pdfs_queued_behind_each_other_get_their_own_answers(pdfs: dict[str, Made]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    readable = [made.path.read_bytes() for made in pdfs.values() if made.unreadable is None]
    with PdfReader(2) as alone:
        expected = [alone.pages(data) for data in readable]
    with PdfReader(1) as reader, ThreadPoolExecutor(4) as threads:
        # One worker, up to two PDFs sent to it at once, answers read in the order sent.
        for _ in range(3):
            assert list(threads.map(reader.pages, readable)) == expected
        assert len(reader.processes()) == 1


def test_a_pdf_queued_behind_a_hostile_one_is_read_by_another_worker(
        pdfs: dict[str, Made]) -> None:
    import threading

    benign = pdfs["one-column"].path.read_bytes() + b"\n%benign\n"
    with PdfReader(1, budget=1.0, command=[*HOSTILE, "hang"]) as reader:
        failed: list[PdfError] = []

        def hostile() -> None:
            with pytest.raises(PdfError) as caught:
                reader.pages(b"%PDF-1.7 spin")
            failed.append(caught.value)

        spinning = threading.Thread(target=hostile)
        spinning.start()
        while not reader.processes(busy=True):
            time.sleep(0.01)
        first = reader.processes(busy=True)
        time.sleep(0.1)  # its PDF is in the worker: this one waits behind it
        assert reader.pages(benign)  # not TC323: that worker never began on it
        spinning.join()
        assert "took over 1 s" in failed[0].reason
        assert reader.processes() != first


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def test_started_ahead_the_second_worker_is_forked_from_the_first(
        pdfs: dict[str, Made]) -> None:
    import os

    benign = pdfs["one-column"].path.read_bytes() + b"\n%benign\n"
    with PdfReader(2, budget=5.0, command=[*HOSTILE, "crash"]) as reader:
        reader.start()
        first, second = reader.processes()
        assert _parent(first) == os.getpid() and _parent(second) == first
        # A crash of the worker that forked the other costs its own PDF only.
        with pytest.raises(PdfError) as caught:
            reader.pages(b"%PDF-1.7 crash")
        assert "stopped" in caught.value.reason
        assert not _alive(first) and _alive(second)
        assert reader.pages(benign)
        assert second in reader.processes()
    # Closing the reader closed its lifeline: it ends at once, though no longer the run's
    # grandchild (the worker that forked it is gone), so nothing here can wait for it.
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline and _alive(second):
        time.sleep(0.01)
    assert not _alive(second)


def test_a_forked_worker_that_spins_is_ended_by_the_budget(pdfs: dict[str, Made]) -> None:
    import threading

    with PdfReader(2, budget=1.0, command=[*HOSTILE, "hang"]) as reader:
        reader.start()
        forked = reader.processes()[1]
        failed: list[str] = []

        def spin() -> None:
            with pytest.raises(PdfError) as caught:
                reader.pages(b"%PDF-1.7 spin")
            failed.append(caught.value.reason)

        spinning = [threading.Thread(target=spin) for _ in range(2)]  # one to each worker
        for thread in spinning:
            thread.start()
        for thread in spinning:
            thread.join()
        assert failed == ["reading the PDF took over 1 s"] * 2
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline and _alive(forked):
            time.sleep(0.05)
        assert not _alive(forked)


@pytest.mark.slow
def test_a_forked_worker_ends_when_the_run_is_killed(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess

    # Both workers spin in the engine: only the watch of the run ends the first, and only
    # the lifeline (the run's end of it closes as the run dies) the forked one.
    script = (
        "import sys, threading, time\n"
        "from tracecite.pdf.reader import PdfReader\n"
        f"reader = PdfReader(2, command={[*HOSTILE, 'hang']!r})\n"
        "reader.start()\n"
        "for _ in range(2):\n"
        "    threading.Thread(target=reader.pages, args=(b'%PDF-1.7 spin',), daemon=True"
        ").start()\n"
        "while len(reader.processes(busy=True)) < 2: time.sleep(0.01)\n"
        "print(*reader.processes(busy=True), flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(workers) == 2 and _parent(workers[1]) == workers[0]
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)


# ---- reading a PDF for its quotes: up to the page by which every one is found ---------------


def _read_for(made: Made, quotes: list[str]) -> int | tuple[str, ...]:
    from tracecite.pdf.text import find_quotes

    return find_quotes(made.path.read_bytes(), 2000, [normalise(q) for q in quotes])


def test_a_pdf_is_read_up_to_the_page_by_which_every_quote_is_found(
        pdfs: dict[str, Made]) -> None:
    long = pdfs["long"]  # page 1, 150 and 300 hold one of its sentences each
    first, middle, last = long.found
    assert _read_for(long, [first]) == 1
    assert _read_for(long, [middle, first]) == 150
    assert _read_for(long, [last]) == long.pages
    missed = _read_for(long, [first, *long.altered])  # a miss has every page, for its diagnosis
    assert isinstance(missed, tuple) and len(missed) == long.pages
    for nothing in ([], [""]):  # nothing to find: every page, as read_pages gives them
        every = _read_for(long, nothing)
        assert isinstance(every, tuple) and len(every) == long.pages
    # A quote across a page break is found with the page it ends on.
    assert _read_for(pdfs["page-break"], list(pdfs["page-break"].found)) == 2


def test_reading_up_to_the_quotes_gives_the_verdicts_of_every_page(
        pdfs: dict[str, Made]) -> None:
    from tracecite.checks.parse_pool import match_pages
    from tracecite.pdf.text import read_pages

    for name, made in pdfs.items():
        if made.unreadable is not None:
            continue
        every = read_pages(made.path.read_bytes(), 2000)
        for quote in (*made.found, *made.altered):
            chosen = [normalise(quote)]
            read = _read_for(made, [quote])
            verdicts = [True] if isinstance(read, int) else match_pages(read, chosen)
            assert verdicts == match_pages(every, chosen), name


def test_the_worker_sends_no_pages_when_every_quote_is_found(pdfs: dict[str, Made]) -> None:
    long = pdfs["long"]
    data = long.path.read_bytes()
    with PdfReader(1) as reader:
        assert reader.find_quotes_of(lambda: data, [normalise(long.found[1])]) == 150
        missed = reader.find_quotes_of(lambda: data, [normalise(long.altered[0])])
    assert isinstance(missed, tuple) and len(missed) == long.pages


@pytest.mark.parametrize("writev", [True, False])
def test_a_request_is_written_whole_and_in_order_through_short_writes(
    monkeypatch: pytest.MonkeyPatch, writev: bool,
) -> None:
    """The header, the PDF and its quotes go out in one ``writev`` where there is one; a
    system call that takes only part of them is called again for the rest."""
    import os

    from tracecite.pdf import reader

    calls: list[int] = []
    write = os.write
    step = 3 if writev else 5

    def short_writev(fd: int, views: list[memoryview]) -> int:
        calls.append(len(views))
        return write(fd, views[0][:step])

    def short_write(fd: int, view: memoryview) -> int:
        calls.append(1)
        return write(fd, view[:step])

    if writev:
        monkeypatch.setattr(os, "writev", short_writev, raising=False)
    else:
        monkeypatch.delattr(os, "writev", raising=False)
        monkeypatch.setattr(os, "write", short_write)
    parts = [b"head", b"", b"%PDF-1.7 body", b"quotes"]
    read_end, write_end = os.pipe()
    try:
        reader._write_all(write_end, *parts)
        os.close(write_end)
        assert os.read(read_end, 100) == b"".join(parts)
    finally:
        os.close(read_end)
    if writev:
        assert calls[0] == 3  # every part at once, the empty one left out
    assert len(calls) == sum(-(-len(part) // step) for part in parts)


def _environment(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as environ:
        pairs = [item.decode().partition("=") for item in environ.read().split(b"\0") if item]
    return {name: value for name, _, value in pairs}


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_the_workers_keep_the_engines_memory_mapped_between_pages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.pdf.reader import WORKER_ALLOCATOR

    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "4096")  # the user's own: kept
    with PdfReader(1) as reader:
        reader.start()
        (pid,) = reader.processes()
        environment = _environment(pid)
    assert environment["MALLOC_MMAP_THRESHOLD_"] == WORKER_ALLOCATOR["MALLOC_MMAP_THRESHOLD_"]
    assert environment["MALLOC_TRIM_THRESHOLD_"] == "4096"
