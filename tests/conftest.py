"""Shared helpers: run the CLI in-process, and build small notes files and traces."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trustme
from hypothesis import settings

from tests.fetch.servers import Servers
from tracecite.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = REPO_ROOT / "examples"
SHARED = REPO_ROOT.parent / "shared"

# CI runs the property tests on the same examples every time (a red CI must mean the change is
# wrong, not that this run drew a rarer example); locally they draw new ones. HYPOTHESIS_PROFILE
# picks either explicitly.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI") else "dev"))

# Environment variables that change what the CLI prints; tests start without them.
OUTPUT_ENV = ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "NO_COLOR")


@dataclass(frozen=True)
class CliResult:
    """What one in-process run of ``tracecite`` gave."""

    exit: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        """stdout parsed as the one JSON document it must be."""
        parsed: dict[str, Any] = json.loads(self.out)
        return parsed

    def codes(self) -> list[str]:
        """The finding codes of a ``--json`` run, in report order."""
        return [f["code"] for f in self.json()["findings"]]


def run_cli(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> CliResult:
    """Call ``tracecite.cli.main(argv)`` and capture its exit code, stdout and stderr."""
    capsys.readouterr()  # drop anything printed before
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return CliResult(code, out, err)


Cli = Callable[..., CliResult]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``cli("check", path, "--json")`` runs tracecite in-process without CI variables set."""
    for name in OUTPUT_ENV:
        monkeypatch.delenv(name, raising=False)

    def run(*argv: str | Path) -> CliResult:
        return run_cli([str(a) for a in argv], capsys)

    return run


# ---- traces ---------------------------------------------------------------------------------

RUN = "r1"
CONTENT = "The quick brown fox jumps over the lazy dog."


def call(call_id: str = "c1", tool: Any = "search", run_id: Any = RUN, **extra: Any
         ) -> dict[str, Any]:
    """A ``tool_call`` event."""
    return {"type": "tool_call", "run_id": run_id, "call_id": call_id, "tool": tool, **extra}


def source(id: str = "s1", uri: str = "https://example.com/a", content: str = CONTENT,
           **extra: Any) -> dict[str, Any]:
    """One captured source of a ``tool_result``."""
    return {"id": id, "uri": uri, "content": content, **extra}


def result(call_id: str = "c1", sources: Any = None, ok: Any = True, run_id: Any = RUN,
           **extra: Any) -> dict[str, Any]:
    """A ``tool_result`` event (``sources`` defaults to one source when ``ok`` is true)."""
    event: dict[str, Any] = {"type": "tool_result", "run_id": run_id, "call_id": call_id, "ok": ok}
    if sources is None and ok is True:
        sources = [source()]
    if sources is not None:
        event["sources"] = sources
    event.update(extra)
    return event


def cite(source_id: str = "s1", quote: Any = "quick brown fox", **extra: Any) -> dict[str, Any]:
    """One citation of a claim."""
    return {"source_id": source_id, "quote": quote, **extra}


def claim(text: Any = "A fox jumps.", citations: Any = None, **extra: Any) -> dict[str, Any]:
    """One claim of the answer (one citation of ``s1`` by default)."""
    return {"text": text, "citations": [cite()] if citations is None else citations, **extra}


def answer(claims: Any = None, run_id: Any = RUN, **extra: Any) -> dict[str, Any]:
    """The ``answer`` event (one claim by default)."""
    return {"type": "answer", "run_id": run_id,
            "claims": [claim()] if claims is None else claims, **extra}


def valid_events() -> list[dict[str, Any]]:
    """A small trace that passes ``check --evidence``."""
    return [call(), result(), answer()]


def jsonl(events: Iterable[dict[str, Any] | str | bytes]) -> bytes:
    """Events as JSONL bytes; ``str``/``bytes`` items are written as raw lines."""
    lines: list[bytes] = []
    for event in events:
        if isinstance(event, bytes):
            lines.append(event)
        elif isinstance(event, str):
            lines.append(event.encode("utf-8", "surrogatepass"))
        else:
            lines.append(json.dumps(event).encode("utf-8"))
    return b"\n".join(lines) + b"\n"


def write_trace(path: Path, events: Iterable[dict[str, Any] | str | bytes]) -> Path:
    """Write a trace file and return its path."""
    path.write_bytes(jsonl(events))
    return path


# ---- notes ----------------------------------------------------------------------------------

def note(claim: str = "A fox jumps.", quote: str = "quick brown fox",
         url: str = "https://example.com/a") -> str:
    """One well-formed notes record (no trailing blank line)."""
    return f"claim: {claim}\nquote: {quote}\nurl: {url}\n"


def write_notes(path: Path, text: str | bytes) -> Path:
    """Write a notes file (``str`` as UTF-8) and return its path."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


# ---- everything a run writes (for the output hygiene tests) ------------------------------

ANSI_SGR = re.compile(r"\x1b\[[0-9;]*m")
ANNOTATION = re.compile(
    r"^::error (?:file=[^:,\r\n]*,)?(?:line=\d+,)?(?:col=\d+,)?title=[^:,\r\n]*::[^\r\n]*$")


def all_outputs(cli: Cli, argv: Sequence[Any], fmt: str, report_dir: Path,
             monkeypatch: pytest.MonkeyPatch) -> tuple[CliResult, dict[str, str]]:
    """Run one command in one format (``console-colour``: console on a pretend terminal),
    with every report file and the step summary; every text it wrote, by where it went."""
    summary = report_dir / "step-summary.md"
    summary.unlink(missing_ok=True)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    colour = fmt == "console-colour"
    monkeypatch.setattr("tracecite.cli._is_color", lambda stream: colour)
    files = {f: report_dir / f"report.{f}" for f in ("console", "json", "github", "sarif")}
    for path in files.values():
        path.unlink(missing_ok=True)
    extra = [a for f, p in files.items() for a in ("--report-file", f"{f}:{p}")]
    run = cli(*argv, "--format", fmt.removesuffix("-colour"), *extra)
    texts = {"stdout": run.out, "stderr": run.err}
    for f, path in files.items():
        if path.exists():
            texts[f"report-file {f}"] = path.read_text(encoding="utf-8")
    if summary.exists():
        texts["step summary"] = summary.read_text(encoding="utf-8")
    return run, texts


# ---- canaries: output hygiene, offline (tests/test_canaries.py) and live (tests/hardening) -----

CANARY_FORMATS = ["console", "console-colour", "json", "github", "sarif"]
"""The formats every canary run is made in (``console-colour``: console on a terminal)."""

BREAKS = "\r\n::error file=x::nl\n##[warning]w\r::notice::cr\n  ::debug::indented\n"
"""Line breaks followed by workflow commands, for the fields that can hold them."""


def token(kind: str) -> str:
    """The unique token that marks one planted field."""
    return f"CANARY{kind}X"


def check_canaries(where: str, text: str, fmt: str, secrets: Iterable[str], *,
                   fold: bool = False) -> None:
    """One text a run in ``fmt`` wrote (``where``, as :func:`all_outputs` names it): no secret
    token (in any case, with ``fold``), nothing that drives a terminal or a runner's log, and
    lines starting with ``::`` only where annotations belong, each one well formed."""
    annotations_allowed = where in ("report-file github", "stdout" if fmt == "github" else "")
    shown = text.casefold() if fold else text
    for kind in secrets:
        marker = token(kind).casefold() if fold else token(kind)
        assert marker not in shown, f"{where}: the {kind} canary leaked"
    if where == "stdout" and fmt == "console-colour":
        # The console's own colours; that they are all it adds is checked against plain output.
        text = ANSI_SGR.sub("", text)
    assert "\x1b" not in text, f"{where}: raw ESC"
    assert "\x07" not in text, f"{where}: raw BEL"
    assert "\r" not in text, f"{where}: raw CR (the runner splits lines on it)"
    assert "\x85" not in text and "\u2028" not in text, f"{where}: raw line separator"
    assert "##[" not in text, f"{where}: a legacy workflow command"
    for line in text.splitlines():
        if line.lstrip().startswith("::"):
            assert annotations_allowed and ANNOTATION.match(line), f"{where}: {line!r}"


# ---- TLS: one test CA for the whole suite ------------------------------------------------------

@pytest.fixture(scope="session")
def ca() -> trustme.CA:
    """The test CA; servers' certificates come from it, fetchers get it as ``ca_cert``."""
    return trustme.CA()


@pytest.fixture(scope="session")
def ca_path(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The test CA's certificate as a PEM file, for ``--ca-cert``."""
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


# ---- local servers ------------------------------------------------------------------------

@pytest.fixture
def servers() -> Iterator[Servers]:
    """Start local servers for one test (``.http``, ``.raw``); all are stopped at teardown."""
    running = Servers()
    yield running
    running.stop()


# ---- one small site on loopback: the same page at every path -------------------------------

SITE_PAGE = (b"<html><body><p>Quotes must appear <b>word for word</b> in the source.</p>"
             b"</body></html>")


@pytest.fixture
def site_requests() -> list[str]:
    """The paths `local_site` was asked for, in order."""
    return []


@contextlib.contextmanager
def html_site(pages: Mapping[str, bytes] | None, requests: list[str]) -> Iterator[int]:
    """A threaded HTTP server on 127.0.0.1 serving ``pages`` by path as UTF-8 HTML (404 for
    any other path; every path is ``SITE_PAGE`` when ``pages`` is None), recording each path
    asked for in ``requests``; yields its port."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = SITE_PAGE if pages is None else pages.get(self.path, b"")
            self.send_response(200 if pages is None or self.path in pages else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def local_site(site_requests: list[str]) -> Iterator[int]:
    """An HTTP server on 127.0.0.1 answering every GET with ``SITE_PAGE``; yields its port."""
    with html_site(None, site_requests) as port:
        yield port
