"""The Dask example (docs/guides/scale.md): traces checked through ``tracecite.api`` on a real local
``dask.distributed`` cluster (two worker processes on 127.0.0.1, no dashboard), its merged
report identical to the command line's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import (
    REPO_ROOT,
    Cli,
    answer,
    call,
    cite,
    claim,
    result,
    source,
    write_trace,
)

pytest.importorskip("distributed", reason="the Dask example needs dask[distributed] (the "
                                          "test extra, or pip install 'tracecite[dask]')")

SCRIPT = REPO_ROOT / "examples" / "dask" / "check_traces.py"


def _traces(top: Path) -> None:
    """Eleven traces under ``top/runs``: passing, quotes not in their captures, a source
    without captured content, an answer without claims and one malformed."""
    runs = top / "runs"
    runs.mkdir()
    for i in range(8):
        quote = "quick brown fox" if i % 3 else "slow green turtle"
        write_trace(runs / f"run-{i:02}.jsonl", [call(), result(sources=[
            source("s1", f"https://example.org/{i}")]), answer(claims=[
                claim(citations=[cite(quote=quote), cite()])])])
    write_trace(runs / "run-08.jsonl", [call(), result(sources=[
        source("s1", "https://example.org/x", None)]), answer()])
    write_trace(runs / "run-09.jsonl", [call(), result(), answer(claims=[])])
    write_trace(runs / "run-10.jsonl", [call(), result(ok="yes"), answer()])


@pytest.mark.slow
def test_the_dask_example_reports_what_the_command_line_does(
        tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    _traces(tmp_path)
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "runs", "--workers", "2", "--chunk-size", "3",
         "--output", "merged.json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    merged = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    expected = cli("check", "--evidence", "runs", "--json")
    assert done.returncode == expected.exit == 1, done.stderr
    # The merged chunks' run digests their inputs digests (docs/reference/reports.md#the-run):
    # the same options, and everything else as the command line's.
    whole = expected.json()
    assert merged.pop("run")["options_digest"] == whole.pop("run")["options_digest"]
    assert merged == whole
    assert {"TC123", "TC200", "TC202"} <= {f["code"] for f in merged["findings"]}
    assert merged["summary"]["inputs"] == 11
    assert done.stdout.startswith("tracecite check: ") and done.stdout.count("\n") == 1
