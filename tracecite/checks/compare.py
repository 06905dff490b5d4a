"""``compare`` (SPEC §3): what changed between two traces' captured sources, by stable URI."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.findings import Changes, Finding
from tracecite.inputs.trace import TraceScan, scan_trace
from tracecite.matching import normalise
from tracecite.model import SourceRef

_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}
_URI = re.compile(r"^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?$",
                  re.DOTALL)
# A percent-escape, or a lone "%" that does not start one.
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})?")
_NORMAL_ESCAPE = re.compile(r"(%[0-9A-F]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def stable_uri(uri: str) -> str:
    """The URI in the form ``compare`` keys on (SPEC §3).

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


@dataclass(frozen=True)
class _Capture:
    digest: bytes
    line: int


def _captures(path: str) -> tuple[TraceScan, dict[str, _Capture]]:
    captures: dict[str, _Capture] = {}

    def record(ref: SourceRef, content: str) -> None:
        data = normalise(content).encode("utf-8", "surrogatepass")
        # The last capture of a URI counts (SPEC §3), so a later one replaces an earlier one.
        captures[stable_uri(ref.uri)] = _Capture(hashlib.blake2b(data, digest_size=16).digest(),
                                                 ref.line)

    return scan_trace(path, sink=record), captures


def compare_traces(old: str, new: str) -> tuple[list[Finding], Changes | None]:
    """Format findings of both traces, or the differences between them (TC400–TC402)."""
    old_scan, old_captures = _captures(old)
    new_scan, new_captures = _captures(new)
    if old_scan.findings or new_scan.findings:
        return [*old_scan.findings, *new_scan.findings], None
    added = sorted(new_captures.keys() - old_captures.keys())
    removed = sorted(old_captures.keys() - new_captures.keys())
    changed = sorted(uri for uri in old_captures.keys() & new_captures.keys()
                     if old_captures[uri].digest != new_captures[uri].digest)
    findings = [
        *(Finding(Code.SOURCE_ADDED, "source only in the new trace", file=new,
                  line=new_captures[u].line, uri=u) for u in added),
        *(Finding(Code.SOURCE_REMOVED, "source only in the old trace", file=old,
                  line=old_captures[u].line, uri=u) for u in removed),
        *(Finding(Code.SOURCE_CHANGED, "captured content differs from the old trace", file=new,
                  line=new_captures[u].line, uri=u) for u in changed),
    ]
    return findings, Changes(tuple(added), tuple(removed), tuple(changed))
