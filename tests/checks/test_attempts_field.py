"""``attempts`` on findings (docs/reference/reports.md): on every finding about a web source, 1
included, and on none about a file."""

from __future__ import annotations

from array import array

import pytest

from tracecite.checks.kinds import SourceKind
from tracecite.checks.live.tally import Tally
from tracecite.checks.quotes import CheckList, LoadInfo, QuoteCheck
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError


def settled(kind: SourceKind, outcome: FetchError | list[bool], attempts: int = 1) -> int | None:
    target = "https://a.test/" if kind is SourceKind.WEB else "file:doc.txt"
    tally = Tally(kind, CheckList([QuoteCheck("quote", target, "n.md", 1, record=1)]))
    tally.settle("k", array("q", [0]), outcome, LoadInfo(attempts=attempts))  # type: ignore[arg-type]
    [finding] = tally.result().findings
    return finding.attempts


@pytest.mark.parametrize("attempts", [1, 3])
def test_web_findings_say_their_attempts_one_included(attempts: int) -> None:
    failed = FetchError(Code.CONNECT_FAILED, "refused", attempts=attempts)
    assert settled(SourceKind.WEB, failed) == attempts
    assert settled(SourceKind.WEB, [False], attempts) == attempts


def test_file_findings_have_none() -> None:
    assert settled(SourceKind.FILE, FetchError(Code.FILE_MISSING, "gone")) is None
    assert settled(SourceKind.FILE, [False]) is None
