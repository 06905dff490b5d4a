"""Start-up: an offline check imports none of the heavy libraries it does not use (issue 5)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, answer, call, result, source, write_trace

HEAVY = ("rich", "html5lib", "urllib3", "concurrent.futures", "multiprocessing",
         "tracecite.checks.live", "tracecite.checks.compare")

_PROBE = """
import sys
from tracecite.cli import main
code = main(sys.argv[1:])
loaded = [m for m in {heavy!r} if m in sys.modules]
print(code, ",".join(loaded), file=sys.stderr)
"""


@pytest.mark.parametrize("fmt", ["console", "json", "github", "sarif"])
def test_an_offline_check_loads_no_heavy_library(fmt: str) -> None:
    probe = _PROBE.format(heavy=HEAVY)
    run = subprocess.run(
        [sys.executable, "-c", probe, "check", str(EXAMPLES / "passing.trace.jsonl"),
         str(EXAMPLES / "citations.notes.md"), "--evidence", "--format", fmt],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert run.stderr.splitlines()[-1] == "0 ", run.stderr


def test_verify_files_never_loads_the_fetcher(tmp_path: Path) -> None:
    """verify-files reads files: urllib3 (and ssl with it) is not for it to pay for."""
    (tmp_path / "doc.txt").write_text("The quick brown fox.", encoding="utf-8")
    trace = write_trace(tmp_path / "t.jsonl", [call(), result(sources=[
        source("s1", "file:doc.txt", "The quick brown fox.")]), answer()])
    probe = _PROBE.format(heavy=("urllib3", "ssl", "tracecite.fetch.fetcher"))
    run = subprocess.run([sys.executable, "-c", probe, "verify-files", str(trace), "--root",
                          str(tmp_path)], capture_output=True, text=True, timeout=60, check=False)
    assert run.stderr.splitlines()[-1] == "0 ", run.stderr


_IMPORT_PROBE = """
import sys
import tracecite.visible
tracecite.visible.visible_text("<p>x</p>")
loaded = [m for m in sys.modules if m.split(".")[0] == "urllib3" or m.startswith({prefix!r})]
print("html5lib" in sys.modules, ",".join(sorted(loaded)))
"""


def test_the_visible_text_package_needs_no_fetcher() -> None:
    """verify-files parses HTML files with tracecite.visible: neither urllib3 nor any part of
    tracecite.fetch may come with it."""
    probe = _IMPORT_PROBE.format(prefix="tracecite.fetch")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True)
    assert run.stdout.splitlines() == ["True "], run.stdout + run.stderr


def test_notes_alone_need_no_trace_reader() -> None:
    """jsonlines (and attrs with it) is a fifth of start-up: only traces need it."""
    probe = _PROBE.format(heavy=(*HEAVY, "jsonlines"))
    notes = str(EXAMPLES / "citations.notes.md")
    run = subprocess.run([sys.executable, "-c", probe, "check", notes],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.stderr.splitlines()[-1] == "0 ", run.stderr


@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
@pytest.mark.parametrize("args", [
    ["check", str(EXAMPLES / "failing-evidence.trace.jsonl"), "--evidence"],
    ["check", str(EXAMPLES / "failing-evidence.trace.jsonl"), "--evidence", "--json"],
    ["check", "--timeout"],  # a usage error, reported on stderr
], ids=["console", "json", "usage"])
def test_a_closed_standard_stream_is_not_a_crash(closed: int, args: list[str]) -> None:
    """Started with ``>&-`` or ``2>&-``: the exit code still says what was found (2, or 1 for
    the usage error), never a traceback or an internal error (3)."""
    import os

    def close() -> None:
        os.close(closed)

    run = subprocess.run([sys.executable, "-m", "tracecite", *args], capture_output=True,
                         text=True, timeout=60, check=False, preexec_fn=close)
    assert run.returncode == (1 if "--timeout" in args else 2), run.stderr
    assert "Traceback" not in run.stderr + run.stdout


def test_verify_notes_never_loads_the_trace_readers(tmp_path: Path) -> None:
    """A run of notes alone pays for none of the trace readers (they are imported before its
    first request could go out)."""
    notes = tmp_path / "n.notes"
    notes.write_text("claim: c\nquote: q\nurl: http://example.test/\n", encoding="utf-8")
    probe = _PROBE.format(heavy=("tracecite.inputs.trace", "tracecite.checks.evidence",
                                 "tracecite.inputs.answer", "tracecite.inputs.validator"))
    # A closed port on loopback: the request fails at once, and nothing leaves the machine.
    run = subprocess.run([sys.executable, "-c", probe, "verify-notes", str(notes), "--retries",
                          "0", "--connect-to", "example.test:80:127.0.0.1:9", "--allow-net",
                          "127.0.0.1/32"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.stderr.splitlines()[-1] == "2 ", run.stderr


def test_the_installed_package_costs_an_interpreter_no_imports(tmp_path: Path) -> None:
    """TraceCite installed as the README installs it (``pip install -e .``) is a path entry,
    not an import hook that every interpreter of the environment loads at start (setuptools'
    editable install of a package at the repository's root was one, and imported pathlib).
    Coverage's start-up hook, which the suite's measured runs set off, is left out."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("COV")}
    probe = ("import sys; "
             "print(sorted(m for m in ('pathlib', 'importlib.util') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True, env=env, cwd=tmp_path)
    assert run.stdout.split() == ["[]"], run.stdout
