"""Files a command writes appear whole or not at all (docs/reference/commands.md#stopping-a-run):
``import -o DIR`` traces, ``--report-file`` and SARIF reports, whatever ends the run (a stop at
any moment, an error, a normal exit), and no hidden temporary file is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, answer, call, cite, claim, result, write_trace
from tests.importers.test_anthropic import FIXTURES
from tests.stopping import env
from tests.test_subprocess_early_stops import started
from tracecite import stops
from tracecite.stops import Stopped, write_whole

# ---- one file -------------------------------------------------------------------------------


def test_a_file_is_written_whole_and_nothing_else_is_left(tmp_path: Path) -> None:
    path = tmp_path / "r.sarif"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_whole(str(path), "new")
    assert path.read_text() == "new"
    assert os.listdir(tmp_path) == ["r.sarif"]
    assert (path.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("fails", ["write", "replace"])
@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), Stopped(15)])
def test_a_write_cut_short_leaves_the_old_file_and_no_temporary_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: str, error: BaseException
        ) -> None:
    path = tmp_path / "r.json"
    path.write_text("old")
    if fails == "replace":
        monkeypatch.setattr(stops.os, "replace", _raising(error))
    else:
        real_fdopen = os.fdopen

        def fdopen(fd: int, *args: object, **kwargs: object) -> object:
            handle = real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]
            handle.write("half")
            handle.flush()
            handle.write = _raising(error)
            return handle

        monkeypatch.setattr(stops.os, "fdopen", fdopen)
    with pytest.raises(type(error)):
        write_whole(str(path), "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.json"]


def _raising(error: BaseException):  # type: ignore[no-untyped-def]
    def fail(*args: object, **kwargs: object) -> None:
        raise error
    return fail


def test_a_link_is_written_through_and_a_device_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_whole(str(link), "new")
    assert link.is_symlink() and target.read_text() == "new"
    write_whole(os.devnull, "anything")  # never replaced by a file
    assert Path(os.devnull).is_char_device()
    with pytest.raises(OSError):
        write_whole("/dev/full", "x" * 10_000)


# ---- stopped runs, as their own processes ----------------------------------------------------

SLOW_IMPORT = """
from tracecite.__main__ import entry  # holds the stop signals first, as the command does
import sys, time
from tracecite.importers import command
write = command.Staged.write
def slow(self, trace):
    write(self, trace)
    time.sleep(0.05)  # a stop comes while the traces are being written
command.Staged.write = slow
raise SystemExit(entry())
"""

SLOW_REPORT = """
from tracecite.__main__ import entry  # holds the stop signals first, as the command does
import sys, time
from tracecite import stops
replace = stops.os.replace
def slow(*args, **kwargs):
    time.sleep(0.3)  # a stop comes while the report file is being written
    replace(*args, **kwargs)
stops.os.replace = slow
raise SystemExit(entry())
"""


def stopped_run(script: str, argv: list[str], signum: signal.Signals, delay: float) -> int:
    """Run ``script`` with ``argv``, send ``signum`` ``delay`` seconds after its entry point's
    first line; its exit code."""
    run = subprocess.Popen([sys.executable, "-c", script, *argv], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env())
    assert started(run.pid)
    time.sleep(delay)
    run.send_signal(signum)
    _, err = run.communicate(timeout=30)
    assert "Traceback" not in err, err
    return run.returncode


MOMENTS = [(signal.SIGINT, 0.05), (signal.SIGTERM, 0.3), (signal.SIGINT, 0.5),
           (signal.SIGTERM, 0.7), (signal.SIGTERM, 0.9), (signal.SIGINT, 1.2)]
"""A stop at start-up, while the inputs are read, while the files are written, at the end."""


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "delay"), MOMENTS)
def test_a_stopped_import_leaves_every_trace_or_none(
        tmp_path: Path, signum: signal.Signals, delay: float) -> None:
    inputs = []
    for i in range(12):
        inputs.append(tmp_path / f"in{i}" / "exchange.json")
        inputs[-1].parent.mkdir()
        inputs[-1].write_bytes((FIXTURES / "web_fetch.json").read_bytes())
    reference = tmp_path / "reference"
    done = subprocess.run([sys.executable, "-m", "tracecite", "import", "anthropic",
                           *map(str, inputs), "-o", str(reference)],
                          capture_output=True, env=env(), check=False)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    code = stopped_run(SLOW_IMPORT, ["import", "anthropic", *map(str, inputs), "-o", str(out)],
                       signum, delay)
    assert code in (0, 128 + signum)
    written = sorted(os.listdir(out)) if out.exists() else []
    assert written in ([], sorted(os.listdir(reference))), written  # never a hidden one
    for name in written:
        assert (out / name).read_bytes() == (reference / name).read_bytes()
    if code != 0:
        assert written == [] or code == 128 + signum  # a stop after the renames stands


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "delay"), MOMENTS)
def test_a_stopped_run_writes_its_report_files_whole_or_not_at_all(
        tmp_path: Path, signum: signal.Signals, delay: float) -> None:
    claims = [claim(citations=[cite(quote=f"not captured {i}")]) for i in range(2000)]
    trace = write_trace(tmp_path / "t.jsonl", [call(), result(), answer(claims)])
    reports = tmp_path / "reports"
    reports.mkdir()
    code = stopped_run(SLOW_REPORT, [
        "check", "--evidence", str(trace), "--json", "--report-file",
        f"sarif:{reports / 'r.sarif'}", "--report-file", f"json:{reports / 'r.json'}"],
        signum, delay)
    assert code == 128 + signum
    written = sorted(os.listdir(reports))
    assert written in ([], ["r.json", "r.sarif"], ["r.sarif"]), written
    for name in written:
        json.loads((reports / name).read_text())  # whole


def test_a_report_file_on_a_normal_exit_and_on_an_error(tmp_path: Path) -> None:
    from tracecite.cli import main

    passing = str(EXAMPLES / "passing.trace.jsonl")
    assert main(["check", passing, "--quiet", "--report-file", f"sarif:{tmp_path / 'r'}"]) == 0
    json.loads((tmp_path / "r").read_text())
    gone = tmp_path / "gone" / "r.sarif"
    assert main(["check", passing, "--quiet", "--report-file", f"sarif:{gone}"]) == 1
    assert os.listdir(tmp_path) == ["r"]


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no unnamed files here")
def test_an_import_killed_while_writing_leaves_no_source_content(tmp_path: Path) -> None:
    """``kill -9`` gives no chance to clean up: the traces not yet named have no name at all."""
    inputs = []
    for i in range(12):
        inputs.append(tmp_path / f"in{i}" / "exchange.json")
        inputs[-1].parent.mkdir()
        inputs[-1].write_bytes((FIXTURES / "web_fetch.json").read_bytes())
    out = tmp_path / "out"
    run = subprocess.Popen([sys.executable, "-c", SLOW_IMPORT, "import", "anthropic",
                            *map(str, inputs), "-o", str(out)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env())
    deadline = time.monotonic() + 30
    while not _unnamed_of(run.pid, out) and time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        time.sleep(0.005)
    run.kill()
    run.communicate()
    assert os.listdir(out) == []


def _unnamed_of(pid: int, out: Path) -> list[str]:
    """The files of process ``pid`` open under ``out`` (with or without a name)."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(f"{out}/"):
            found.append(target)
    return found
