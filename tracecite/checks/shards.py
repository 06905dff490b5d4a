"""Shards of a live run (docs/guides/scale.md): which sources shard K of N checks.

A source belongs to shard ``int.from_bytes(sha256(stable_uri(uri))[:8], "big") % N + 1``: the first
8 bytes of the SHA-256 of its stable URI (docs/reference/commands.md, UTF-8), read as a big-endian
number, modulo N. Every citation of one source is in one shard, so a source is still fetched once,
and the shards of a run cover each source exactly once.
"""

from __future__ import annotations

import hashlib

from tracecite.checks.compare import stable_uri


def shard_of(uri: str, count: int) -> int:
    """The shard (1 to ``count``) that checks the source at ``uri``."""
    digest = hashlib.sha256(stable_uri(uri).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(uri: str, shard: tuple[int, int] | None) -> bool:
    """Whether shard ``(K, N)`` checks the source at ``uri`` (every source, unsharded)."""
    return shard is None or shard_of(uri, shard[1]) == shard[0]
