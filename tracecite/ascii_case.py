"""Case as HTML and HTTP compare names: ASCII letters only (tag and attribute names, the refresh
keyword). ``str.lower`` lowers every script's letters, and makes some of them ASCII (the Kelvin
sign becomes a "k"), so a name the parser keeps apart from an ASCII one would match it."""

from __future__ import annotations

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """``text`` with its ASCII capitals lowered, and nothing else changed."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)
