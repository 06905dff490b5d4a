"""html5lib's HTML parser (scripting off), bounded: a time budget, and the tree builder of
:mod:`tracecite.visible.tree_builder` with its limits.

These classes extend html5lib 1.1 internals (the version is pinned for that reason); each
override follows the html5lib steps it replaces, so the tree is the one html5lib builds, except
where Chromium's depth cap changes it.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, Final

from html5lib import _utils as html5lib_utils
from html5lib._tokenizer import HTMLTokenizer
from html5lib.constants import specialElements, tokenTypes
from html5lib.html5parser import HTMLParser, getPhases

from tracecite.visible.limits import CLOCK_STEPS, ParseLimitError
from tracecite.visible.tree_builder import TreeBuilder

__all__ = ["BoundedParser", "InBodyPhase", "Tokenizer"]

_StockInBodyPhase: Any = getPhases(False)["inBody"]


class InBodyPhase(_StockInBodyPhase):  # type: ignore[misc]  # html5lib is untyped
    """The "in body" insertion mode, with html5lib's generic end-tag step made linear."""

    __slots__ = ()

    def endTagOther(self, token: dict[str, Any]) -> None:
        """Close the open element an end tag names (html5lib's steps, without copying)."""
        # Same steps as html5lib's InBodyPhase.endTagOther, minus its copy of the whole stack.
        name = token["name"]
        open_elements = self.tree.openElements
        if not open_elements.local_names.get(name):
            self.parser.parseError("unexpected-end-tag", {"name": name})
            return
        for node in reversed(open_elements):
            if node.name == name:
                self.tree.generateImpliedEndTags(exclude=name)
                if open_elements[-1].name != name:
                    self.parser.parseError("unexpected-end-tag", {"name": name})
                while open_elements.pop() != node:
                    pass
                return
            if node.nameTuple in specialElements:
                self.parser.parseError("unexpected-end-tag", {"name": name})
                return

    def addFormattingElement(self, token: dict[str, Any]) -> None:
        """Insert a formatting element and make it active."""
        # html5lib applies the Noah's Ark clause here and again in the list's append, each time
        # scanning the list: once, in FormattingElements.append, gives the same list.
        self.tree.insertElement(token)
        self.tree.activeFormattingElements.append(self.tree.openElements[-1])

    endTagHandler = html5lib_utils.MethodDispatcher(
        list(_StockInBodyPhase.__dict__["endTagHandler"].items())
    )
    endTagHandler.default = endTagOther


class Tokenizer(HTMLTokenizer):
    """html5lib's tokenizer, stopping the parse once its time budget is spent."""

    def __init__(self, stream: str, parser: HTMLParser, budget: float) -> None:
        super().__init__(stream, parser=parser)
        self.budget = budget
        self.deadline = time.monotonic() + budget

    def __iter__(self) -> Iterator[Any]:
        # html5lib's loop, plus a look at the clock. The tree is built from each token while
        # this generator waits, so the clock measures tokenizing and tree building alike. It
        # is read every CLOCK_STEPS steps: no step takes long, and reading it is not free.
        self.tokenQueue = deque()
        steps = 0
        while self.state():
            steps += 1
            if not steps % CLOCK_STEPS and time.monotonic() > self.deadline:
                raise ParseLimitError(
                    f"the page's markup takes more than {self.budget:g} s to parse")
            while self.stream.errors:
                yield {"type": tokenTypes["ParseError"], "data": self.stream.errors.pop(0)}
            while self.tokenQueue:
                yield self.tokenQueue.popleft()


class BoundedParser(HTMLParser):
    """html5lib's parser (scripting off) building an ElementTree with the parts above, within a
    budget of ``budget`` seconds."""

    def __init__(self, budget: float = math.inf) -> None:
        super().__init__(tree=TreeBuilder, namespaceHTMLElements=False)
        self.budget = budget
        self.phases["inBody"] = InBodyPhase(self, self.tree)

    def _parse(self, stream: str, innerHTML: bool = False, container: Any = "div",
               scripting: bool = False, **kwargs: Any) -> None:
        # html5lib's _parse with the tokenizer above. (html5lib parses a second time only when
        # a byte stream turns out to be in another encoding; a str has none.)
        self.innerHTMLMode = innerHTML
        self.container = container
        self.scripting = scripting
        self.tokenizer = Tokenizer(stream, self, self.budget, **kwargs)
        self.reset()
        self.mainLoop()

    def reset(self) -> None:
        """Start a new document, with no scan for character errors."""
        super().reset()
        # Parse errors never change the tree, and nothing here reads them. html5lib looks for
        # "invalid-codepoint" errors by running a large regular expression over every chunk
        # of input, a cost worth skipping.
        self.tokenizer.stream.reportCharacterErrors = _ignore_chunk

    def parseError(self, errorcode: str = "", datavars: Any = None) -> None:
        """Keep no parse errors (html5lib would work out a line and column for each)."""

    def resetInsertionMode(self) -> None:
        """Choose the insertion mode from the stack of open elements (html5lib's steps)."""
        # Same steps as html5lib's HTMLParser.resetInsertionMode, minus its copy of the stack
        # (and minus its asserts, which only hold for fragment parsing).
        open_elements = self.tree.openElements
        new_phase = None
        for node in reversed(open_elements):
            name = node.name
            last = node is open_elements[0]
            if last:
                name = self.innerHTML
            elif node.namespace != self.tree.defaultNamespace:
                continue
            if name in _INSERTION_MODES:
                new_phase = self.phases[_INSERTION_MODES[name]]
                break
            if last:
                new_phase = self.phases["inBody"]
                break
        self.phase = new_phase


def _ignore_chunk(data: str) -> None:
    """Look for nothing in a chunk of input (see ``BoundedParser.reset``)."""


_INSERTION_MODES: Final = {
    "select": "inSelect",
    "td": "inCell",
    "th": "inCell",
    "tr": "inRow",
    "tbody": "inTableBody",
    "thead": "inTableBody",
    "tfoot": "inTableBody",
    "caption": "inCaption",
    "colgroup": "inColumnGroup",
    "table": "inTable",
    "head": "inBody",
    "body": "inBody",
    "frameset": "inFrameset",
    "html": "beforeHead",
}
