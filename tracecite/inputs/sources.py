"""Where a trace's sources are, so the cited ones can be read again once the answer is known.

Where the answer is not on a trace's last line (so its quotes could not be known as the sources
streamed by), the reader reads just the cited lines again afterwards: the validator notes, per
source id, the byte offset of the line of the event that holds it. Memory grows with the number
of sources, never with their size.
"""

from __future__ import annotations

from array import array
from collections.abc import Container, Iterator, Sequence
from typing import BinaryIO

from tracecite.inputs.jsonl import REFUSED, fast_loads, line_text, loads
from tracecite.inputs.long_lines import LONG_LINE, read_long_line


class TraceChangedError(Exception):
    """A line read again is not what the validator saw: the file changed in between."""


def read_sources_at(handle: BinaryIO, offset: int, wanted: Container[str] | None = None
                    ) -> dict[str, tuple[str, str | None]]:
    """The sources of the event on the line at ``offset`` of an open trace: id → (uri, content),
    the content None where it was not captured (``"content": null``); with ``wanted``, only
    the sources of those ids. A line too long to hold (:mod:`~tracecite.inputs.long_lines`) is
    read a chunk at a time, its sources one at a time.

    Raises :class:`TraceChangedError` if that line no longer holds a valid result event.
    """
    handle.seek(offset)
    try:
        raw = handle.readline(LONG_LINE)
        if len(raw) == LONG_LINE and not raw.endswith(b"\n"):
            del raw
            event = read_long_line(handle, offset)
        else:
            event = fast_loads(raw)
            if event is REFUSED:
                event = loads(line_text(raw))
        found: dict[str, tuple[str, str | None]] = {}
        for source in event["sources"]:
            source_id, uri, content = source["id"], source["uri"], source["content"]
            if not (isinstance(source_id, str) and isinstance(uri, str)
                    and (content is None or isinstance(content, str))):
                raise TypeError("not a valid source")
            if wanted is None or source_id in wanted:
                found.setdefault(source_id, (uri, content))  # the first one with an id counts
    except (ValueError, UnicodeDecodeError, TypeError, KeyError, RecursionError) as exc:
        raise TraceChangedError("the trace changed while it was being checked") from exc
    return found


class IdTable:
    """A set of ids (strings) numbered in the order they were added, kept compactly: a trace
    can hold a million sources or calls, so beyond :data:`SMALL_IDS` ids nothing here is a
    Python object per id. The ids are then one UTF-8 blob with their ends, found through an
    open-addressing table of their hashes: about 40 bytes per short id, where a dict of
    strings takes about 150. Up to :data:`SMALL_IDS` ids a plain dict holds them (a few MB at
    most), which is several times faster for the traces most runs see."""

    __slots__ = ("_ends", "_ids", "_small", "_table")

    def __init__(self) -> None:
        self._empty()

    def _empty(self) -> None:
        # id → number while there are few; None once they moved to the compact form below.
        self._small: dict[str, int] | None = {}
        self._ids = bytearray()  # every id, UTF-8, one after another
        self._ends: array[int] = array("q")  # where each id ends in the blob
        # Per place: 0 (free), or the low 32 bits of an id's hash() above its number + 1.
        self._table: array[int] = array("Q", bytes(8 * _FIRST_TABLE))

    def __getstate__(self) -> tuple[bytes, array[int]]:
        # Hashes of strings differ between processes: an unpickled table hashes its ids again.
        if self._small is not None:
            ids, ends = bytearray(), array("q")
            for key in self._small:
                ids += key.encode("utf-8", "surrogatepass")
                ends.append(len(ids))
            return bytes(ids), ends
        return bytes(self._ids), self._ends

    def __setstate__(self, state: tuple[bytes, array[int]]) -> None:
        blob, ends = state
        self._empty()
        start = 0
        for end in ends:
            self.add(blob[start:end].decode("utf-8", "surrogatepass"))
            start = end

    def __contains__(self, key: str) -> bool:
        return self.number(key) >= 0

    def __len__(self) -> int:
        return len(self._ends) if self._small is None else len(self._small)

    def __iter__(self) -> Iterator[str]:
        """The ids, in the order they were added."""
        if self._small is not None:
            return iter(list(self._small))
        return (self._id(number) for number in range(len(self._ends)))

    def add(self, key: str) -> bool:
        """Add an id, numbered ``len(self) - 1`` then; False (and nothing added) if it is
        there already."""
        small = self._small
        if small is not None:
            number = len(small)
            if small.setdefault(key, number) != number:
                return False
            if number + 1 >= SMALL_IDS:
                self._compact()
            return True
        # The lookup inline: this runs for every source of a trace of any size.
        h = hash(key) & _LOW
        table = self._table
        mask = len(table) - 1
        i = h & mask
        while entry := table[i]:
            if entry >> 32 == h and self._id((entry & _LOW) - 1) == key:
                return False
            i = (i + 1) & mask
        ids = self._ids
        ids += key.encode("utf-8", "surrogatepass")
        ends = self._ends
        ends.append(len(ids))
        table[i] = h << 32 | len(ends)
        if 2 * len(ends) > len(table):
            self._grow()
        return True

    def number(self, key: str) -> int:
        """The number of an id (0 for the first added), or -1 if it is not there."""
        small = self._small
        if small is not None:
            return small.get(key, -1)
        h = hash(key) & _LOW
        table = self._table
        mask = len(table) - 1
        i = h & mask
        while entry := table[i]:
            if entry >> 32 == h and self._id((entry & _LOW) - 1) == key:
                return (entry & _LOW) - 1
            i = (i + 1) & mask
        return -1

    def missing(self, keys: Sequence[str]) -> set[int]:
        """The positions in ``keys`` of the ids that are not here: :meth:`number` of each, in
        one call (an answer's hundred thousand citations are looked up at once)."""
        small = self._small
        if small is not None:
            return {k for k, key in enumerate(keys) if key not in small}
        table, mask, ends, ids = self._table, len(self._table) - 1, self._ends, self._ids
        absent: set[int] = set()
        for k, key in enumerate(keys):
            h = hash(key) & _LOW
            i = h & mask
            while entry := table[i]:
                if entry >> 32 == h:
                    number = (entry & _LOW) - 1
                    start = ends[number - 1] if number else 0
                    if ids[start:ends[number]].decode("utf-8", "surrogatepass") == key:
                        break
                i = (i + 1) & mask
            else:
                absent.add(k)
        return absent

    def _compact(self) -> None:
        """Move the ids from the dict to the compact form (once there are many of them): each
        placed at once, in a table made a quarter full (they are distinct: nothing is looked
        up, and the table is not doubled again and again as they go in)."""
        small, self._small = self._small, None
        keys = list(small or ())
        size = _FIRST_TABLE
        while size < 4 * len(keys):
            size *= 2
        table = self._table = array("Q", bytes(8 * size))
        mask = size - 1
        ids, ends = self._ids, self._ends
        for number, key in enumerate(keys, start=1):
            ids += key.encode("utf-8", "surrogatepass")
            ends.append(len(ids))
            h = hash(key) & _LOW
            i = h & mask
            while table[i]:
                i = (i + 1) & mask
            table[i] = h << 32 | number

    def _id(self, number: int) -> str:
        start = self._ends[number - 1] if number else 0
        return self._ids[start:self._ends[number]].decode("utf-8", "surrogatepass")

    def _grow(self) -> None:
        """Double the table (once it is half full: probes stay short)."""
        old = self._table
        table = self._table = array("Q", bytes(16 * len(old)))
        mask = len(table) - 1
        for entry in old:
            if entry:  # placed where an id of its hash not in the table goes
                i = (entry >> 32) & mask
                while table[i]:
                    i = (i + 1) & mask
                table[i] = entry


SMALL_IDS = 1 << 16
"""Up to this many ids an :class:`IdTable` is a dict; from then on, the compact form."""

_LOW = 0xFFFF_FFFF
"""The bits of an id's hash that are kept: enough to place it in any table an index reaches,
and to tell ids apart without comparing them, nearly always."""

_FIRST_TABLE = 64
"""The table's first size (a power of two; it doubles as the index fills)."""


class SourceIndex:
    """The sources of one trace by id: the byte offset of the line of the event holding each.

    Offsets only, no file: the reader reads the lines again with a handle of its own. The ids
    are an :class:`IdTable`, the offsets an array in the same order: about 50 bytes per
    source, a million sources in 50 MB.
    """

    __slots__ = ("_ids", "_offsets")

    def __init__(self) -> None:
        self._ids = IdTable()
        self._offsets: array[int] = array("q")

    def __contains__(self, source_id: str) -> bool:
        return source_id in self._ids

    def __len__(self) -> int:
        return len(self._offsets)

    def add(self, source_id: str, offset: int) -> bool:
        """Record a source, and say whether its id is new: the first one with an id wins (a
        duplicate is a format error)."""
        if not self._ids.add(source_id):
            return False
        self._offsets.append(offset)
        return True

    def unknown(self, source_ids: Sequence[str]) -> set[int]:
        """The positions in ``source_ids`` of the ids of no source here."""
        return self._ids.missing(source_ids)

    def offset_at(self, number: int) -> int:
        """The byte offset of the line holding the source added ``number``-th (0: the first)."""
        return self._offsets[number]

    def offset(self, source_id: str) -> int:
        """The byte offset of the line of the event holding the source."""
        number = self._ids.number(source_id)
        if number < 0:
            raise KeyError(source_id)
        return self._offsets[number]
