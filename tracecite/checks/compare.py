"""``compare`` (docs/reference/commands.md): what changed between two traces' captured sources, by
stable URI.

Each trace is read once; of each stable URI only the digest of its last capture is kept
(SHA-256 of the content as captured), never the content, so comparing two traces takes little
more memory than checking one. Only where the two captures of a URI differ are their lines read
again, to compare the normalised contents (a change of whitespace or composition is no change).
The two traces are read at once, one in a worker process, when there are cores for it and
enough to read (:func:`~tracecite.jobs.read_in_order`).
"""

from __future__ import annotations

import hashlib
import re
from array import array

from tracecite.codes import Code
from tracecite.findings import Changes, Finding
from tracecite.inputs.files import digest_alongside, open_input
from tracecite.inputs.sources import IdTable, TraceChangedError, read_sources_at
from tracecite.inputs.trace import TRACE_CHANGED, scan_trace
from tracecite.jobs import file_size, read_in_order
from tracecite.matching import normalise
from tracecite.stops import Stopped

_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}
_URI = re.compile(r"^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#.*)?$",
                  re.DOTALL)
# A percent-escape, or a lone "%" that does not start one.
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})?")
_NORMAL_ESCAPE = re.compile(r"(%[0-9A-F]{2})")
# A URI already in the stable form but for its fragment: http(s), a lower-case host with no
# port or user, a path, no percent-escape (what the parse below would give back unchanged).
_STABLE = re.compile(r"https?://[a-z0-9.-]+/[^%?#]*(?:\?[^%#]*)?", re.DOTALL)
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def stable_uri(uri: str) -> str:
    """The URI in the form ``compare`` keys on (docs/reference/commands.md).

    Scheme and host lower-cased, the scheme's default port dropped, an empty path after an
    authority becomes ``/``, the fragment dropped, percent-escapes upper-cased and those of
    unreserved characters decoded (a lone ``%`` becomes ``%25``). Never fails: what it cannot
    parse it keeps as it is. ``stable_uri(stable_uri(u)) == stable_uri(u)``.
    """
    base = uri.partition("#")[0]
    if _STABLE.fullmatch(base):  # most URIs: nothing to change but the fragment
        return base
    return _stable_uri_parsed(uri)


def _stable_uri_parsed(uri: str) -> str:
    """:func:`stable_uri` by parsing the URI (what the shortcut must agree with)."""
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

_LATIN1_SPACES = bytes(c for c in range(256) if chr(c).isspace())
# Each whitespace byte of Latin-1 text to a space: then only runs of spaces are left to fold.
_TO_SPACE = bytes.maketrans(_LATIN1_SPACES, b" " * len(_LATIN1_SPACES))


def normalised_utf8(text: str) -> bytes:
    """``normalise(text)`` encoded in UTF-8 (lone surrogates passed through), what ``compare``
    hashes (docs/performance.md#how-it-gets-there).

    Most captured text is Latin-1 (often ASCII), and such text is folded as bytes at C speed,
    without the word list ``str.split`` makes: no character below U+0100 composes or
    decomposes under NFC, so that text is NFC already, and each of its whitespace characters
    becomes a space in one ``bytes.translate``; only runs of spaces are then left to fold.
    Other text goes through :func:`~tracecite.matching.normalise` itself.
    """
    try:
        data = text.encode("latin-1")
    except UnicodeEncodeError:
        return normalise(text).encode("utf-8", "surrogatepass")
    data = data.translate(_TO_SPACE)
    # bytes.split() splits on ASCII whitespace, which is only spaces here after translate.
    data = b" ".join(data.split()) if b"  " in data else data.strip(b" ")
    return data.decode("latin-1").encode("utf-8")


_LATIN1_TEXT = b"L"
_OTHER_TEXT = b"U"
"""What starts the bytes a raw content is hashed as: its Latin-1 bytes when it has them, else
its UTF-8 (two texts give the same bytes only if they are the same text)."""


def raw_digest(content: str) -> bytes:
    """The SHA-256 of a content as it was captured: equal raw digests mean equal contents, so
    their normalised texts are equal too, and only contents that differ are normalised."""
    try:
        data = content.encode("latin-1")  # a copy at memory speed, where UTF-8 is not
    except UnicodeEncodeError:
        digest = hashlib.sha256(_OTHER_TEXT)
        digest.update(content.encode("utf-8", "surrogatepass"))
        return digest.digest()
    digest = hashlib.sha256(_LATIN1_TEXT)
    digest.update(data)
    return digest.digest()


class _Captures:
    """The last capture of each stable URI of one trace (docs/reference/commands.md), without its
    content: the SHA-256 of the content as captured (:func:`raw_digest`), its line, and where
    that line starts, kept in columns by the URI's number.

    A source with ``"content": null`` captured nothing: it is no capture of its URI (an
    earlier capture still counts), only noted in :attr:`uncaptured` for the messages."""

    def __init__(self) -> None:
        self.uris = IdTable()
        self.digests = bytearray()
        self.lines: array[int] = array("q")
        # Per URI, the number of its capture among the trace's sources, in the order the
        # reader saw them; after the reading, the byte offset of that capture's line.
        self.offsets: array[int] = array("q")
        self.uncaptured = IdTable()
        self.seen = 0

    def add(self, source_id: str, uri: str, line: int, content: str | None) -> None:
        """Note a capture (a :data:`~tracecite.inputs.validator.SourceSink`): a later one of a
        URI replaces an earlier one."""
        number, self.seen = self.seen, self.seen + 1
        uri = stable_uri(uri)
        if content is None:
            self.uncaptured.add(uri)
            return
        digest = raw_digest(content)
        if self.uris.add(uri):
            self.digests += digest
            self.lines.append(line)
            self.offsets.append(number)
            return
        at = self.uris.number(uri)
        self.digests[_DIGEST * at:_DIGEST * (at + 1)] = digest
        self.lines[at] = line
        self.offsets[at] = number

    def digest(self, number: int) -> bytes:
        """The raw digest of the URI numbered ``number``."""
        return bytes(self.digests[_DIGEST * number:_DIGEST * (number + 1)])


def _captures(path: str) -> tuple[tuple[Finding, ...], _Captures, str]:
    """A trace's format findings, its captures and its SHA-256 (hashed meanwhile, for the
    run's digest), the trace read once (its citations and source index are not kept)."""
    digest = digest_alongside(path)
    captures = _Captures()
    # The answer read ahead: its long line is then not held by the reading's end.
    scan = scan_trace(path, sink=captures.add, read_ahead=True)
    # The sink sees every source the index holds, in the index's order (inputs.validator).
    offset_at = scan.sources.offset_at
    captures.offsets = array("q", (offset_at(n) for n in captures.offsets))
    return scan.findings, captures, digest()


Lines = list[tuple[int, list[tuple[int, str, bytes]]]]
"""Lines of one trace to read again, in file order: each line's byte offset, and the captures
wanted from it as ``(number, stable URI, raw digest)``."""


def _lines_of(captures: _Captures, wanted: list[tuple[int, str]]) -> Lines:
    """The lines holding the captures of the URIs ``(number, uri)`` in ``wanted``."""
    by_line: dict[int, list[tuple[int, str, bytes]]] = {}
    for number, uri in wanted:
        by_line.setdefault(captures.offsets[number], []).append(
            (number, uri, captures.digest(number)))
    return sorted(by_line.items())


_LINE_GUESS = 16 * 1024
"""Bytes a line read again is taken to weigh, to decide whether the two traces' lines are read
again at once, in two processes (:func:`~tracecite.jobs.read_in_order`): the lines' lengths are
not kept."""


def _weight(lines: tuple[str, Lines]) -> int:
    return len(lines[1]) * _LINE_GUESS


def _normalised_digests(lines: tuple[str, Lines]) -> dict[int, bytes] | None:
    """The SHA-256 of the normalised content of each capture wanted on the lines of a trace
    ``(path, lines)``, by the number of its URI, from its line read again (each line once, in
    file order); None if a line no longer holds its capture (the trace changed) or cannot be
    read."""
    path, wanted = lines
    digests: dict[int, bytes] = {}
    opened = open_input(path)  # a regular file still, or it changed
    if isinstance(opened, Finding):
        return None
    try:
        with opened:
            for offset, captures in wanted:
                last: dict[str, str] = {}  # the line's last capture of each stable URI
                for uri, content in read_sources_at(opened, offset).values():
                    if content is not None:
                        last[stable_uri(uri)] = content
                for number, uri, raw in captures:
                    content = last.get(uri)
                    if content is None or raw_digest(content) != raw:
                        return None
                    digests[number] = hashlib.sha256(normalised_utf8(content)).digest()
    except (TraceChangedError, OSError):
        return None
    return digests


def _only_in(trace: str, uncaptured_in_other: bool) -> str:
    """The message of a source captured in one trace only (``trace``: "old" or "new")."""
    if uncaptured_in_other:
        other = "new" if trace == "old" else "old"
        return (f"source captured only in the {trace} trace (the {other} trace has it with "
                "content null)")
    return f"source only in the {trace} trace"


def compare_traces(old: str, new: str, *, jobs: int | None = None,
                   digests: dict[str, str] | None = None,
                   ) -> tuple[list[Finding], Changes | None]:
    """Format findings of both traces, or the differences between them (TC400–TC402).

    ``jobs``: 1 reads the traces one after the other; otherwise (None: one process per core)
    both at once, in this process and a worker, when they are large enough to be worth it.
    ``digests``, if given, gets each trace's SHA-256 by path (for the run's digest)."""
    read = read_in_order(_captures, (old, new), jobs=jobs, size=file_size)
    if read.stopped_by is not None:
        raise Stopped(read.stopped_by)  # as a stop of a serial read would: the run reports it
    (old_findings, old_captures, old_digest), (new_findings, new_captures, new_digest) = \
        read.results()
    if digests is not None:
        digests.update({old: old_digest, new: new_digest})
    if old_findings or new_findings:
        return [*old_findings, *new_findings], None
    added: list[tuple[str, int]] = []
    differ: list[tuple[int, int, str]] = []  # captured differently: normalised, they may not
    for number, uri in enumerate(new_captures.uris):
        before = old_captures.uris.number(uri)
        if before < 0:
            added.append((uri, new_captures.lines[number]))
        elif old_captures.digest(before) != new_captures.digest(number):
            differ.append((before, number, uri))
    changed: list[tuple[str, int]] = []
    if differ:
        # Both traces' lines read again at once too, one in a worker, when they are many.
        again = read_in_order(_normalised_digests, (
            (old, _lines_of(old_captures, [(b, uri) for b, _, uri in differ])),
            (new, _lines_of(new_captures, [(n, uri) for _, n, uri in differ])),
        ), jobs=jobs, size=_weight)
        if again.stopped_by is not None:
            raise Stopped(again.stopped_by)
        before_digests, after_digests = again.results()
        if before_digests is None or after_digests is None:  # the old one named first
            path = old if before_digests is None else new
            return [Finding(Code.INPUT_UNREADABLE, TRACE_CHANGED, file=path)], None
        changed = [(uri, new_captures.lines[n]) for b, n, uri in differ
                   if before_digests[b] != after_digests[n]]
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
