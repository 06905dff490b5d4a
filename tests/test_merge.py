"""``tracecite merge REPORT.json…`` (docs/guides/scale.md): reports that fit together combined into
one, in any format; files that are not reports, and sets of shards that are not whole, refused with
their file."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.conftest import Cli
from tracecite.codes import Code
from tracecite.errors import TraceCiteError
from tracecite.findings import Counts, Finding, Report, RunDigests, Summary
from tracecite.hook.stages import OFFLINE_NOTICE
from tracecite.merge import merge_reports
from tracecite.reporters.json import format_json

MISS = Finding(Code.QUOTE_NOT_ON_PAGE, "quote is not in the page's visible text",
               file="a.notes", line=2, record=1, uri="https://a.example/")
GONE = Finding(Code.HTTP_STATUS, "status 404", file="a.notes", line=7, record=2, status=404,
               uri="https://b.example/")
BAD = Finding(Code.NOTES_MISSING_FIELD, "record lacks url", file="b.notes", line=1, record=1)
RUN = RunDigests("1" * 64, "2" * 64)
"""The run every shard here is of (docs/reference/reports.md#the-run)."""
SLOW = Finding(Code.TIMEOUT, "deadline passed", file="a.notes", line=12, record=3,
               uri="https://c.example/")


def _write(path: Path, report: Report) -> Path:
    path.write_text(format_json(report), encoding="utf-8")
    return path


def _shards(tmp_path: Path, *reports: Report) -> list[Path]:
    return [_write(tmp_path / f"r{i}.json", r) for i, r in enumerate(reports, start=1)]


def test_findings_once_in_input_order_and_summaries_added() -> None:
    one = Report("verify-notes", (MISS, BAD), Summary(2, 3, 0, live=Counts(2, 1, 1)),
                 run=RUN, shard=(1, 2))
    two = Report("verify-notes", (BAD, GONE), Summary(live=Counts(1, 0, 0, 1, skipped=2)),
                 run=RUN, shard=(2, 2))
    merged = merge_reports([one, two])
    assert merged.findings == (MISS, BAD, GONE)
    assert merged.summary == Summary(2, 3, 0, live=Counts(3, 1, 1, 1, skipped=2))
    assert merged.shard is None and merged.command == "verify-notes"
    assert merged.exit_code == 1  # recomputed from the findings: 1 over 2


def test_a_stopped_shard_stops_the_merged_report() -> None:
    one = Report("verify-notes", (MISS,), run=RUN, shard=(1, 2))
    two = Report("verify-notes", (), run=RUN, shard=(2, 2), stopped_by=int(signal.SIGTERM))
    assert merge_reports([one, two]).exit_code == 143


def test_unsharded_reports_of_one_command_merge_too() -> None:
    """The Dask example merges one report per trace."""
    merged = merge_reports([Report("check", (MISS,), Summary(1)),
                            Report("check", (), Summary(1, captured=Counts(4, 4)))])
    assert merged.summary == Summary(2, captured=Counts(4, 4)) and merged.findings == (MISS,)


def test_no_source_host_resolved_is_said_of_the_whole_run() -> None:
    dns = Finding(Code.DNS_FAILURE, "does not resolve", file="a.notes", line=3)
    one = Report("hook", (dns,), stage="online", notices=(OFFLINE_NOTICE,), run=RUN, shard=(1, 2))
    two = Report("hook", (), Summary(live=Counts(1, 1)), stage="online", run=RUN, shard=(2, 2))
    assert merge_reports([one, two]).notices == ()
    two = Report("hook", (dns,), stage="online", notices=(OFFLINE_NOTICE,), run=RUN, shard=(2, 2))
    assert merge_reports([one, two]).notices == (OFFLINE_NOTICE,)


@pytest.mark.parametrize("fmt", ["console", "json", "github", "sarif"])
def test_merge_writes_any_format(cli: Cli, tmp_path: Path, fmt: str) -> None:
    paths = _shards(tmp_path, Report("verify-notes", (MISS,), run=RUN, shard=(1, 2)),
                    Report("verify-notes", (GONE,), run=RUN, shard=(2, 2)))
    run = cli("merge", *paths, "--format", fmt, "--report-file", f"json:{tmp_path / 'm.json'}")
    assert run.exit == 2
    assert "TC210" in run.out and "TC315" in run.out
    doc = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert [f["code"] for f in doc["findings"]] == ["TC210", "TC315"]
    assert doc["shard"] is None


def test_merge_applies_warn(cli: Cli, tmp_path: Path) -> None:
    paths = _shards(tmp_path, Report("verify-notes", (SLOW,), run=RUN, shard=(1, 1)))
    run = cli("merge", *paths, "--warn", "TC313", "--json")
    assert run.exit == 0 and run.json()["findings"][0]["severity"] == "warning"


@pytest.mark.parametrize(("reports", "message"), [
    ((Report("verify-notes", run=RUN, shard=(1, 3)), Report("verify-notes", run=RUN, shard=(3, 3))),
     "shard 2/3 missing"),
    ((Report("verify-notes", run=RUN, shard=(1, 2)),
      Report("verify-notes", (MISS,), run=RUN, shard=(1, 2))),
     "is shard 1/2 again"),
    ((Report("verify-notes", run=RUN, shard=(1, 2)), Report("verify-notes", run=RUN, shard=(2, 3))),
     "is shard 2/3, not one of 2 shards"),
    ((Report("verify-notes", run=RUN, shard=(1, 2)), Report("verify-notes")),
     "is not a shard's report"),
    ((Report("verify-notes", run=RUN, shard=(1, 2)),
      Report("verify-urls", run=RUN, shard=(2, 2))),
     "another command"),
    ((Report("hook", stage="online", run=RUN, shard=(1, 2)),
      Report("hook", stage="all", run=RUN, shard=(2, 2))),
     "another command or stage"),
])
def test_reports_that_do_not_fit_together_are_tc100_with_the_file(
        cli: Cli, tmp_path: Path, reports: tuple[Report, ...], message: str) -> None:
    paths = _shards(tmp_path, *reports)
    run = cli("merge", *paths, "--json")
    assert run.exit == 1 and run.codes() == ["TC100"]
    finding = run.json()["findings"][0]
    assert message in finding["message"]
    if "missing" not in message:
        assert finding["file"] == str(paths[-1])
    with pytest.raises(TraceCiteError, match=message):
        merge_reports(list(reports))


def test_files_that_are_not_reports_are_input_errors(cli: Cli, tmp_path: Path) -> None:
    good = _write(tmp_path / "good.json", Report("verify-notes", (MISS,), run=RUN, shard=(1, 2)))
    not_json = tmp_path / "log.txt"
    not_json.write_text("tracecite: 2 findings\n", encoding="utf-8")
    sarif = tmp_path / "r.sarif"
    sarif.write_text('{"version": "2.1.0", "runs": []}', encoding="utf-8")
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\xfe{}")
    run = cli("merge", good, not_json, sarif, binary, tmp_path / "missing.json", "--json")
    assert run.exit == 1
    found = {f["file"]: (f["code"], f["message"]) for f in run.json()["findings"]}
    assert {file: code for file, (code, _) in found.items()} == {
        str(not_json): "TC101", str(sarif): "TC101", str(binary): "TC102",
        str(tmp_path / "missing.json"): "TC101"}
    assert "is not JSON" in found[str(not_json)][1]
    assert "is not a TraceCite report" in found[str(sarif)][1]


def test_merge_needs_a_report(cli: Cli) -> None:
    run = cli("merge", "--json")
    assert run.exit == 1 and run.codes() == ["TC100"]


# ---- the run's digests (docs/reference/reports.md#the-run) -----------------------------------

def test_run_is_written_and_read_back() -> None:
    from tracecite.report_reader import ReportFormatError, read_report

    report = Report("verify-notes", (MISS,), run=RUN, shard=(1, 2))
    doc = report.to_json()
    assert doc["run"] == {"inputs_digest": "1" * 64, "options_digest": "2" * 64}
    assert read_report(doc) == report
    older = {k: v for k, v in doc.items() if k != "run"}  # written before run existed
    assert read_report(older).run is None
    with pytest.raises(ReportFormatError, match="run: a digest is not SHA-256 hex"):
        read_report({**doc, "run": {"inputs_digest": "x", "options_digest": "2" * 64}})


def test_unsharded_reports_merge_into_one_run_of_their_inputs() -> None:
    one = Report("check", (MISS,), Summary(1), run=RunDigests("a" * 64, "c" * 64))
    two = Report("check", (), Summary(1), run=RunDigests("b" * 64, "c" * 64))
    merged = merge_reports([two, one])
    assert merged.run is not None and merged.run.options_digest == "c" * 64
    assert merged.run == merge_reports([one, two]).run  # whatever their order
    with pytest.raises(TraceCiteError, match="same inputs as report 1"):
        merge_reports([one, Report("check", (BAD,), Summary(1), run=one.run)])
    with pytest.raises(TraceCiteError, match="other verdict options than report 1"):
        merge_reports([one, Report("check", (), run=RunDigests("b" * 64, "d" * 64))])
    with pytest.raises(TraceCiteError, match="same report as report 1"):
        merge_reports([one, one])
    # Reports without a run (older ones) merge as they did, into a report without one.
    assert merge_reports([Report("check", (MISS,)), Report("check", (BAD,))]).run is None


def test_shards_of_other_options_are_another_run() -> None:
    other = RunDigests("1" * 64, "3" * 64)
    with pytest.raises(TraceCiteError, match=r"another run than report 1 \(its options"):
        merge_reports([Report("verify-notes", run=RUN, shard=(1, 2)),
                       Report("verify-notes", run=other, shard=(2, 2))])
