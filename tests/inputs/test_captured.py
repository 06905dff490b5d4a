"""A trace source's ``captured_at`` (docs/web-over-time.md#archived-copies): an optional RFC 3339
date and time, kept as the archive's 14-digit UTC timestamp; anything else is TC123 with file and
line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, answer, call, cite, claim, result, source, write_trace
from tracecite.inputs.captured import wayback_timestamp
from tracecite.inputs.trace import scan_trace


@pytest.mark.parametrize(("text", "timestamp"), [
    ("2024-05-01T12:34:56Z", "20240501123456"),
    ("2024-05-01t12:34:56z", "20240501123456"),
    ("2024-05-01T12:34:56.789123Z", "20240501123456"),
    ("2024-05-01T12:34:56+02:00", "20240501103456"),
    ("2024-05-01T23:30:00-01:45", "20240502011500"),
    ("2024-01-01T00:30:00+01:00", "20231231233000"),
    ("2016-12-31T23:59:60Z", "20161231235959"),  # a leap second
    ("0999-01-01T00:00:00Z", "09990101000000"),
])
def test_rfc_3339_dates_become_utc_timestamps(text: str, timestamp: str) -> None:
    assert wayback_timestamp(text) == timestamp


@pytest.mark.parametrize("text", [
    "", "2024-05-01", "2024-05-01T12:34:56", "2024-05-01 12:34:56Z", "20240501123456",
    "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-05-01T24:00:00Z",
    "2024-05-01T12:60:00Z", "2024-05-01T12:00:61Z", "2024-05-01T12:00:00+24:00",
    "2024-05-01T12:00:00+01:60", "2024-05-01T12:00:00+0100", "0000-01-01T00:00:00Z",
    "0001-01-01T00:00:00+01:00", "2024-05-01T12:00:00.Z", "\u0662024-05-01T12:00:00Z",
    " 2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z\n",
])
def test_anything_else_is_not_a_timestamp(text: str) -> None:
    assert wayback_timestamp(text) is None


def scan(tmp_path: Path, *sources: dict[str, Any], answer_last: bool = True) -> Any:
    events: list[Any] = [call(), result(sources=list(sources)),
                         answer([claim(citations=[cite(s["id"]) for s in sources])])]
    if not answer_last:
        events.append(call("c2"))
    return scan_trace(str(write_trace(tmp_path / "t.jsonl", events)))


@pytest.mark.parametrize("answer_last", [True, False])
def test_a_sources_capture_time_is_kept_by_id(tmp_path: Path, answer_last: bool) -> None:
    scanned = scan(tmp_path, source("s1", captured_at="2024-05-01T12:00:00+02:00"),
                   source("s2"), source("s3", captured_at=None), answer_last=answer_last)
    assert scanned.valid
    assert dict(scanned.captured_at) == {"s1": "20240501100000"}


@pytest.mark.parametrize(("value", "message"), [
    ("yesterday", "field sources[2].captured_at must be an RFC 3339 date and time, like "
                  "2024-05-01T12:00:00Z"),
    (1714557600, "field sources[2].captured_at must be a string, not a number"),
    (["2024-05-01T12:00:00Z"], "field sources[2].captured_at must be a string, not a list"),
])
def test_a_bad_capture_time_is_tc123_at_its_line(tmp_path: Path, value: Any,
                                                 message: str) -> None:
    scanned = scan(tmp_path, source("s1"), source("s2", captured_at=value))
    assert [(f.code.code, f.line, f.message) for f in scanned.findings] == [
        ("TC123", 2, message)]


def test_a_bad_capture_time_beside_another_problem_is_reported_too(tmp_path: Path) -> None:
    scanned = scan(tmp_path, source("s1", content=7, captured_at="soon"))
    assert sorted(f.message for f in scanned.findings if "sources[1]" in f.message) == [
        "field sources[1].captured_at must be an RFC 3339 date and time, like "
        "2024-05-01T12:00:00Z",
        "field sources[1].content must be a string or null, not a number"]


def test_check_reports_it_with_file_and_line_and_never_the_value(tmp_path: Path,
                                                                 cli: Cli) -> None:
    trace = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source(captured_at="CANARYcapturedX")]), answer()])
    run = cli("check", trace, "--json")
    assert run.exit == 1
    [finding] = run.json()["findings"]
    assert (finding["code"], finding["file"], finding["line"]) == ("TC123", str(trace), 2)
    assert "CANARY" not in run.out + run.err


@pytest.mark.parametrize(("retrieved", "kept"), [
    ("2025-01-02T03:04:05Z", True), ("2025-01-02T03:04:05.5+01:00", True),
    ("2025-13-02T03:04:05Z", False), ("2025-01-02", False), ("yesterday", False), ("", False),
    (None, False), (1735787045, False),
])
def test_a_vendors_retrieved_at_is_a_captured_at_only_as_rfc_3339(retrieved: object,
                                                                 kept: bool) -> None:
    from tracecite.inputs.captured import captured_at_of

    assert captured_at_of(retrieved) == (retrieved if kept else None)
