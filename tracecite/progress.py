"""A progress bar on stderr while sources are fetched, only when stderr is a terminal."""

from __future__ import annotations

import sys
from typing import TextIO

from tracecite.checks.live.records import NoProgress, Progress
from tracecite.streams import is_terminal


class BarProgress:
    """A rich progress bar counting sources as they are loaded."""

    def __init__(self, stream: TextIO, label: str) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._progress = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=Console(file=stream), transient=True,
        )
        self._label = label
        self._task: object | None = None

    def start(self, total: int) -> None:
        """Show the bar for ``total`` sources."""
        self._progress.start()
        self._task = self._progress.add_task(self._label, total=total)

    def advance(self) -> None:
        """One more source is done."""
        if self._task is not None:
            self._progress.advance(self._task)  # type: ignore[arg-type]

    def stop(self) -> None:
        """Remove the bar."""
        self._progress.stop()


def progress_for(stream: TextIO | None = None, *, enabled: bool = True,
                 label: str = "fetching") -> Progress:
    """A bar on ``stream`` (stderr) if it is a terminal and progress is wanted, else nothing."""
    stream = stream if stream is not None else sys.stderr
    if enabled and is_terminal(stream):
        return BarProgress(stream, label)
    return NoProgress()
