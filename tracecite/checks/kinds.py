"""What a live check reads (:class:`SourceKind`) and how a loaded source is matched
(:class:`MatchKind`): two closed sets, each value carrying what differs by kind."""

from __future__ import annotations

import enum

from tracecite.codes import Code


class MatchKind(enum.Enum):
    """How the text of a loaded source is matched (docs/reference/commands.md,
    docs/reference/fetching.md)."""

    HTML = enum.auto()
    """On its visible text (HTML and XHTML pages, ``.html``/``.htm``/``.xhtml`` files)."""
    JSON = enum.auto()
    """In its raw text or in one of its decoded string values."""
    TEXT = enum.auto()
    """On its text as it is."""
    PDF = enum.auto()
    """On the text of its pages, read by the PDF engine (docs/guides/pdf.md); loaded as the
    PDF's bytes."""


# What a browser strips around a URL (WHATWG: C0 controls and space). A cited URI that is
# http(s) once stripped is checked (and refused, TC300, for the junk), never skipped: an agent
# must not dodge the live check with a leading space.
_URL_JUNK = "".join(chr(c) for c in range(0x21))


def _is_web(uri: str) -> bool:
    return uri.strip(_URL_JUNK).split(":", 1)[0].lower() in ("http", "https")


def _is_file(uri: str) -> bool:
    return uri[:5].lower() == "file:"


class SourceKind(enum.Enum):
    """What a live check reads as it is now: web pages (http and https) or ``file:`` sources.

    Each kind carries the command that checks a trace's sources of that kind, the code of a
    quote that is not in its source and how that finding's message names the source.
    """

    WEB = ("verify-urls", Code.QUOTE_NOT_ON_PAGE, "the page's visible text")
    FILE = ("verify-files", Code.QUOTE_NOT_IN_FILE, "the file")

    def __init__(self, command: str, not_found: Code, source_name: str) -> None:
        self.command = command
        self.not_found = not_found
        self.source_name = source_name

    def takes(self, uri: str) -> bool:
        """Whether a cited source's URI is of this kind (a trace's other sources are skipped)."""
        return _is_web(uri) if self is SourceKind.WEB else _is_file(uri)
