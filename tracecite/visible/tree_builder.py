"""html5lib's ElementTree tree builder, bounded and kept linear.

The builder applies Chromium's depth cap (:data:`~tracecite.visible.MAX_DEPTH`), counts the
nodes it creates (:data:`~tracecite.visible.MAX_NODES`), bounds the list of active formatting
elements (:data:`~tracecite.visible.MAX_FORMATTING`), and builds the light nodes of
:mod:`tracecite.visible.nodes`.

html5lib answers "is a <p> in scope?", "is this element open?" and "which open element does this
end tag close?" by scanning (and sometimes copying) the whole stack of open elements, once per
tag, which makes deep nesting quadratic. Counting the names and members of the stack answers the
common "not there at all" case in O(1), and the end-tag search
(:class:`tracecite.visible.parser.InBodyPhase`) walks the stack without copying it. The tree
html5lib builds is unchanged.
"""

from __future__ import annotations

import sys
from typing import Any, SupportsIndex

from html5lib.treebuilders import getTreeBuilder
from html5lib.treebuilders.base import ActiveFormattingElements, Marker

from tracecite.visible.limits import MAX_DEPTH, MAX_FORMATTING, MAX_NODES, ParseLimitError
from tracecite.visible.nodes import HTML_NAMESPACE, Comment, Element

__all__ = ["FormattingElements", "OpenElements", "TreeBuilder"]

_EtreeTreeBuilder: Any = getTreeBuilder("etree")


class OpenElements(list[Any]):
    """html5lib's stack of open elements, also counting names and members, and the nodes of the
    tree: every element html5lib creates enters this stack (a void one leaves it at once)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: dict[tuple[str, str], int] = {}  # by (namespace, local name)
        self.local_names: dict[str, int] = {}
        self.members: dict[int, int] = {}  # by id(): html5lib's nodes compare by identity
        self.nodes = 0  # elements and comments created so far

    def count_node(self) -> None:
        """One more node in the tree; past :data:`MAX_NODES`, the parse stops."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ParseLimitError(f"the page makes more than {MAX_NODES} elements and comments")

    def _add(self, node: Any) -> None:
        self.count_node()
        self.names[node.nameTuple] = self.names.get(node.nameTuple, 0) + 1
        self.local_names[node.name] = self.local_names.get(node.name, 0) + 1
        self.members[id(node)] = self.members.get(id(node), 0) + 1

    def _drop(self, node: Any) -> None:
        self.names[node.nameTuple] -= 1
        self.local_names[node.name] -= 1
        self.members[id(node)] -= 1
        if not self.members[id(node)]:
            del self.members[id(node)]

    def append(self, node: Any) -> None:
        """Push ``node`` on the stack."""
        super().append(node)
        self._add(node)

    def insert(self, index: SupportsIndex, node: Any) -> None:
        """Insert ``node`` at ``index``."""
        super().insert(index, node)
        self._add(node)

    def pop(self, index: SupportsIndex = -1) -> Any:
        """Remove and return the node at ``index`` (the current node by default)."""
        node = super().pop(index)
        self._drop(node)
        return node

    def remove(self, node: Any) -> None:
        """Remove ``node`` from the stack."""
        list.pop(self, self.index(node))
        self._drop(node)

    def index(self, node: Any, start: SupportsIndex = 0, stop: SupportsIndex = sys.maxsize) -> int:
        """Where ``node`` is on the stack."""
        # The adoption agency looks for elements near the top of the stack: search there first.
        near_top = max(int(start), len(self) - 32)
        if near_top > int(start):
            try:
                return super().index(node, near_top, stop)
            except ValueError:
                pass
        return super().index(node, start, stop)

    def __setitem__(self, index: Any, node: Any) -> None:
        if not isinstance(index, int):
            raise TypeError("only single items of the open-element stack are replaced")
        old = self[index]
        super().__setitem__(index, node)
        self._drop(old)
        self._add(node)

    def __contains__(self, node: object) -> bool:
        return id(node) in self.members


class FormattingElements(ActiveFormattingElements):
    """html5lib's list of active formatting elements, at most :data:`MAX_FORMATTING` long."""

    def nodesEqual(self, node1: Any, node2: Any) -> bool:
        """Whether two elements have the same name and attributes."""
        # html5lib compares the ``attributes`` dicts, which makes one for every element.
        if node1.nameTuple != node2.nameTuple:
            return False
        items1, items2 = node1._element.items(), node2._element.items()
        return items1 == items2 or (len(items1) == len(items2) and dict(items1) == dict(items2))

    def append(self, node: Any) -> None:
        """Add ``node`` (or a marker) to the list; past :data:`MAX_FORMATTING`, the parse stops."""
        if node is not Marker:
            # The HTML standard's "Noah's Ark" clause, as html5lib applies it, minus its copy
            # of the list: of the equal elements after the last marker, three at most stay;
            # the earliest goes.
            equal = 0
            for index in range(len(self) - 1, -1, -1):
                element = self[index]
                if element is Marker:
                    break
                if self.nodesEqual(element, node):
                    equal += 1
                    if equal == 3:
                        del self[index]
                        break
        if len(self) >= MAX_FORMATTING:
            raise ParseLimitError(
                f"the page keeps more than {MAX_FORMATTING} formatting elements open at once")
        list.append(self, node)


class TreeBuilder(_EtreeTreeBuilder):  # type: ignore[misc]  # html5lib is untyped
    """html5lib's ElementTree builder with an O(1) answer for "not in scope", Chromium's depth
    cap, the limits on formatting elements and nodes, and the lighter nodes."""

    elementClass = Element
    commentClass = Comment

    def reset(self) -> None:
        """Start a new document: empty stacks, counting from zero."""
        super().reset()
        self.openElements = OpenElements()
        self.activeFormattingElements = FormattingElements()
        self._copying = False

    def reconstructActiveFormattingElements(self) -> None:
        """html5lib's steps; the elements they insert are copies (:class:`CopiedElement`),
        made of no start tag of the source."""
        active = self.activeFormattingElements
        if not active or active[-1] == Marker or active[-1] in self.openElements:
            return  # html5lib's first steps: nothing to reconstruct (nearly always)
        self._copying = True
        try:
            super().reconstructActiveFormattingElements()
        finally:
            self._copying = False

    def createElement(self, token: dict[str, Any]) -> Any:
        """html5lib's element for ``token``, marked as a copy while formatting elements are
        reconstructed."""
        element = super().createElement(token)
        if self._copying:
            element.mark_copy()
        return element

    def insertElementNormal(self, token: dict[str, Any]) -> Any:
        """Insert an element for ``token`` at the current node, or beside it past the cap."""
        # html5lib's insertElementNormal, with Chromium's depth cap (see MAX_DEPTH).
        element = self.createElement(token)
        open_elements = self.openElements
        parent = open_elements[-1]
        if len(open_elements) > MAX_DEPTH and parent.parent is not None:
            parent = parent.parent
        parent.appendChild(element)
        open_elements.append(element)
        return element

    def insertComment(self, token: dict[str, Any], parent: Any = None) -> None:
        """Insert a comment, counting it among the nodes."""
        self.openElements.count_node()
        super().insertComment(token, parent)

    def elementInScope(self, target: Any, variant: str | None = None) -> Any:
        """Whether ``target`` (an element or a name) is in the given scope."""
        name = target.nameTuple if hasattr(target, "nameTuple") else target
        if isinstance(name, str):
            name = (HTML_NAMESPACE, name)
        if not self.openElements.names.get(name):
            return False  # not open at all, so in no scope
        return super().elementInScope(target, variant)
