"""Hypothesis strategies for hostile TraceCite inputs: notes, traces with one broken field, URLs
and HTML. Used by the CI slice (test_fuzz_slice.py) and by the long run (fuzz/run.py).

Each strategy mixes well-formed structure with the fragments that break parsers: control
characters, terminal escapes, workflow commands, invalid UTF-8, lone surrogates, BOMs, CRLF,
very long and very nested values.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# Fragments that have broken parsers somewhere, or that reports must never pass through raw.
HOSTILE_FRAGMENTS = (
    "\x1b[31m", "\x1b]0;title\x07", "\x1b[2J", "\x07", "\x00", "\x7f", "\x85", "\u2028",
    "\u2029", "\ufeff", "\u202e", "\u200b", "\r", "\t", "\x0b", "\x0c", "::error::x",
    "::warning file=a,line=1::w", "##[error]e", "%0A", "%0D", "%25", "%", "<script>", "]]>",
    "\\", "\\\\", "\"", "'", "`", "|", "[x](javascript:x)", "&amp;", "&#0;", "&#x1b;",
    "\U0001f600", "e\u0301", "\uff21", "\u0130", "\u212a", "\ud800", "\udfff", "\xa0",
    "\u3000", ":", "::", "#", "---", "claim:", "url:", "quote:", "http://", "file:",
)
_LINE_SAFE = [f for f in HOSTILE_FRAGMENTS if "\n" not in f]

any_character = st.characters(exclude_categories=())
"""Every code point, lone surrogates included (hypothesis leaves them out by default)."""

hostile_text = st.lists(
    st.sampled_from(HOSTILE_FRAGMENTS) | st.text(any_character, max_size=12), max_size=8,
).map("".join)
"""Text mixing hostile fragments with arbitrary characters (lone surrogates included)."""

line_text = st.lists(
    st.sampled_from(_LINE_SAFE)
    | st.text(st.characters(exclude_characters="\n", exclude_categories=()), max_size=12),
    max_size=8,
).map("".join)
"""Like ``hostile_text`` without line feeds: one line of a notes file."""


def encode(text: str) -> bytes:
    """UTF-8, keeping lone surrogates as the (invalid) bytes they would be."""
    return text.encode("utf-8", "surrogatepass")


# ---- URLs -------------------------------------------------------------------------------------

SCHEMES = ("http", "https", "HTTP", "hTtPs", "file", "gopher", "ftp", "data", "javascript",
           "dict", "ldap", "jar:http", "", "h ttp", "http\t", "1http")
HOSTS = (
    "example.com", "EXAMPLE.com", "example.com.", "xn--bcher-kva.example", "b\u00fccher.example",
    "127.0.0.1", "127.1", "0x7f.1", "0x7f000001", "2130706433", "017700000001", "0177.0.0.1",
    "127.0.0.01", "1.2.3.4.5", "256.0.0.1", "0", "0.0.0.0", "169.254.169.254",
    "[::1]", "[::ffff:127.0.0.1]", "[fe80::1%25eth0]", "[0:0:0:0:0:ffff:7f00:1]", "[::]",
    "localhost", "LOCALHOST", "localtest.me", "127.0.0.1.nip.io", "%31%32%37.0.0.1",
    "\uff11\uff12\uff17.\uff10.\uff10.\uff11", "\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2"
    "\u24e3", "exa\tmple.com", "exa\nmple.com", "a\x00b.example", "a..b", ".example", "-a.example",
    "a" * 64 + ".example", "example.com\\@evil.example", "evil.example#@example.com",
    "user:pw@example.com", "@example.com", "example.com@", "", "example.123", "1e100",
)
PORTS = ("", ":", ":80", ":443", ":0443", ":8080", ":65535", ":65536", ":-1", ":+80", ":0x50",
         ":80:80", ":\uff18\uff10", ": 80", ":99999999999999999999")
PATHS = ("", "/", "/a/b", "/../../etc/passwd", "/%2e%2e/", "/%", "/%zz", "/\u00e9", "/a b",
         "/a\\b", "?q=1", "/p?q#f", "#frag", "/\x1b[31m", "/::error::x", "/%0A%0D", "//x",
         "/" + "a" * 300)


@st.composite
def urls(draw: st.DrawFn) -> str:
    """URL-shaped text: parts from SSRF bypass lists, joined with some noise."""
    if draw(st.integers(0, 9)) == 0:
        return draw(hostile_text)
    scheme = draw(st.sampled_from(SCHEMES))
    slashes = draw(st.sampled_from(("://", "://", "://", ":/", ":", ":\\\\", ":///")))
    host = draw(st.sampled_from(HOSTS) | st.text(st.characters(
        whitelist_categories=("Ll", "Nd"), whitelist_characters=".-"), min_size=1, max_size=20))
    port = draw(st.sampled_from(PORTS))
    path = draw(st.lists(st.sampled_from(PATHS), max_size=3).map("".join))
    noise = draw(st.sampled_from(("", "", "", " ", "\t", "\ufeff", "\x00")))
    return f"{noise}{scheme}{slashes}{host}{port}{path}"


# ---- HTML -------------------------------------------------------------------------------------

TAGS = ("p", "div", "span", "b", "i", "br", "table", "tr", "td", "th", "ul", "li", "pre",
        "script", "style", "template", "noscript", "iframe", "object", "video", "svg", "title",
        "desc", "math", "annotation-xml", "details", "summary", "dialog", "head", "body", "html",
        "select", "option", "textarea", "input", "button", "frameset", "noembed", "plaintext",
        "xmp", "a", "img", "h1", "form", "ruby", "rt")
ATTRIBUTES = ("hidden", 'style="display:none"', 'style="visibility:hidden"',
              'style="display: NONE !important"', 'style="display:contents"', "open",
              'type="hidden"', 'alt="ALT"', 'title="T"', 'style="display:none;display:block"',
              'style="/*x*/display:none"', 'style="content:\'x\'"', 'aria-hidden="true"',
              'style="visibility:collapse"', 'style="\\64isplay:none"', "x", "")
TEXTS = ("word", "two words", "&amp;", "&lt;b&gt;", "&#0;", "&#x1F600;", "&nbsp;", "&bogus;",
         "\u00a0", "\x00", "<!-- c -->", "<!--", "<![CDATA[x]]>", "</p>", "<", ">", "&",
         "\r\n", "\t")


HTML_TOKENS = tuple(
    [f"<{tag} {attribute}>" for tag in TAGS for attribute in ATTRIBUTES[:6]]
    + [f"<{tag}>" for tag in TAGS] + [f"</{tag}>" for tag in TAGS] + list(TEXTS)
)


def html(max_tokens: int = 80) -> st.SearchStrategy[str]:
    """Tag soup: open and close tags (with hiding attributes) in any order, entities, comments
    and hostile text; html5lib's tree builder turns it into deep, odd trees."""
    return st.lists(
        st.sampled_from(HTML_TOKENS) | st.sampled_from(ATTRIBUTES).map(
            lambda attribute: f"<span {attribute}>") | hostile_text,
        max_size=max_tokens,
    ).map("".join)


# ---- notes ------------------------------------------------------------------------------------

KEYS = ("claim", "quote", "url", "Claim", "URL", "title", "claim ", " quote", "url\t", "",
        "x-y", "1key")


@st.composite
def notes_lines(draw: st.DrawFn) -> list[str]:
    """The lines of a notes file: mostly fields, with comments, separators and junk."""
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.integers(0, 9))
        if kind <= 5:
            key = draw(st.sampled_from(KEYS))
            value = draw(urls()) if key.strip().lower() == "url" else draw(line_text)
            value = value.replace("\n", " ")
            lines.append(f"{draw(st.sampled_from(('', ' ', chr(9))))}{key}:{value}")
        elif kind == 6:
            lines.append(draw(st.sampled_from(("", "  ", "---", " --- ", "----", "\t---\t"))))
        elif kind == 7:
            lines.append("# " + draw(line_text))
        else:
            lines.append(draw(line_text))
    return lines


@st.composite
def notes_bytes(draw: st.DrawFn) -> bytes:
    """A notes file: generated lines, LF or CRLF, maybe a BOM, maybe invalid UTF-8."""
    lines = draw(notes_lines())
    newline = draw(st.sampled_from(("\n", "\r\n", "\n", "\r")))
    text = newline.join(lines) + draw(st.sampled_from(("", newline)))
    if draw(st.booleans()):
        text = "\ufeff" + text
    data = encode(text)
    if draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data


# ---- traces -----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                               max_size=3),
    max_leaves=8,
)


@st.composite
def valid_trace(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A trace that passes ``check --evidence``: calls, results with sources, one answer."""
    run_id = draw(st.sampled_from(("r1", "run", "\u00e9t\u00e9")))
    events: list[dict[str, Any]] = []
    sources: list[tuple[str, str]] = []
    for c in range(draw(st.integers(1, 3))):
        call_id = f"c{c}"
        events.append({"type": "tool_call", "run_id": run_id, "call_id": call_id,
                       "tool": draw(st.sampled_from(("search", "fetch", "read")))})
        batch = []
        for _ in range(draw(st.integers(0 if c else 1, 3))):
            source_id = f"s{len(sources)}"
            content = draw(hostile_text) + " evidence words " + draw(hostile_text)
            uri = draw(st.sampled_from(("https://example.com/a", "file:doc.txt")) | urls())
            batch.append({"id": source_id, "uri": uri or "x", "content": content})
            sources.append((source_id, content))
        events.append({"type": "tool_result", "run_id": run_id, "call_id": call_id,
                       "ok": True, "sources": batch})
    claims = []
    for _ in range(draw(st.integers(1, 3))):
        cited = draw(st.lists(st.sampled_from(sources), min_size=1, max_size=3))
        claims.append({"text": draw(hostile_text), "citations": [
            {"source_id": s, "quote": "evidence words"} for s, _ in cited]})
    events.append({"type": "answer", "run_id": run_id, "claims": claims})
    return events


@dataclass(frozen=True)
class BrokenTrace:
    """A trace with one thing broken: its lines (bytes), what was done, and whether the result
    must be an input format error (exit 1) rather than possibly still valid."""

    lines: tuple[bytes, ...]
    breakage: str
    must_fail: bool

    @property
    def data(self) -> bytes:
        return b"\n".join(self.lines) + b"\n"


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a field (dict key or list index) inside an event."""
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            out.append((*prefix, key))
            out.extend(_paths(inner, (*prefix, key)))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            out.append((*prefix, index))
            out.extend(_paths(inner, (*prefix, index)))
    return out


def _at(value: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    for step in path[:-1]:
        value = value[step]
    return value, path[-1]


# Fields whose absence or wrong type is always a format error.
_REQUIRED = {"type", "run_id", "call_id", "tool", "ok", "sources", "id", "uri", "content",
             "claims", "text", "citations", "source_id", "quote"}


@st.composite
def broken_traces(draw: st.DrawFn) -> BrokenTrace:
    """A valid-looking trace with exactly one field or line broken."""
    events = json.loads(json.dumps(draw(valid_trace())))
    kind = draw(st.sampled_from((
        "delete", "retype", "empty", "unknown-field", "bad-json", "not-object", "bad-utf8",
        "duplicate-call", "unknown-call", "second-answer", "no-answer", "run-id", "failed-ok",
        "dangling-citation", "blank-lines", "unknown-type", "truncate", "huge-number",
        "deep-nesting", "lone-surrogate")))
    must_fail = True
    lines: list[bytes] | None = None
    index = draw(st.integers(0, len(events) - 1))
    event = events[index]
    paths = [p for p in _paths(event) if isinstance(p[-1], str)]
    if kind in ("delete", "retype", "empty") and paths:
        path = draw(st.sampled_from(paths))
        parent, key = _at(event, path)
        if kind == "delete":
            del parent[key]
        elif kind == "retype":
            original = parent[key]
            parent[key] = draw(json_values.filter(
                lambda v: type(v) is not type(original) and not (
                    isinstance(v, (int, float)) and isinstance(original, (int, float))
                    and not isinstance(v, bool) and not isinstance(original, bool))))
        else:
            parent[key] = "" if isinstance(parent[key], str) else []
        must_fail = key in _REQUIRED and not (
            kind == "empty" and key in ("content", "text", "sources", "claims", "citations",
                                        "type"))
        if kind == "delete" and key == "sources" and event.get("ok") is False:
            must_fail = False
    elif kind == "lone-surrogate" and paths:
        # Any string of a line (known field or not) holding one is TC123 (or, written
        # without escapes, TC102).
        parent, key = _at(event, draw(st.sampled_from(paths)))
        lone = draw(st.sampled_from(("\ud800", "\udbff", "\udc00", "\udfff")))
        parent[key] = parent[key] + lone if isinstance(parent[key], str) else lone
    elif kind == "unknown-field":
        event[draw(st.text(max_size=8))] = draw(json_values)
        must_fail = False
    elif kind == "duplicate-call":
        events.insert(1, {"type": "tool_call", "run_id": events[0]["run_id"], "call_id": "c0",
                          "tool": "t"})
    elif kind == "unknown-call":
        events.insert(index, {"type": "tool_result", "run_id": events[0]["run_id"],
                              "call_id": "nope", "ok": True, "sources": []})
    elif kind == "second-answer":
        events.append(events[-1])
    elif kind == "no-answer":
        events.pop()
    elif kind == "run-id":
        event["run_id"] = event["run_id"] + "x"
        must_fail = len(events) > 1
    elif kind == "failed-ok":
        results = [e for e in events if e["type"] == "tool_result" and e["sources"]]
        if results:
            results[0]["ok"] = False
        else:
            must_fail = False
    elif kind == "dangling-citation":
        events[-1]["claims"][0]["citations"][0]["source_id"] = "missing"
    elif kind == "unknown-type":
        events.insert(index, {"type": draw(hostile_text), "run_id": events[0]["run_id"]})
        must_fail = False
    elif kind in ("huge-number", "deep-nesting"):
        if kind == "huge-number":  # past Python's 4300-digit int limit
            extra = b"9" * draw(st.integers(1, 6000)) + draw(st.sampled_from((b"", b".5e-999")))
        else:
            depth = draw(st.integers(1, 100_000))
            extra = b"[" * depth + b"]" * depth
        lines = [encode(json.dumps(e)) for e in events]
        lines[index] = lines[index][:-1] + b', "extra": ' + extra + b"}"
        must_fail = False
    if lines is None:
        lines = [encode(json.dumps(e, ensure_ascii=draw(st.booleans()))) for e in events]
    if kind == "bad-json":
        lines[index] = lines[index][: draw(st.integers(0, len(lines[index]) - 1))] + b"{"
    elif kind == "not-object":
        lines[index] = encode(json.dumps(draw(json_values.filter(
            lambda v: not isinstance(v, dict)))))
    elif kind == "bad-utf8":
        at = draw(st.integers(0, len(lines[index])))
        lines[index] = lines[index][:at] + b"\xff\xfe" + lines[index][at:]
    elif kind == "blank-lines":
        lines.insert(index, draw(st.sampled_from((b"", b"  ", b"\t", b"\r"))))
        must_fail = False
    elif kind == "truncate":
        cut = draw(st.integers(1, len(lines[index])))
        must_fail = index < len(lines) - 1 or cut < len(lines[index])
        lines = lines[: index + 1]
        lines[index] = lines[index][:cut]
    if kind in ("delete", "retype", "empty", "lone-surrogate") and not paths:
        must_fail = False
    return BrokenTrace(tuple(lines), kind, must_fail)


def random_bytes(max_size: int = 2000) -> st.SearchStrategy[bytes]:
    """Arbitrary bytes, often shaped like a line-oriented text file."""
    return st.binary(max_size=max_size) | st.lists(
        st.binary(max_size=40) | st.sampled_from((b"{", b"}", b'"', b":", b"claim: ", b"\xff",
                                                  b"\r\n", b"\n", b"\x00")),
        max_size=40).map(b"".join)
