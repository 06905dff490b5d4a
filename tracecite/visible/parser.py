"""html5lib's HTML parser (scripting off), bounded: a time budget, and the tree builder of
:mod:`tracecite.visible.tree_builder` with its limits.

These classes extend html5lib 1.1 internals (the version is pinned for that reason); each
override follows the html5lib steps it replaces, so the tree is the one html5lib builds, except
where Chromium's depth cap changes it, and where html5lib 1.1 drifts from the current HTML
standard in a way that changes the text a browser shows. Those drifts, and what is done:

- ``<template>``: html5lib 1.1 predates templates and parses one as an ordinary element, so an
  end tag inside it can close its ancestors and let the rest of its content into the page
  (``<div><template></div>Hello`` showed ``Hello``), and a ``</template>`` after a ``<p>`` in it
  was ignored, hiding the rest of the page. The standard's "in template" insertion mode
  ignores such end tags; the content ends at the matching ``</template>`` (or the end of the
  page) and goes into a fragment that is never rendered. The tokenizer here drops those
  tokens (:class:`TemplateContent`) before the tree builder sees them, so the template is not
  in the tree at all. In SVG or MathML, ``<template>`` is a foreign element and left alone, as
  in a frameset, where the standard ignores the tag. A declarative shadow root (``<template
  shadowrootmode>``) is dropped too: ``innerText`` does not read shadow trees.
- ``<isindex>``: html5lib 1.1 expands it into a form with a prompt ("This is a searchable
  index...") and an input; the standard dropped that, so it is an ordinary, unknown (inline)
  element now (:class:`InBodyPhase`), and not a special one when an end tag looks for the
  element it closes.
- ``<select>`` (the customizable-select changes of 2025): the standard's parser now keeps
  elements inside a select that html5lib's "in select" mode drops (keeping their text). The
  text a browser shows does not change: Chromium's ``innerText`` of a select is the text of the
  options among its descendants and nothing else, and an option's text is all the text in it,
  whatever the elements around it. The renderer (:mod:`~tracecite.visible.render`) shows a
  select that way, so the tree html5lib builds gives the browser's text.
- ``<datalist>``: not changed; hidden (``display: none``) as before, except inside a
  ``<select>``, where html5lib drops the tag and Chromium lists its options anyway.

A known limit that remains: html5lib's tokenizer reads ``<![CDATA[`` as CDATA only when the
current node of the tree is foreign; inside a dropped template's SVG it is not, so a CDATA
section there ends at its first ``>`` (and a ``</template>`` inside it ends the template).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, Final

from html5lib import _utils as html5lib_utils
from html5lib._tokenizer import HTMLTokenizer
from html5lib.constants import namespaces, specialElements, tokenTypes
from html5lib.html5parser import HTMLParser, getPhases

from tracecite.visible.limits import CLOCK_STEPS, ParseLimitError
from tracecite.visible.tree_builder import TreeBuilder

__all__ = ["BoundedParser", "InBodyPhase", "TemplateContent", "Tokenizer"]

_PHASES: dict[str, Any] = getPhases(False)
_StockInBodyPhase: Any = _PHASES["inBody"]

_START_TAG: Final = tokenTypes["StartTag"]
_END_TAG: Final = tokenTypes["EndTag"]
# The current standard's special elements: html5lib 1.1's, less <isindex> (now unknown).
_SPECIAL: Final = specialElements - {(namespaces["html"], "isindex")}


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
            if node.nameTuple in _SPECIAL:
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

    # <isindex> is no longer in the standard: an ordinary element, not html5lib 1.1's form with
    # a prompt ("This is a searchable index...") that no browser shows.
    startTagHandler = html5lib_utils.MethodDispatcher(
        [(name, handler) for name, handler in _StockInBodyPhase.__dict__["startTagHandler"].items()
         if name != "isindex"]
    )
    startTagHandler.default = _StockInBodyPhase.__dict__["startTagOther"]


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
        template: TemplateContent | None = None
        while self.state():
            steps += 1
            if not steps % CLOCK_STEPS and time.monotonic() > self.deadline:
                raise ParseLimitError(
                    f"the page's markup takes more than {self.budget:g} s to parse")
            while self.stream.errors:
                yield {"type": tokenTypes["ParseError"], "data": self.stream.errors.pop(0)}
            while self.tokenQueue:
                token = self.tokenQueue.popleft()
                if template is not None:
                    if template.take(token, self):
                        template = None
                    continue
                if (token["type"] == _START_TAG and token["name"] == "template"
                        and self._starts_template()):
                    template = TemplateContent()
                    continue
                yield token

    def _starts_template(self) -> bool:
        """Whether a ``<template>`` start tag here makes an HTML template (not an SVG or MathML
        element, and not in a frameset, where it is ignored)."""
        parser: Any = self.parser
        open_elements = parser.tree.openElements
        if open_elements:
            node = open_elements[-1]
            if not (node.namespace == parser.tree.defaultNamespace
                    or parser.isHTMLIntegrationPoint(node)
                    or parser.isMathMLTextIntegrationPoint(node)):
                return False
        phases = parser.phases
        return parser.phase not in (
            phases["inFrameset"], phases["afterFrameset"], phases["afterAfterFrameset"])


class TemplateContent:
    """The tokens of one ``<template>``'s content, which are dropped: the standard parses them
    into a document fragment that is never rendered, and html5lib 1.1 (which predates
    templates) would parse them into the page, where an end tag inside can close the
    template's ancestors and let the rest of its content out (``<div><template></div>Hello``).

    What ends the content is what ends it in the standard's "in template" insertion mode: the
    ``</template>`` that matches (nested templates counted), or the end of the page. Inside,
    the raw-text elements still switch the tokenizer as the tree builder would (a
    ``</template>`` inside a ``<script>`` is text), except in SVG or MathML content, where they
    are foreign elements; the open foreign elements are tracked for that (an HTML integration
    point, ``<foreignObject>`` say, holds HTML again).
    """

    __slots__ = ("depth", "open")

    def __init__(self) -> None:
        self.depth = 1  # templates open, this one included
        # The templates and foreign elements open inside: (name, whether start tags inside
        # follow HTML rules); an HTML template is "#template".
        self.open: list[tuple[str, bool]] = []

    def take(self, token: Any, tokenizer: HTMLTokenizer) -> bool:
        """Drop ``token``; return True once it was the template's end."""
        kind = token["type"]
        opened = self.open
        if kind == _START_TAG:
            name = token["name"]
            if opened and not opened[-1][1] and (name in _BREAKOUT or (
                    name == "font" and {"color", "face", "size"} & token["data"].keys())):
                while opened and not opened[-1][1]:
                    opened.pop()  # HTML breaks out of foreign content
            html_rules = not opened or opened[-1][1]
            if html_rules and name == "template":
                self.depth += 1  # (a self-closing flag is ignored on HTML elements)
                opened.append(("#template", True))
            elif name in ("svg", "math") or not html_rules:
                if name == "template" and not token["selfClosing"]:
                    self.depth += 1  # an SVG or MathML element, closed by </template> too
                if not token["selfClosing"]:
                    opened.append((name, _holds_html(name, token["data"], opened)))
            else:
                state = _RAW_TEXT.get(name)
                if state is not None:
                    tokenizer.state = getattr(tokenizer, state)
        elif kind == _END_TAG:
            name = token["name"]
            for index in range(len(opened) - 1, -1, -1):
                open_name = opened[index][0]
                if open_name == "#template" and name != "template":
                    break  # an end tag never closes what is open outside a template
                if open_name.lstrip("#") == name:
                    del opened[index:]
                    break
            if name == "template":
                self.depth -= 1
                return not self.depth
        return False


def _holds_html(name: str, attributes: dict[str, str], opened: list[tuple[str, bool]]) -> bool:
    """Whether a foreign element is an HTML integration point or a MathML text integration
    point: start tags inside it follow HTML rules again."""
    if name in ("svg", "math"):
        return False
    for open_name, _ in reversed(opened):
        if open_name == "svg":
            return name in ("foreignobject", "desc", "title")
        if open_name == "math":
            break
    if name == "annotation-xml":
        return attributes.get("encoding", "").lower() in ("text/html", "application/xhtml+xml")
    return name in ("mi", "mo", "mn", "ms", "mtext")


# The tokenizer state a start tag puts html5lib's tokenizer in (scripting off: <noscript> is
# markup).
_RAW_TEXT: Final = {
    "script": "scriptDataState",
    "style": "rawtextState",
    "xmp": "rawtextState",
    "iframe": "rawtextState",
    "noembed": "rawtextState",
    "noframes": "rawtextState",
    "textarea": "rcdataState",
    "title": "rcdataState",
    "plaintext": "plaintextState",
}
_BREAKOUT: Final[frozenset[str]] = _PHASES["inForeignContent"].breakoutElements


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
