"""A run stopped by a signal during one live check: the checks after it never start, and their
quotes are counted ``interrupted`` (docs/reference/commands.md)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from tests.test_commands import _inputs
from tracecite.checks.kinds import SourceKind
from tracecite.checks.live.records import LiveResult
from tracecite.findings import Counts
from tracecite.run import assemble as commands
from tracecite.run.assemble import run_checks
from tracecite.run.plan import Plan
from tracecite.settings import resolve


def test_checks_after_a_stop_are_counted_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, trace = _inputs(tmp_path)
    started: list[SourceKind] = []

    def stopped_web_check(inputs: Any, settings: Any, kind: SourceKind, label: str, *,
                          parser: Any = None) -> LiveResult:
        started.append(kind)
        return LiveResult((), Counts(skipped=2, interrupted=1), stopped_by=signal.SIGTERM)

    monkeypatch.setattr(commands, "_check_live", stopped_web_check)
    plan = Plan("hook", evidence=True, live=(SourceKind.WEB, SourceKind.FILE))
    report = run_checks(plan, (), (str(trace),), resolve("verify-urls", {"root": str(tmp_path)}))
    assert started == [SourceKind.WEB]
    assert report.stopped_by == signal.SIGTERM
    assert report.exit_code == 143
    # The file check never began: its one quote is interrupted, the other two are skipped.
    assert report.summary.files == Counts(skipped=2, interrupted=1)
    assert report.summary.captured.checked == 3  # what finished before the stop stands
