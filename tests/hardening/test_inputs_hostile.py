"""Input files that are not regular files (issue 6: no input makes TraceCite hang or crash).

A pull request can commit a symbolic link (git stores them), and the hook reads every tracked
file its globs select: ``docs/refs.md -> /dev/zero`` is a notes file that never ends. A FIFO
cannot be committed but can sit in a working tree. Each case runs ``python -m tracecite check``
in a child process with a memory limit and a deadline, so a failure costs seconds, not the
machine: the expected outcome is a prompt TC101 (input unreadable), exit 1.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tracecite.cli import main

MEMORY_LIMIT = 1 << 30  # 1 GiB of address space for the child
DEADLINE = 5.0


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _check(path: Path) -> tuple[int | None, list[str]]:
    """Exit code (None on timeout) and finding codes of ``tracecite check PATH --json``."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tracecite", "check", str(path), "--json"],
            capture_output=True, timeout=DEADLINE, preexec_fn=_limit, check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, []
    try:
        codes = [f["code"] for f in json.loads(done.stdout)["findings"]]
    except ValueError:
        codes = []
    return done.returncode, codes


# Was a bug: open_input opened any path, so a symlink to /dev/zero was read until memory ran out
# and a FIFO blocked forever. Now what is not a regular file is TC101.


@pytest.mark.parametrize("suffix", [".md", ".jsonl"])
def test_directory_input_selects_nothing(tmp_path: Path, suffix: str) -> None:
    """The control case: a symlink to a directory stands for the directory, whose files no
    glob selects (the link back to it is not followed): a TC106 warning, nothing read."""
    link = tmp_path / f"input{suffix}"
    link.symlink_to(tmp_path)
    assert _check(link) == (0, ["TC106"])


@pytest.mark.parametrize("suffix", [".md", ".jsonl"])
def test_symlink_to_dev_zero_is_refused(tmp_path: Path, suffix: str) -> None:
    link = tmp_path / f"input{suffix}"
    link.symlink_to("/dev/zero")
    assert _check(link) == (1, ["TC101"])


@pytest.mark.parametrize("suffix", [".md", ".jsonl"])
def test_fifo_input_does_not_block(tmp_path: Path, suffix: str) -> None:
    """In-process, in a thread: if it blocks on the FIFO, the test opens the writing end to
    let it go (then it reads an empty file) and fails."""
    fifo = tmp_path / f"input{suffix}"
    os.mkfifo(fifo)
    out = io.StringIO()
    result: list[int] = []

    def run() -> None:
        result.append(main(["check", str(fifo), "--json"]))

    with contextlib.redirect_stdout(out):
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(1.0)
        blocked = thread.is_alive()
        if blocked:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            thread.join(5)
    assert not blocked, "check blocked opening a FIFO"
    assert result == [1]
    assert [f["code"] for f in json.loads(out.getvalue())["findings"]] == ["TC101"]
