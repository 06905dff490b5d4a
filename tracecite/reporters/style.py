"""How a reporter may draw, in a module of its own: the reporters take it, and the reporters'
table (:mod:`tracecite.reporters`) imports them, so it cannot live there."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OutputStyle:
    """How a reporter may draw: colour (only on a terminal) and quiet for the console; the
    SARIF run's category (``--sarif-category``; None: ``tracecite/COMMAND``)."""

    color: bool = False
    quiet: bool = False
    sarif_category: str | None = None
