"""How a run ends, as its own process: SIGINT and SIGTERM stop it within 2 s with the report of what
finished and no process left behind, a reader that closes stdout early changes nothing
(docs/reference/commands.md), and name lookups that never answer do not hold the process after its
report (docs/web-over-time.md#politeness-under-pressure).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import answer, call, cite, claim, result, write_trace
from tests.stopping import assert_none_left, children, env, stop

# getaddrinfo for the run: names under .hang.test never answer, other .test names do not exist;
# anything else (IP literals) goes to the real function, which asks no DNS for them.
HANGING_RESOLVER = """
import socket, sys, threading
real = socket.getaddrinfo
def getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else str(host)
    if name.endswith(".hang.test"):
        threading.Event().wait()
    if name.endswith(".test"):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return real(host, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
from tracecite.cli import main
raise SystemExit(main(sys.argv[1:]))
"""



@pytest.mark.slow
def test_lookups_that_never_answer_do_not_hold_the_process(tmp_path: Path) -> None:
    notes = tmp_path / "n.notes"
    hosts = [f"n{i}.hang.test" for i in range(20)] + ["gone.test"]
    notes.write_text("\n".join(f"claim: c\nquote: q\nurl: http://{h}/\n" for h in hosts))
    started = time.monotonic()
    done = subprocess.run(
        # One attempt per source (a timeout is retried by default: docs/web-over-time.md#retries),
        # so each is done at its one deadline.
        [sys.executable, "-c", HANGING_RESOLVER, "verify-notes", str(notes), "--json",
         "--timeout", "3", "--retries", "0", "--no-progress"],
        capture_output=True, text=True, timeout=60, check=False, env=env())
    elapsed = time.monotonic() - started
    assert "Traceback" not in done.stderr
    assert done.returncode == 2
    codes = {f["uri"]: f["code"] for f in json.loads(done.stdout)["findings"]}
    # The name that answers is never queued behind those that do not: TC307, not a false TC313.
    assert codes == {**{f"http://{h}/": "TC313" for h in hosts[:-1]},
                     "http://gone.test/": "TC307"}
    # Every source is done at its 3 s deadline, and nothing waits for the stuck lookups.
    assert elapsed < 3 + 3, elapsed


# ---- SIGINT and SIGTERM -----------------------------------------------------------------------

OK_PAGE = b"<html><body><p>This page answers at once.</p></body></html>"


@contextlib.contextmanager
def half_hanging_site(requests: list[str]) -> Iterator[tuple[int, threading.Event]]:
    """A server on 127.0.0.1: ``/ok`` answers at once, ``/hang`` never answers (until the
    event is set). Yields its port and the event."""
    release = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            if self.path == "/hang":
                release.wait(60)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(OK_PAGE)))
            self.end_headers()
            self.wfile.write(OK_PAGE)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], release
    finally:
        release.set()
        server.shutdown()
        server.server_close()



@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("signum", "to_group"), [
    (signal.SIGINT, True),    # Ctrl-C: the whole foreground process group gets it
    (signal.SIGINT, False),
    (signal.SIGTERM, False),  # kill PID: the workers get nothing, the parent must end them
    (signal.SIGTERM, True),
])
@pytest.mark.slow
def test_a_signal_stops_the_run_with_the_report_of_what_finished(
        tmp_path: Path, signum: signal.Signals, to_group: bool) -> None:
    requests: list[str] = []
    with half_hanging_site(requests) as (port, _release):
        records, rules = [], []
        for i in range(3):
            for kind in ("ok", "hang"):
                host = f"{kind}{i}.test"
                rules += ["--connect-to", f"{host}:80:127.0.0.1:{port}"]
                records.append(f"claim: c\nquote: answers at once\nurl: http://{host}/{kind}\n")
        records.append("claim: c\nquote: not there\nurl: http://ok0.test/ok\n")
        notes = tmp_path / "n.notes"
        notes.write_text("\n".join(records))
        run = subprocess.Popen(
            [sys.executable, "-m", "tracecite", "verify-notes", str(notes), "--json",
             "--allow-net", "127.0.0.0/8", "--timeout", "20", *rules],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
            start_new_session=True)  # its own process group, as a shell job would be
        workers: list[int] = []

        def ready() -> None:
            deadline = time.monotonic() + 30
            while len(requests) < 6 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(requests) == 6, requests
            time.sleep(1)  # the pages that answered are parsed meanwhile
            workers.extend(children(run.pid))
            assert workers, "no parse worker started"  # two or more cores assumed

        report = stop(run, signum, to_group=to_group, ready=ready)
    live = report["summary"]["live"]
    got = (live["checked"], live["matched"], live["not_found"], live["interrupted"])
    assert got == (4, 3, 1, 3)
    assert [(f["code"], f["record"]) for f in report["findings"]] == [("TC210", 7)]
    assert_none_left(run, workers)


# ---- a reader that closes stdout early ----------------------------------------------------------

def closing_reader(argv: list[str], *, read: int) -> tuple[int, str]:
    """Run tracecite with stdout a pipe whose reader takes ``read`` bytes and closes it (0:
    closes it before the run writes anything); the exit code and stderr."""
    read_end, write_end = os.pipe()
    run = subprocess.Popen([sys.executable, "-m", "tracecite", *argv], stdout=write_end,
                           stderr=subprocess.PIPE, text=True, env=env())
    os.close(write_end)
    try:
        if read:
            got = b""
            while len(got) < read:
                chunk = os.read(read_end, read - len(got))
                assert chunk, "the run ended before writing 10 bytes"
                got += chunk
    finally:
        os.close(read_end)
    _, err = run.communicate(timeout=60)
    return run.returncode, err


def big_failing_trace(path: Path) -> Path:
    """A trace whose 3,000 quotes are not in their capture: a report far over a pipe's buffer,
    in every format."""
    claims = [claim(citations=[cite(quote=f"not captured {i}")]) for i in range(3000)]
    return write_trace(path, [call(), result(), answer(claims)])


@pytest.mark.parametrize("fmt", ["console", "json"])
@pytest.mark.parametrize(("exit_code", "read"), [(2, 10), (2, 0), (0, 0)])
def test_a_reader_that_closes_stdout_early_changes_nothing(
        tmp_path: Path, fmt: str, exit_code: int, read: int) -> None:
    if exit_code == 2:
        argv = ["check", "--evidence", str(big_failing_trace(tmp_path / "t.jsonl"))]
    else:
        argv = ["check", str(write_trace(tmp_path / "t.jsonl", [call(), result(), answer()])),
                "--evidence"]
    code, err = closing_reader([*argv, "--format", fmt], read=read)
    assert code == exit_code
    assert "Traceback" not in err
    assert "Exception ignored" not in err
