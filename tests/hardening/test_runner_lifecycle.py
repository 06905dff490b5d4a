"""What a live command leaves behind: no exception in a background thread (it would print a
traceback on the user's terminal), and no parse worker process outliving the command.

Run with two or more cores assumed (the parse pool starts worker processes then), on runs that
end before any page is parsed: every URL refused, or one tiny page.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.hardening.conftest import Resolver


@pytest.fixture
def thread_errors(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    errors: list[str] = []

    def hook(args: Any) -> None:
        errors.append(f"{args.thread.name if args.thread else '?'}: {args.exc_type.__name__}: "
                      f"{args.exc_value}")

    monkeypatch.setattr(threading, "excepthook", hook)
    yield errors


def _settle() -> None:
    """Give background threads a moment to finish (or fail)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(
            t.name.startswith("tracecite") for t in threading.enumerate()):
        time.sleep(0.02)


@pytest.mark.parametrize("records", [1, 20])
def test_refused_urls_leave_nothing_behind(
    cli: Cli, tmp_path: Path, resolver: Resolver, monkeypatch: pytest.MonkeyPatch,
    thread_errors: list[str], records: int,
) -> None:
    monkeypatch.setattr("tracecite.workers.os.cpu_count", lambda: 2)
    resolver.default = ["10.0.0.1"]
    notes = tmp_path / "n.md"
    notes.write_text("\n".join(f"claim: c\nquote: q\nurl: http://h{i}.example/\n"
                               for i in range(records)), encoding="utf-8")
    for _ in range(5):  # the race between starting and closing the pool is a matter of timing
        run = cli("verify-notes", notes, "--json")
        assert run.exit == 2
    _settle()
    assert thread_errors == []
    assert multiprocessing.active_children() == []
