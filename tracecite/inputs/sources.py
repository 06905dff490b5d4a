"""Where a trace's captured sources wait until the answer says which ones are cited.

The answer comes last in a trace, so the content of every source would otherwise have to stay
in memory until then. Instead each source's URI and content go to a temporary spool file and
only a few integers per source stay in memory; the evidence check reads them back in order.
"""

from __future__ import annotations

import tempfile
from array import array
from typing import IO

from tracecite.model import SourceRef

# Lone surrogates are legal in JSON strings; keep them byte-exact through the spool.
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"


class SourceStore:
    """The sources of one trace by id, their content spooled to disk when ``keep_content``."""

    def __init__(self, *, keep_content: bool) -> None:
        self._slots: dict[str, int] = {}
        self._lines = array("q")
        self._offsets = array("q")
        self._uri_sizes = array("q")
        self._content_sizes = array("q")
        self._keep_content = keep_content
        self._spool: IO[bytes] | None = None
        self._end = 0

    def __contains__(self, source_id: str) -> bool:
        return source_id in self._slots

    def __len__(self) -> int:
        return len(self._slots)

    def add(self, source_id: str, uri: str, content: str, line: int) -> None:
        """Record a source; the first one with an id wins (a duplicate is a format error)."""
        if source_id in self._slots:
            return
        self._slots[source_id] = len(self._lines)
        self._lines.append(line)
        data_uri = uri.encode(_ENCODING, _ERRORS)
        data_content = content.encode(_ENCODING, _ERRORS) if self._keep_content else b""
        spool = self._open()
        spool.write(data_uri)
        spool.write(data_content)
        self._offsets.append(self._end)
        self._uri_sizes.append(len(data_uri))
        self._content_sizes.append(len(data_content))
        self._end += len(data_uri) + len(data_content)

    def ref(self, source_id: str) -> SourceRef:
        """The id, URI and line of a recorded source."""
        slot = self._slots[source_id]
        uri = self._read(self._offsets[slot], self._uri_sizes[slot])
        return SourceRef(source_id, uri, self._lines[slot])

    def content(self, source_id: str) -> str:
        """The captured content of a recorded source (requires ``keep_content``)."""
        if not self._keep_content:
            raise RuntimeError("this store was made without content")
        slot = self._slots[source_id]
        start = self._offsets[slot] + self._uri_sizes[slot]
        return self._read(start, self._content_sizes[slot])

    def in_spool_order(self, source_ids: set[str]) -> list[str]:
        """The given ids sorted by where their content lies, so reads go forward."""
        return sorted(source_ids, key=self._slots.__getitem__)

    def close(self) -> None:
        """Delete the spool file."""
        if self._spool is not None:
            self._spool.close()
            self._spool = None

    def _open(self) -> IO[bytes]:
        if self._spool is None:
            self._spool = tempfile.TemporaryFile(prefix="tracecite-")  # noqa: SIM115
        return self._spool

    def _read(self, offset: int, size: int) -> str:
        if size == 0:
            return ""
        spool = self._open()
        spool.flush()
        spool.seek(offset)
        data = spool.read(size)
        spool.seek(self._end)
        return data.decode(_ENCODING, _ERRORS)
