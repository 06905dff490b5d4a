"""Refreshes: a ``Refresh`` header or ``<meta http-equiv="refresh">`` that a browser follows with
scripts off, read as the HTML standard's "shared declarative refresh steps"
(docs/reference/fetching.md).

The fetcher follows one like a redirect (same URL rules and address policy, counted among the
five) when its delay is at most ``MAX_REFRESH_DELAY`` seconds. Decisions the specification
leaves open:

- Only a 2xx response is looked at: a refresh on an error page does not hide its status.
  ``Refresh`` is read from the headers, before the body; the meta element only in HTML bodies
  (``text/html``, ``application/xhtml+xml``). The header decides over the meta element.
- Several different ``Refresh`` headers are TC310, as several ``Location`` headers are.
- A refresh without a URL (``content="0"``) or whose URL is the page itself (fragments aside) is
  not followed: it would reload the same page for ever. The page is checked as it is.
- A refresh whose content a browser ignores (no delay, junk after it) is ignored; a longer
  delay is not followed (the page stands), and, as in browsers, the first meta element whose
  content parses decides, so a later one is not looked at.
- The meta element is found by a bounded scan of the first ``HEAD_SCAN`` characters of the
  document, not a full parse: comments, ``<!…>``/``<?…>`` declarations, the raw-text elements
  (``script``, ``style``, ``title``, ``textarea``, ``xmp``, ``iframe``, ``noembed``,
  ``noframes``) and ``template`` contents (inert) are skipped; ``noscript`` is markup (scripts
  are off); ``plaintext`` ends the scan. Tag and attribute names and the ``refresh`` keyword are
  ASCII case-insensitive; values are double-quoted, single-quoted or unquoted; the first of
  duplicate attributes counts. A ``<base href>`` is not applied: a relative URL is resolved
  against the page's own URL.
"""

from __future__ import annotations

import re

from tracecite.ascii_case import ascii_lower

__all__ = ["HEAD_SCAN", "MAX_REFRESH_DELAY", "meta_refresh", "refresh_target"]

MAX_REFRESH_DELAY = 3
"""Seconds: a refresh with a longer delay is not followed."""

HEAD_SCAN = 64 * 1024
"""Characters at the start of a document scanned for a meta refresh."""

_WS = "\t\n\f\r "
_SPACE = re.compile(r"[\t\n\f\r ]*")
_TAG_START = re.compile(r"[A-Za-z]")
_TAG_NAME = re.compile(r"[^\t\n\f\r />]*")
_ATTR_NAME = re.compile(r"[^\t\n\f\r />][^\t\n\f\r /=>]*")
_UNQUOTED = re.compile(r"[^\t\n\f\r >]*")
_DIGITS = re.compile(r"[0-9]*")
_DIGITS_DOTS = re.compile(r"[0-9.]*")
_COMMENT_END = re.compile(r"--!?>")
_RAW_TEXT = frozenset({"script", "style", "title", "textarea", "xmp", "iframe", "noembed",
                       "noframes"})
# In a lowered head, an attribute http-equiv whose value is the refresh keyword, as
# _attributes reads one: the name, spaces, "=", spaces, then the keyword quoted or unquoted (an
# unquoted value ends at a space, ">" or the end).
_REFRESH_ATTRIBUTE = re.compile(
    r"http-equiv[\t\n\f\r ]*=[\t\n\f\r ]*(?:\"refresh\"|'refresh'|refresh(?=[\t\n\f\r >]|\Z))")
def _end(pattern: re.Pattern[str], text: str, position: int) -> int:
    """Where a run of ``pattern`` (which may match nothing) from ``position`` ends."""
    match = pattern.match(text, position)
    return position if match is None else match.end()


def refresh_target(content: str) -> tuple[int, str | None] | None:
    """The delay (seconds, whole) and URL (None: the page itself) of a refresh's content, or
    None when a browser would ignore it (the HTML standard's declarative refresh steps)."""
    position = _end(_SPACE, content, 0)
    digits = content[position:_end(_DIGITS, content, position)]
    position += len(digits)
    if not digits and not content.startswith(".", position):
        return None
    # Ten significant digits are far over the limit already, and int() refuses long strings.
    delay = int(digits.lstrip("0")[:10] or "0")
    position = _end(_DIGITS_DOTS, content, position)
    if position == len(content):
        return delay, None
    if content[position] not in ";," + _WS:
        return None
    position = _end(_SPACE, content, position)
    if content.startswith((";", ","), position):
        position += 1
    position = _end(_SPACE, content, position)
    if position == len(content):
        return delay, None
    return delay, _refresh_url(content, position)


def _refresh_url(content: str, position: int) -> str:
    """The URL part of a refresh's content from ``position``: ``url =`` and quotes removed."""
    start = position
    if content.startswith(("u", "U"), position):
        if ascii_lower(content[position + 1:position + 3]) != "rl":
            return content[start:]
        position = _end(_SPACE, content, position + 3)
        if not content.startswith("=", position):
            return content[start:]
        position = _end(_SPACE, content, position + 1)
    if content.startswith(("'", '"'), position):
        return content[position + 1:].partition(content[position])[0]
    return content[position:]


def meta_refresh(document: str) -> tuple[int, str | None] | None:
    """The first ``<meta http-equiv="refresh">`` in the start of ``document`` whose content a
    browser reads (see :func:`refresh_target`), or None."""
    head = document[:HEAD_SCAN]
    # What every meta refresh holds (names and the keyword in any ASCII case, which str.lower
    # lowers as _lower does): a head without it is not walked tag by tag, a walk that costs the
    # loader thread milliseconds on a large page. The word first, then the attribute: pages
    # whose scripts name a "refresh" are common.
    lowered = head.lower()
    if "refresh" not in lowered or _REFRESH_ATTRIBUTE.search(lowered) is None:
        return None
    for content in _meta_refresh_contents(head):
        refresh = refresh_target(content)
        if refresh is not None:
            return refresh
    return None


def _meta_refresh_contents(text: str) -> list[str]:
    """The non-empty ``content`` of every ``http-equiv=refresh`` meta element in ``text``."""
    contents: list[str] = []
    position = 0
    while (position := text.find("<", position)) != -1:
        if text.startswith("<!--", position):
            closed = _COMMENT_END.search(text, position + 2)
            position = len(text) if closed is None else closed.end()
            continue
        if text.startswith(("<!", "<?", "</"), position):
            end = text.find(">", position + 2)
            position = len(text) if end == -1 else end + 1
            continue
        if not _TAG_START.match(text, position + 1):
            position += 1  # a "<" that starts no tag is text
            continue
        name = ascii_lower(text[position + 1:_end(_TAG_NAME, text, position + 1)])
        tag = _attributes(text, position + 1 + len(name))
        if tag is None:
            break  # the document ends inside the tag: a browser drops it
        attributes, position = tag
        if name == "meta":
            if (ascii_lower(attributes.get("http-equiv", "")) == "refresh"
                    and attributes.get("content")):
                contents.append(attributes["content"])
        elif name in _RAW_TEXT or name == "template":
            position = _skip_element(text, position, name)
        elif name == "plaintext":
            break
    return contents


def _attributes(text: str, position: int) -> tuple[dict[str, str], int] | None:
    """A start tag's attributes from after its name, and where the tag ends; None when the
    document ends first."""
    attributes: dict[str, str] = {}
    while True:
        while position < len(text) and text[position] in _WS + "/":
            position += 1
        if position >= len(text):
            return None
        if text[position] == ">":
            return attributes, position + 1
        match = _ATTR_NAME.match(text, position)
        assert match is not None  # the character at position is none of whitespace, / and >
        name = ascii_lower(match.group())
        position = _end(_SPACE, text, match.end())
        value = ""
        if text.startswith("=", position):
            position = _end(_SPACE, text, position + 1)
            if text.startswith(("'", '"'), position):
                end = text.find(text[position], position + 1)
                if end == -1:
                    return None
                value, position = text[position + 1:end], end + 1
            else:
                value = text[position:_end(_UNQUOTED, text, position)]
                position += len(value)
        attributes.setdefault(name, value)  # the first of duplicate attributes counts


def _skip_element(text: str, position: int, name: str) -> int:
    """Where the raw text (or template contents) that starts at ``position`` ends."""
    end_tag = re.compile(rf"</{name}[\t\n\f\r />]", re.IGNORECASE)
    if name != "template":
        end = end_tag.search(text, position)
        return len(text) if end is None else end.start()
    # Templates nest; their contents are inert.
    tags = re.compile(r"<(/?)template[\t\n\f\r />]", re.IGNORECASE)
    depth = 1
    for tag in tags.finditer(text, position):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return tag.start()
    return len(text)
