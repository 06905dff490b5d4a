"""The run's inputs digest (docs/reference/reports.md#the-run) is the same whether each file is
hashed while it is read, on a thread of its own, in a worker of ``--jobs``, or after the run."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracecite.jobs
from tests.conftest import Cli, answer, call, result, source, write_trace
from tracecite.inputs import files
from tracecite.inputs.files import digest_alongside, file_digest
from tracecite.run.assemble import inputs_digest


def _traces(tmp_path: Path, count: int) -> list[Path]:
    return [write_trace(tmp_path / f"t{n}.jsonl", [
        call("c1"), result("c1", [source("s1", f"https://example.com/{n}", f"text {n}")]),
        answer([]),
    ]) for n in range(count)]


@pytest.mark.parametrize("threshold", [0, 1 << 40])  # on a thread, and when asked
def test_digest_alongside_is_the_file_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             threshold: int) -> None:
    monkeypatch.setattr(files, "DIGEST_ALONGSIDE_BYTES", threshold)
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"x" * 100_000)
    assert digest_alongside(str(path))() == file_digest(str(path))
    assert digest_alongside(str(tmp_path / "missing"))() == file_digest(str(tmp_path / "gone"))


@pytest.mark.parametrize("size", [0, 1, 64 * 1024 + 1, 3 * files.DIGEST_BLOCK + 5])
def test_the_file_digest_is_the_sha256_of_its_bytes(tmp_path: Path, size: int) -> None:
    """Read a block at a time into one buffer: empty, smaller than a block, and across
    several blocks with a part of one at the end."""
    import hashlib
    import random

    data = random.Random(size).randbytes(size)
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    assert file_digest(str(path)) == hashlib.sha256(data).hexdigest()


def test_a_directory_or_a_fifo_has_the_unreadable_digest(tmp_path: Path) -> None:
    """Regression: a directory was handed to a file object, whose IsADirectoryError ended
    ``compare DIR DIR`` and ``import anthropic ''`` as internal errors (TC900)."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    unreadable = file_digest(str(tmp_path / "missing"))
    assert file_digest(str(tmp_path)) == file_digest(str(fifo)) == unreadable


@pytest.mark.parametrize("argv", [("compare", "{dir}", "{dir}"), ("import", "anthropic", "")])
def test_a_directory_where_a_file_is_wanted_is_tc101(cli: Cli, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     argv: tuple[str, ...]) -> None:
    monkeypatch.chdir(tmp_path)
    run = cli(*(a.format(dir=tmp_path) for a in argv), "--json")
    assert run.exit == 1
    assert {f["code"] for f in run.json()["findings"]} == {"TC101"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_run_digest_is_the_files_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            cli: Cli, jobs: str) -> None:
    monkeypatch.setattr(files, "DIGEST_ALONGSIDE_BYTES", 0)  # every file on a thread
    monkeypatch.setattr(tracecite.jobs, "MIN_PARALLEL_BYTES", 0)  # and read by a worker
    paths = [str(p) for p in _traces(tmp_path, 4)]
    report = cli("check", *paths, "--evidence", "--json", "--jobs", jobs).json()
    assert report["run"]["inputs_digest"] == inputs_digest(paths)


def test_compare_digests_what_it_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      cli: Cli) -> None:
    monkeypatch.setattr(files, "DIGEST_ALONGSIDE_BYTES", 0)
    old, new = (str(p) for p in _traces(tmp_path, 2))
    report = cli("compare", old, new, "--json").json()
    assert report["run"]["inputs_digest"] == inputs_digest([old, new])


def test_a_shard_keeps_the_digests_read(tmp_path: Path) -> None:
    # The shard's inputs are the same files: the run's digest needs no second reading.
    from tracecite.run.inputs import read_inputs

    notes = tmp_path / "a.notes"
    notes.write_text("claim: c\nquote: q\nurl: https://example.com/a\n", encoding="utf-8")
    read = read_inputs([str(notes)], [], evidence=False, keep_uris=True)
    assert read.digests == ((str(notes), file_digest(str(notes))),)
    assert read.in_shard((1, 2)).digests == read.digests
