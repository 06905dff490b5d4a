"""Helpers for the visible-text tests: the matcher's normalisation, the text a page shows, the
depth of a parsed tree, and pieces of hostile markup."""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET

from tracecite.visible import visible_text

CANARY = "CANARY-7f3e"
"""Put in hostile pages: no message about them may show it."""

_WHITESPACE = re.compile(r"\s+")  # str patterns: \s is Unicode whitespace, U+00A0 included


def norm(text: str) -> str:
    """SPEC §2 normalisation, as the matcher (and the corpus README) applies it: NFC, whitespace
    runs to one space, stripped."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def shown(page: str) -> str:
    """The normalised visible text of ``page``."""
    return norm(visible_text(page))


def depths(root: ET.Element) -> dict[ET.Element, int]:
    """Each element's depth below ``root`` (the ``<html>`` element), without recursion."""
    levels = {root: 0}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node:
            levels[child] = levels[node] + 1
            stack.append(child)
    return levels


def distinct(tag: str, count: int) -> str:
    """``count`` open ``tag`` elements with different attributes (Noah's Ark keeps them all)."""
    return "".join(f"<{tag} id={i}>" for i in range(count))
