"""Helpers for the visible-text tests: the matcher's normalisation, the text a page shows, the
depth of a parsed tree, and pieces of hostile markup."""

from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest

from tracecite.visible import lexbor, visible_text

PARSERS = ("html5lib", "lexbor")

CANARY = "CANARY-7f3e"
"""Put in hostile pages: no message about them may show it."""

_WHITESPACE = re.compile(r"\s+")  # str patterns: \s is Unicode whitespace, U+00A0 included


@pytest.fixture(scope="module", autouse=True, params=PARSERS)
def html_parser(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every visible-text test runs with each parser: html5lib, the reference, and lexbor (the
    ``fast`` extra), chosen as users choose it, by the environment (inherited by workers)."""
    name: str = request.param
    if name == "lexbor" and not lexbor.available():
        pytest.skip("selectolax is not installed (pip install 'tracecite[fast]')")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(lexbor.PARSER_VARIABLE, name)
        yield name


def norm(text: str) -> str:
    """docs/reference/matching.md normalisation, as the matcher (and the corpus README) applies it:
    NFC, whitespace runs to one space, stripped."""
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
