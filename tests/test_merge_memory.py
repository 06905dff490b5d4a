"""``tracecite merge`` of large reports in bounded memory (docs/guides/scale.md#merging-shards):
a report file is read a chunk at a time and its findings decoded one at a time, so the merge
holds the findings' records, not the file's text and every finding's JSON object besides. Every
document the streaming reader cannot take gets the verdict a whole reading gives."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.memory import peak_run

MIB = 1 << 20
DIGESTS = {"inputs_digest": hashlib.sha256(b"inputs").hexdigest(),
           "options_digest": hashlib.sha256(b"options").hexdigest()}
COUNTS = dict.fromkeys(("checked", "matched", "not_found", "unavailable", "skipped", "cached",
                        "unchanged", "retried", "interrupted"), 0)


def _header(shard: str | None, findings: int) -> dict[str, object]:
    return {"tool": "tracecite", "version": "0.1.0", "schema": 2, "command": "check",
            "exit_code": 2 if findings else 0,
            "summary": {"inputs": 1, "records": findings, "citations": findings,
                        "findings": findings, "errors": findings, "warnings": 0,
                        "captured": COUNTS, "live": COUNTS, "files": COUNTS},
            "findings": [], "shard": shard, "run": DIGESTS}


def _finding(shard: int, n: int) -> dict[str, object]:
    return {"code": "TC202", "name": "quote-not-in-capture", "severity": "error", "exit": 2,
            "file": f"shard{shard}/t{n // 1000}.jsonl", "line": 3 + n % 1000, "column": 5,
            "claim": 1, "citation": 1, "source_id": f"s{n % 50}",
            "uri": f"https://example.com/{n % 5000}",
            "message": "quote not found in the captured source"}


def shard_report(path: Path, shard: int, shards: int, findings: int) -> Path:
    """A shard's JSON report as ``--json`` writes it, written a finding at a time."""
    head, tail = json.dumps(_header(f"{shard}/{shards}", findings), indent=2).split(
        '"findings": []', 1)
    with path.open("w", encoding="utf-8") as out:
        out.write(head + '"findings": [')
        for n in range(findings):
            item = json.dumps(_finding(shard, n), indent=2).replace("\n", "\n    ")
            out.write(("\n    " if n == 0 else ",\n    ") + item)
        out.write("\n  ]" + tail + "\n")
    return path


@pytest.mark.slow
def test_merging_20_mb_of_shard_reports_stays_within_twice_their_size(tmp_path: Path) -> None:
    """The contract is 2 × a report's size: counted above what merging two empty shards takes
    (the interpreter and the package)."""
    empty = [shard_report(tmp_path / f"e{k}.json", k, 2, 0) for k in (1, 2)]
    big = [shard_report(tmp_path / f"r{k}.json", k, 2, 30_000) for k in (1, 2)]
    size = sum(p.stat().st_size for p in big)
    assert size > 18_000_000
    base = peak_run("merge", *empty, "--json")
    run = peak_run("merge", *big, "--json")
    assert (base.exit, run.exit) == (0, 2), run.err[-300:]
    merged = json.loads(run.out)
    assert merged["summary"]["findings"] == 60_000 and merged["shard"] is None
    grown = run.peak_bytes - base.peak_bytes
    assert grown <= 2 * size, f"{grown / MIB:.0f} MiB over {size / MIB:.0f} MiB of reports"


def _report_text(findings: int = 2) -> str:
    doc = _header("1/1", findings)
    doc["findings"] = [_finding(1, n) for n in range(findings)]
    return json.dumps(doc, indent=2)


GOOD = _report_text()
DOCUMENTS = {
    "whole": GOOD,
    "compact": json.dumps(json.loads(GOOD)),
    "no findings": _report_text(0),
    "findings twice": GOOD.replace('"shard":', '"findings": [], "shard":'),
    "findings first and twice": GOOD.replace('{', '{"findings": 3, ', 1),
    "summary twice": GOOD.replace('"shard":', '"summary": {}, "shard":'),
    "tool twice, the last right": GOOD.replace('{', '{"tool": "other", ', 1),
    "a BOM": "\ufeff" + GOOD,
    "not JSON after": GOOD + " x",
    "a second value": GOOD + " {}",
    "cut short": GOOD[:len(GOOD) // 2],
    "findings not an array": GOOD.replace('"findings": [', '"findings": {"a": [', 1).replace(
        '  ],\n  "shard"', '  ]},\n  "shard"'),
    "a finding not a code": GOOD.replace('"TC202"', '"TC999"', 1),
    "a bad finding and a bad tool": GOOD.replace('"TC202"', '"TC999"', 1).replace(
        '"tracecite"', '"other"', 1),
    "a bad summary": GOOD.replace('"inputs": 1', '"inputs": "1"'),
    "NaN": GOOD.replace('"column": 5', '"column": NaN', 1),
    "an empty key object": "{}",
    "an array": "[]",
    "empty": "",
    "deep": "[" * 100_000 + "]" * 100_000,
    "a trailing comma": GOOD.replace('\n  ]', ',\n  ]', 1),
    "a key not a string": GOOD.replace('"tool"', "1", 1),
}


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_every_document_reads_as_a_whole_reading_reads_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, chunk: int) -> None:
    """Findings decoded one at a time, or the file read whole to give its verdict: the same
    report or the same error either way, whatever the chunks (values cut across them)."""
    from tracecite import report_reader

    monkeypatch.setattr(report_reader, "_CHUNK", chunk)
    path = tmp_path / "r.json"
    path.write_text(DOCUMENTS[name], encoding="utf-8")
    assert report_reader.read_report_file(str(path)) == report_reader._read_whole(str(path))


@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_bad_utf8_is_located_as_a_whole_reading_locates_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    from tracecite import report_reader
    from tracecite.codes import Code

    monkeypatch.setattr(report_reader, "_CHUNK", chunk)
    path = tmp_path / "r.json"
    path.write_bytes(GOOD.replace("quote not found", "quote \u00e9 not found", 1).encode()
                     .replace(b"\xc3\xa9", b"\xc3(", 1))
    read = report_reader.read_report_file(str(path))
    assert read == report_reader._read_whole(str(path))
    assert not isinstance(read, report_reader.Report) and read.code is Code.INPUT_NOT_UTF8


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_a_streamed_report_is_the_one_a_whole_reading_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    from tracecite import report_reader

    monkeypatch.setattr(report_reader, "_CHUNK", chunk)
    path = tmp_path / "r.json"
    path.write_text(_report_text(50), encoding="utf-8")
    whole = report_reader._read_whole
    monkeypatch.setattr(report_reader, "_read_whole", None)  # streamed, never read whole
    read = report_reader.read_report_file(str(path))
    monkeypatch.setattr(report_reader, "_read_whole", whole)
    assert isinstance(read, report_reader.Report) and len(read.findings) == 50
    assert read == whole(str(path))
    assert read == report_reader.read_report(json.loads(path.read_text(encoding="utf-8")))
