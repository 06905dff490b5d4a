"""How a run ends, as its own process: name lookups that never answer do not hold the process
after its report (SPEC §7.2), and a reader that closes stdout early changes nothing (SPEC §3)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO_ROOT

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


def env() -> dict[str, str]:
    """The environment of a subprocess run: this tree first on the path, no CI variables."""
    out = {k: v for k, v in os.environ.items()
           if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "NO_COLOR")}
    out["PYTHONPATH"] = str(REPO_ROOT)
    return out


def test_lookups_that_never_answer_do_not_hold_the_process(tmp_path: Path) -> None:
    notes = tmp_path / "n.notes"
    hosts = [f"n{i}.hang.test" for i in range(20)] + ["gone.test"]
    notes.write_text("\n".join(f"claim: c\nquote: q\nurl: http://{h}/\n" for h in hosts))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", HANGING_RESOLVER, "verify-notes", str(notes), "--json",
         "--timeout", "3", "--no-progress"],
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
