"""The nodes of html5lib's tree while it parses: light stand-ins for its ElementTree nodes.

html5lib's tree builder works on nodes of its own, each wrapping the ElementTree element or
comment that ends up in the finished tree. A parse may make hundreds of thousands of them
(:data:`~tracecite.visible.MAX_NODES`), so the memory of each is the memory of a page.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["HTML_NAMESPACE", "Comment", "CopiedElement", "Element"]

HTML_NAMESPACE: Final = "http://www.w3.org/1999/xhtml"


class CopiedElement(ET.Element):
    """The ElementTree element of a copy html5lib made of another element, not of a start tag
    of the source: its adoption agency and its reconstruction of active formatting elements copy
    an ``<a>`` left open across blocks into each of them. It renders as any element does; what
    finds an element again by its start tag in the source skips it
    (:mod:`tracecite.inputs.documents.cite`), or one ``<a>`` would be cited twice."""

    __slots__ = ()


class Element:
    """An element in html5lib's tree: html5lib's ElementTree node (its "etree" builder), lighter.

    html5lib's node holds a ``__dict__``, two lists and a tuple of its own, and creates an
    attribute dict for every element. This one has slots, shares the name tuples, and makes a
    child list or an attribute dict only when there is something to put in it. The methods do
    what html5lib's do, quirks included (``childNodes`` lists only the children appended, not
    those inserted before another), so the tree is the same; one does less work: inserting
    before a child (foster parenting: content misplaced in a table goes before the table) finds
    that child from the end, where the table nearly always is, instead of copying and searching
    all the children from the start, which made stray content in a table quadratic.
    """

    __slots__ = ("_childNodes", "_element", "name", "nameTuple", "namespace", "parent")

    def __init__(self, name: str, namespace: str | None = None) -> None:
        self.name = name
        self.namespace = namespace
        names = _NAMES.get((namespace, name))
        if names is None:
            tag = name if namespace is None else f"{{{namespace}}}{name}"
            names = (tag, (namespace or HTML_NAMESPACE, name))
            if len(_NAMES) < 4096:  # a worker parses page after page: made-up names are many
                _NAMES[(namespace, name)] = names
        self._element = ET.Element(names[0])
        self.nameTuple = names[1]
        self.parent: Element | None = None
        self._childNodes: list[Any] | None = None

    @property
    def attributes(self) -> dict[str, str]:
        """The element's attributes (a live dict, which html5lib may change)."""
        return self._element.attrib

    @attributes.setter
    def attributes(self, attributes: dict[Any, str]) -> None:
        element = self._element
        if not attributes and not element.items():
            return  # nothing to clear or set: no dict for it
        attrib = element.attrib
        attrib.clear()
        for key, value in attributes.items():
            # A namespaced (prefix, local name, namespace) key becomes "{namespace}name".
            attrib[f"{{{key[2]}}}{key[1]}" if isinstance(key, tuple) else key] = value

    @property
    def childNodes(self) -> Sequence[Any]:
        """The children appended (html5lib's list: those inserted before another are not in it)."""
        return self._childNodes if self._childNodes is not None else ()

    @childNodes.setter
    def childNodes(self, value: Sequence[Any]) -> None:
        # html5lib only ever empties it (reparentChildren), which removes every child.
        del self._element[:]
        self._childNodes = None

    def hasContent(self) -> bool:
        """Whether the element has text or children."""
        return bool(self._element.text or len(self._element))

    def appendChild(self, node: Any) -> None:
        """Append ``node`` as the last child."""
        if self._childNodes is None:
            self._childNodes = [node]
        else:
            self._childNodes.append(node)
        self._element.append(node._element)
        node.parent = self

    def insertBefore(self, node: Any, refNode: Any) -> None:
        """Insert ``node`` before the child ``refNode`` (found from the end)."""
        self._element.insert(_index_from_end(self._element, refNode._element), node._element)
        node.parent = self

    def removeChild(self, node: Any) -> None:
        """Remove the child ``node``."""
        if self._childNodes is not None:
            self._childNodes.remove(node)
        self._element.remove(node._element)
        node.parent = None

    def insertText(self, data: str, insertBefore: Any = None) -> None:
        """Add text at the end, or before the child ``insertBefore``: to the previous child's
        tail, or to this element's text when there is no previous child."""
        element = self._element
        if insertBefore is None:
            index = len(element)
        else:
            index = _index_from_end(element, insertBefore._element)
        if index:
            previous = element[index - 1]
            previous.tail = (previous.tail or "") + data
        else:
            element.text = (element.text or "") + data

    def cloneNode(self) -> Element:
        """A new element with the same name and attributes, and no children."""
        clone = Element(self.name, self.namespace)
        items = self._element.items()
        if items:
            clone._element.attrib.update(items)
        clone.mark_copy()
        return clone

    def mark_copy(self) -> None:
        """Make this new, childless element a copy of another (:class:`CopiedElement`)."""
        copy = CopiedElement(self._element.tag)
        copy.attrib.update(self._element.items())
        self._element = copy

    def reparentChildren(self, newParent: Any) -> None:
        """Move this element's text and children to the end of ``newParent``."""
        # html5lib's steps (its etree node's, then its base node's).
        text = self._element.text
        if newParent.childNodes:
            newParent.childNodes[-1]._element.tail += text
        elif text is not None:
            newParent._element.text = (newParent._element.text or "") + text
        elif not newParent._element.text:
            newParent._element.text = ""
        self._element.text = ""
        for child in self.childNodes:
            newParent.appendChild(child)
        self.childNodes = []


class Comment:
    """A comment in html5lib's tree: its ElementTree comment node, in slots."""

    __slots__ = ("_element", "parent")

    def __init__(self, data: str) -> None:
        self._element = ET.Comment(data)
        self.parent: Element | None = None


_NAMES: dict[tuple[str | None, str], tuple[str, tuple[str, str]]] = {}
"""(namespace, name) → (ElementTree tag, html5lib name tuple), shared by all elements."""


def _index_from_end(parent: ET.Element, child: ET.Element) -> int:
    """The index of ``child`` among ``parent``'s children, searched from the last."""
    for index in range(len(parent) - 1, -1, -1):
        if parent[index] is child:
            return index
    raise ValueError("not a child")
