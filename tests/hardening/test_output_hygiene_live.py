"""Output hygiene of the live commands (issue 6, item 5; docs/reference/reports.md).

tests/test_canaries.py covers the offline commands. Here the canaries travel through
``verify-notes``, ``verify-urls`` and ``verify-files``: in claims, quotes, captured content, the
pages a local server sends (body, reason phrase, header values, ``Location``), source ids, URIs,
file names on disk and the names of the input files. Every format is run, with every
``--report-file`` and the step summary, and every byte written is searched:

- secret canaries (anything a quote, claim, page or file holds, and server header text that is
  not a strict token) never appear, in any case;
- no raw ESC, BEL, CR, NEL or line separator; no ``##[``; a line starting with ``::`` is one of
  TraceCite's own well-formed annotations;
- source ids, URIs and file names are shown, escaped (``printable``), not dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import BREAKS, CANARY_FORMATS, Cli, check_canaries, token
from tests.conftest import all_outputs as _outputs
from tests.fetch.servers import RawConnection, Servers, head
from tests.hardening.conftest import Resolver
from tracecite.reporters.escape import printable

pytestmark = pytest.mark.network

HOST = "example.test"
# No "/" (it goes into file names) and no line breaks (notes values are single lines).
HOSTILE = ("\x1b[31m\x1b]0;pwned\x07::error::x%0A::warning::y<script>alert(1)<\\script>"
           "##[error]z\u2028\x85%0D")
KEPT = "kept words"


def canary(kind: str, *, breaks: bool = True) -> str:
    return f"{HOSTILE}{BREAKS if breaks else ''}{token(kind)}{HOSTILE}"


# Tokens of text that must never be shown, in any form or case.
SECRETS = [
    "notesclaim", "notesquote", "notesclaim2", "jsonquote", "textquote", "tclaim", "tquote",
    "tcontent", "fclaim", "fquote", "fcontent", "filetext", "page", "script", "json", "text",
    "reason", "charset", "coding", "ctype", "locesc", "style",
]

PAGE = (f"<html><head><title>{token('page')}</title><style>{token('style')}</style></head>"
        f"<body><p>{canary('page')} {KEPT}</p><script>{canary('script')}</script></body></html>")
JSON_BODY = json.dumps({"a": canary("json"), "b": [KEPT, canary("json")]})


def _wire(text: str) -> str:
    """Header text as its UTF-8 bytes (``head`` writes Latin-1, one byte per character)."""
    return text.encode("utf-8").decode("latin-1")


def _reply(status: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    status = _wire(status)
    headers = [(name, _wire(value)) for name, value in headers]
    return head(status, [*headers, ("Content-Length", str(len(body))),
                         ("Connection", "close")]) + body


def _route(path: str) -> bytes:
    """What the hostile server answers for ``path`` (the request target as sent)."""
    html = [("Content-Type", "text/html; charset=utf-8")]
    if path in ("/page", "/page?x"):
        return _reply("200 OK", html, PAGE.encode())
    if path == "/json":
        return _reply("200 OK", [("Content-Type", "application/json")], JSON_BODY.encode())
    if path == "/text":
        return _reply("200 OK", [("Content-Type", "text/plain")], canary("text").encode())
    if path == "/reason":
        return _reply(f"404 {canary('reason', breaks=False)}", html, PAGE.encode())
    if path == "/ctype":
        return _reply("200 OK", [("Content-Type", f"text/{canary('ctype', breaks=False)}")],
                      PAGE.encode())
    if path == "/charset":
        charset = canary("charset", breaks=False)
        return _reply("200 OK", [("Content-Type", f"text/html; charset={charset}")],
                      PAGE.encode())
    if path == "/coding":
        return _reply("200 OK", [*html, ("Content-Encoding", canary("coding", breaks=False))],
                      PAGE.encode())
    if path == "/locesc":
        return _reply("302 Found", [("Location", "/" + canary("locesc", breaks=False))], b"")
    return _reply("404 Not Found", html, PAGE.encode())


def _serve(connection: RawConnection) -> None:
    request_line = connection.request.split(b"\r\n", 1)[0].decode("latin-1")
    parts = request_line.split(" ")
    connection.send(_route(parts[1] if len(parts) > 1 else "/"))


@dataclass(frozen=True)
class Inputs:
    notes: Path
    urls_trace: Path
    files_trace: Path
    root: Path
    args: tuple[str, ...]
    names: tuple[str, ...]  # source ids, URIs and file names that must be shown escaped


def _name(kind: str, suffix: str) -> str:
    return f"{HOSTILE}{BREAKS}{token(kind)}{suffix}"


def _events(sources: list[dict[str, str]], citations: list[tuple[str, str]], claim: str,
            ) -> str:
    events = [
        {"type": "tool_call", "run_id": canary("run"), "call_id": canary("call"),
         "tool": canary("tool")},
        {"type": "tool_result", "run_id": canary("run"), "call_id": canary("call"), "ok": True,
         "sources": sources},
        {"type": "answer", "run_id": canary("run"), "claims": [
            {"text": claim, "citations": [{"source_id": s, "quote": q} for s, q in citations]}]},
    ]
    return "".join(json.dumps(e) + "\n" for e in events)


@pytest.fixture
def inputs(tmp_path: Path, servers: Servers) -> Inputs:
    server = servers.raw(_serve)
    args = ("--connect-to", f"{HOST}:80:127.0.0.1:{server.port}", "--allow-net", "127.0.0.0/8")
    raw_url = f"http://{HOST}/{canary('urlraw', breaks=False)}"
    escaped_url = f"http://{HOST}/%1B%5B31m%0A::error::{token('urlesc')}%0D%0A"
    notes_records = [
        (f"http://{HOST}/page", KEPT),
        (f"http://{HOST}/page", canary("notesquote", breaks=False)),
        (f"http://{HOST}/json", canary("jsonquote", breaks=False)),
        (f"http://{HOST}/text", canary("textquote", breaks=False)),
        (f"http://{HOST}/reason", KEPT),
        (f"http://{HOST}/ctype", KEPT),
        (f"http://{HOST}/charset", KEPT),
        (f"http://{HOST}/coding", KEPT),
        (f"http://{HOST}/locesc", KEPT),
        (raw_url, KEPT),
        (escaped_url, KEPT),
        (f"http://{canary('host', breaks=False)}.example/", KEPT),
    ]
    notes = tmp_path / _name("notesfile", ".md")
    notes.write_text("\n".join(
        f"# {canary('comment', breaks=False)}\nclaim: {canary('notesclaim', breaks=False)}\n"
        f"quote: {q}\nurl: {u}\n" for u, q in notes_records), encoding="utf-8")

    sid_page, sid_raw, sid_frag = canary("sid1"), canary("sid2"), canary("sid3")
    frag_uri = f"http://{HOST}/page?x#{canary('frag')}"
    urls_trace = tmp_path / _name("urlstrace", ".jsonl")
    urls_trace.write_text(_events(
        [{"id": sid_page, "uri": f"http://{HOST}/page", "content": canary("tcontent")},
         {"id": sid_raw, "uri": raw_url, "content": f"{canary('tcontent')} {KEPT}"},
         {"id": sid_frag, "uri": frag_uri, "content": KEPT}],
        [(sid_page, KEPT), (sid_page, canary("tquote")), (sid_raw, KEPT), (sid_frag, KEPT),
         (sid_frag, canary("tquote"))],
        canary("tclaim")), encoding="utf-8")

    root = tmp_path / "root"
    root.mkdir()
    file_name = _name("fname", ".html")
    (root / file_name).write_text(f"<p>{canary('filetext')} {KEPT}</p>", encoding="utf-8")
    text_name = _name("tname", ".txt")
    (root / text_name).write_text(f"{canary('filetext')} {KEPT}", encoding="utf-8")
    sid_f1, sid_f2, sid_f3 = canary("fsid1"), canary("fsid2"), canary("fsid3")
    files_trace = tmp_path / _name("filestrace", ".jsonl")
    files_trace.write_text(_events(
        [{"id": sid_f1, "uri": "file:" + quote(file_name), "content": f"{KEPT}"},
         {"id": sid_f2, "uri": "file:" + text_name, "content": canary("fcontent")},
         {"id": sid_f3, "uri": "file:" + _name("missing", ""), "content": KEPT}],
        [(sid_f1, KEPT), (sid_f1, canary("fquote")), (sid_f2, KEPT), (sid_f2, canary("fquote")),
         (sid_f3, KEPT)],
        canary("fclaim")), encoding="utf-8")
    names = (str(notes), str(urls_trace), str(files_trace), raw_url, escaped_url, frag_uri,
             sid_page, sid_raw, sid_frag, sid_f1, sid_f2, sid_f3, "file:" + text_name)
    return Inputs(notes, urls_trace, files_trace, root, args, names)


COMMANDS: dict[str, Callable[[Inputs], list[str | Path]]] = {
    "verify-notes": lambda i: ["verify-notes", i.notes, *i.args],
    "verify-urls": lambda i: ["verify-urls", i.urls_trace, *i.args],
    "verify-files": lambda i: ["verify-files", i.files_trace, "--root", i.root],
}
EXPECTED = {
    "verify-notes": {"TC210", "TC300", "TC310", "TC315", "TC316", "TC317"},
    "verify-urls": {"TC202", "TC210", "TC300"},
    "verify-files": {"TC202", "TC211", "TC320"},
}
@pytest.mark.parametrize("fmt", CANARY_FORMATS)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_canary_escapes_live(
    cli: Cli, inputs: Inputs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    resolver: Resolver, single_core: None, command: str, fmt: str,
) -> None:
    resolver.table[f"{canary('host', breaks=False)}.example"] = []  # never asked: TC300 first
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    run, texts = _outputs(cli, COMMANDS[command](inputs), fmt, out_dir, monkeypatch)
    assert run.exit == 2, texts
    for where, text in texts.items():
        check_canaries(where, text, fmt, SECRETS, fold=True)
    if fmt == "github":
        assert "step summary" in texts


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_live_canary_runs_find_what_they_should(
    cli: Cli, inputs: Inputs, resolver: Resolver, single_core: None, command: str,
) -> None:
    """The test above is only as good as the findings it provokes."""
    report = cli(*COMMANDS[command](inputs), "--json").json()
    assert {f["code"] for f in report["findings"]} == EXPECTED[command]


def test_names_are_shown_escaped_not_dropped(
    cli: Cli, inputs: Inputs, resolver: Resolver, single_core: None,
) -> None:
    shown = ""
    values: set[str] = set()
    for command in COMMANDS:
        argv = COMMANDS[command](inputs)
        shown += cli(*argv).out
        for finding in cli(*argv, "--json").json()["findings"]:
            values.update(str(finding.get(k)) for k in ("file", "uri", "source_id"))
    for name in inputs.names:
        assert name in values, f"{name!r} is missing from the JSON findings"
        assert printable(name) in shown, f"{name!r} is not shown escaped on the console"


# Was a bug: follow_redirect quoted the Location's port, scheme or host in TC300/TC301 details.
def test_redirect_location_text_is_not_echoed(
    cli: Cli, tmp_path: Path, servers: Servers, resolver: Resolver,
) -> None:
    """Location header text (server-chosen) never reaches a finding message.

    A ``Location`` whose port, scheme or host the URL rules refuse was quoted (ASCII-escaped,
    at most 40 characters) in the TC300/TC301 message: escaped, so harmless to a terminal or a
    workflow log, but text the server chose, which reports never echo.
    """
    def serve(connection: RawConnection) -> None:
        path = connection.request.split(b" ", 2)[1]
        location = {b"/port": f"http://{HOST}:::error::{token('locport')}/",
                    b"/scheme": f"{token('locscheme')}:x",
                    b"/host": f"http://{token('lochost')}.1/"}[path]
        connection.send(_reply("302 Found", [("Location", location)], b""))

    server = servers.raw(serve)
    notes = tmp_path / "notes.md"
    notes.write_text("\n".join(f"claim: c\nquote: q\nurl: http://{HOST}/{p}\n"
                               for p in ("port", "scheme", "host")), encoding="utf-8")
    run = cli("verify-notes", notes, "--json", "--connect-to",
              f"{HOST}:80:127.0.0.1:{server.port}", "--allow-net", "127.0.0.0/8")
    assert run.codes() == ["TC300", "TC301", "TC300"]
    messages = " ".join(f["message"] for f in run.json()["findings"]).casefold()
    echoed = [k for k in ("locport", "locscheme", "lochost") if token(k).casefold() in messages]
    assert echoed == [], f"Location text echoed in messages: {echoed}"
