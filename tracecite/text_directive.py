"""Text directives: the ``#:~:text=`` part of a link that browsers' "copy link to highlight" make
(docs/guides/documents.md#citation-forms).

A link ``https://example.org/page#intro:~:text=prefix-,start,end,-suffix`` names a page
(``https://example.org/page#intro``, what is fetched) and a passage on it. The terms are
percent-decoded as the text-fragments rules say (``-``, ``,`` and ``&`` written inside a term are
percent-encoded); the passage is matched under the project's one matching rule
(:mod:`tracecite.matching`): case and punctuation kept, whitespace runs as one space.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

from tracecite.matching import normalise
from tracecite.model import TextDirective

DELIMITER = ":~:"
"""What starts a URL fragment's directives (after an ordinary fragment, if any)."""

_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _split(url: str) -> tuple[str, str | None]:
    """The URL without its fragment directive, and the directive's text (None: none)."""
    hash_at = url.find("#")
    if hash_at == -1:
        return url, None
    at = url.find(DELIMITER, hash_at)
    if at == -1:
        return url, None
    base = url[:at]
    if base.endswith("#"):
        base = base[:-1]  # nothing but the directive after '#': no fragment is left
    return base, url[at + len(DELIMITER):]


def without_directive(url: str) -> str:
    """The URL to fetch: its ``:~:`` fragment directive removed, an ordinary fragment kept."""
    return _split(url)[0]


def _decode(term: str) -> str:
    """A term percent-decoded (UTF-8); ValueError for an escape that does not decode."""
    if "%" not in term:
        return term
    if _ESCAPE.search(term):
        raise ValueError("a '%' that is not followed by two hex digits")
    try:
        return unquote_to_bytes(term).decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        raise ValueError("percent-escapes (or characters) that are not UTF-8") from None


def parse_text_directive(url: str) -> TextDirective | None:
    """The first text directive of ``url``'s fragment, decoded; None when it has none.

    Raises ValueError, with the reason, for a directive that does not decode: a missing or empty
    term, more than four terms, a bad percent-escape (a document's TC140).
    """
    directive = _split(url)[1]
    if directive is None:
        return None
    for part in directive.split("&"):
        if part.startswith("text="):
            return _terms(part[len("text="):])
    return None


def _terms(value: str) -> TextDirective:
    """``[prefix-,]start[,end][,-suffix]`` decoded (the text-fragments parsing steps)."""
    tokens = value.split(",")
    if not value:
        raise ValueError("the text directive is empty")
    if len(tokens) > 4:
        raise ValueError("the text directive has more than four terms")
    if any(not token for token in tokens):
        raise ValueError("the text directive has an empty term")
    prefix = suffix = None
    if tokens[0].endswith("-"):
        prefix = _decode(tokens.pop(0)[:-1])
        if not prefix or not tokens:
            raise ValueError("the text directive has a prefix but no start")
    if tokens[-1].startswith("-"):
        suffix = _decode(tokens.pop()[1:])
        if not suffix or not tokens:
            raise ValueError("the text directive has a suffix but no start")
    if len(tokens) > 2:
        raise ValueError("the text directive has more than a start and an end")
    start = _decode(tokens[0])
    end = _decode(tokens[1]) if len(tokens) == 2 else None
    for term in (start, end, prefix, suffix):
        if term is not None and not normalise(term):
            raise ValueError("a term of the text directive is only whitespace")
    return TextDirective(start=start, end=end, prefix=prefix, suffix=suffix)


def directive_found(text: str, d: TextDirective) -> bool:
    """Whether ``text`` holds the directive's passage: ``start``, then ``end`` after it (anything
    between), ``prefix`` just before ``start`` and ``suffix`` just after the last of them (only
    whitespace between), all compared under the project's normalisation."""
    page = normalise(text)
    start = normalise(d.start)
    prefix = normalise(d.prefix) if d.prefix else None
    suffix = normalise(d.suffix) if d.suffix else None
    end = normalise(d.end) if d.end else None
    at = page.find(start)
    while at != -1:
        if prefix is None or _ends_with(page, at, prefix):
            after = at + len(start)
            if end is None:
                if suffix is None or _starts_with(page, after, suffix):
                    return True
            else:
                # The earliest start with its prefix leaves the most text for the end: a later
                # start has no end (or suffix) after it that this one has not.
                return _end_found(page, after, end, suffix)
        at = page.find(start, at + 1)
    return False


def _end_found(page: str, after: int, end: str, suffix: str | None) -> bool:
    at = page.find(end, after)
    while at != -1:
        if suffix is None or _starts_with(page, at + len(end), suffix):
            return True
        at = page.find(end, at + 1)
    return False


def _ends_with(page: str, at: int, term: str) -> bool:
    """``term`` right before ``at`` in a normalised ``page``, one space between allowed."""
    if page.endswith(term, 0, at):
        return True
    return at > 0 and page[at - 1] == " " and page.endswith(term, 0, at - 1)


def _starts_with(page: str, at: int, term: str) -> bool:
    """``term`` right after ``at`` in a normalised ``page``, one space between allowed."""
    if page.startswith(term, at):
        return True
    return at < len(page) and page[at] == " " and page.startswith(term, at + 1)
