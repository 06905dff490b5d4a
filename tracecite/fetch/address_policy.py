"""Address policy (docs/reference/fetching.md): which resolved or literal addresses a fetch may
connect to.

The policy is an explicit table, `BLOCKS`, read from the IANA IPv4 and IPv6 Special-Purpose
Address Registries: every entry whose "Globally Reachable" is False or N/A, plus multicast and the
IPv6 space outside 2000::/3 that the IPv6 Address Space registry marks "Reserved by IETF".
Python's ``is_private``/``is_global`` flags are not used: they miss CGNAT, multicast, several
IPv6 blocks and every embedded IPv4 form (FETCHER-NOTES).

Decisions:

- No carve-outs inside a refused block: all of 192.0.0.0/24 is refused (docs/reference/fetching.md
  names the /24), including 192.0.0.9 and 192.0.0.10, which the registry marks globally reachable
  (PCP and TURN anycast); likewise all of 2001::/23 (its anycast and ORCHIDv2 sub-entries). No web
  page lives there.
- Top-level entries the registry marks globally reachable are allowed: 192.31.196.0/24 and
  192.175.48.0/24 (AS112), 192.52.193.0/24 (AMT), 2620:4f:8000::/48 (AS112).
- Embedded IPv4 is decoded and named in the reason. Only NAT64's well-known prefix 64:ff9b::/96
  (globally reachable: the answers DNS64 synthesises on IPv6-only networks) is judged by the
  IPv4 inside it. IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, 6to4 2002::/16 and Teredo
  2001::/32 are refused whatever they embed (registry: not globally reachable or N/A); the reason
  also names the embedded IPv4's block when that one is refused too.
- 198.18.0.0/15 (benchmarking) passes only for an https URL whose host is a name (hosted
  sandboxes resolve names there), never for an IP literal or plain http; NAT64 addresses that
  embed it follow the same rule.
- ``--allow-net`` networks win over the table. An IPv4-mapped address is matched against IPv4
  allow networks too (``::ffff:127.0.0.1`` connects to 127.0.0.1 itself); compatible, NAT64,
  6to4 and Teredo addresses are not (they reach a different host: a translator or a relay).
- Zone ids (``fe80::1%eth0``) are stripped before classifying, and the address returned for
  pinning has none: a link-local target would need one, but link-local is refused unless allowed.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tracecite.codes import Code
from tracecite.fetch.errors import FetchError, TemporaryLookupError
from tracecite.fetch.url_policy import Target

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Sequence[str]]
"""``(host, port) -> address strings``, both families, in the resolver's order."""


def _last_32_bits(address: int) -> int:
    return address & 0xFFFF_FFFF


def _six_to_four(address: int) -> int:
    # 2002:AABB:CCDD::/48 carries AA.BB.CC.DD in bits 16-48.
    return (address >> 80) & 0xFFFF_FFFF


def _teredo_client(address: int) -> int:
    # Teredo stores the client's public IPv4 inverted in the last 32 bits (RFC 4380 §4).
    return ~address & 0xFFFF_FFFF


@dataclass(frozen=True)
class Block:
    """One special-purpose block of the address table.

    Addresses in ``network`` are refused, except that ``embedded`` (IPv6 only) extracts an embedded
    IPv4 for the reason and, when ``judged_by_embedded``, for the verdict; ``https_name_ok`` marks
    198.18.0.0/15.
    """

    network: IPNetwork
    name: str
    embedded: Callable[[int], int] | None = None
    judged_by_embedded: bool = False
    https_name_ok: bool = False

    def __str__(self) -> str:
        return f"{self.name} {self.network}"


def _block(
    cidr: str,
    name: str,
    *,
    embedded: Callable[[int], int] | None = None,
    judged_by_embedded: bool = False,
    https_name_ok: bool = False,
) -> Block:
    return Block(ipaddress.ip_network(cidr), name, embedded, judged_by_embedded, https_name_ok)


# First match wins, so a more specific block comes before the block containing it.
BLOCKS: tuple[Block, ...] = (
    # IANA IPv4 Special-Purpose Address Registry, plus multicast (RFC 5771).
    _block("0.0.0.0/8", "this network"),
    _block("10.0.0.0/8", "private"),
    _block("100.64.0.0/10", "shared address space (CGNAT)"),
    _block("127.0.0.0/8", "loopback"),
    _block("169.254.0.0/16", "link-local"),
    _block("172.16.0.0/12", "private"),
    _block("192.0.0.0/24", "IETF protocol assignments"),
    _block("192.0.2.0/24", "documentation (TEST-NET-1)"),
    _block("192.88.99.0/24", "deprecated 6to4 relay anycast"),
    _block("192.168.0.0/16", "private"),
    _block("198.18.0.0/15", "benchmarking", https_name_ok=True),
    _block("198.51.100.0/24", "documentation (TEST-NET-2)"),
    _block("203.0.113.0/24", "documentation (TEST-NET-3)"),
    _block("224.0.0.0/4", "multicast"),
    _block("255.255.255.255/32", "limited broadcast"),
    _block("240.0.0.0/4", "reserved"),
    # IANA IPv6 Special-Purpose Address Registry, plus the IPv6 Address Space registry.
    _block("::/128", "unspecified"),
    _block("::1/128", "loopback"),
    _block("::ffff:0:0/96", "IPv4-mapped", embedded=_last_32_bits),
    _block("::/96", "IPv4-compatible (deprecated)", embedded=_last_32_bits),
    _block("64:ff9b::/96", "NAT64", embedded=_last_32_bits, judged_by_embedded=True),
    _block("64:ff9b:1::/48", "NAT64 local-use"),
    _block("100::/64", "discard-only"),
    _block("100:0:0:1::/64", "dummy prefix"),
    _block("2001::/32", "Teredo", embedded=_teredo_client),
    _block("2001::/23", "IETF protocol assignments"),
    _block("2001:db8::/32", "documentation"),
    _block("2002::/16", "6to4", embedded=_six_to_four),
    _block("3fff::/20", "documentation"),
    _block("5f00::/16", "segment routing (SRv6) SIDs"),
    _block("fc00::/7", "unique-local"),
    _block("fe80::/10", "link-local"),
    _block("fec0::/10", "site-local (deprecated)"),
    _block("ff00::/8", "multicast"),
    # Everything outside 2000::/3 (global unicast) is reserved by the IETF.
    _block("::/3", "reserved by IETF"),
    _block("4000::/2", "reserved by IETF"),
    _block("8000::/1", "reserved by IETF"),
)
"""The refused special-purpose blocks, IPv4 then IPv6; the first block containing an address
decides."""


@dataclass(frozen=True)
class AddressPolicy:
    """Decides whether a fetch may connect to an address.

    ``allow`` holds the ``--allow-net`` networks, which win over the table.
    """

    allow: tuple[IPNetwork, ...] = ()

    def refusal(self, address: IPAddress, *, https_name: bool = False) -> str | None:
        """Return ``None`` when ``address`` is allowed, else a short reason naming the block.

        ``https_name`` is true for an https URL whose host is a name (the 198.18.0.0/15 rule).
        """
        address = _without_zone(address)
        if self._allowed(address):
            return None
        return _table_refusal(address, https_name=https_name)

    def pick(self, target: Target, answers: Sequence[str]) -> IPAddress:
        """Check every resolver answer for ``target``; return the first, to pin the connection to.

        Refuses (TC306) if ANY answer is refused or is not an IP address (a zone id such as
        ``%eth0`` on an IPv6 answer is stripped first); no answers at all is TC307.
        """
        if not answers:
            raise FetchError(Code.DNS_FAILURE, f"{target.host[:80]!a} has no addresses")
        https_name = target.scheme == "https" and target.ip is None
        checked: list[IPAddress] = []
        for answer in answers:
            address = _parse_answer(answer)
            if address is None:
                raise FetchError(
                    Code.ADDRESS_REFUSED,
                    f"{target.host[:80]!a} resolves to {str(answer)[:60]!a}, not an IP address",
                )
            reason = self.refusal(address, https_name=https_name)
            if reason is not None:
                raise FetchError(
                    Code.ADDRESS_REFUSED, f"{target.host[:80]!a} resolves to {address}: {reason}",
                )
            checked.append(address)
        return checked[0]

    def _allowed(self, address: IPAddress) -> bool:
        candidates: list[IPAddress] = [address]
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            candidates.append(address.ipv4_mapped)
        # ``in`` is simply False across IP versions.
        return any(candidate in network for candidate in candidates for network in self.allow)


def system_resolver(host: str, port: int) -> list[str]:
    """Resolve ``host`` with the system resolver (both families, resolver order, no duplicates).

    Any failure, or no IPv4/IPv6 answer, is `FetchError` TC307 (`TemporaryLookupError` when the
    resolver says it is temporary).
    """
    try:
        # Bytes, not str: the host is already ASCII and Python's str path runs the IDNA 2003 codec.
        infos = socket.getaddrinfo(
            host.encode("ascii"), port, socket.AF_UNSPEC, socket.SOCK_STREAM,
        )
    except (OSError, UnicodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        detail = f"{host[:80]!a} does not resolve: {reason}"
        if isinstance(exc, socket.gaierror) and exc.errno == socket.EAI_AGAIN:
            raise TemporaryLookupError(detail) from None  # retried; NXDOMAIN never is
        raise FetchError(Code.DNS_FAILURE, detail) from None
    answers: list[str] = []
    for family, _type, _proto, _canonname, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6):
            address = str(sockaddr[0])
            if address not in answers:
                answers.append(address)
    if not answers:
        raise FetchError(Code.DNS_FAILURE, f"{host[:80]!a} has no IPv4 or IPv6 address")
    return answers


_PREFIX_LENGTH = re.compile(r"0|[1-9][0-9]{0,2}")


def parse_allow_net(spec: str) -> IPNetwork:
    """Parse an ``--allow-net`` value: ``ADDRESS/PREFIX`` or a single address (a /32 or /128).

    Raises `ValueError` with a message that reads after the option's name, however it was
    given (``--allow-net``, the Action's input): host bits set (``127.0.0.1/8``), netmask
    notation, zone ids, brackets and non-canonical IPv4 are refused, not guessed at.
    """
    address, slash, prefix = spec.partition("/")
    if slash and not _PREFIX_LENGTH.fullmatch(prefix):
        raise ValueError(f"{spec!r}: the prefix length must be a decimal number")
    if "%" in address:
        raise ValueError(f"{spec!r}: zone ids are not supported")
    try:
        return ipaddress.ip_network(spec, strict=True)
    except ValueError as exc:
        if "has host bits set" in str(exc):
            loose = ipaddress.ip_network(spec, strict=False)
            raise ValueError(
                f"{spec!r} has host bits set; did you mean {loose}?",
            ) from None
        raise ValueError(f"{spec!r} is not an IP network (CIDR)") from None


def _without_zone(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        return ipaddress.IPv6Address(int(address))
    return address


def _parse_answer(answer: object) -> IPAddress | None:
    """Parse one resolver answer; ``None`` when it is not a plain IPv4 or IPv6 address."""
    if not isinstance(answer, str):
        return None
    text = answer
    if ":" in text:
        # A zone id is only meaningful (and only stripped) on IPv6.
        text = text.partition("%")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _table_refusal(address: IPAddress, *, https_name: bool) -> str | None:
    """Look ``address`` up in `BLOCKS`; embedded IPv4 is judged by the IPv4 rows."""
    for block in BLOCKS:
        if address not in block.network:
            continue
        if block.https_name_ok and https_name:
            return None
        if block.embedded is None:
            return str(block)
        inner = ipaddress.IPv4Address(block.embedded(int(address)))
        inner_reason = _table_refusal(inner, https_name=https_name)
        if inner_reason is None:
            return None if block.judged_by_embedded else f"{block} (embeds {inner})"
        return f"{block} embedding {inner_reason}"
    return None
