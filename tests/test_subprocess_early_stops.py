"""A stop signal at any moment of a run, from the entry point's first line to the process's last
(docs/reference/commands.md#stopping-a-run): always 128 + the signal, a report, no traceback,
never a crash; whatever a run writes is whole or absent.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, answer, call, cite, claim, result, source, write_trace
from tests.stopping import env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def started(pid: int) -> bool:
    """Whether the process ran the entry point's first line: Python itself neither holds nor
    catches SIGTERM, so a SIGTERM held or caught is TraceCite's (False: it is gone)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as handle:
                fields = dict(line.split(":\t", 1) for line in handle.read().splitlines()
                              if line.startswith(("SigBlk", "SigCgt")))
        except OSError:
            return False
        if (int(fields["SigBlk"], 16) | int(fields["SigCgt"], 16)) & SIGTERM_BIT:
            return True
        time.sleep(0.001)
    raise AssertionError("the run never reached its entry point")


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """About 50 MB of traces: enough for ``--jobs 2`` to start its workers, and a run that
    outlasts the 400 ms the signals are sent in."""
    folder = tmp_path_factory.mktemp("traces")
    sources = [source(id=f"s{i}", uri=f"https://example.com/{i}",
                      content="The quick brown fox jumps over the lazy dog. " * 160)
               for i in range(200)]
    claims = [claim(citations=[cite(source_id=f"s{i % 200}")]) for i in range(2000)]
    return [str(write_trace(folder / f"t{n}.jsonl", [call(), result(sources=sources),
                                                   answer(claims)]))
            for n in range(32)]


def console_script() -> str | None:
    """The installed ``tracecite`` command beside this Python, if it runs this tree's entry."""
    script = shutil.which("tracecite", path=str(Path(sys.executable).parent))
    if script is None or "tracecite.__main__ import entry" not in Path(script).read_text():
        return None
    return script


def window(argv: list[str], **popen: object) -> float:
    """Seconds within which a signal is sent: 400 ms after the entry point's first line, or
    80 % of a whole run of ``argv`` when a run is quicker than that (so that most signals still
    come before the run's end, however fast the reading has become)."""
    run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           **popen)  # type: ignore[call-overload]
    entered = time.monotonic() if started(run.pid) else None
    run.wait(timeout=60)
    took = time.monotonic() - entered if entered is not None else 0.0
    return min(0.4, 0.8 * took) if took > 0 else 0.4


def early_stops(command: list[str], traces: list[str], runs: int) -> None:
    """Send SIGINT or SIGTERM at a random moment of the run's first 400 ms (:func:`window`)
    after the entry point's first line to ``runs`` runs of ``check --jobs 2 --json``; check each
    outcome."""
    rng = random.Random(22)
    stopped = 0
    argv = [*command, "check", "--evidence", "--jobs", "2", "--json", *traces]
    within = window(argv, env={**env(), "PYTHONFAULTHANDLER": "1"})
    for _ in range(runs):
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**env(), "PYTHONFAULTHANDLER": "1"})
        try:
            if started(run.pid):
                time.sleep(rng.uniform(0, within))
            if run.poll() is not None:
                out, err = run.communicate()
                assert run.returncode == 0, err  # over before the signal: nothing to check
                continue
            run.send_signal(signum)
            out, err = run.communicate(timeout=30)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        if run.returncode == 0 and not err and json.loads(out)["exit_code"] == 0:
            # The run ended between the look above and the signal: it came after the last
            # instruction that could take it, and the report is the whole run's.
            continue
        stopped += 1
        assert run.returncode == 128 + signum, (signum, run.returncode, err)
        assert "Traceback" not in err and "Fatal Python error" not in err, err
        assert "Exception ignored" not in err, err
        report = json.loads(out)  # one JSON object, whole
        assert report["command"] == "check"
        assert err.endswith(f"tracecite: stopped by {signum.name}; the report covers the "
                            "sources that finished\n"), err
    assert stopped >= runs * 3 // 4, stopped


@pytest.mark.slow
def test_early_signals_to_python_m_tracecite(traces: list[str]) -> None:
    early_stops([sys.executable, "-m", "tracecite"], traces, 36)


@pytest.mark.slow
def test_early_signals_to_the_tracecite_command(traces: list[str]) -> None:
    script = console_script()
    if script is None:
        pytest.skip("no tracecite command installed from this tree")
    early_stops([script], traces, 16)


@pytest.mark.slow
def test_early_signals_to_the_actions_step(traces: list[str], tmp_path: Path) -> None:
    """``python -m tracecite.action``, as action.yml runs it: the same from its first line."""
    from tests.git_repo import commit_all, make_repo

    repo = make_repo(tmp_path / "repo")
    (repo / "traces").mkdir()
    for trace in traces[:16]:
        shutil.copy(trace, repo / "traces")
    commit_all(repo, "traces")
    step = {**env(), "PYTHONFAULTHANDLER": "1", "GITHUB_ACTIONS": "true",
            "TRACECITE_ALL": "true", "TRACECITE_STAGE": "offline", "TRACECITE_JOBS": "2",
            "TRACECITE_JSON_FILE": str(tmp_path / "report.json"),
            "GITHUB_OUTPUT": str(tmp_path / "output"), "RUNNER_TEMP": str(tmp_path)}
    rng = random.Random(26)
    stopped = 0
    runs = 16
    within = window([sys.executable, "-m", "tracecite.action"], cwd=repo, env=step)
    for _ in range(runs):
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        run = subprocess.Popen([sys.executable, "-m", "tracecite.action"], cwd=repo, env=step,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            if started(run.pid):
                time.sleep(rng.uniform(0, within))
            over = run.poll() is not None
            if not over:
                run.send_signal(signum)
            _, err = run.communicate(timeout=30)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        assert "Traceback" not in err and "Fatal Python error" not in err, err
        if over or (run.returncode == 0 and not err):
            continue  # over before the signal came
        stopped += 1
        assert run.returncode == 128 + signum, (signum, run.returncode, err)
        report = tmp_path / "report.json"
        if report.exists():  # written whole, or not at all (a step stopped early writes none)
            assert json.loads(report.read_text())["command"] == "hook"
    assert stopped >= runs * 3 // 4, stopped


def test_the_actions_step_holds_the_signals_before_anything_of_its_own() -> None:
    action = (REPO_ROOT / "tracecite" / "action.py").read_text().split('"""', 2)[2]
    code = [line for line in action.splitlines() if line and not line.startswith("#")]
    assert code[:3] == ["from __future__ import annotations",
                        'if __name__ == "__main__":  # the Action\'s step: the stop signals '
                        "are held from here on",
                        "    import tracecite.__main__ as _entry_point"]


def test_the_command_is_the_entry_point_that_holds_the_signals() -> None:
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    scripts = pyproject.split("[project.scripts]\n", 1)[1].split("\n\n", 1)[0]
    assert scripts == 'tracecite = "tracecite.__main__:entry"'
    first = (REPO_ROOT / "tracecite" / "__main__.py").read_text().split('"""', 2)[2]
    code = [line for line in first.splitlines() if line and not line.startswith("#")]
    assert code[0] == "import signal as _signal"  # nothing of TraceCite's own before it


def test_a_stop_before_the_command_began_writes_an_empty_report(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tracecite import cli
    from tracecite.stops import Stopped

    def stopped(*args: object, **kwargs: object) -> None:
        raise Stopped(signal.SIGTERM)

    monkeypatch.setattr(cli, "_refuse_unknown_command", stopped)
    assert cli.main(["check", "--json", "x.jsonl"]) == 143
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["exit_code"] == 143
    assert err == "tracecite: stopped by SIGTERM; the report covers the sources that finished\n"


ORJSON_STOPPED = """
import os, random, signal, sys, time
from tracecite.stops import Stopped, StopSignals, signals_deferred
def alarm(signum, frame):
    os.kill(os.getpid(), signal.SIGTERM)
signal.signal(signal.SIGALRM, alarm)
with StopSignals() as stop:
    stop.listen()
    signal.setitimer(signal.ITIMER_REAL, random.uniform(0.0005, 0.008))
    try:
        with signals_deferred():
            import orjson
        time.sleep(1)
    except Stopped:
        print("stopped")
"""


def test_a_stop_never_cuts_the_import_of_orjson_half_way() -> None:
    """A KeyboardInterrupt raised inside orjson's initialisation crashes the process (a
    segmentation fault, most times): the stop waits for the import, and is raised after it."""
    pytest.importorskip("orjson")
    for _ in range(12):
        done = subprocess.run([sys.executable, "-c", ORJSON_STOPPED], capture_output=True,
                              text=True, env=env(), timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "stopped\n"


def test_a_stop_that_reaches_main_itself_writes_an_empty_report(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tracecite import cli
    from tracecite.stops import Stopped

    def stopped(*args: object, **kwargs: object) -> None:
        raise Stopped(signal.SIGINT)

    monkeypatch.setattr(cli, "run", stopped)
    assert cli.main(["check", "--format", "json", "x.jsonl"]) == 130
    out, err = capsys.readouterr()
    assert json.loads(out)["exit_code"] == 130
    assert err == "tracecite: stopped by SIGINT; the report covers the sources that finished\n"
