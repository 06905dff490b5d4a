"""One report assembly: every command and every hook stage counts the same inputs the same way
(docs/reference/reports.md schema 2: captured, live and files apart), and input errors stop a run
before any network or file access."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SITE_PAGE, answer, call, cite, claim, result, source, write_trace
from tracecite.cli import main

URL = "http://docs.test/page"
QUOTE = "appear word for word in"


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    """A notes file (one good and one bad quote) and a trace citing the page, a file and a
    URN (one quote not in its capture)."""
    assert b"appear <b>word for word</b> in" in SITE_PAGE
    notes = tmp_path / "site.notes"
    notes.write_text(f"claim: ok\nquote: {QUOTE}\nurl: {URL}\n\n"
                     f"claim: bad\nquote: this sentence is not there\nurl: {URL}\n",
                     encoding="utf-8")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "guide.txt").write_text("Quotes must appear word for word in it.\n",
                                                 encoding="utf-8")
    trace = write_trace(tmp_path / "run.trace.jsonl", [
        call(), result(sources=[
            source("web", URL, f"They {QUOTE} the source."),
            source("file", "file:guide.txt", f"They {QUOTE} the guide."),
            source("urn", "urn:isbn:0451450523", "nothing of the sort")]),
        answer([claim(citations=[cite("web", QUOTE), cite("file", QUOTE),
                                 cite("urn", QUOTE)])]),
    ])
    return notes, trace


def _run(argv: list[Any], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main([str(a) for a in argv])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _kinds(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {k: report["summary"][k] for k in ("captured", "live", "files")}


@pytest.mark.network
def test_the_same_inputs_give_the_same_numbers_in_every_command_and_stage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_site: int,
        site_requests: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    notes, trace = _inputs(tmp_path)
    net = ["--connect-to", f"docs.test:80:127.0.0.1:{local_site}", "--allow-net", "127.0.0.0/8"]
    files = ["--root", "site"]
    runs = {
        "check": _run(["check", "--json", "--evidence", notes, trace], capsys),
        "verify-notes": _run(["verify-notes", "--json", *net, notes], capsys),
        "verify-urls": _run(["verify-urls", "--json", *net, trace], capsys),
        "verify-files": _run(["verify-files", "--json", *files, trace], capsys),
        **{stage: _run(["hook", "--json", "--stage", stage, "--verify-files", *files, *net,
                        notes, trace], capsys)
           for stage in ("offline", "online", "all")},
    }
    captured = {"checked": 3, "matched": 2, "not_found": 1}
    live_trace = {"checked": 1, "matched": 1, "skipped": 2}  # file: and urn: are not web
    live_notes = {"checked": 2, "matched": 1, "not_found": 1}
    files_trace = {"checked": 1, "matched": 1, "skipped": 2}  # http: and urn: are not file:

    def counts(**fields: int) -> dict[str, int]:
        zero = dict.fromkeys(("checked", "matched", "not_found", "unavailable", "skipped",
                              "cached", "unchanged", "retried", "interrupted"), 0)
        return {**zero, **fields}

    def both(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
        return counts(**{k: a.get(k, 0) + b.get(k, 0) for k in {*a, *b}})

    # The page is fetched once per command that checks pages, however many cite it.
    assert site_requests == ["/page"] * 4
    nothing = counts()
    assert _kinds(runs["check"]) == {"captured": counts(**captured), "live": nothing,
                                     "files": nothing}
    assert _kinds(runs["verify-notes"]) == {"captured": nothing,
                                            "live": counts(**live_notes), "files": nothing}
    assert _kinds(runs["verify-urls"]) == {"captured": counts(**captured),
                                           "live": counts(**live_trace), "files": nothing}
    assert _kinds(runs["verify-files"]) == {"captured": counts(**captured), "live": nothing,
                                            "files": counts(**files_trace)}
    assert _kinds(runs["offline"]) == _kinds(runs["check"])
    online = {"captured": counts(**captured), "live": both(live_notes, live_trace),
              "files": counts(**files_trace)}
    assert _kinds(runs["online"]) == _kinds(runs["all"]) == online
    for name, report in runs.items():
        s = report["summary"]
        assert (s["inputs"], s["citations"]) == ((1, 0) if name == "verify-notes" else
                                                 (1, 3) if name.startswith("verify") else
                                                 (2, 3)), name
        assert s["findings"] == len(report["findings"]) == s["errors"] + s["warnings"]


def test_a_bad_ca_bundle_is_tc100_before_any_input_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _, trace = _inputs(tmp_path)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n", encoding="utf-8")
    for argv in (["hook", "--stage", "all"], ["verify-urls"]):
        report = _run([*argv, "--json", "--ca-cert", junk, trace], capsys)
        assert [f["code"] for f in report["findings"]] == ["TC100"]
        assert "CA certificates" in report["findings"][0]["message"]
        assert report["summary"]["inputs"] == 0  # nothing was read


def test_input_errors_stop_every_live_command_before_any_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    notes, trace = _inputs(tmp_path)
    broken = tmp_path / "broken.trace.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    # No --connect-to: a request would be a DNS lookup of docs.test, which must not happen.
    monkeypatch.setattr("socket.getaddrinfo", _no_lookups)
    for argv in (["verify-urls", trace, broken], ["hook", "--stage", "all", notes, broken]):
        report = _run([*argv, "--json"], capsys)
        assert report["exit_code"] == 1
        assert "TC120" in {f["code"] for f in report["findings"]}
        assert report["summary"]["live"]["checked"] == 0


def _no_lookups(*args: object, **kwargs: object) -> object:
    raise AssertionError("a name was looked up although an input is malformed")


def test_notes_records_are_kept_only_for_the_live_checks_and_without_claims(
        tmp_path: Path) -> None:
    """docs/guides/scale.md: the format check keeps no records (only their count), the live checks
    no claims; the summary counts the same either way."""
    from tracecite.run.inputs import read_inputs

    notes, _ = _inputs(tmp_path)
    offline = read_inputs([str(notes)], [], evidence=False, keep_uris=False)
    live = read_inputs([str(notes)], [], evidence=False, keep_uris=True)
    assert len(offline.notes[0].records) == 0
    assert [(r.claim, r.url) for r in live.notes[0].records] == [(None, URL), (None, URL)]
    assert offline.summary() == live.summary() and offline.summary().records == 2


def test_a_shards_records_and_a_diffs_are_subsets_of_the_columns(tmp_path: Path) -> None:
    """docs/guides/scale.md: the records a shard or a diff keeps are those an object per record
    chose, but kept as indexes into the notes' columns, not as objects."""
    from tracecite.checks.shards import in_shard
    from tracecite.model import NoteRecords
    from tracecite.run.inputs import read_inputs

    notes = tmp_path / "many.notes"
    notes.write_text("".join(f"claim: c\nquote: q{i}\nurl: https://site.test/{i % 7}\n\n"
                             for i in range(40)), encoding="utf-8")
    inputs = read_inputs([str(notes)], [], evidence=False, keep_uris=True)
    every = list(inputs.notes[0].records)
    for k in (1, 2, 3):
        kept = inputs.in_shard((k, 3)).notes[0].records
        assert isinstance(kept, NoteRecords)
        assert list(kept) == [r for r in every if in_shard(r.url, (k, 3))]
    changed, left_out = inputs.changed_only({str(notes): [(6, 9), (150, 150)]})
    kept = changed.notes[0].records
    assert isinstance(kept, NoteRecords)
    assert [r.index for r in kept] == [2, 3, 38] and left_out == 37
