"""The Inspect AI importer (docs/guides/importers.md ``inspect``): hand-written logs in Inspect's
shapes, as ``.json`` logs and as ``.eval`` archives built here (stored, deflated and zstd
members)."""

from __future__ import annotations

import copy
import importlib.util
import json
import struct
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from tracecite import api
from tracecite.codes import Code
from tracecite.errors import TraceCiteError
from tracecite.findings import Finding
from tracecite.importers.eval_archive import INSTALL_HINT
from tracecite.importers.inspect import read_runs
from tracecite.importers.model import (
    ImportedRun,
    RefusedRun,
    RunOutcome,
    Unsupported,
    trace_lines,
)

FIXTURES = Path(__file__).parent / "fixtures" / "inspect"
RESEARCH = FIXTURES / "research.json"
SPANS = FIXTURES / "spans.json"
ZSTD = 93
IANA = "https://www.iana.org/help/example-domains"
RFC2606 = "https://www.rfc-editor.org/rfc/rfc2606"
RESERVED = "https://www.iana.org/domains/reserved"


def load(path: Path = RESEARCH) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return log


def outcomes_of(path: Path, display: str | None = None) -> list[RunOutcome]:
    return list(read_runs(path, display or path.name))


def runs_of(path: Path, display: str | None = None) -> list[ImportedRun]:
    """The runs of a log every sample of which is a run."""
    outcomes = outcomes_of(path, display)
    assert all(isinstance(o, ImportedRun) for o in outcomes), outcomes
    return cast(list[ImportedRun], outcomes)


@dataclass(frozen=True)
class Refusal:
    """A TC107 of the whole file, or of the one sample refused (``label`` names it)."""

    finding: Finding
    json_path: str
    label: str | None = None


def write_log(tmp_path: Path, log: dict[str, Any], name: str = "log.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


def unsupported(path: Path, display: str | None = None) -> Refusal:
    """The file's TC107, or the TC107 of its one refused sample (the others are runs)."""
    try:
        outcomes = outcomes_of(path, display)
    except Unsupported as exc:
        refusal = Refusal(exc.finding, exc.json_path)
    else:
        refused = [o for o in outcomes if isinstance(o, RefusedRun)]
        assert len(refused) == 1, outcomes
        assert all(isinstance(o, (ImportedRun, RefusedRun)) for o in outcomes)
        finding = refused[0].finding
        refusal = Refusal(finding, finding.message.rsplit(" at ", 1)[1], refused[0].label)
    assert refusal.finding.code is Code.IMPORT_UNSUPPORTED
    assert refusal.finding.file == (display or path.name)
    return refusal


def write_trace(tmp_path: Path, run: ImportedRun) -> Path:
    path = tmp_path / f"{run.name}.jsonl"
    path.write_text("".join(line + "\n" for line in trace_lines(run)), encoding="utf-8")
    return path


# -- building .eval archives -------------------------------------------------------------------

def members_of(log: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The members Inspect writes for ``log``: the header, then one per sample and epoch."""
    header = {key: value for key, value in log.items() if key != "samples"}
    members = [("header.json", json.dumps(header).encode())]
    for sample in log["samples"]:
        members.append((f"samples/{sample['id']}_epoch_{sample['epoch']}.json",
                        json.dumps(sample).encode()))
    members.append(("summaries.json", b"[]"))
    return members


def zip_archive(path: Path, members: list[tuple[str, bytes]],
                compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def zstd_archive(path: Path, members: list[tuple[str, bytes]],
                 compress: Callable[[bytes], bytes] | None = None) -> Path:
    """An archive of zstd members (method 93), written by hand: ``zipfile`` before Python 3.14
    cannot write them."""
    zstandard = pytest.importorskip("zstandard")
    compress = compress or zstandard.ZstdCompressor().compress
    out = bytearray()
    central = bytearray()
    for name, data in members:
        packed = compress(data)
        crc = zlib.crc32(data)
        encoded = name.encode()
        offset = len(out)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 63, 0, ZSTD, 0, 0x21, crc,
                           len(packed), len(data), len(encoded), 0) + encoded + packed
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 63, 63, 0, ZSTD, 0, 0x21,
                               crc, len(packed), len(data), len(encoded), 0, 0, 0, 0, 0,
                               offset) + encoded
    count = len(members)
    out += central + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count,
                                 len(central), len(out), 0)
    path.write_bytes(bytes(out))
    return path


# -- what a log becomes ------------------------------------------------------------------------

def test_one_run_per_sample_and_epoch_named_after_the_eval_and_the_sample() -> None:
    runs = runs_of(RESEARCH)
    assert [run.run_id for run in runs] == [
        "Hk3vX9qLmC2/1/epoch-1", "Hk3vX9qLmC2/1/epoch-2", "Hk3vX9qLmC2/web-2/epoch-1"]
    assert [run.name for run in runs] == [
        "research-1-epoch-1", "research-1-epoch-2", "research-web-2-epoch-1"]


def test_tool_calls_and_tool_messages_become_calls_and_their_results() -> None:
    run = runs_of(RESEARCH)[0]
    calls = {call.call_id: call for call in run.calls}
    assert [(c.call_id, c.tool, c.ok) for c in run.calls] == [
        ("toolu_fetch_1", "fetch_url", True), ("toolu_search_1", "web_search", True),
        ("toolu_fetch_2", "fetch_url", False), ("toolu_bash_1", "bash", True)]
    # The call's url argument is the URI of the tool message's text.
    (fetched,) = calls["toolu_fetch_1"].sources
    assert fetched.uri == IANA
    assert fetched.content is not None and fetched.content.startswith("Example Domains\nAs ")
    # The search tool marked each result with its URL and text: a source each.
    assert [(s.uri, s.content) for s in calls["toolu_search_1"].sources] == [
        (RFC2606, "The Internet Engineering Task Force (IETF) reserves four top level domain "
                  "names for testing, documentation and examples."),
        ("https://datatracker.ietf.org/doc/html/rfc6761",
         "This document describes what it means to say that a Domain Name is special.")]
    # A failed call captured nothing; a tool with no URL gives no source.
    assert calls["toolu_fetch_2"].sources == ()
    assert calls["toolu_bash_1"].sources == ()
    ids = [s.id for call in run.calls for s in call.sources]
    assert len(ids) == len(set(ids)) == 3


def test_the_final_answers_string_cited_texts_are_quotes_and_spans_are_counted() -> None:
    run = runs_of(RESEARCH)[0]
    sources = {s.id: s for call in run.calls for s in call.sources}
    assert [claim.text for claim in run.claims] == [
        "example.com and example.org are reserved for documentation.",
        " RFC 2606 reserves four top-level names."]
    first, second = run.claims
    # The URL is matched by its stable form (case, fragment).
    assert [(sources[c.source_id].uri, c.quote) for c in first.citations] == [
        (IANA, "example.com and example.org are maintained for documentation purposes.")]
    assert [(sources[c.source_id].uri, c.quote) for c in second.citations] == [
        (RFC2606, "reserves four top level domain names")]
    assert run.not_importable == 1


def test_a_providers_web_search_finds_sources_without_content_and_its_cut_is_dropped(
) -> None:
    run = runs_of(RESEARCH)[2]
    (call,) = run.calls
    assert (call.call_id, call.tool, call.ok) == ("srvtoolu_01A", "web_search", True)
    (source,) = call.sources
    assert (source.uri, source.content) == (RESERVED, None)
    ((citation,),) = [claim.citations for claim in run.claims]
    assert citation.source_id == source.id
    assert citation.quote.endswith("technical purposes")


def web_search_sample() -> dict[str, Any]:
    sample: dict[str, Any] = load()["samples"][2]
    return sample


def test_a_url_no_result_names_is_a_source_without_content_of_its_own_call(
        tmp_path: Path) -> None:
    sample = web_search_sample()
    del sample["messages"][1]["content"][0]  # the search
    (run,) = runs_of(write_log(tmp_path, {**load(), "samples": [sample]}))
    (call,) = run.calls
    assert (call.call_id, call.tool, call.ok) == ("cited-urls", "cited-urls", True)
    assert [(s.uri, s.content) for s in call.sources] == [(RESERVED, None)]
    assert run.claims[0].citations[0].source_id == call.sources[0].id


def test_a_capture_with_text_is_cited_over_a_search_result(tmp_path: Path) -> None:
    sample = web_search_sample()
    sample["messages"][1:1] = [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "toolu_1", "function": "fetch", "arguments": {"url": RESERVED}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "the page"}]
    (run,) = runs_of(write_log(tmp_path, {**load(), "samples": [sample]}))
    fetched = next(call for call in run.calls if call.call_id == "toolu_1").sources[0]
    assert run.claims[0].citations[0].source_id == fetched.id


@pytest.mark.parametrize(("change", "ok"), [
    ({"error": "max_uses_exceeded"}, False),
    ({"result": "not JSON"}, True),
    ({"result": '{"type": "web_search_tool_result_error"}'}, True),
    ({"tool_type": "code_execution"}, True),
])
def test_a_provider_tool_use_without_search_results_finds_no_source(
        tmp_path: Path, change: dict[str, Any], ok: bool) -> None:
    sample = web_search_sample()
    sample["messages"][1]["content"][0].update(change)
    (run,) = runs_of(write_log(tmp_path, {**load(), "samples": [sample]}))
    first = run.calls[0]
    assert (first.call_id, first.ok, first.sources) == ("srvtoolu_01A", ok, ())
    assert run.calls[1].call_id == "cited-urls"


def test_a_trailing_ellipsis_stays_without_anthropics_mark(tmp_path: Path) -> None:
    log = load()
    cited = log["samples"][2]["messages"][1]["content"][1]["citations"][0]
    del cited["internal"]
    (run,) = runs_of(write_log(tmp_path, {**log, "samples": [log["samples"][2]]}))
    assert run.claims[0].citations[0].quote.endswith("technical purposes...")


def test_attachments_are_resolved() -> None:
    run = runs_of(RESEARCH)[1]
    (source,) = run.calls[0].sources
    assert source.uri == IANA
    assert source.content is not None and source.content.startswith("Example Domains")


def test_span_and_absent_cited_texts_are_never_quotes() -> None:
    (run,) = runs_of(SPANS)
    assert run.claims == ()
    assert run.not_importable == 3
    assert run.run_id == "browse/s/1/epoch-1"  # no eval_id: the task names the eval
    assert "/" not in run.name and run.name.startswith("spans-s_1-")


def test_a_uri_captured_twice_is_cited_at_its_last_capture(tmp_path: Path) -> None:
    log = load()
    messages = log["samples"][0]["messages"]
    messages[2]["tool_calls"][1]["arguments"] = {"url": IANA}
    messages[4]["content"] = "the second capture"
    run = runs_of(write_log(tmp_path, log))[0]
    second = run.calls[1].sources[0]
    assert (second.uri, second.content) == (IANA, "the second capture")
    assert run.claims[0].citations[0].source_id == second.id


def test_text_blocks_of_a_tool_message_are_joined_by_newlines(tmp_path: Path) -> None:
    log = load()
    log["samples"][0]["messages"][3]["content"] = [
        {"type": "text", "text": "first"}, {"type": "image", "image": "attachment://img"},
        {"type": "text", "text": "second"}]
    run = runs_of(write_log(tmp_path, log))[0]
    assert run.calls[0].sources[0].content == "first\nsecond"


def test_a_tool_result_marked_with_one_url_and_no_cited_text_captures_its_block(
        tmp_path: Path) -> None:
    log = load()
    log["samples"][0]["messages"][4]["content"] = [
        {"type": "text", "text": "Page one text", "citations": [{"type": "url", "url": "https://a.example/"}]},
        {"type": "text", "text": "Two pages", "citations": [
            {"type": "url", "url": "https://b.example/"}, {"type": "url", "url": "https://c.example/"}]}]
    run = runs_of(write_log(tmp_path, log))[0]
    assert [(s.uri, s.content) for s in run.calls[1].sources] == [
        ("https://a.example/", "Page one text")]


def test_a_tool_result_citing_a_span_of_its_own_text_captures_nothing(tmp_path: Path) -> None:
    log = load()
    log["samples"][0]["messages"][4]["content"] = [
        {"type": "text", "text": "A summary of pages", "citations": [
            {"type": "url", "url": "https://a.example/", "cited_text": [0, 9]}]}]
    run = runs_of(write_log(tmp_path, log))[0]
    assert run.calls[1].sources == ()


def test_a_call_no_tool_message_answers_captured_nothing(tmp_path: Path) -> None:
    log = load()
    del log["samples"][0]["messages"][3]
    run = runs_of(write_log(tmp_path, log))[0]
    assert (run.calls[0].ok, run.calls[0].sources) == (False, ())
    # Its URL, still cited, is now a source without content.
    assert run.calls[-1].call_id == "cited-urls"
    assert [s.uri for s in run.calls[-1].sources] == [
        "HTTPS://WWW.IANA.ORG/help/example-domains#reserved"]


def test_a_sample_without_an_assistant_message_has_an_answer_without_claims(
        tmp_path: Path) -> None:
    log = load()
    log["samples"] = [{"id": 7, "epoch": 1, "input": "x", "target": "y",
                       "messages": [{"role": "user", "content": "x"}]}]
    (run,) = runs_of(write_log(tmp_path, log))
    assert (run.calls, run.claims, run.not_importable) == ((), (), 0)


def test_names_stay_unique_when_ids_differ_only_in_type(tmp_path: Path) -> None:
    log = load()
    first = copy.deepcopy(log["samples"][2])
    second = copy.deepcopy(first)
    first["id"], second["id"] = 1, "1"
    path = write_log(tmp_path, {**log, "samples": [first, second]})
    assert [run.name for run in runs_of(path)] == ["log-1-epoch-1", "log-1-epoch-1"]
    # The import makes the names it writes unique, across samples and logs alike (one rule
    # for every vendor), compared without case.
    third = copy.deepcopy(first)
    third["id"] = "A"
    (tmp_path / "more").mkdir()
    other = write_log(tmp_path / "more", {**log, "samples": [third, {**third, "id": "a"}]})
    report = api.import_transcripts("inspect", [path, other], tmp_path / "out")
    assert report.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "log-1-epoch-1-2.trace.jsonl", "log-1-epoch-1.trace.jsonl",
        "log-A-epoch-1.trace.jsonl", "log-a-epoch-1-2.trace.jsonl"]


def test_an_eval_without_a_name_is_tc107(tmp_path: Path) -> None:
    log = load()
    log["eval"].update(eval_id="", task="")
    error = unsupported(write_log(tmp_path, log))
    assert error.json_path == "$.eval.task"
    assert "neither an eval_id nor a task" in error.finding.message


def test_the_uri_argument_stands_in_for_an_empty_url(tmp_path: Path) -> None:
    log = load()
    log["samples"][0]["messages"][2]["tool_calls"][0]["arguments"] = {
        "url": "", "uri": "file:notes/domains.txt"}
    run = runs_of(write_log(tmp_path, log))[0]
    assert run.calls[0].sources[0].uri == "file:notes/domains.txt"


def test_citations_inside_a_tool_message_without_a_url_give_no_source(tmp_path: Path) -> None:
    log = load()
    log["samples"][0]["messages"][4]["content"][0]["citations"] = [
        {"type": "document", "cited_text": "a passage"},
        {"type": "url", "url": "", "cited_text": "a passage"}]
    run = runs_of(write_log(tmp_path, log))[0]
    assert run.calls[1].sources == ()


def test_the_call_of_uncaptured_urls_takes_a_name_no_tool_call_has(tmp_path: Path) -> None:
    sample = web_search_sample()
    del sample["messages"][1]["content"][0]  # the search
    sample["messages"][1]["tool_calls"] = [
        {"id": "cited-urls", "function": "lookup", "arguments": {}}]
    cited = sample["messages"][1]["content"][0]["citations"]
    cited.append(copy.deepcopy(cited[0]))  # the same URL twice: one source
    (run,) = runs_of(write_log(tmp_path, {**load(), "samples": [sample]}))
    assert [(c.call_id, c.tool) for c in run.calls] == [
        ("cited-urls", "lookup"), ("cited-urls-2", "cited-urls")]
    assert len(run.calls[1].sources) == 1
    assert len({c.source_id for c in run.claims[0].citations}) == 1


# -- round trips: the traces written pass check --------------------------------------------------

def test_every_imported_run_passes_check(tmp_path: Path) -> None:
    # The run of research.json's third sample, whose source has no content, is checked below.
    for run in [*runs_of(RESEARCH)[:2], *runs_of(SPANS)]:
        report = api.check([write_trace(tmp_path, run)])
        assert report.exit_code == 0, report.findings


def test_a_run_quoting_its_tool_output_passes_check_evidence(tmp_path: Path) -> None:
    run = runs_of(RESEARCH)[0]
    report = api.check([write_trace(tmp_path, run)], evidence=True)
    assert report.exit_code == 0, report.findings
    assert report.summary.captured.matched == 2


def test_a_misquote_fails_check_evidence(tmp_path: Path) -> None:
    run = runs_of(RESEARCH)[1]
    report = api.check([write_trace(tmp_path, run)], evidence=True)
    assert [f.code for f in report.findings] == [Code.QUOTE_NOT_IN_CAPTURE]


def test_an_uncaptured_source_is_a_warning_to_verify_live(tmp_path: Path) -> None:
    run = runs_of(RESEARCH)[2]
    assert api.check([write_trace(tmp_path, run)]).exit_code == 0
    report = api.check([write_trace(tmp_path, run)], evidence=True)
    assert [f.code for f in report.findings] == [Code.SOURCE_NOT_CAPTURED]
    assert report.exit_code == 0


# -- .eval archives ------------------------------------------------------------------------------

@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_an_archive_gives_the_runs_of_the_json_log(tmp_path: Path, compression: int) -> None:
    path = zip_archive(tmp_path / "research.eval", members_of(load()), compression)
    assert runs_of(path) == runs_of(RESEARCH)


def test_a_zstd_archive_gives_the_runs_of_the_json_log(tmp_path: Path) -> None:
    path = zstd_archive(tmp_path / "research.eval", members_of(load()))
    assert runs_of(path) == runs_of(RESEARCH)


def test_a_zstd_member_of_several_frames_is_read_whole(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")

    def frames(data: bytes) -> bytes:  # Inspect starts a new frame every 200 MiB
        half = len(data) // 2
        compressor = zstandard.ZstdCompressor()
        return compressor.compress(data[:half]) + compressor.compress(data[half:])

    path = zstd_archive(tmp_path / "research.eval", members_of(load()), frames)
    assert runs_of(path) == runs_of(RESEARCH)


def test_zstandard_reads_zstd_where_zipfile_knows_the_method_but_cannot_decompress_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = zstd_archive(tmp_path / "research.eval", members_of(load()))
    # A Python 3.14 built without its compression.zstd module.
    monkeypatch.setattr(zipfile, "ZIP_ZSTANDARD", ZSTD, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    assert runs_of(path) == runs_of(RESEARCH)


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="zipfile reads zstd from Python 3.14")
def test_a_zstd_archive_without_zstandard_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = zstd_archive(tmp_path / "research.eval", members_of(load()))
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard now fails
    error = unsupported(path)
    assert INSTALL_HINT == "install tracecite[inspect]"
    assert INSTALL_HINT in error.finding.message
    assert error.json_path == "header.json: $"


def test_an_archive_still_being_written_has_its_header_in_the_journal(tmp_path: Path) -> None:
    members = [("_journal/start.json" if name == "header.json" else name, data)
               for name, data in members_of(load())]
    path = zip_archive(tmp_path / "research.eval", members)
    assert runs_of(path) == runs_of(RESEARCH)


def test_a_sample_logged_again_is_read_from_its_last_member(tmp_path: Path) -> None:
    log = load()
    members = members_of(log)
    again = copy.deepcopy(log["samples"][2])
    again["messages"][1]["content"][1]["citations"] = []
    members.append(("samples/web-2_epoch_1.json", json.dumps(again).encode()))
    path = tmp_path / "requeued.eval"
    with pytest.warns(UserWarning, match="Duplicate name"):
        zip_archive(path, members)
    runs = runs_of(path)
    assert len(runs) == 3
    assert runs[2].claims == ()


def test_an_archive_is_read_one_member_at_a_time(tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "run.eval", members_of(load()), zipfile.ZIP_STORED)
    corrupt_member(path, "samples/web-2_epoch_1.json")
    runs = read_runs(path, "run.eval")
    assert [next(runs).run_id, next(runs).run_id] == [
        "Hk3vX9qLmC2/1/epoch-1", "Hk3vX9qLmC2/1/epoch-2"]  # read before the bad member
    with pytest.raises(Unsupported) as caught:
        next(runs)
    assert caught.value.json_path == "samples/web-2_epoch_1.json: $"


def test_an_archive_is_recognised_by_its_bytes_whatever_its_name(tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "research.log", members_of(load()))
    assert len(runs_of(path)) == 3


# -- bad input: TC107 with the file, the JSON path and the member ------------------------------

def test_malformed_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "eval": {"task": "t"},\n  "samples": [,]\n}\n', encoding="utf-8")
    error = unsupported(path)
    assert (error.json_path, error.finding.line) == ("$", 3)
    assert error.finding.message == "not valid JSON (Expecting value, column 15) at $"


def test_a_control_character_in_a_string_is_named_without_the_readers_trailing_at(
        tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"eval": {"task": "t\x1b"}}', encoding="utf-8")
    error = unsupported(path)
    assert error.finding.message == "not valid JSON (Invalid control character, column 21) at $"


def test_a_number_too_long_is_tc107(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"eval": {"task": "t"}, "samples": [' + "9" * 5000 + "]}", encoding="utf-8")
    assert "not valid JSON" in unsupported(path).finding.message


def test_a_log_that_is_not_utf8_is_tc102_at_its_line_and_column(tmp_path: Path) -> None:
    """As for every other input (the Anthropic importer's, notes, traces)."""
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"eval": {"task": "t"},\n"samples": ["\xff"]}')
    with pytest.raises(TraceCiteError) as raised:
        list(read_runs(path, "bad.json"))
    finding = raised.value.finding
    assert (finding.code, finding.file, finding.line, finding.column) == (
        Code.INPUT_NOT_UTF8, "bad.json", 2, 14)


def test_a_log_that_cannot_be_read_is_tc101(tmp_path: Path) -> None:
    with pytest.raises(TraceCiteError) as raised:
        list(read_runs(tmp_path / "gone.json", "gone.json"))
    assert (raised.value.finding.code, raised.value.finding.file) == (
        Code.INPUT_UNREADABLE, "gone.json")


def archive_with(tmp_path: Path, member: str, data: bytes) -> Path:
    members = [(name, data if name == member else body) for name, body in members_of(load())]
    return zip_archive(tmp_path / "run.eval", members)


@pytest.mark.parametrize(("data", "what"), [
    (b'{"id": 1, "epoch": 1, "messages": [', "not valid JSON"),
    (b'{"id": 1, "epoch": 1, "input": "\xc3\x28"}', "not valid UTF-8"),
    (b"[]", "expected a JSON object"),
])
def test_a_bad_member_is_named(tmp_path: Path, data: bytes, what: str) -> None:
    error = unsupported(archive_with(tmp_path, "samples/1_epoch_2.json", data))
    assert error.json_path == "samples/1_epoch_2.json: $"
    assert what in error.finding.message
    assert error.label == "the sample of member samples/1_epoch_2.json"  # its id is unknown


def test_an_unknown_citation_type_is_located_in_its_member(tmp_path: Path) -> None:
    log = load()
    citations = log["samples"][0]["messages"][8]["content"][2]["citations"]
    citations[1] = {"type": "quote_location", "cited_text": "x"}
    path = zip_archive(tmp_path / "run.eval", members_of(log))
    error = unsupported(path)
    assert error.json_path == "samples/1_epoch_1.json: $.messages[8].content[2].citations[1].type"
    assert error.finding.message == (
        "unknown citation type ('quote_location') (expected one of content, document, url; a "
        "type of a newer Inspect needs a newer TraceCite) at samples/1_epoch_1.json: "
        "$.messages[8].content[2].citations[1].type")


def mutated(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    log = load()
    change(log)
    return log


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    """``_set("samples.0.messages.4.role", None)``: set (None: delete) one element."""
    *parents, last = path.split(".")

    def change(log: dict[str, Any]) -> None:
        node: Any = log
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        index: Any = int(last) if isinstance(node, list) else last
        if value is None:
            del node[index]
        else:
            node[index] = value

    return change


M = "samples.0.messages"
FINAL = f"{M}.8.content.1"


@pytest.mark.parametrize(("change", "json_path", "what"), [
    (_set("eval", None), "$.eval", "a required object is missing"),
    (_set("eval.task", None), "$.eval.task", "a required string is missing"),
    (_set("eval.eval_id", 7), "$.eval.eval_id", "expected a string"),
    (_set("samples", None), "$.samples", "written without its samples"),
    (_set("samples", []), "$.samples", "holds no sample"),
    (_set("samples", {}), "$.samples", "expected a list of samples"),
    (_set("samples.0.id", None), "$.samples[0].id", "needs an id"),
    (_set("samples.0.id", True), "$.samples[0].id", "needs an id"),
    (_set("samples.0.epoch", "1"), "$.samples[0].epoch", "needs an epoch"),
    (_set("samples.0.messages", {}), "$.samples[0].messages", "expected a list"),
    (_set(f"{M}.4.role", None), "$.samples[0].messages[4].role", "(none given)"),
    (_set(f"{M}.4.role", "critic"), "$.samples[0].messages[4].role", "role is none of"),
    (_set(f"{M}.2.tool_calls.0.id", None), "$.samples[0].messages[2].tool_calls[0].id",
     "a required string is missing"),
    (_set(f"{M}.2.tool_calls.1.id", "toolu_fetch_1"),
     "$.samples[0].messages[2].tool_calls[1].id", "a second tool call"),
    (_set(f"{M}.2.tool_calls.0.id", ""), "$.samples[0].messages[2].tool_calls[0]",
     "needs a non-empty id and function"),
    (_set(f"{M}.2.tool_calls.0.arguments", None),
     "$.samples[0].messages[2].tool_calls[0].arguments", "a required object is missing"),
    (_set(f"{M}.2.tool_calls", {}), "$.samples[0].messages[2].tool_calls", "expected a list"),
    (_set(f"{M}.3.tool_call_id", None), "$.samples[0].messages[3].tool_call_id",
     "names no tool call"),
    (_set(f"{M}.3.tool_call_id", "toolu_other"), "$.samples[0].messages[3].tool_call_id",
     "answers no earlier tool call"),
    (_set(f"{M}.4.tool_call_id", "toolu_fetch_1"), "$.samples[0].messages[4].tool_call_id",
     "a second tool message"),
    (_set(f"{M}.6.error", "timeout"), "$.samples[0].messages[6].error", "expected an object"),
    (_set(f"{M}.3.content", 5), "$.samples[0].messages[3].content",
     "neither a string nor a list"),
    (_set(f"{M}.7.content.0.type", "hologram"), "$.samples[0].messages[7].content[0].type",
     "unknown content type ('hologram')"),
    (_set(f"{M}.7.content.0.text", None), "$.samples[0].messages[7].content[0].text",
     "a required string is missing"),
    (_set(f"{M}.4.content.0.citations", "none"), "$.samples[0].messages[4].content[0].citations",
     "expected a list or null"),
    (_set(f"{M}.4.content.0.citations.0.url", None),
     "$.samples[0].messages[4].content[0].citations[0].url", "a required string is missing"),
    (_set(f"{FINAL}.citations.0.type", None),
     "$.samples[0].messages[8].content[1].citations[0].type", "unknown citation type (none given)"),
    (_set(f"{FINAL}.citations.0.cited_text", [1, 2, 3]),
     "$.samples[0].messages[8].content[1].citations[0].cited_text", "neither a string nor a"),
    (_set(f"{FINAL}.citations.0.cited_text", 12),
     "$.samples[0].messages[8].content[1].citations[0].cited_text", "neither a string nor a"),
    (_set(f"{FINAL}.citations.0.cited_text", " "),
     "$.samples[0].messages[8].content[1].citations[0].cited_text", "an empty cited_text"),
    (_set(f"{FINAL}.citations.0.url", ""),
     "$.samples[0].messages[8].content[1].citations[0].url", "without a URL"),
    (_set(f"{FINAL}.citations.0", {"type": "document", "cited_text": "quoted",
                                   "range": {"type": "char", "start_index": 0, "end_index": 6},
                                   "internal": {"document_index": 0}}),
     "$.samples[0].messages[8].content[1].citations[0].internal.document_index",
     "a document citation of document 0, but the sample holds 0 document(s)"),
    (_set(f"{FINAL}.citations.0", {"type": "content", "cited_text": "quoted"}),
     "$.samples[0].messages[8].content[1].citations[0]",
     "a content citation that names no document (expected internal.document_index"),
    (_set(f"{M}.3.content", "attachment://0000"), "$.samples[0].messages[3].content",
     "attachment:// reference"),
    (_set("samples.1.attachments", []), "$.samples[1].attachments", "expected an object"),
    (_set("samples.2.messages.1.content.0.id", None), "$.samples[2].messages[1].content[0].id",
     "a required string is missing"),
    (_set("samples.2.messages.1.content.0.name", ""), "$.samples[2].messages[1].content[0]",
     "needs a non-empty id and name"),
    (_set("samples.2.messages.1.content.0.result", None),
     "$.samples[2].messages[1].content[0].result", "a required string is missing"),
    (_set("samples.2.messages.1.content.0.error", 3),
     "$.samples[2].messages[1].content[0].error", "expected a string"),
    (_set("samples.2.messages.1.tool_calls", [{"id": "srvtoolu_01A", "function": "f",
                                               "arguments": {}}]),
     "$.samples[2].messages[1].content[0].id", "a second tool call of the same id"),
])
def test_bad_shapes_are_located(tmp_path: Path, change: Callable[[dict[str, Any]], None],
                                json_path: str, what: str) -> None:
    error = unsupported(write_log(tmp_path, mutated(change)))
    assert error.json_path == json_path
    assert what in error.finding.message
    assert error.finding.message.endswith(f" at {json_path}")


def test_messages_never_echo_the_log(tmp_path: Path) -> None:
    hostile = "\x1b]0;owned\x07::error::x"
    log = mutated(_set(f"{M}.7.content.0.type", hostile))
    error = unsupported(write_log(tmp_path, log))
    assert hostile not in error.finding.message
    assert "\x1b" not in error.finding.message


def test_a_truncated_archive_is_tc107(tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "run.eval", members_of(load()))
    path.write_bytes(path.read_bytes()[:-200])
    error = unsupported(path)
    assert (error.json_path, error.finding.line) == ("$", None)
    assert "truncated or corrupt" in error.finding.message


def test_a_file_that_is_not_a_zip_is_tc107(tmp_path: Path) -> None:
    path = tmp_path / "run.eval"
    path.write_text("{}", encoding="utf-8")
    assert "not a readable .eval archive" in unsupported(path).finding.message


def corrupt_member(path: Path, member: str, where: float = 0.5) -> None:
    """Flip one byte of the member's stored data, ``where`` through it."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26:
                                                          info.header_offset + 30])
    start = info.header_offset + 30 + name_length + extra_length
    data[start + int(info.compress_size * where)] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_corrupt_member_is_tc107(tmp_path: Path, compression: int) -> None:
    path = zip_archive(tmp_path / "run.eval", members_of(load()), compression)
    corrupt_member(path, "samples/1_epoch_1.json")
    error = unsupported(path)
    assert error.json_path == "samples/1_epoch_1.json: $"
    assert "truncated or corrupt" in error.finding.message


@pytest.mark.parametrize("where", [0.0, 0.5])  # the frame's header, its data
def test_a_corrupt_zstd_member_is_tc107(tmp_path: Path, where: float) -> None:
    path = zstd_archive(tmp_path / "run.eval", members_of(load()))
    corrupt_member(path, "samples/1_epoch_1.json", where)
    error = unsupported(path)
    assert error.json_path == "samples/1_epoch_1.json: $"
    assert "truncated or corrupt" in error.finding.message


def test_a_zstd_member_longer_than_its_entry_says_is_tc107(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")

    def longer(data: bytes) -> bytes:
        return bytes(zstandard.ZstdCompressor().compress(data + b" " * 64))

    error = unsupported(zstd_archive(tmp_path / "run.eval", members_of(load()), longer))
    assert "truncated or corrupt" in error.finding.message


def test_a_member_of_an_unknown_compression_method_is_tc107(tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "run.eval", members_of(load()), zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    entry = data.find(b"header.json", data.find(b"PK\x01\x02")) - 46
    data[entry + 10:entry + 12] = data[8:10] = struct.pack("<H", 97)  # WavPack
    path.write_bytes(bytes(data))
    error = unsupported(path)
    assert error.json_path == "header.json: $"
    assert "a method TraceCite cannot read" in error.finding.message


def test_a_zstd_member_cut_short_is_tc107(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")

    def cut(data: bytes) -> bytes:
        return bytes(zstandard.ZstdCompressor().compress(data)[:-8])

    path = zstd_archive(tmp_path / "run.eval", members_of(load()), cut)
    error = unsupported(path)
    assert error.json_path == "header.json: $"
    assert "truncated or corrupt" in error.finding.message


def test_an_archive_without_its_header_is_tc107(tmp_path: Path) -> None:
    members = [m for m in members_of(load()) if m[0] != "header.json"]
    error = unsupported(zip_archive(tmp_path / "run.eval", members))
    assert "neither header.json nor _journal/start.json" in error.finding.message


def test_an_archive_without_samples_is_tc107(tmp_path: Path) -> None:
    members = [m for m in members_of(load()) if not m[0].startswith("samples/")]
    error = unsupported(zip_archive(tmp_path / "run.eval", members))
    assert "holds no sample" in error.finding.message


def test_an_encrypted_member_is_tc107(tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "run.eval", members_of(load()), zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    entry = data.find(b"samples/1_epoch_2.json", data.find(b"PK\x01\x02")) - 46
    data[entry + 8] |= 0x1  # its central directory entry's flags: encrypted
    path.write_bytes(bytes(data))
    error = unsupported(path)
    assert error.json_path == "samples/1_epoch_2.json: $"
    assert "encrypted" in error.finding.message


def test_a_missing_file_is_tc101(tmp_path: Path) -> None:
    with pytest.raises(TraceCiteError) as caught:
        runs_of(tmp_path / "gone.eval", "logs/gone.eval")
    assert caught.value.finding.code is Code.INPUT_UNREADABLE
    assert caught.value.finding.file == "logs/gone.eval"


class _FailingFile:
    """A file whose reads give its first ``good`` bytes, then fail as a disk does (EIO): a
    read past them fails whole."""

    def __init__(self, path: Path, good: int) -> None:
        self._file = path.open("rb")
        self._left = good

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > self._left:
            raise OSError(5, "Input/output error")
        data = self._file.read(size)
        self._left -= len(data)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)

    def __enter__(self) -> _FailingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


@pytest.mark.parametrize(("good", "make"), [
    (0, zip_archive), (1, zip_archive), (1, zstd_archive),  # the directory, or a member
])
def test_an_archive_the_disk_cannot_read_is_tc101_not_tc107(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, good: int,
        make: Callable[[Path, list[tuple[str, bytes]]], Path]) -> None:
    import tracecite.importers.inspect as inspect_importer

    if make is zstd_archive:
        pytest.importorskip("zstandard")
    path = make(tmp_path / "run.eval", members_of(load()))
    if good:
        data = path.read_bytes()  # the end record and the directory are read, no member
        good = len(data) - data.find(b"PK\x01\x02") + 100
    monkeypatch.setattr(inspect_importer, "open_input",
                        lambda name, **kw: _FailingFile(Path(name), good))
    with pytest.raises(TraceCiteError) as caught:
        outcomes_of(path, "logs/run.eval")
    assert caught.value.finding.code is Code.INPUT_UNREADABLE
    assert caught.value.finding.file == "logs/run.eval"
    assert "Input/output error" in caught.value.finding.message


def test_a_member_offset_before_the_file_is_still_a_corrupt_archive(tmp_path: Path) -> None:
    # The end record's directory offset made larger: zipfile takes the difference for bytes
    # prepended to the archive and seeks before its start for the first member (EINVAL).
    path = zip_archive(tmp_path / "run.eval", members_of(load()), zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    (offset,) = struct.unpack("<I", data[end + 16:end + 20])
    data[end + 16:end + 20] = struct.pack("<I", offset + 1000)
    path.write_bytes(bytes(data))
    error = unsupported(path)
    assert error.finding.code is Code.IMPORT_UNSUPPORTED
    assert "corrupt" in error.finding.message
