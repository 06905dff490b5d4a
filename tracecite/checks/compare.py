"""``compare`` (docs/reference/commands.md): what changed between two traces' captured sources, by
stable URI.

Each trace is read once; of each stable URI only the digest of its normalised content is
kept (SHA-256), never the content, so comparing two traces takes little more memory than
checking one.
"""

from __future__ import annotations

import hashlib
import re
from array import array

from tracecite.codes import Code
from tracecite.findings import Changes, Finding
from tracecite.inputs.sources import IdTable
from tracecite.inputs.trace import scan_trace
from tracecite.matching import normalise

_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}
_URI = re.compile(r"^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?$",
                  re.DOTALL)
# A percent-escape, or a lone "%" that does not start one.
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})?")
_NORMAL_ESCAPE = re.compile(r"(%[0-9A-F]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def stable_uri(uri: str) -> str:
    """The URI in the form ``compare`` keys on (docs/reference/commands.md).

    Scheme and host lower-cased, the scheme's default port dropped, an empty path after an
    authority becomes ``/``, the fragment dropped, percent-escapes upper-cased and those of
    unreserved characters decoded (a lone ``%`` becomes ``%25``). Never fails: what it cannot
    parse it keeps as it is. ``stable_uri(stable_uri(u)) == stable_uri(u)``.
    """
    match = _URI.match(uri)
    if match is None:  # pragma: no cover - every string matches the pattern
        return uri
    scheme, authority, path, query = match.groups()
    if scheme is None and authority is None and ":" in path.split("/", 1)[0]:
        # Neither absolute nor a valid relative reference; decoding could make it look like
        # one with a scheme, so it is kept exactly as it is.
        return uri
    out = []
    if scheme is not None:
        scheme = scheme.lower()
        out.append(scheme + ":")
    if authority is not None:
        out.append("//" + _authority(authority, scheme))
        if not path:
            path = "/"
    out.append(_escapes(path))
    if query is not None:
        out.append("?" + _escapes(query))
    return "".join(out)


def _authority(authority: str, scheme: str | None) -> str:
    userinfo, at, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        end = hostport.find("]")
        host, rest = (hostport[: end + 1], hostport[end + 1:]) if end != -1 else (hostport, "")
        port = rest[1:] if rest.startswith(":") else None
        if port is None and rest:
            host, port = hostport, None
    else:
        host, colon, port_text = hostport.rpartition(":")
        if not colon or ":" in host or (
            port_text and not (port_text.isascii() and port_text.isdigit())
        ):
            host, port = hostport, None
        else:
            port = port_text
    if port is not None and (port == "" or port == _DEFAULT_PORTS.get(scheme or "")):
        port = None
    # Lower-case the host after decoding, but not the hex digits of its escapes.
    parts = _NORMAL_ESCAPE.split(_escapes(host))
    host = "".join(p if i % 2 else p.lower() for i, p in enumerate(parts))
    text = (_escapes(userinfo) + at) + host
    return text if port is None else f"{text}:{port}"


def _escapes(text: str) -> str:
    def fix(m: re.Match[str]) -> str:
        if m.group(1) is None:
            return "%25"
        char = chr(int(m.group(1), 16))
        return char if char in _UNRESERVED else "%" + m.group(1).upper()

    return _ESCAPE.sub(fix, text)


_DIGEST = hashlib.sha256().digest_size


class _Captures:
    """The last capture of each stable URI of one trace (docs/reference/commands.md), without its
    content: the SHA-256 of its normalised text and its line, kept in columns by the URI's number.

    A source with ``"content": null`` captured nothing: it is no capture of its URI (an
    earlier capture still counts), only noted in :attr:`uncaptured` for the messages."""

    def __init__(self) -> None:
        self.uris = IdTable()
        self.digests = bytearray()
        self.lines: array[int] = array("q")
        self.uncaptured = IdTable()

    def add(self, source_id: str, uri: str, line: int, content: str | None) -> None:
        """Note a capture (a :data:`~tracecite.inputs.validator.SourceSink`): a later one of a
        URI replaces an earlier one."""
        uri = stable_uri(uri)
        if content is None:
            self.uncaptured.add(uri)
            return
        data = normalise(content).encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).digest()
        if self.uris.add(uri):
            self.digests += digest
            self.lines.append(line)
            return
        number = self.uris.number(uri)
        self.digests[_DIGEST * number:_DIGEST * (number + 1)] = digest
        self.lines[number] = line

    def digest(self, number: int) -> bytes:
        """The digest of the URI numbered ``number``."""
        return bytes(self.digests[_DIGEST * number:_DIGEST * (number + 1)])


def _captures(path: str) -> tuple[tuple[Finding, ...], _Captures]:
    """A trace's format findings and its captures, the trace read once (its citations and
    source index are not kept)."""
    captures = _Captures()
    return scan_trace(path, sink=captures.add).findings, captures


def _only_in(trace: str, uncaptured_in_other: bool) -> str:
    """The message of a source captured in one trace only (``trace``: "old" or "new")."""
    if uncaptured_in_other:
        other = "new" if trace == "old" else "old"
        return (f"source captured only in the {trace} trace (the {other} trace has it with "
                "content null)")
    return f"source only in the {trace} trace"


def compare_traces(old: str, new: str) -> tuple[list[Finding], Changes | None]:
    """Format findings of both traces, or the differences between them (TC400–TC402)."""
    old_findings, old_captures = _captures(old)
    new_findings, new_captures = _captures(new)
    if old_findings or new_findings:
        return [*old_findings, *new_findings], None
    added: list[tuple[str, int]] = []
    changed: list[tuple[str, int]] = []
    for number, uri in enumerate(new_captures.uris):
        before = old_captures.uris.number(uri)
        if before < 0:
            added.append((uri, new_captures.lines[number]))
        elif old_captures.digest(before) != new_captures.digest(number):
            changed.append((uri, new_captures.lines[number]))
    removed = [(uri, old_captures.lines[number]) for number, uri in enumerate(old_captures.uris)
               if uri not in new_captures.uris]
    added.sort()
    removed.sort()
    changed.sort()
    findings = [
        *(Finding(Code.SOURCE_ADDED, _only_in("new", u in old_captures.uncaptured), file=new,
                  line=line, uri=u) for u, line in added),
        *(Finding(Code.SOURCE_REMOVED, _only_in("old", u in new_captures.uncaptured), file=old,
                  line=line, uri=u) for u, line in removed),
        *(Finding(Code.SOURCE_CHANGED, "captured content differs from the old trace", file=new,
                  line=line, uri=u) for u, line in changed),
    ]
    return findings, Changes(*(tuple(u for u, _ in found) for found in (added, removed, changed)))
