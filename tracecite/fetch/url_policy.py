"""URL rules (docs/reference/fetching.md): which http(s) URLs may be fetched, parsed once by one
strict parser.

The URLs come from untrusted notes, traces and ``Location`` headers, and the usual SSRF bypasses
live in the gaps between URL parsers (WHATWG browsers, ``urllib.parse``, urllib3, curl, glibc's
``getaddrinfo``). So this parser accepts only the narrow subset on which they all agree and
refuses everything else before any network access; the host it returns is the one string that
both the address policy and the connection use.

Decisions (each one a refusal of a form some parser reads differently):

- Only absolute ``http://`` and ``https://`` URLs, exactly two slashes (``http:host`` and
  ``http:/host`` are read as ``http://host`` by browsers): anything else is TC301 (another or no
  scheme) or TC300.
- ASCII control characters, space, DEL and backslash anywhere are TC300: WHATWG strips tabs and
  newlines and turns ``\\`` into ``/``; other parsers keep them.
- Any ``@`` in the authority (even an empty user info) is TC303; ``[`` starting the host is TC304.
- Host: ASCII only (TC305 otherwise: full-width digits and dots, circled letters, ideographic
  full stops and the like become other hosts under IDNA mapping), then only ``[a-z0-9.-]`` in
  LDH labels of at most 63 characters, 253 in all (``%``-escapes, ``_`` and every other character
  are TC300).
- A host whose last label is a number (WHATWG "ends in a number": all digits, or ``0x`` hex) is an
  IPv4 address to browsers and to glibc; it must be canonical dotted decimal (four labels, 0-255,
  no leading zeros) or it is TC300. So ``2130706433``, ``127.1``, ``0x7f.1``, ``0177.0.0.1``,
  ``127.0.0.01``, ``1.2.3.4.5`` and ``example.123`` never reach a resolver.
- A trailing dot (``example.com.``) is TC300: the absolute form is a second spelling of the same
  host that TLS SNI forbids and that virtual hosts and certificate checks treat inconsistently,
  and ``127.0.0.1.`` is an IPv4 address to browsers.
- Port: absent, or the default written exactly ``:80`` (http) / ``:443`` (https). A syntactically
  valid port (only ASCII digits, value at most 65535, including the empty ``:`` and zero-padded
  ``:0443``) that is not written that way is TC302; anything else after the colon (signs, letters,
  full-width digits, values over 65535, a second colon) is TC300.
- Path and query are percent-encoded to an ASCII request target (UTF-8 for non-ASCII; a ``%`` that
  does not start an escape becomes ``%25``; escapes are upper-cased), dot segments are removed
  (RFC 3986 §5.2.4), an empty path is ``/``, and the fragment is dropped. As in browsers (WHATWG
  URL), a segment that is ``.`` or ``..`` once ``%2e`` (any case) is read as a dot is a dot
  segment too: ``/a/b/%2e%2e/c`` asks for ``/a/c``, the page a browser shows. ``%2F`` is not a
  separator. This applies to every URL this module builds: the URL as given, a redirect's
  ``Location`` and a refresh target (both resolved by `follow_redirect`).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError

MAX_URL_LENGTH = 8192
"""Longest canonical URL accepted (a common server limit for the request line)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
# C0 controls, space, DEL and backslash: WHATWG strips or rewrites them, other parsers do not.
_AMBIGUOUS = re.compile(r"[\x00-\x20\x7f\\]")
_HOST_CHARS = re.compile(r"[a-z0-9.\-]+")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?")
_DIGITS = re.compile(r"[0-9]*")
_HEX_NUMBER = re.compile(r"0x[0-9a-f]*")
_DECIMAL_OCTET = re.compile(r"0|[1-9][0-9]{0,2}")
_HEX = frozenset(b"0123456789abcdefABCDEF")
# RFC 3986 pchar without "%" (escapes are handled apart); the query may also hold "/" and "?".
_PATH_SAFE = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/"
)
_QUERY_SAFE = _PATH_SAFE | frozenset(b"?")


@dataclass(frozen=True)
class Target:
    """A URL that passed the URL rules: what to connect to and what to ask for.

    ``host`` is an ASCII lower-case name or a canonical dotted-decimal IPv4 literal (then ``ip`` is
    set); ``port`` is always the scheme's default; ``path`` is the request target (``/`` + path +
    optional ``?query``), ASCII and percent-encoded, never with a fragment.
    """

    scheme: str
    host: str
    port: int
    path: str
    ip: ipaddress.IPv4Address | None

    @property
    def url(self) -> str:
        """The canonical absolute URL, e.g. ``https://example.com/a?b`` (default port omitted)."""
        return f"{self.scheme}://{self.host}{self.path}"


def parse_target(url: str) -> Target:
    """Check ``url`` against the URL rules and return its `Target`, without any network access.

    Raises `FetchError` with TC300 (unparseable or ambiguous, non-canonical IPv4), TC301 (scheme),
    TC302 (port), TC303 (user info), TC304 (IPv6 literal) or TC305 (non-ASCII host).
    """
    if not isinstance(url, str) or not url:
        raise FetchError(Code.URL_INVALID, "empty URL")
    if len(url) > 4 * MAX_URL_LENGTH:
        raise FetchError(Code.URL_INVALID, f"URL longer than {MAX_URL_LENGTH} characters")
    if _AMBIGUOUS.search(url):
        raise FetchError(
            Code.URL_INVALID, "URL contains a control character, space or backslash",
        )
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: no byte sequence to send.
        raise FetchError(Code.URL_INVALID, "URL is not valid Unicode") from None

    scheme, rest = _split_scheme(url)
    if scheme not in _DEFAULT_PORTS:
        raise FetchError(Code.URL_SCHEME, f"scheme {_show(scheme)} is not http or https")
    if not rest.startswith("//"):
        raise FetchError(Code.URL_INVALID, f"{scheme}: must be followed by '//' and a host")
    rest = rest[2:]

    end = len(rest)
    for delimiter in "/?#":
        found = rest.find(delimiter)
        if found != -1:
            end = min(end, found)
    authority, rest = rest[:end], rest[end:]

    if "@" in authority:
        raise FetchError(Code.URL_USERINFO, "URL carries user info ('@' before the host)")
    if authority.startswith("["):
        raise FetchError(Code.URL_IPV6_LITERAL, "IPv6 literal hosts are refused")
    host, colon, port = authority.partition(":")
    host, ip = _check_host(host)
    if colon:
        _check_port(scheme, port)

    target = Target(scheme, host, _DEFAULT_PORTS[scheme], _request_target(rest), ip)
    if len(target.url) > MAX_URL_LENGTH:
        raise FetchError(Code.URL_INVALID, f"URL longer than {MAX_URL_LENGTH} characters")
    return target


def follow_redirect(base: Target, location: str | None) -> Target:
    """Resolve a redirect's ``Location`` against ``base`` (RFC 3986 §5) and check the result.

    A missing or empty ``Location``, one with control characters, spaces or backslashes (which
    browsers rewrite), or one that is not an RFC 3986 reference (a first segment with a colon that
    is no scheme, e.g. ``127.0.0.1:80/``) is TC310. An ``https`` to ``http`` hop is TC309 (checked
    as soon as the scheme is known). The resolved URL then goes through `parse_target` and its
    TC300-TC305 refusals; whether the address is allowed is the address policy's business.
    """
    if location is None:
        raise FetchError(Code.REDIRECT_INVALID, "redirect without a Location header")
    # Surrounding spaces and tabs are header whitespace, not part of the value (RFC 9110 §5.5).
    reference = location.strip(" \t")
    if not reference:
        raise FetchError(Code.REDIRECT_INVALID, "redirect with an empty Location")
    if _AMBIGUOUS.search(reference):
        raise FetchError(
            Code.REDIRECT_INVALID, "Location contains a control character, space or backslash",
        )

    without_fragment = reference.partition("#")[0]
    first_delimiter = min(
        (i for i in (without_fragment.find(c) for c in "/?") if i != -1),
        default=len(without_fragment),
    )
    colon = without_fragment.find(":", 0, first_delimiter)
    if colon != -1:
        scheme = without_fragment[:colon]
        if not _SCHEME.fullmatch(scheme):
            raise FetchError(Code.REDIRECT_INVALID, "Location is not a URI reference")
        if base.scheme == "https" and scheme.lower() == "http":
            raise FetchError(Code.REDIRECT_DOWNGRADE, "redirect from https to http")
        return _redirect_target(reference)
    if reference.startswith("//"):
        return _redirect_target(f"{base.scheme}:{reference}")

    ref_path, question, ref_query = without_fragment.partition("?")
    base_path, base_question, base_query = base.path.partition("?")
    if not ref_path:
        path = base_path
        query = f"?{ref_query}" if question else (f"?{base_query}" if base_question else "")
    else:
        if not ref_path.startswith("/"):
            ref_path = base_path[: base_path.rfind("/") + 1] + ref_path
        path = _remove_dot_segments(ref_path)
        query = f"?{ref_query}" if question else ""
    return _redirect_target(f"{base.scheme}://{base.host}{path}{query}")


def _redirect_target(url: str) -> Target:
    """`parse_target` for a URL the server chose: its refusal names the rule, not the text (the
    ``Location`` header is server content, which reports never echo)."""
    try:
        return parse_target(url)
    except FetchError as exc:
        raise FetchError(exc.code, f"redirect to a URL that is refused: {exc.code.label}") from None


def _split_scheme(url: str) -> tuple[str, str]:
    """Split off a lower-cased scheme; a URL without a valid one is TC301."""
    scheme, colon, rest = url.partition(":")
    if not colon or not _SCHEME.fullmatch(scheme):
        raise FetchError(Code.URL_SCHEME, "no scheme: only absolute http(s) URLs are fetched")
    return scheme.lower(), rest


def _check_host(host: str) -> tuple[str, ipaddress.IPv4Address | None]:
    """Return the lower-cased host and, for an IPv4 literal, its address; refuse the rest."""
    if not host:
        raise FetchError(Code.URL_INVALID, "URL has no host")
    # Before lower-casing: str.lower() maps some non-ASCII letters (KELVIN SIGN) to ASCII.
    if not host.isascii():
        raise FetchError(
            Code.URL_NON_ASCII_HOST, "host is not ASCII (write IDNA 'xn--' labels instead)",
        )
    host = host.lower()
    if not _HOST_CHARS.fullmatch(host):
        raise FetchError(
            Code.URL_INVALID, "host has characters other than letters, digits, '.' and '-'",
        )
    if _ends_in_number(host):
        labels = host.split(".")
        if len(labels) != 4 or not all(
            _DECIMAL_OCTET.fullmatch(label) and int(label) <= 255 for label in labels
        ):
            raise FetchError(
                Code.URL_INVALID, f"host {_show(host)} is an IPv4 address in a non-canonical form",
            )
        return host, ipaddress.IPv4Address(host)
    if host.endswith("."):
        raise FetchError(Code.URL_INVALID, f"host {_show(host)} ends with a dot")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in host.split(".")):
        raise FetchError(Code.URL_INVALID, f"host {_show(host)} is not a valid host name")
    return host, None


def _ends_in_number(host: str) -> bool:
    """WHATWG's "ends in a number": browsers (and glibc) then read the host as IPv4."""
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1]
    return bool(last) and (last.isdigit() or bool(_HEX_NUMBER.fullmatch(last)))


def _check_port(scheme: str, port: str) -> None:
    """Accept only the default port written plainly; see the module docstring for the codes."""
    if not _DIGITS.fullmatch(port):
        raise FetchError(Code.URL_INVALID, f"port {_show(port)} is not a number")
    significant = port.lstrip("0")
    if len(significant) > 5 or int(significant or "0") > 65535:
        raise FetchError(Code.URL_INVALID, f"port {_show(port)} is out of range")
    if port != str(_DEFAULT_PORTS[scheme]):
        raise FetchError(
            Code.URL_PORT,
            f"port {_show(port)} is not {scheme}'s default, written ':{_DEFAULT_PORTS[scheme]}'",
        )


def _request_target(rest: str) -> str:
    """Build the ASCII request target from what follows the authority; drop the fragment."""
    rest = rest.partition("#")[0]
    path, question, query = rest.partition("?")
    path = _remove_dot_segments(_percent_encode(path, _PATH_SAFE) or "/")
    if question:
        return f"{path}?{_percent_encode(query, _QUERY_SAFE)}"
    return path


def _percent_encode(text: str, safe: frozenset[int]) -> str:
    """Percent-encode the UTF-8 bytes of ``text`` outside ``safe``; keep ``%HH`` escapes.

    Escapes are upper-cased (RFC 3986 §6.2.2.1), as urllib3 and docs/reference/commands.md's stable
    URI write them.
    """
    data = text.encode("utf-8")
    out: list[str] = []
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x25 and i + 2 < len(data) and data[i + 1] in _HEX and data[i + 2] in _HEX:
            out.append(data[i : i + 3].decode("ascii").upper())
            i += 3
            continue
        out.append(chr(byte) if byte in safe else f"%{byte:02X}")
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for a path starting with ``/``: resolve ``.`` and ``..`` segments, and
    their percent-encoded forms as WHATWG URL reads them (``%2e``, ``.%2e``, ``%2E%2e``, …)."""
    if "." not in path and "%2" not in path:
        return path  # the common case: no segment can be a dot segment
    segments = path.split("/")[1:]
    out: list[str] = []
    dots = 0
    for segment in segments:
        dots = _dot_segment(segment)
        if dots == 2:
            if out:
                out.pop()
        elif not dots:
            out.append(segment)
    if dots:
        out.append("")  # a path ending in a dot segment ends in "/"
    return "/" + "/".join(out)


def _dot_segment(segment: str) -> int:
    """1 for a ``.`` segment, 2 for ``..`` (either possibly percent-encoded), else 0."""
    if len(segment) > 6 or not segment:
        return 0
    # "%2e" in any case is a dot (WHATWG "single-dot" and "double-dot" segments); "%2F" stays
    # an ordinary character of the segment, never a separator.
    decoded = segment.replace("%2e", ".").replace("%2E", ".")
    if decoded == ".":
        return 1
    if decoded == "..":
        return 2
    return 0


def _show(text: str, limit: int = 40) -> str:
    """Quote an untrusted fragment for a message: ASCII-escaped and truncated."""
    return ascii(text[:limit]) + ("..." if len(text) > limit else "")
