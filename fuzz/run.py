"""Long fuzz run of TraceCite's command line, in-process (issue 6, item 3). Not run in CI.

One-line invocation (from the repository root; about 13 minutes on two cores, ~130 inputs/s):

    .venv/bin/python fuzz/run.py --inputs 100000 --jobs 2

Every input goes through ``tracecite.cli.main`` (the console script's entry point) as a real
command line on real files:

- ``notes``: mutated notes files → ``check`` in a random output format;
- ``trace``: mutated traces (byte-level and JSON-aware: a field deleted, retyped or replaced)
  → ``check --evidence`` or ``compare`` against a seed trace;
- ``bytes``: random bytes as a notes file or a trace;
- ``url``: mutated URLs in notes and traces → ``verify-notes`` / ``verify-urls``; names are
  answered by an injected resolver (a refused or a public address), and an audit hook turns
  any connection to a non-loopback address into a refused connection before a packet leaves;
- ``response``: mutated raw HTTP replies (status line, headers, body, codings, redirects)
  served by a local server → ``verify-notes`` (the fetcher, the decoders and visible text);
- ``files``: mutated ``file:`` URIs against a root full of traps (symlinks out, FIFOs, a
  directory, an over-cap file) → ``verify-files``; an audit hook records every path opened.

An input "crashes" when: an exception escapes ``main``; the exit code is not 0, 1 or 2; the
``--json`` output does not parse or disagrees with the exit code; another format writes a raw
control character; a secret marker planted in quotes, claims and contents shows up in the
output; a path outside the ``verify-files`` root (or a FIFO) is opened; a name reaches the
system resolver; or one input runs for more than ``--hang`` seconds. Each crash is saved under
``fuzz/crashes/`` with a replay command (``--replay FILE``) and printed; the run ends with
counts per target, exit codes and finding codes, and inputs per second.

Engines: ``mutate`` (default; seeds from ``examples/`` and built-in corpora, 1-4 mutations each,
inputs that produce a new finding signature join the corpus) or ``hypothesis`` (the strategies
of tests/hardening/strategies.py, generation phase only).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import random
import re
import socket
import socketserver
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.hardening.strategies import HOSTILE_FRAGMENTS  # noqa: E402
from tracecite.cli import main  # noqa: E402
from tracecite.fetch import fetcher as fetcher_module  # noqa: E402

TARGETS = ("notes", "trace", "bytes", "url", "response", "files")
SECRET = "QSECRETQ"  # planted in quotes, claims and contents; must never be printed
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")
CRASH_DIR = REPO / "fuzz" / "crashes"
INTERESTING = [b"\x00", b"\xff", b"\x7f", b"\x80", b"\x1b", b"\n", b"\r", b"\r\n", b":", b'"',
               b"{", b"}", b"[", b"]", b",", b"\\", b"%", b"#", b"/", b"..", b"@", b"\t", b" "]
TOKENS = [f.encode("utf-8", "surrogatepass") for f in HOSTILE_FRAGMENTS] + [
    b"\xef\xbb\xbf", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"null", b"true", b"1e999",
    b"-0", b"[]", b"{}", b'""', b"9" * 5000, b"[" * 3000, b"tool_call", b"tool_result",
    b"answer", b"claims", b"citations", b"sources", b"source_id", b"run_id", b"call_id",
    b"Content-Length: 0\r\n", b"Transfer-Encoding: chunked\r\n", b"Content-Encoding: gzip\r\n",
    b"Location: /\r\n", b"HTTP/1.1 302 Found\r\n", b"charset=latin-1", b"file:", b"../",
    b"%2e%2e/", b"http://", b"https://", b"127.0.0.1", b"[::1]", b"0x7f.1", b":80", b":443",
    # JSON escapes of lone surrogates (and a pair, which is text), where a trace carries them.
    b"\\ud800", b"\\udfff", b"\\uDBFF", b"\\udc00x", b"\\ud83d\\ude00", b"%ED%A0%80",
]


# ---- seeds ------------------------------------------------------------------------------------

def _trace(sources: list[tuple[str, str]], quote: str = f"the {SECRET} words") -> bytes:
    events = [
        {"type": "tool_call", "run_id": "r1", "call_id": "c1", "tool": "search"},
        {"type": "tool_result", "run_id": "r1", "call_id": "c1", "ok": True, "sources": [
            {"id": f"s{i}", "uri": uri, "content": content}
            for i, (uri, content) in enumerate(sources)]},
        {"type": "answer", "run_id": "r1", "claims": [
            {"text": f"claim {SECRET}", "citations": [
                {"source_id": f"s{i}", "quote": quote} for i in range(len(sources))]}]},
    ]
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


NOTES_SEEDS = [
    f"claim: c {SECRET}\nquote: q {SECRET}\nurl: https://example.com/\n".encode(),
    f"# h\n\nclaim: a {SECRET}\nquote: b {SECRET}\nurl: u\n---\nquote: x\nclaim: y\nurl: z\n\n"
    .encode(),
    f"\ufeffclaim: a\r\nquote: {SECRET}\r\nurl: http://h/\r\n\r\n---\r\n".encode(),
    b"claim: only\n\nquote: q\nurl: u\nurl: v\nbad line\nKey: v\nclaim:\n",
    b"",
]
TRACE_SEEDS = [
    _trace([("https://example.com/a", f"the {SECRET} words")]),
    _trace([("file:a.txt", f"the {SECRET} words"), ("https://b.example/", "other")]),
    b'{"type":"tool_call","run_id":"r","call_id":"c","tool":"t"}\n'
    b'{"type":"tool_result","run_id":"r","call_id":"c","ok":false,"sources":null}\n'
    b'{"type":"answer","run_id":"r","claims":[]}\n',
    # Lone surrogates (escapes) in a content, a URI and a quote: TC123, never an internal error.
    _trace([("https://example.com/\ud800", f"the {SECRET} words \udfff")], quote="the \udc00"),
]
URL_SEEDS = [u.encode("utf-8", "surrogatepass") for u in (
    "https://example.com/", "http://example.com:80/a?b#c", "http://127.0.0.1/",
    "http://2130706433/", "http://0x7f.1/", "http://[::1]/", "http://user@example.com/",
    "file:///etc/passwd", "gopher://127.0.0.1:6379/_", "http://\uff11\uff12\uff17.0.0.1/",
    "https://b\u00fccher.example/", "http://example.com./", "http://169.254.169.254/",
    "http://8.8.8.8/", "https://xn--bcher-kva.example/%2e%2e/%zz", "javascript:alert(1)",
    "http://exa\tmple.com/", "http://a\\@b/", "HTTP://EXAMPLE.COM:0080/")]
PAGE = f"<html><body><p>before <b>the {SECRET}</b> words after</p></body></html>".encode()


def _response(body: bytes, headers: list[str], status: str = "200 OK") -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return (f"HTTP/1.1 {status}\r\n{head}Content-Length: {len(body)}\r\n\r\n").encode() + body


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data)


RESPONSE_SEEDS = [
    _response(PAGE, ["Content-Type: text/html; charset=utf-8"]),
    _response(PAGE, ["Content-Type: application/xhtml+xml"]),
    _response(json.dumps({"a": [f"the {SECRET} words"]}).encode(),
              ["Content-Type: application/json"]),
    _response(f"plain the {SECRET} words".encode(), ["Content-Type: text/plain"]),
    _response(_gzip(PAGE), ["Content-Type: text/html", "Content-Encoding: gzip"]),
    _response(__import__("zlib").compress(PAGE), ["Content-Type: text/html",
                                                  "Content-Encoding: deflate"]),
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
    + f"{len(PAGE):x}\r\n".encode() + PAGE + b"\r\n0\r\n\r\n",
    _response(b"", ["Location: /next"], "302 Found"),
    _response(PAGE, ["Content-Type: text/html"], "404 Not Found"),
    _response(PAGE, []),
]
FILE_SEEDS = [u.encode() for u in (
    "file:ok.txt", "file:page.html", "file:../outside/secret.txt", "file:link-out",
    "file:linkdir/secret.txt", "file:fifo", "file:fifo-out", "file:dir", "file:big.txt",
    "file:///etc/passwd", "file://localhost/etc/hostname", "file:%2e%2e/outside/secret.txt",
    "file:loop", "file:sub/../ok.txt", "file:ok.txt%00", "file:missing")]
SEEDS: dict[str, list[bytes]] = {
    "notes": NOTES_SEEDS, "trace": TRACE_SEEDS, "url": URL_SEEDS, "response": RESPONSE_SEEDS,
    "files": FILE_SEEDS, "bytes": [b""],
}


def _load_example_seeds() -> None:
    examples = REPO / "examples"
    if not examples.is_dir():
        return
    for path in sorted(examples.iterdir()):
        if path.suffix == ".jsonl":
            TRACE_SEEDS.append(path.read_bytes()[:200_000])
        elif path.suffix == ".md":
            NOTES_SEEDS.append(path.read_bytes()[:200_000])


# ---- mutations --------------------------------------------------------------------------------

def _json_mutation(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    candidates = [i for i, line in enumerate(lines) if line.strip()]
    if not candidates:
        return data
    index = rng.choice(candidates)
    try:
        event = json.loads(lines[index])
    except (ValueError, RecursionError):
        return data
    paths: list[tuple[Any, ...]] = []

    def walk(value: Any, prefix: tuple[Any, ...]) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                paths.append((*prefix, key))
                walk(inner, (*prefix, key))
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                paths.append((*prefix, i))
                walk(inner, (*prefix, i))

    walk(event, ())
    if not paths:
        return data
    path = rng.choice(paths)
    parent = event
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    action = rng.randrange(5)
    replacements: list[Any] = [None, True, False, 0, -1, 1.5, 10**30, "", " ", SECRET, [], {},
                               [None], {"": None}, "\x1b[31m::error::x", "\ud800", "s0", "c1",
                               "r1", "answer", "tool_call", "tool_result"]
    if action == 0 and isinstance(parent, dict):
        del parent[key]
    elif action == 1 and isinstance(parent, list):
        parent.insert(key, rng.choice(replacements))
    elif action == 2 and isinstance(parent, (dict, list)):
        parent[key] = parent[key] if rng.random() < 0.5 else [parent[key]]
    else:
        parent[key] = rng.choice(replacements)
    try:
        lines[index] = json.dumps(event, ensure_ascii=rng.random() < 0.5).encode(
            "utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return data
    if rng.random() < 0.1:  # duplicate or drop a whole line
        if rng.random() < 0.5:
            lines.insert(index, lines[index])
        else:
            del lines[index]
    return b"\n".join(lines)


def mutate(data: bytes, rng: random.Random, corpus: list[bytes], *, jsonish: bool = False,
           max_size: int = 300_000) -> bytes:
    """1-4 random mutations of ``data``."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(12 if jsonish else 11)
        at = rng.randint(0, len(out))
        if op == 0 and out:  # flip a bit
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif op == 1 and out:  # set an interesting byte
            i = rng.randrange(len(out))
            out[i:i + 1] = rng.choice(INTERESTING)
        elif op == 2:  # insert random bytes
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3 and out:  # delete a range
            end = min(len(out), at + rng.randint(1, 64))
            del out[at:end]
        elif op == 4 and out:  # duplicate a range, sometimes many times
            start = rng.randrange(len(out))
            chunk = out[start:start + rng.randint(1, 64)]
            out[at:at] = chunk * (rng.choice((1, 1, 2, 100, 5000)))
        elif op in (5, 6):  # insert a token
            out[at:at] = rng.choice(TOKENS)
        elif op == 7 and corpus:  # splice with another input
            other = rng.choice(corpus)
            cut = rng.randint(0, len(other))
            out = out[:at] + bytearray(other[cut:])
        elif op == 8:  # truncate
            del out[at:]
        elif op == 9 and out:  # swap case of a run (keys, schemes, hex)
            start = rng.randrange(len(out))
            end = min(len(out), start + rng.randint(1, 16))
            out[start:end] = bytes(out[start:end]).swapcase()
        elif op == 10:  # an interesting number
            out[at:at] = str(rng.choice((0, -1, 255, 256, 65535, 65536, 2**31, 2**32, 2**63,
                                         10**20))).encode()
        elif op == 11:
            out = bytearray(_json_mutation(bytes(out), rng))
    return bytes(out[:max_size])


# ---- guards -----------------------------------------------------------------------------------

@dataclass
class Guard:
    """What the audit hook saw during the current input."""

    active: bool = False
    lookups: list[str] = field(default_factory=list)
    blocked_connects: int = 0
    opens: list[str] = field(default_factory=list)
    record_opens: bool = False
    installed: bool = False


GUARD = Guard()


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not GUARD.active:
        return
    if event == "socket.connect":
        address = args[1] if len(args) > 1 else None
        if isinstance(address, tuple):
            try:
                import ipaddress

                loopback = ipaddress.ip_address(str(address[0]).partition("%")[0]).is_loopback
            except ValueError:
                loopback = False
            if not loopback:
                GUARD.blocked_connects += 1
                # Refused before the connect() system call: no packet leaves the machine.
                raise ConnectionRefusedError(111, "fuzz: connection beyond loopback refused")
    elif event == "socket.getaddrinfo":
        host = args[0] if args else None
        GUARD.lookups.append(repr(host))
        raise OSError("fuzz: name lookup refused")
    elif event == "open" and GUARD.record_opens and args and isinstance(args[0], (str, bytes)):
        GUARD.opens.append(os.fsdecode(args[0]))


# ---- the local HTTP server for the response target ----------------------------------------

class _Reply:
    data = b""


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(3)
        received = b""
        try:
            while b"\r\n\r\n" not in received and len(received) < 65536:
                piece = sock.recv(4096)
                if not piece:
                    return
                received += piece
            sock.sendall(_Reply.data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


# ---- the worker -------------------------------------------------------------------------------

@dataclass
class Stats:
    inputs: Counter[str] = field(default_factory=Counter)
    exits: Counter[int] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    crashes: list[dict[str, Any]] = field(default_factory=list)
    blocked_connects: int = 0
    seconds: float = 0.0

    def merge(self, other: Stats) -> None:
        self.inputs.update(other.inputs)
        self.exits.update(other.exits)
        self.codes.update(other.codes)
        self.crashes.extend(other.crashes)
        self.blocked_connects += other.blocked_connects
        self.seconds = max(self.seconds, other.seconds)


class Worker:
    """Runs inputs of every target against ``main`` in a private temporary directory."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.root = workdir / "root"
        self.outside = workdir / "outside"
        self._build_tree()
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.answers = [["192.0.2.1"], ["93.184.215.14"], ["10.0.0.1", "8.8.8.8"], []]
        self.rng = random.Random()
        self.force_format: str | None = None  # replays use the format of the crash
        worker = self

        class Fetcher(fetcher_module.PinnedFetcher):
            def __init__(self, options: Any, resolver: Any = None) -> None:
                super().__init__(options, worker._resolve)

        fetcher_module.PinnedFetcher = Fetcher  # type: ignore[misc]
        # Parse HTML in the loader thread: a worker pool per command would cost more than the
        # command (and a multiprocessing.Pool worker may not start processes of its own).
        os.cpu_count = lambda: 1
        if not GUARD.installed:
            sys.addaudithook(_hook)
            GUARD.installed = True

    def _resolve(self, host: str, port: int) -> list[str]:
        return list(self.rng.choice(self.answers))

    def _build_tree(self) -> None:
        self.root.mkdir()
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text(f"the {SECRET} words")
        os.mkfifo(self.outside / "fifo")
        (self.root / "ok.txt").write_text(f"the {SECRET} words")
        (self.root / "page.html").write_text(f"<p>the {SECRET} words</p>")
        (self.root / "link-out").symlink_to(self.outside / "secret.txt")
        (self.root / "linkdir").symlink_to(self.outside)
        (self.root / "fifo-out").symlink_to(self.outside / "fifo")
        (self.root / "loop").symlink_to("loop")
        (self.root / "dir").mkdir()
        (self.root / "sub").mkdir()
        os.mkfifo(self.root / "fifo")
        (self.root / "big.txt").write_bytes(b"x" * 5000)

    # -- one input ---------------------------------------------------------------------------

    def run(self, target: str, data: bytes) -> tuple[list[str], list[str], int]:
        """Run one input; returns (problems, argv used, exit code)."""
        argv, json_out = self._argv(target, data)
        out, err = io.StringIO(), io.StringIO()
        GUARD.lookups.clear()
        GUARD.opens.clear()
        GUARD.record_opens = target == "files"
        GUARD.active = True
        problems: list[str] = []
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
        except BaseException as exc:
            problems.append(f"exception {type(exc).__name__}: {exc}"[:300])
            code = -1
        finally:
            GUARD.active = False
        text_out, text_err = out.getvalue(), err.getvalue()
        if code not in (0, 1, 2):
            problems.append(f"exit {code}: {text_err[-300:]!r}")
        if json_out and code in (0, 1, 2):
            try:
                report = json.loads(text_out)
                if report.get("exit_code") != code:
                    problems.append("json exit_code disagrees with the exit code")
                self.codes = [f["code"] for f in report.get("findings", [])]
            except ValueError:
                problems.append("--json output does not parse")
                self.codes = []
        else:
            self.codes = []
            if RAW_CONTROL.search(text_out) or RAW_CONTROL.search(text_err):
                problems.append("raw control character in the output")
        if (SECRET in text_out or SECRET in text_err) and not self._secret_is_a_name(data):
            problems.append("secret marker printed")
        if GUARD.lookups:
            problems.append(f"system name lookup: {GUARD.lookups[:3]}")
        if target == "files":
            problems.extend(self._bad_opens())
        return problems, argv, code

    def _secret_is_a_name(self, data: bytes) -> bool:
        # Mutations can move the marker into a URL, an id or a file name, which are shown.
        text = data.decode("utf-8", "replace")
        for line in text.splitlines():
            stripped = line.strip().lower()
            if SECRET in line and (stripped.startswith("url") or '"uri"' in line
                                   or '"id"' in line or '"source_id"' in line
                                   or "http" in stripped or "file:" in stripped):
                return True
        return False

    def _bad_opens(self) -> list[str]:
        bad = []
        outside = str(self.outside.resolve())
        fifo = str((self.root / "fifo").resolve())
        for path in GUARD.opens:
            real = os.path.realpath(path)
            if real.startswith(outside + os.sep) or real == fifo or real.startswith(
                    ("/etc/", "/dev/", "/proc/", "/sys/")):
                bad.append(f"opened {real}")
        return bad

    def _argv(self, target: str, data: bytes) -> tuple[list[str], bool]:
        rng = self.rng
        fmt = self.force_format or rng.choice(("json", "json", "console", "github", "sarif"))
        tail = ["--format", fmt]
        if target == "notes":
            path = self.dir / "input.md"
            path.write_bytes(data)
            return ["check", str(path), *tail], fmt == "json"
        if target in ("trace", "bytes"):
            path = self.dir / ("input.jsonl" if target == "trace" or rng.random() < 0.5
                               else "input.md")
            path.write_bytes(data)
            if target == "trace" and rng.random() < 0.25:
                seed = self.dir / "seed.jsonl"
                seed.write_bytes(rng.choice(TRACE_SEEDS))
                return ["compare", str(seed), str(path), *tail], fmt == "json"
            return ["check", "--evidence", str(path), *tail], fmt == "json"
        if target == "url":
            url = data.replace(b"\n", b" ")
            if rng.random() < 0.5:
                path = self.dir / "urls.md"
                path.write_bytes(b"claim: c\nquote: q\nurl: " + url + b"\n")
                return ["verify-notes", str(path), "--timeout", "2", *tail], fmt == "json"
            path = self.dir / "urls.jsonl"
            uri = url.decode("utf-8", "surrogateescape")
            path.write_bytes(_trace([(uri, "q")], quote="q"))
            return ["verify-urls", str(path), "--timeout", "2", *tail], fmt == "json"
        if target == "response":
            _Reply.data = data
            path = self.dir / "page.md"
            path.write_text(f"claim: c\nquote: the {SECRET} words\nurl: http://fuzz.test/\n")
            return ["verify-notes", str(path), "--timeout", "2", "--connect-to",
                    f"fuzz.test:80:127.0.0.1:{self.port}", "--allow-net", "127.0.0.1/32",
                    "--concurrency", "1", *tail], fmt == "json"
        if target == "files":
            path = self.dir / "files.jsonl"
            uri = data.decode("utf-8", "surrogateescape")
            path.write_bytes(_trace([(uri, f"the {SECRET} words")]))
            return ["verify-files", str(path), "--root", str(self.root), "--max-bytes", "4096",
                    *tail], fmt == "json"
        raise ValueError(target)


# ---- engines ----------------------------------------------------------------------------------

def _crash_record(target: str, data: bytes, argv: list[str], problems: list[str]) -> dict[str, Any]:
    digest = hashlib.sha1(data).hexdigest()[:12]
    CRASH_DIR.mkdir(parents=True, exist_ok=True)
    path = CRASH_DIR / f"{target}-{digest}.json"
    record = {"target": target, "problems": problems, "argv": argv,
              "input": base64.b64encode(data).decode()}
    path.write_text(json.dumps(record, indent=1))
    record["file"] = str(path)
    record["replay"] = f".venv/bin/python fuzz/run.py --replay {path.relative_to(REPO)}"
    return record


def _watchdog(state: dict[str, Any], hang: float) -> None:
    while True:
        time.sleep(1)
        started = state.get("started")
        if started is not None and time.monotonic() - started > hang:
            record = _crash_record(state["target"], state["data"], state.get("argv", []),
                                   [f"hang: more than {hang:g} s"])
            print(f"HANG: {json.dumps(record)[:2000]}", flush=True)
            for fifo in state.get("fifos", []):
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            os._exit(4)


def fuzz_worker(job: tuple[int, int, str, float]) -> Stats:
    """Run ``count`` inputs (round-robin over the targets) with ``seed``; return the stats."""
    count, seed, engine, hang = job
    _load_example_seeds()
    stats = Stats()
    with tempfile.TemporaryDirectory(prefix="tracecite-fuzz-") as name:
        worker = Worker(Path(name))
        worker.rng.seed(seed)
        rng = random.Random(seed)
        state: dict[str, Any] = {"fifos": [worker.root / "fifo", worker.outside / "fifo"]}
        threading.Thread(target=_watchdog, args=(state, hang), daemon=True).start()
        corpora = {t: list(SEEDS[t]) for t in TARGETS}
        signatures: set[tuple[str, int, tuple[str, ...]]] = set()
        seen_problems: set[tuple[str, str]] = set()
        started = time.monotonic()

        def one(target: str, data: bytes) -> None:
            state.update(target=target, data=data, started=time.monotonic())
            problems, argv, code = worker.run(target, data)
            state["started"] = None
            stats.inputs[target] += 1
            stats.exits[code] += 1
            stats.codes.update(worker.codes)
            signature = (target, code, tuple(sorted(set(worker.codes))))
            if signature not in signatures:
                signatures.add(signature)
                corpus = corpora[target]
                corpus.append(data) if len(corpus) < 400 else corpus.__setitem__(
                    rng.randrange(len(corpus)), data)
            for problem in problems:
                key = (target, re.sub(r"\d+", "N", problem)[:80])
                if key in seen_problems:
                    continue
                seen_problems.add(key)
                record = _crash_record(target, data, argv, problems)
                stats.crashes.append(record)
                print(f"CRASH [{target}] {problem}\n  replay: {record['replay']}", flush=True)

        if engine == "hypothesis":
            _hypothesis_engine(count, one, seed)
        else:
            for i in range(count):
                target = TARGETS[i % len(TARGETS)]
                if target == "bytes":
                    data = rng.randbytes(rng.choice((0, 1, 16, 256, 4096)))
                else:
                    corpus = corpora[target]
                    data = mutate(rng.choice(corpus), rng, corpus,
                                  jsonish=target == "trace")
                one(target, data)
                if (i + 1) % 5000 == 0:
                    rate = (i + 1) / (time.monotonic() - started)
                    print(f"[seed {seed}] {i + 1} inputs, {rate:.0f}/s, "
                          f"{len(stats.crashes)} crashes", flush=True)
        stats.blocked_connects = GUARD.blocked_connects
        stats.seconds = time.monotonic() - started
        worker.server.shutdown()
    return stats


def _hypothesis_engine(count: int, one: Callable[[str, bytes], None], seed: int) -> None:
    from hypothesis import strategies as st

    from tests.hardening import strategies as hs

    strategies = {
        "notes": hs.notes_bytes(),
        "trace": hs.broken_traces().map(lambda t: t.data),
        "bytes": hs.random_bytes(),
        "url": hs.urls().map(hs.encode),
        "response": st.tuples(hs.html(), st.sampled_from(RESPONSE_SEEDS)).map(
            lambda pair: _response(hs.encode(pair[0]), ["Content-Type: text/html"])
            if pair[0] else pair[1]),
        "files": (st.sampled_from(FILE_SEEDS) | hs.hostile_text.map(
            lambda t: b"file:" + hs.encode(t))),
    }
    share = max(1, count // len(TARGETS))
    for target, strategy in strategies.items():
        _run_hypothesis(target, strategy, share, one)


def _run_hypothesis(target: str, strategy: Any, examples: int,
                    one: Callable[[str, bytes], None]) -> None:
    from hypothesis import HealthCheck, Phase, given, settings

    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(data: bytes) -> None:
        one(target, data)

    run()


def replay(path: Path) -> int:
    record = json.loads(path.read_text())
    data = base64.b64decode(record["input"])
    with tempfile.TemporaryDirectory(prefix="tracecite-replay-") as name:
        worker = Worker(Path(name))
        recorded = record.get("argv", [])
        if "--format" in recorded[:-1]:
            worker.force_format = recorded[recorded.index("--format") + 1]
        problems, argv, code = worker.run(record["target"], data)
        print(f"target {record['target']}, exit {code}, argv {argv}")
        print("problems:", problems or "none (fixed?)")
        print("input:", repr(data[:2000]))
        if any(p.startswith(("exception", "exit")) for p in problems):
            print("once more with --debug:")
            try:
                main([*argv, "--debug"])
            except BaseException:
                traceback.print_exc()
    return 1 if problems else 0


def cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", choices=("mutate", "hypothesis"), default="mutate")
    parser.add_argument("--hang", type=float, default=30.0, help="seconds for one input")
    parser.add_argument("--replay", type=Path, help="re-run one saved crash")
    args = parser.parse_args()
    if args.replay:
        return replay(args.replay)
    jobs = [(args.inputs // args.jobs + (i < args.inputs % args.jobs), args.seed + i,
             args.engine, args.hang) for i in range(args.jobs)]
    started = time.monotonic()
    total = Stats()
    if args.jobs == 1:
        total.merge(fuzz_worker(jobs[0]))
    else:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            for stats in pool.imap_unordered(fuzz_worker, jobs):
                total.merge(stats)
    elapsed = time.monotonic() - started
    count = sum(total.inputs.values())
    print(f"\n{count} inputs in {elapsed:.0f} s: {count / elapsed:.0f} inputs/s "
          f"({args.jobs} job{'s' if args.jobs > 1 else ''}, engine {args.engine})")
    print("per target:", dict(sorted(total.inputs.items())))
    print("exit codes:", dict(sorted(total.exits.items())))
    print("finding codes:", dict(sorted(total.codes.items())))
    print(f"connections beyond loopback refused by the guard: {total.blocked_connects}")
    print(f"crashes: {len(total.crashes)}")
    for record in total.crashes:
        print(f"  [{record['target']}] {record['problems'][0]}\n    replay: {record['replay']}")
    return 1 if total.crashes else 0


if __name__ == "__main__":
    sys.exit(cli())
