"""The limits of one parse, and the error raised past them.

Hostile markup at the 2 MiB cap (hundreds of thousands of unclosed or mis-nested elements) would
otherwise cost html5lib time and memory far beyond what any page should, and make a tree as deep
as the page is long. Four limits bound a parse. The depth cap changes the tree, in the way
Chromium (the corpus oracle) changes it, so the text stays what a browser shows. The others stop
the parse with :class:`ParseLimitError`: :data:`MAX_FORMATTING` and :data:`MAX_NODES`, which no
real page comes near, and the time budget behind them all. A page past them gets a finding,
never a text that a browser would not show.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_BUDGET", "MAX_DEPTH", "MAX_FORMATTING", "MAX_NODES", "ParseLimitError"]


class ParseLimitError(Exception):
    """The page needs more work than one parse may spend; the message says which limit.

    The message is TraceCite's own words, never page text, so it is safe to report.
    """


DEFAULT_BUDGET: Final = 20.0
"""Seconds one parse may take unless told otherwise: the per-source deadline of
docs/reference/fetching.md (the fetcher's ``MAX_TIMEOUT``, not imported from there so that reading
files needs no fetcher)."""

MAX_DEPTH: Final = 512
"""Chromium's ``kMaximumHTMLParserDOMTreeDepth``: once more than this many elements are open, a
new element is attached to the parent of the current node instead of to the current node, so
nesting stops at this depth and deeper elements become siblings (Blink's
``HTMLConstructionSite::AttachLater``). They are still pushed on the stack of open elements, so
which end tag closes what is unchanged. As in Chromium, elements that the adoption agency moves
(mis-nested formatting tags) are not capped: ``<a><div>`` repeated still nests ever deeper."""

MAX_FORMATTING: Final = 100
"""Entries (formatting elements and the markers of open cells, captions and objects) the list of
active formatting elements may hold; real pages keep a handful (the corpus at most 8). html5lib
scans this list for every formatting tag, and re-opens all of it after every block that closes
them, so an unbounded list makes parsing quadratic."""

MAX_NODES: Final = 500_000
"""Elements and comments one parse may create. The densest corpus page has one element per 30
bytes (about 70,000 in 2 MiB); a 2 MiB table of one-digit cells has 350,000. Without a limit,
2 MiB of bare tags make 760,000 elements, and formatting elements re-opened after every block
("reconstruct the active formatting elements") make millions from a small page."""

CLOCK_STEPS: Final = 16
"""Tokenizer steps between two looks at the clock (the time budget)."""
