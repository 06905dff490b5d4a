"""SSRF at the command line (issue 6, item 1): hostile URLs in notes and traces, run through
``verify-notes`` and ``verify-urls``, each refused with its TC30x code and no socket opened.

The URL table of tests/fetch/ssrf_urls.py (341 forms) checks ``parse_target`` alone; this checks
that the commands wire every record through the same rules, and that the address policy holds
end to end with names answered by an injected resolver. The audit-hook guard refuses and records
any IPv4/IPv6 socket, connect or name lookup in any thread.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.hardening.conftest import Resolver
from tests.hardening.guards import network_guard
from tracecite.fetch.address_policy import BLOCKS

# (url, code): representative forms from public SSRF bypass lists, one or more per family.
HOSTILE: tuple[tuple[str, str], ...] = (
    # Other schemes.
    ("file:///etc/passwd", "TC301"),
    ("gopher://127.0.0.1:6379/_INFO", "TC301"),
    ("dict://127.0.0.1:11211/stats", "TC301"),
    ("ftp://127.0.0.1/", "TC301"),
    ("data:text/html,<h1>x</h1>", "TC301"),
    ("javascript:alert(1)", "TC301"),
    # IPv4 in integer, octal, hex and short forms; a trailing dot.
    ("http://2130706433/", "TC300"),
    ("http://0177.0.0.1/", "TC300"),
    ("http://0x7f.1/", "TC300"),
    ("http://127.1/", "TC300"),
    ("http://0/", "TC300"),
    ("http://localhost./", "TC300"),
    # IPv6 literals: loopback, mapped, compatible, scoped, unique-local (AWS IMDS over IPv6).
    ("http://[::1]/", "TC304"),
    ("http://[::ffff:127.0.0.1]/", "TC304"),
    ("http://[::127.0.0.1]/", "TC304"),
    ("http://[fe80::1%25eth0]/", "TC304"),
    ("http://[fd00:ec2::254]/latest/meta-data/", "TC304"),
    # User info and "@" tricks; backslashes, tabs, NUL; percent-encoded hosts.
    ("http://user:pass@example.com/", "TC303"),
    ("http://example.com@127.0.0.1/", "TC303"),
    ("http://127.0.0.1\\@example.com/", "TC300"),
    ("http://exa\tmple.com/", "TC300"),
    ("http://127.0.0.1\x00.example.com/", "TC300"),
    ("http://%31%32%37.0.0.1/", "TC300"),
    # Ports: non-default, swapped, out of range.
    ("http://example.com:8080/", "TC302"),
    ("https://example.com:80/", "TC302"),
    ("http://example.com:65536/", "TC300"),
    # Unicode and full-width hosts.
    ("http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3/", "TC305"),
    ("http://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/", "TC305"),
    # Canonical literals that pass the URL rules and meet the address policy.
    ("http://169.254.169.254/latest/meta-data/", "TC306"),
    ("http://100.100.100.200/latest/meta-data/", "TC306"),
    ("http://127.0.0.1/", "TC306"),
    ("http://0.0.0.0/", "TC306"),
    ("http://192.168.0.1/", "TC306"),
    # Names, answered by the injected resolver.
    ("http://metadata.google.internal/computeMetadata/v1/", "TC306"),
    ("http://localhost/", "TC306"),
    ("https://mixed.example/", "TC306"),
    ("http://nat64.example/", "TC306"),
    ("http://mapped.example/", "TC306"),
    ("http://scoped.example/", "TC306"),
    ("http://nowhere.example/", "TC307"),
)

ANSWERS = {
    "metadata.google.internal": ["169.254.169.254"],
    "localhost": ["127.0.0.1", "::1"],
    "mixed.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "10.0.0.1"],
    "nat64.example": ["64:ff9b::7f00:1"],
    "mapped.example": ["::ffff:169.254.169.254"],
    "scoped.example": ["fe80::1%eth0"],
    "nowhere.example": [],
}


def _notes(urls: list[str]) -> str:
    records = [f"claim: claim {i}\nquote: quote {i}\nurl: {url}\n" for i, url in enumerate(urls)]
    return "\n".join(records)


def _trace(urls: list[str]) -> str:
    sources = [{"id": f"s{i}", "uri": url, "content": f"quote {i}"} for i, url in enumerate(urls)]
    citations = [{"source_id": f"s{i}", "quote": f"quote {i}"} for i in range(len(urls))]
    events = [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "fetch"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True, "sources": sources},
        {"type": "answer", "run_id": "r", "claims": [{"text": "t", "citations": citations}]},
    ]
    return "".join(json.dumps(event) + "\n" for event in events)


def test_table_is_representative() -> None:
    assert len(HOSTILE) >= 30
    assert len({url for url, _ in HOSTILE}) == len(HOSTILE)
    assert {code for _, code in HOSTILE} == {f"TC30{n}" for n in range(8)}


def test_verify_notes_refuses_every_hostile_url_without_a_socket(
    cli: Cli, tmp_path: Path, resolver: Resolver,
) -> None:
    resolver.table.update(ANSWERS)
    notes = tmp_path / "hostile.md"
    notes.write_text(_notes([url for url, _ in HOSTILE]), encoding="utf-8")
    with network_guard() as net:
        run = cli("verify-notes", notes, "--json")
    assert net.violations == [] and net.sockets == 0 and net.connects == []
    assert run.exit == 2, run.err
    report = run.json()
    by_record = {f["record"]: f for f in report["findings"]}
    assert len(report["findings"]) == len(HOSTILE)
    for index, (url, code) in enumerate(HOSTILE, start=1):
        finding = by_record[index]
        assert (finding["code"], finding["uri"]) == (code, url), finding
    assert report["summary"]["live"]["unavailable"] == len(HOSTILE)
    assert report["summary"]["live"]["matched"] == 0
    # Each name was looked up once (the injected resolver), nothing else was.
    assert sorted(host for host, _ in resolver.calls) == sorted(ANSWERS)


def test_verify_urls_refuses_every_hostile_web_source_without_a_socket(
    cli: Cli, tmp_path: Path, resolver: Resolver,
) -> None:
    resolver.table.update(ANSWERS)
    trace = tmp_path / "hostile.jsonl"
    trace.write_text(_trace([url for url, _ in HOSTILE]), encoding="utf-8")
    with network_guard() as net:
        run = cli("verify-urls", trace, "--json")
    assert net.violations == [] and net.sockets == 0
    assert run.exit == 2, run.err
    report = run.json()
    # verify-urls checks http(s) sources only; the others are counted as skipped
    # (docs/reference/commands.md).
    web = [(url, code) for url, code in HOSTILE if url.split(":", 1)[0] in ("http", "https")]
    skipped = len(HOSTILE) - len(web)
    assert report["summary"]["live"]["skipped"] == skipped == 6
    got = sorted((f["uri"], f["code"]) for f in report["findings"])
    assert got == sorted(web)
    assert all(f["source_id"] for f in report["findings"])


def _addresses(block_index: int) -> list[str]:
    """First, inner and last address of a block (inner left out where NAT64 would make it
    public: that block is judged by the IPv4 inside)."""
    block = BLOCKS[block_index]
    network = block.network
    first, last = int(network.network_address), int(network.broadcast_address)
    picks = [first, last] if block.judged_by_embedded else [first, first + (last - first) // 3,
                                                           last]
    kind = ipaddress.IPv4Address if network.version == 4 else ipaddress.IPv6Address
    return [str(kind(value)) for value in picks]


def test_every_address_block_is_refused_end_to_end(
    cli: Cli, tmp_path: Path, resolver: Resolver,
) -> None:
    """Every block of the table, through the CLI: a name answering its first, inner or last
    address is refused before any socket. (198.18.0.0/15 is refused for http; https names may
    use it, docs/reference/fetching.md, so http URLs are used throughout.)"""
    urls = []
    for index in range(len(BLOCKS)):
        for n, address in enumerate(_addresses(index)):
            name = f"b{index}-{n}.example"
            resolver.table[name] = [address]
            urls.append(f"http://{name}/")
    notes = tmp_path / "blocks.md"
    notes.write_text(_notes(urls), encoding="utf-8")
    with network_guard() as net:
        run = cli("verify-notes", notes, "--json", "--concurrency", "16")
    assert net.violations == [] and net.sockets == 0
    report = run.json()
    assert run.exit == 2
    assert [f["code"] for f in report["findings"]] == ["TC306"] * len(urls)
    assert len(urls) >= 100


@pytest.mark.parametrize("url", ["http://public.example/", "https://sandbox.example/"])
def test_guard_is_not_vacuous(cli: Cli, tmp_path: Path, resolver: Resolver, url: str) -> None:
    """An allowed public answer does reach for a socket, and the guard stops it (exit 3)."""
    resolver.table["public.example"] = ["93.184.215.14"]
    resolver.table["sandbox.example"] = ["198.18.0.1"]  # https name into 198.18/15: allowed
    notes = tmp_path / "public.md"
    notes.write_text(_notes([url]), encoding="utf-8")
    with network_guard() as net:
        run = cli("verify-notes", notes, "--json")
    assert net.violations, "the guard saw nothing"
    assert run.exit == 3
