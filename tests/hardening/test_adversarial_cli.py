"""Adversarial servers through the command line (issue 6, item 2).

Each row starts hostile servers on 127.0.0.1 (raw sockets or the route-table server from
tests/fetch/servers.py), writes a one-record notes file and runs ``tracecite verify-notes --json``
in-process, reaching them through ``--connect-to``/``--allow-net``/``--ca-cert`` (or names the
injected resolver answers), one attempt per source (``--retries 0``: retries are
tests/checks/test_retries.py's). Every row must end with its code (or pass), inside the deadline
(wall time < ``--timeout`` + 1 s; rows that expect TC313 must have waited for it), and within
3 × the body cap of traced memory (tracemalloc peak over the whole command, all threads).

tests/fetch/ (test_fetcher.py, test_connection.py, test_failures.py, test_body.py) covers the
same ground against ``PinnedFetcher`` directly; this is the end-to-end check that the CLI, the
runner and the reporters keep those promises.
"""

from __future__ import annotations

import gzip
import importlib
import itertools
import socket
import ssl
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import trustme

from tests.conftest import Cli, CliResult
from tests.fetch.servers import (
    HTTPTestServer,
    RawConnection,
    Reply,
    Servers,
    chunked,
    head,
    reset_after,
    send_bytes,
    send_outside_tls,
    server_tls_context,
    silent,
    stream,
    trickle,
    zeros_gzip,
)
from tests.hardening.conftest import Resolver
from tracecite.fetch.limits import MAX_BYTES

pytestmark = pytest.mark.network

HOST = "example.test"
QUOTE = "the needle is on this page"
PAGE = f"<p>Some text; {QUOTE}.</p>".encode()
PLAIN = (("Content-Type", "text/plain; charset=utf-8"),)
HTML = (("Content-Type", "text/html; charset=utf-8"),)
MiB = 1024 * 1024
MEMORY_BOUND = 3 * MAX_BYTES
GZIP_BOMB = b"".join(zeros_gzip(50 * MiB))  # ~50 KiB on the wire, 50 MiB decoded


def reply(status: str = "200 OK", headers: tuple[tuple[str, str], ...] = PLAIN,
          body: bytes = b"") -> bytes:
    """A complete HTTP/1.1 reply with Content-Length."""
    return head(status, [*headers, ("Content-Length", str(len(body)))]) + body


def moved(location: str, status: str = "302 Found") -> bytes:
    return reply(status, (("Location", location),))


@dataclass
class Env:
    """What a row's ``start`` gets: servers, the CA, the resolver and the arguments built."""

    servers: Servers
    ca: trustme.CA
    ca_path: str
    resolver: Resolver
    args: list[str] = field(default_factory=list)

    def route(self, port: int, *, tls: bool = False, host: str = HOST) -> None:
        self.args += ["--connect-to", f"{host}:{443 if tls else 80}:127.0.0.1:{port}",
                      "--allow-net", "127.0.0.0/8"]
        if tls and "--ca-cert" not in self.args:
            self.args += ["--ca-cert", self.ca_path]

    def raw(self, script: Callable[[RawConnection], None], *, tls: ssl.SSLContext | None = None,
            read_first: bool = True) -> str:
        """A raw server reached as http(s)://example.test/; returns that URL."""
        server = self.servers.raw(script, tls=tls, read_first=read_first)
        self.route(server.port, tls=tls is not None)
        return f"{'https' if tls is not None else 'http'}://{HOST}/"

    def send(self, data: bytes) -> str:
        return self.raw(send_bytes(data))

    def http(self, routes: dict[str, Reply | Callable[..., Reply]], *,
             tls: ssl.SSLContext | None = None) -> HTTPTestServer:
        server = self.servers.http(routes, tls=tls)
        self.route(server.port, tls=tls is not None)
        return server

    def tls(self, *names: str, expired: bool = False) -> ssl.SSLContext:
        return server_tls_context(self.ca, *(names or (HOST,)), expired=expired)



@dataclass(frozen=True)
class Case:
    id: str
    code: str | None  # None: the quote is on the page, exit 0
    start: Callable[[Env], str]  # starts servers, returns the URL to put in the notes
    timeout: float = 2.0


def _trickle_head(env: Env) -> str:
    return env.raw(trickle(reply(body=QUOTE.encode()), 1.0))


def _trickle_body(env: Env) -> str:
    first = head(headers=[*PLAIN, ("Content-Length", "1000")])
    return env.raw(trickle(b"x" * 1000, 1.0, first=first))


def _endless(first_headers: tuple[tuple[str, str], ...], pieces: object) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        return env.raw(stream(head(headers=first_headers), pieces))  # type: ignore[arg-type]
    return start


def _endless_headers(env: Env) -> str:
    lines = itertools.chain([b"HTTP/1.1 200 OK\r\n"], itertools.repeat(b"X-Header: v\r\n"))
    return env.raw(stream(b"", lines))


def _bomb(body: bytes, coding: str) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        return env.send(reply(headers=(*HTML, ("Content-Encoding", coding)), body=body))
    return start


def _streamed_bomb(env: Env) -> str:
    first = head(headers=[*HTML, ("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")])
    return env.raw(stream(first, chunked(zeros_gzip(10 * 1024 * MiB))))


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def _short_body_then(script_tail: str) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        first = head(headers=[*PLAIN, ("Content-Length", "100000")]) + QUOTE.encode()

        def script(connection: RawConnection) -> None:
            connection.send(first)
            if script_tail == "idle":
                connection.wait(5)
        return env.raw(script)
    return start


def _long_body(quote_first: bool) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        body = QUOTE.encode() + b" smuggled" if quote_first else b"smuggled " + QUOTE.encode()
        length = len(QUOTE) if quote_first else len("smuggled ")
        return env.send(head(headers=[*PLAIN, ("Content-Length", str(length))]) + body)
    return start


def _chain(hops: int) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        routes: dict[str, Reply | Callable[..., Reply]] = {
            f"/{i}": Reply(302, (("Location", f"/{i + 1}"),), b"") for i in range(hops)}
        routes[f"/{hops}"] = Reply(200, PLAIN, QUOTE.encode())
        env.http(routes)
        return f"http://{HOST}/0"
    return start


def _loop(env: Env) -> str:
    env.http({"/": Reply(301, (("Location", "/"),), b"")})
    return f"http://{HOST}/"


def _redirect(location: str, *, status: str = "302 Found") -> Callable[[Env], str]:
    def start(env: Env) -> str:
        return env.send(moved(location, status))
    return start


def _redirect_to_private_name(env: Env) -> str:
    env.resolver.table["internal.example"] = ["192.168.1.1"]
    return env.send(moved("http://internal.example/admin"))


def _redirect_to_local_port(env: Env) -> str:
    target = env.servers.raw(send_bytes(reply(body=QUOTE.encode())))
    return env.send(moved(f"http://127.0.0.1:{target.port}/"))


def _https_to_http(env: Env) -> str:
    plain = env.servers.raw(send_bytes(reply(body=QUOTE.encode())))
    env.route(plain.port)
    return env.raw(send_bytes(moved(f"http://{HOST}/")), tls=env.tls())


def _http_to_https(env: Env) -> str:
    env.http({"/": Reply(200, PLAIN, QUOTE.encode())}, tls=env.tls())
    return env.send(moved(f"https://{HOST}/"))


def _dns(answers: list[str] | Callable[[str, int], list[str]], *, allow: bool = False,
         ) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        env.resolver.table["dns.example"] = answers
        if allow:
            env.args += ["--allow-net", "127.0.0.0/8"]
        return "http://dns.example/"
    return start


def _slow_lookup(host: str, port: int) -> list[str]:
    time.sleep(3)
    return ["127.0.0.1"]


REBIND_A, REBIND_B = "127.61.0.2", "127.61.0.3"


def _rebinding(env: Env, *, redirect: bool) -> str:
    """A name whose answer changes after the first lookup: A (allowed) then B, then private.

    The connection must go to A: no second lookup for the same hop. With ``redirect``, the
    second hop (same host) is resolved afresh and its new answer must be validated afresh.
    """
    try:
        first = env.servers.http(host=REBIND_A, port=80)
        second = env.servers.http(host=REBIND_B, port=80)
    except OSError as exc:
        pytest.skip(f"cannot listen on port 80 of a loopback address: {exc}")
    if redirect:
        first.routes["/"] = Reply(302, (("Location", "/next"),), b"")
        first.routes["/next"] = Reply(200, PLAIN, QUOTE.encode())
    else:
        first.routes["/"] = Reply(200, PLAIN, QUOTE.encode())
    second.routes["/"] = second.routes["/next"] = Reply(200, PLAIN, b"rebinding target")
    answers = iter([[REBIND_A], ["10.0.0.1"], [REBIND_B]])
    env.resolver.table["rebind.example"] = lambda host, port: next(answers)
    env.args += ["--allow-net", f"{REBIND_A}/32", "--allow-net", f"{REBIND_B}/32"]
    return "http://rebind.example/"


def _tls_case(*names: str, expired: bool = False, trust: bool = True) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        url = env.raw(send_bytes(reply(body=QUOTE.encode())),
                      tls=env.tls(*names, expired=expired))
        if not trust:
            at = env.args.index("--ca-cert")
            del env.args[at:at + 2]
        return url
    return start


def _https_to_plain(env: Env) -> str:
    # Answers in plain HTTP at once, without waiting for a request (it gets a ClientHello).
    server = env.servers.raw(send_bytes(reply(body=QUOTE.encode())), read_first=False)
    env.route(server.port, tls=True)
    return f"https://{HOST}/"


def _tls_handshake_hangs(env: Env) -> str:
    server = env.servers.raw(silent(), read_first=False)
    env.route(server.port, tls=True)
    return f"https://{HOST}/"


def _tls_garbage(env: Env) -> str:
    return env.raw(send_outside_tls(b"HTTP/1.1 200 OK\r\n\r\nnot a TLS record"), tls=env.tls())


def _body(body: bytes, headers: tuple[tuple[str, str], ...] = HTML) -> Callable[[Env], str]:
    def start(env: Env) -> str:
        return env.send(reply(headers=headers, body=body))
    return start


def _refused_port(env: Env) -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env.route(port)
    return f"http://{HOST}/"


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4

CASES: tuple[Case, ...] = (
    # Slow and endless replies.
    Case("one-byte-per-second-reply", "TC313", _trickle_head, timeout=1.5),
    Case("one-byte-per-second-body", "TC313", _trickle_body, timeout=1.5),
    Case("never-answers", "TC313", lambda env: env.raw(silent()), timeout=1),
    Case("endless-chunked-body", "TC314",
         _endless((*PLAIN, ("Transfer-Encoding", "chunked")),
                  chunked(itertools.repeat(b"x" * 65536)))),
    Case("endless-body-without-length", "TC314",
         _endless((*PLAIN, ("Connection", "close")), itertools.repeat(b"y" * 65536, 100))),
    Case("endless-header-block", "TC311", _endless_headers),
    Case("huge-header-line", "TC311",
         lambda env: env.send(b"HTTP/1.1 200 OK\r\nX-Big: " + b"S" * 200_000 + b"\r\n\r\n")),
    Case("too-many-headers", "TC311",
         lambda env: env.send(b"HTTP/1.1 200 OK\r\n" + b"X-Many: v\r\n" * 150 + b"\r\n")),
    Case("huge-status-line", "TC311",
         lambda env: env.send(b"HTTP/1.1 200 " + b"O" * 200_000 + b"\r\n\r\n")),
    # Compression bombs.
    Case("gzip-bomb", "TC314", _bomb(GZIP_BOMB, "gzip")),
    Case("gzip-bomb-nested", "TC314", _bomb(gzip.compress(GZIP_BOMB), "gzip, gzip")),
    Case("gzip-bomb-streamed-10GiB", "TC314", _streamed_bomb),
    Case("deflate-bomb-zlib", "TC314", _bomb(zlib.compress(bytes(50 * MiB), 9), "deflate")),
    Case("deflate-bomb-raw", "TC314", _bomb(_raw_deflate(bytes(50 * MiB)), "deflate")),
    Case("gzip-corrupt", "TC317", _bomb(b"\x1f\x8b\x08\x00garbage", "gzip")),
    # Content-Length lies.
    Case("content-length-larger-then-close", "TC311", _short_body_then("close")),
    Case("content-length-larger-then-idle", "TC313", _short_body_then("idle"), timeout=1),
    Case("content-length-smaller-quote-inside", None, _long_body(quote_first=True)),
    Case("content-length-smaller-quote-in-excess", "TC210", _long_body(quote_first=False)),
    Case("content-length-over-cap", "TC314",
         lambda env: env.raw(trickle(b"x" * 10, 1.0, first=head(
             headers=[*PLAIN, ("Content-Length", str(10**12))])))),
    Case("content-length-conflicting", "TC311",
         lambda env: env.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 9\r\n"
                              b"\r\nhello")),
    # Redirects.
    Case("redirect-loop", "TC308", _loop),
    Case("redirect-chain-of-5", None, _chain(5)),
    Case("redirect-chain-of-6", "TC308", _chain(6)),
    Case("redirect-to-private-literal", "TC306", _redirect("http://10.0.0.1/")),
    Case("redirect-to-metadata", "TC306",
         _redirect("http://169.254.169.254/latest/meta-data/iam/")),
    Case("redirect-to-name-resolving-private", "TC306", _redirect_to_private_name),
    Case("redirect-to-loopback-port", "TC302", _redirect_to_local_port),
    Case("redirect-to-ipv6-loopback", "TC304", _redirect("http://[::1]/", status="307 x")),
    Case("redirect-to-integer-ip", "TC300", _redirect("http://2130706433/")),
    Case("redirect-to-userinfo", "TC303", _redirect(f"http://user@{HOST}/")),
    Case("redirect-to-file", "TC301", _redirect("file:///etc/passwd")),
    Case("redirect-to-gopher", "TC301", _redirect("gopher://127.0.0.1:6379/_FLUSHALL")),
    Case("redirect-to-data", "TC301", _redirect("data:text/plain;base64,SGVsbG8=")),
    Case("redirect-https-to-http", "TC309", _https_to_http),
    Case("redirect-http-to-https", None, _http_to_https),
    Case("redirect-without-location", "TC310", lambda env: env.send(reply("301 Moved"))),
    Case("redirect-location-with-space", "TC310", _redirect("/a b", status="308 x")),
    # DNS answers (the injected resolver).
    Case("dns-public-and-loopback", "TC306", _dns(["93.184.215.14", "127.0.0.1"])),
    Case("dns-allowed-and-private", "TC306", _dns(["127.0.0.1", "10.0.0.1"], allow=True)),
    Case("dns-ipv6-public-and-unique-local", "TC306",
         _dns(["2606:4700:4700::1111", "fd12:3456::1"])),
    Case("dns-nat64-embedding-loopback", "TC306", _dns(["64:ff9b::7f00:1"])),
    Case("dns-mapped-metadata", "TC306", _dns(["::ffff:169.254.169.254"])),
    Case("dns-not-an-address", "TC306", _dns(["127.0.0.1 evil"])),
    Case("dns-no-answers", "TC307", _dns([])),
    Case("dns-lookup-never-returns", "TC313", _dns(_slow_lookup, allow=True), timeout=1),
    Case("dns-rebinding-pinned", None, lambda env: _rebinding(env, redirect=False)),
    Case("dns-rebinding-next-hop-rechecked", "TC306",
         lambda env: _rebinding(env, redirect=True)),
    # TLS.
    Case("tls-wrong-name", "TC312", _tls_case("other.test")),
    Case("tls-expired-certificate", "TC312", _tls_case(HOST, expired=True)),
    Case("tls-unknown-ca", "TC312", _tls_case(HOST, trust=False)),
    Case("tls-to-plain-http-server", "TC312", _https_to_plain),
    Case("tls-handshake-never-completes", "TC313", _tls_handshake_hangs, timeout=1),
    Case("tls-garbage-after-handshake", "TC311", _tls_garbage),
    Case("tls-valid", None, _tls_case(HOST)),
    # Encodings and content-type lies.
    Case("latin1-body-declared-utf8", "TC317", _body(b"caf\xe9 " + QUOTE.encode())),
    Case("declared-charset-latin1", "TC317",
         _body(("café " + QUOTE).encode("latin-1"),
               (("Content-Type", "text/html; charset=iso-8859-1"),))),
    Case("declared-charset-latin1-ascii-body", None,
         _body(QUOTE.encode(), (("Content-Type", "text/html; charset=iso-8859-1"),))),
    Case("declared-charset-utf16-ascii-body", "TC317",
         _body(QUOTE.encode(), (("Content-Type", "text/html; charset=utf-16"),))),
    Case("utf16-body-declared-utf8", "TC317", _body(QUOTE.encode("utf-16"))),
    Case("html-declared-binary-body", "TC317", _body(PNG)),
    Case("gzip-without-content-encoding", "TC317", _body(gzip.compress(QUOTE.encode()))),
    Case("no-content-type-binary", "TC317", _body(PNG, ())),
    Case("no-content-type-utf8", None, _body(QUOTE.encode(), ())),
    Case("image-png", "TC316", _body(PNG, (("Content-Type", "image/png"),))),
    Case("octet-stream", "TC316",
         _body(QUOTE.encode(), (("Content-Type", "application/octet-stream"),))),
    Case("content-encoding-br", "TC316",
         _body(b"\x0b\x02\x80", (*HTML, ("Content-Encoding", "br")))),
    Case("malformed-content-type", "TC316", _body(QUOTE.encode(), (("Content-Type", "html"),))),
    Case("status-404", "TC315", lambda env: env.send(reply("404 Not Found", body=PAGE))),
    Case("status-500", "TC315", lambda env: env.send(reply("500 Oops", body=PAGE))),
    # Broken connections and not-HTTP/1.x replies.
    Case("reset-mid-body", "TC311",
         lambda env: env.raw(reset_after(head(headers=[*PLAIN, ("Content-Length", "100000")])
                                         + QUOTE.encode()))),
    Case("close-mid-chunk", "TC311",
         lambda env: env.send(head(headers=[*PLAIN, ("Transfer-Encoding", "chunked")])
                              + b"1000\r\n" + QUOTE.encode())),
    Case("bad-chunk-size", "TC311",
         lambda env: env.send(head(headers=[*PLAIN, ("Transfer-Encoding", "chunked")])
                              + b"zz\r\n" + QUOTE.encode() + b"\r\n0\r\n\r\n")),
    Case("http-0.9-reply", "TC311", lambda env: env.send(QUOTE.encode() + b"\n")),
    Case("http-2-status-line", "TC311",
         lambda env: env.send(b"HTTP/2 200\r\n\r\n" + QUOTE.encode())),
    Case("closed-without-reply", "TC311", lambda env: env.send(b"")),
    Case("connection-refused", "TC311", _refused_port),
)


def test_case_table() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 60


def _run(cli: Cli, argv: list[str | Path]) -> tuple[CliResult, float, int]:
    """Run the CLI under tracemalloc: result, wall seconds, peak traced bytes."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = cli(*argv)
    finally:
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return result, elapsed, peak


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Import everything a live run imports once, so import-time memory is not measured."""
    for module in ("tracecite.checks.web", "tracecite.fetch.fetcher",
                   "tracecite.visible", "tracecite.reporters.json"):
        importlib.import_module(module)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_adversarial_server(
    case: Case, cli: Cli, tmp_path: Path, servers: Servers, ca: trustme.CA, ca_path: str,
    resolver: Resolver, single_core: None, warm: None,
) -> None:
    env = Env(servers, ca, ca_path, resolver)
    url = case.start(env)
    notes = tmp_path / "notes.md"
    notes.write_text(f"claim: a claim\nquote: {QUOTE}\nurl: {url}\n", encoding="utf-8")
    run, elapsed, peak = _run(cli, ["verify-notes", notes, "--json", "--timeout",
                                    str(case.timeout), "--retries", "0", *env.args])
    print(f"[{case.id}] {elapsed:.2f} s, peak {peak / MiB:.2f} MiB")  # shown with -s
    report = run.json()
    codes = [f["code"] for f in report["findings"]]
    assert codes == ([] if case.code is None else [case.code]), report["findings"]
    assert run.exit == (0 if case.code is None else 2)
    assert elapsed < case.timeout + 1.0, f"{elapsed:.2f} s"
    if case.code == "TC313":
        assert elapsed > case.timeout * 0.9, f"{elapsed:.2f} s: cut before the deadline"
    assert peak < MEMORY_BOUND, f"peak {peak / MiB:.1f} MiB"
    # Nothing the server sent is shown (its page text holds the quote's words).
    assert "needle" not in run.out.replace(str(notes), "")
    if case.id.startswith("dns-rebinding"):
        assert [host for host, _ in resolver.calls].count("rebind.example") == (
            2 if case.code else 1)


def test_streamed_bomb_costs_the_server_little(
    cli: Cli, tmp_path: Path, servers: Servers, ca: trustme.CA, ca_path: str,
    resolver: Resolver, single_core: None,
) -> None:
    """The 10 GiB streamed bomb is cut early: the client stops reading at the cap."""
    sent: list[int] = []
    pieces = chunked(zeros_gzip(10 * 1024 * MiB))

    def counting(connection: RawConnection) -> None:
        first = head(headers=[*HTML, ("Content-Encoding", "gzip"),
                              ("Transfer-Encoding", "chunked")])
        total = 0
        if not connection.send(first):
            return
        for piece in pieces:
            if not connection.send(piece):
                break
            total += len(piece)
            if total > 64 * MiB:
                break
        sent.append(total)

    env = Env(servers, ca, ca_path, resolver)
    url = env.raw(counting)
    notes = tmp_path / "notes.md"
    notes.write_text(f"claim: c\nquote: {QUOTE}\nurl: {url}\n", encoding="utf-8")
    run = cli("verify-notes", notes, "--json", "--timeout", "5", *env.args)
    assert run.codes() == ["TC314"]
    deadline = time.monotonic() + 5
    while not sent and time.monotonic() < deadline:
        time.sleep(0.01)
    # 2 MiB decoded is a few KiB of this stream; socket buffers hold a few MiB at most.
    assert sent and sent[0] < 16 * MiB, sent


@pytest.mark.slow
def test_concurrent_hostile_sources_share_nothing(
    cli: Cli, tmp_path: Path, servers: Servers, ca: trustme.CA, ca_path: str,
    resolver: Resolver, single_core: None,
) -> None:
    """Several hostile servers in one run: each record gets its own code, within one deadline."""
    rows = [case for case in CASES if case.id in (
        "one-byte-per-second-body", "gzip-bomb", "endless-chunked-body", "redirect-loop",
        "http-0.9-reply", "no-content-type-utf8")]
    lines = []
    args: list[str] = []
    for n, case in enumerate(rows):
        env = Env(servers, ca, ca_path, resolver)
        url = case.start(env)
        host = f"h{n}.test"
        # Give each server its own host name.
        for i, arg in enumerate(env.args):
            if arg.startswith(f"{HOST}:"):
                env.args[i] = host + arg[len(HOST):]
        args += env.args
        lines.append(f"claim: c{n}\nquote: {QUOTE}\nurl: {url.replace(HOST, host)}\n")
    notes = tmp_path / "notes.md"
    notes.write_text("\n".join(lines), encoding="utf-8")
    started = time.monotonic()
    run = cli("verify-notes", notes, "--json", "--timeout", "2", "--concurrency", "8",
              "--retries", "0", *args)
    assert time.monotonic() - started < 3.0
    codes = {f["record"]: f["code"] for f in run.json()["findings"]}
    expected = {n + 1: case.code for n, case in enumerate(rows) if case.code}
    assert codes == expected
    assert threading.active_count() < 100
