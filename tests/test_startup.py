"""Start-up: an offline check imports none of the heavy libraries it does not use (issue 5)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES

HEAVY = ("rich", "html5lib", "urllib3", "concurrent.futures", "multiprocessing")

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
        [sys.executable, "-c", probe, "check", str(EXAMPLES / "passing.jsonl"),
         str(EXAMPLES / "notes.md"), "--evidence", "--format", fmt],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert run.stderr.splitlines()[-1] == "0 ", run.stderr


def test_notes_alone_need_no_trace_reader() -> None:
    """jsonlines (and attrs with it) is a fifth of start-up: only traces need it."""
    probe = _PROBE.format(heavy=(*HEAVY, "jsonlines"))
    run = subprocess.run([sys.executable, "-c", probe, "check", str(EXAMPLES / "notes.md")],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.stderr.splitlines()[-1] == "0 ", run.stderr
