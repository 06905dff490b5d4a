"""Where a trace's sources are, so the cited ones can be read again once the answer is known.

Where the answer is not on a trace's last line (so its quotes could not be known as the sources
streamed by), the reader reads just the cited lines again afterwards: the validator notes, per
source id, the byte offset of the line of the event that holds it. Memory grows with the number
of sources, never with their size.
"""

from __future__ import annotations

import sys
from array import array
from typing import BinaryIO

from tracecite.inputs.jsonl import REFUSED, fast_loads, line_text, loads


class TraceChangedError(Exception):
    """A line read again is not what the validator saw: the file changed in between."""


def read_sources_at(handle: BinaryIO, offset: int) -> dict[str, tuple[str, str]]:
    """The sources of the event on the line at ``offset`` of an open trace: id → (uri, content).

    Raises :class:`TraceChangedError` if that line no longer holds a valid result event.
    """
    handle.seek(offset)
    try:
        raw = handle.readline()
        event = fast_loads(raw)
        if event is REFUSED:
            event = loads(line_text(raw))
        found: dict[str, tuple[str, str]] = {}
        for source in event["sources"]:
            source_id, uri, content = source["id"], source["uri"], source["content"]
            if not (isinstance(source_id, str) and isinstance(uri, str)
                    and isinstance(content, str)):
                raise TypeError("not a valid source")
            found.setdefault(source_id, (uri, content))  # the first one with an id counts
    except (ValueError, UnicodeDecodeError, TypeError, KeyError) as exc:
        raise TraceChangedError("the trace changed while it was being checked") from exc
    return found


class SourceIndex:
    """The sources of one trace by id: the byte offset of the line of the event holding each.

    Offsets only, no file: the reader reads the lines again with a handle of its own.
    """

    def __init__(self) -> None:
        self._slots: dict[str, int] = {}
        self._offsets = array("q")

    def __contains__(self, source_id: str) -> bool:
        return source_id in self._slots

    def __len__(self) -> int:
        return len(self._slots)

    def add(self, source_id: str, offset: int) -> None:
        """Record a source; the first one with an id wins (a duplicate is a format error)."""
        if source_id in self._slots:
            return
        # Interned: cited ids are then one string shared with the citations.
        self._slots[sys.intern(source_id)] = len(self._offsets)
        self._offsets.append(offset)

    def offset(self, source_id: str) -> int:
        """The byte offset of the line of the event holding the source."""
        return self._offsets[self._slots[source_id]]
