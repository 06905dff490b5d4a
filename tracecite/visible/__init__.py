"""Visible text of an HTML page: what a browser's ``innerText`` shows with scripts off
(docs/reference/fetching.md).

The page is parsed with html5lib (scripting off, so ``<noscript>`` content is ordinary, visible
markup) into a C ElementTree (:mod:`~tracecite.visible.parser`), which is then walked without
recursion (:mod:`~tracecite.visible.render`). With the ``fast`` extra, lexbor parses the page
instead and its document becomes the same tree (:mod:`~tracecite.visible.lexbor`; pages it
does not suit still go to html5lib). Block boundaries, table rows and ``<br>`` become
``"\\n"``, table cells ``"\\t"``; inline elements add nothing, so ``<b>foo</b><i>bar</i>`` is
``foobar``. Whitespace counts carry no meaning: callers normalise (NFC, then every
``str.isspace`` run to one space, then strip) before matching.

Not visible, following docs/reference/fetching.md and the browser's default rendering: ``<head>``
(``<title>``, ``<meta>``, ``<link>``), ``<script>``, ``<style>``, ``<template>``, comments,
attribute values, ``[hidden]`` elements, ``<textarea>`` text, a closed ``<details>`` except its
first ``<summary>``, a ``<dialog>`` without ``open``, ``<noembed>``, ``<noframes>``, ``<datalist>``,
``<rp>``, ``<param>``, the fallback content of ``<iframe>``, ``<video>``, ``<audio>``, ``<meter>``
and ``<progress>`` (``<embed>`` is void: it has none), SVG ``<title>``/``<desc>``/``<metadata>``
(and SVG character data outside ``<text>``, which SVG never paints), MathML ``<annotation>``/
``<annotation-xml>`` (and all but the first child of ``<semantics>``), and every element whose
inline ``style`` (:mod:`~tracecite.visible.style`) makes it ``display: none`` or ``visibility:
hidden``/``collapse``. Of a ``<select>``, the text of its options (all of them, among its
descendants) is visible, one per line, and nothing else in it, as in Chromium's ``innerText``. The
fallback content of ``<canvas>`` and ``<object>`` (nested objects included) is visible: with scripts
off a canvas draws nothing and a browser renders its fallback instead, and TraceCite loads no
sub-resource, so an object is never rendered and a browser shows its fallback.

An inline ``text-transform`` (``uppercase``, ``lowercase``, ``capitalize``; inherited, reset by
``none`` and by form controls, as in the UA stylesheet) is applied as ``innerText`` applies it:
full case mappings (``ß`` in capitals is ``SS``), and capitalize as Chromium does it
(:mod:`~tracecite.visible.transform`). Out of scope: ``full-width``, ``full-size-kana`` and
MathML's ``math-auto`` (they change the form of characters, not their case: such text is kept
as written), and the language-specific mappings a ``lang`` attribute selects (Turkish dotted
``i``, Greek accents in capitals).

Stylesheets (``<style>`` rules, linked CSS) are not applied (docs/reference/fetching.md): text that
a page hides or transforms with CSS is still found here, and text CSS shows as generated content is
not.

XHTML is handled as HTML: docs/reference/fetching.md names html5lib for both, so there is no
separate entry point. The one difference that matters: a browser parses ``application/xhtml+xml``
with an XML parser, where a self-closed ``<script/>``, ``<style/>``, ``<title/>``, ``<textarea/>``
or ``<iframe/>`` is empty, whereas the HTML parser (like a browser given the same file as
``text/html``) reads the rest of the page as that element's raw text, which is then hidden.
Well-formed XHTML with explicit end tags gives the same text either way.

The parse is bounded (:mod:`~tracecite.visible.limits`): like Chromium, the parser nests
elements at most 512 deep, and a page that needs more than a parse may spend (its time budget,
or more formatting elements or nodes than any real page has) raises :class:`ParseLimitError`
instead of giving a text that a browser would not show.

This package imports neither the fetcher nor urllib3: ``verify-files`` uses it on files alone.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tracecite.visible import lexbor
from tracecite.visible.limits import (
    DEFAULT_BUDGET,
    MAX_DEPTH,
    MAX_FORMATTING,
    MAX_NODES,
    ParseLimitError,
)
from tracecite.visible.parser import BoundedParser
from tracecite.visible.render import render

__all__ = [
    "DEFAULT_BUDGET",
    "MAX_DEPTH",
    "MAX_FORMATTING",
    "MAX_NODES",
    "ParseLimitError",
    "parse_visible",
    "visible_text",
]


def visible_text(html: str, *, budget: float = DEFAULT_BUDGET, parser: str | None = None) -> str:
    """Return the text a browser shows for ``html`` with scripts off, like ``innerText``.

    Block boundaries, table rows and ``<br>`` give ``"\\n"`` and table cells ``"\\t"``; inline
    element boundaries give nothing. Entities are decoded, ``&nbsp;`` stays U+00A0, and the source's
    own whitespace is kept as is, so callers must normalise whitespace (docs/reference/matching.md)
    before matching. Malformed HTML is never an error; elements nested deeper than :data:`MAX_DEPTH`
    are kept, as Chromium keeps them, beside the element at that depth. Raises
    :class:`ParseLimitError` when parsing takes more than ``budget`` seconds, the page keeps more
    than :data:`MAX_FORMATTING` formatting elements open, or makes more than :data:`MAX_NODES`
    elements and comments.

    ``parser`` is ``"lexbor"`` (the ``fast`` extra) or ``"html5lib"``; by default the
    ``TRACECITE_HTML_PARSER`` environment variable says, else lexbor when it is installed.
    Both give the same text (:mod:`~tracecite.visible.lexbor`).
    """
    return render(_parse(html, budget, parser))


def parse_visible(html: str, *, budget: float = DEFAULT_BUDGET,
                  parser: str | None = None) -> tuple[ET.Element, str]:
    """The parsed tree of ``html`` and its visible text (:func:`visible_text`), for a caller
    that reads the tree further (the near-miss diagnosis) without parsing the page again."""
    root = _parse(html, budget, parser)
    return root, render(root)


def _parse(html: str, budget: float, parser: str | None) -> ET.Element:
    """The tree the renderer walks: lexbor's when chosen and the page suits it, else
    html5lib's."""
    if html.startswith("\ufeff"):
        html = html[1:]  # a byte order mark that the caller's decoding kept; browsers drop it
    if lexbor.chosen(parser) == "lexbor":
        root = lexbor.parse(html, budget)
        if root is not None:
            return root
    tree: ET.Element = BoundedParser(budget).parse(html)
    return tree
