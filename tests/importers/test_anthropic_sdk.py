"""The Anthropic importer against the shapes the real SDK writes (fixtures/anthropic/sdk/, made
by make_anthropic_fixtures.py with the SDK's own types): each shape imported right, refused
with what to save instead, or skipped; the fixtures are what the installed SDK writes today."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tracecite.codes import Code
from tracecite.importers.anthropic import read_runs
from tracecite.importers.model import ImportedRun, RefusedRun, RunOutcome, SkippedRun

anthropic = pytest.importorskip("anthropic", reason="the test extra brings the Anthropic SDK")

HERE = Path(__file__).parent
SDK = HERE / "fixtures" / "anthropic" / "sdk"
BRIDGE = "https://example.test/bridge"
BRIDGE_QUOTE = "The bridge was opened to traffic in March 1932 after"


def outcomes(name: str) -> list[RunOutcome]:
    return list(read_runs(SDK / name, name))


def run_of(name: str) -> ImportedRun:
    (run,) = outcomes(name)
    assert isinstance(run, ImportedRun), run
    return run


def sources(run: ImportedRun) -> dict[str, tuple[str, str | None]]:
    return {s.id: (s.uri, s.content) for c in run.calls for s in c.sources}


def quotes(run: ImportedRun) -> list[tuple[str, str]]:
    return [(c.source_id, c.quote) for claim in run.claims for c in claim.citations]


def test_the_fixtures_are_what_the_installed_sdk_writes(tmp_path: Path) -> None:
    """A new SDK release that changes a shape changes a fixture: regenerate them with
    ``python tests/importers/make_anthropic_fixtures.py`` and look at what changed."""
    from tests.importers import make_anthropic_fixtures

    assert make_anthropic_fixtures.main(["make_anthropic_fixtures.py", str(tmp_path)]) == 0
    made = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    committed = {p.name: p.read_text(encoding="utf-8") for p in SDK.iterdir()}
    assert sorted(made) == sorted(committed)
    for name, text in made.items():
        assert text == committed[name], f"{name} differs from what anthropic " \
                                        f"{anthropic.__version__} writes"


# ---- correct: what each shape becomes ------------------------------------------------------

IMPORTED: dict[str, tuple[dict[str, tuple[str, str | None]], list[tuple[str, str]]]] = {
    # A document's context (here JSON text) and title are never its address.
    "pair_text_document.json": (
        {"document-0": ("document:0", "The grass is green. The sky is blue.")},
        [("document-0", "The grass is green.")]),
    # Blocks concatenated, as the API documents; a plain string content is one block.
    "pair_custom_content.json": (
        {"document-0": ("document:0", "Tides follow the moon.Spring tides come twice a month."),
         "document-1": ("document:1", "Neap tides are weaker.")},
        [("document-0", "Tides follow the moon.Spring tides come twice a month."),
         ("document-1", "Neap tides are weaker.")]),
    # The exchange's own citation shows a newline between the blocks: that one.
    "pair_custom_newline.json": (
        {"document-0": ("document:0", "First line\nSecond line")},
        [("document-0", "First line\nSecond line")]),
    "pair_search_results.json": (
        {"search-result-0": ("https://example.test/kb/intro",
                             "The product ships in three editions.Each edition is sold "
                             "worldwide.")},
        [("search-result-0", "The product ships in three editions.Each edition is sold "
                             "worldwide.")]),
    # Web search returns no text: the quote, without its "...", is to be checked live.
    "pair_web_search.json": ({"web-search-1": (BRIDGE, None)},
                             [("web-search-1", BRIDGE_QUOTE)]),
    "pair_web_fetch.json": (
        {"document-0": ("https://example.test/owls",
                        "Owls hunt at night. Their feathers are soft.")},
        [("document-0", "Owls hunt at night.")]),
    # A search result the response fetched whole is checked against the fetched text.
    "pair_search_then_fetch.json": (
        {"web-search-1": (BRIDGE, None),
         "document-0": (BRIDGE, "The bridge was opened to traffic in March 1932 after eight "
                                "years of construction, and it is still in use.")},
        [("document-0", BRIDGE_QUOTE)]),
    # A Files API document has no text in the transcript.
    "pair_files_api.json": (
        {"document-0": ("anthropic-file:file_011CPMxVD3fHLUhvTqtsQA5w", None)},
        [("document-0", "The filed text.")]),
    # A PDF nothing cites counts in document_index and blocks nothing.
    "pair_uncited_pdf.json": (
        {"document-1": ("document:1", "The grass is green. The sky is blue.")},
        [("document-1", "The sky is blue.")]),
    "beta_unknown_blocks.json": (
        {"document-0": ("document:0", "The grass is green. The sky is blue.")},
        [("document-0", "The sky is blue.")]),
    "params_message.json": (
        {"document-0": ("document:0", "The grass is green. The sky is blue.")},
        [("document-0", "The grass is green.")]),
    "response_model_dump_json.json": ({"web-search-1": (BRIDGE, None)},
                                      [("web-search-1", BRIDGE_QUOTE)]),
    "response_to_json.json": ({"web-search-1": (BRIDGE, None)},
                              [("web-search-1", BRIDGE_QUOTE)]),
    "stream_events.jsonl": ({"web-search-1": (BRIDGE, None)},
                            [("web-search-1", BRIDGE_QUOTE)]),
}


@pytest.mark.parametrize("name", sorted(IMPORTED))
def test_each_shape_imports_right(name: str) -> None:
    run = run_of(name)
    expected_sources, expected_quotes = IMPORTED[name]
    assert sources(run) == expected_sources
    assert quotes(run) == expected_quotes


def test_title_is_kept_apart_and_unknown_blocks_are_counted() -> None:
    run = run_of("pair_text_document.json")
    assert run.calls[0].sources[0].title == "Colours"
    assert run.ignored_blocks == 0
    assert run_of("beta_unknown_blocks.json").ignored_blocks == 3  # compaction, mcp use, result


def test_a_stream_is_accumulated_as_the_sdk_accumulates_it(tmp_path: Path) -> None:
    """The stream's run is the run of the message the SDK's own accumulator makes of it."""
    streaming = pytest.importorskip("anthropic.lib.streaming._messages")
    snapshot = None
    for line in (SDK / "stream_events.jsonl").read_text(encoding="utf-8").splitlines():
        snapshot = streaming.accumulate_event(event=json.loads(line),
                                              current_snapshot=snapshot, json_bufs={})
    assert snapshot is not None
    accumulated = run_of("stream_events.jsonl")
    single = tmp_path / "accumulated.json"
    single.write_text(snapshot.model_dump_json(), encoding="utf-8")
    (again,) = read_runs(single, "accumulated.json")
    assert isinstance(again, ImportedRun)
    assert (again.calls, again.claims, again.run_id) == (
        accumulated.calls, accumulated.claims, accumulated.run_id)


# ---- refused clearly, or skipped ----------------------------------------------------------

REFUSED: dict[str, tuple[str, str]] = {
    "response_document_index.json": (
        "$.content[0].citations[0]",
        "a response without its request: cited documents need the request; save "
        "{request, response}"),
    # Its PDF is a header and nothing else (the pdf extra reads PDFs: tests/pdf/).
    "pair_cited_pdf.json": (
        "$.response.content[0].citations[0]",
        "the cited PDF document (document_index 0) cannot be read: the PDF is damaged"),
    "stream_error.jsonl": ("$.type", "the stream ended in an API error: expected message_stop"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_cannot_be_imported_is_refused_saying_what_to_save(name: str) -> None:
    (refused,) = outcomes(name)
    assert isinstance(refused, RefusedRun) and refused.label == "exchange 1"
    where, words = REFUSED[name]
    assert refused.finding.code is Code.IMPORT_UNSUPPORTED
    assert words in refused.finding.message and refused.finding.message.endswith(f" at {where}")


def test_a_stream_cut_short_is_refused() -> None:
    (refused,) = outcomes("stream_cut.jsonl")
    assert isinstance(refused, RefusedRun)
    assert refused.finding.message.startswith("the stream ends before its message_stop")
    assert refused.finding.line == 1  # its message_start


def test_batch_results_are_runs_and_errored_entries_are_skipped() -> None:
    got = outcomes("batch_results.jsonl")
    assert [type(o) for o in got] == [ImportedRun, ImportedRun, SkippedRun, SkippedRun,
                                      SkippedRun]
    first, second = (o for o in got if isinstance(o, ImportedRun))
    # Named by their custom_id: a batch's results come in any order.
    assert (first.name, second.name) == ("batch_results-search-1", "batch_results-document-2")
    assert quotes(first) == [("web-search-1", BRIDGE_QUOTE)]
    # With the request's params, a document citation resolves.
    assert quotes(second) == [("document-0", "The grass is green.")]
    skipped = [o for o in got if isinstance(o, SkippedRun)]
    assert [(s.finding.code, s.finding.line) for s in skipped] == [
        (Code.IMPORT_SKIPPED, 3), (Code.IMPORT_SKIPPED, 4), (Code.IMPORT_SKIPPED, 5)]
    assert skipped[0].finding.message == (
        "exchange 3 (custom_id errored-3): the batch entry errored (overloaded_error): it holds "
        "no message to import")


def test_a_batch_result_without_params_that_cites_a_document_says_to_save_them(
        tmp_path: Path) -> None:
    lines = (SDK / "batch_results.jsonl").read_text(encoding="utf-8").splitlines()
    entry: dict[str, Any] = json.loads(lines[1])
    del entry["params"]
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(entry) + "\n" + lines[0] + "\n", encoding="utf-8")
    refused, imported = read_runs(path, "results.jsonl")
    assert isinstance(refused, RefusedRun) and isinstance(imported, ImportedRun)
    assert refused.label == "exchange 1 (custom_id document-2)"
    assert "cited documents need the request" in refused.finding.message


# ---- end to end: check --evidence on every shape imported ----------------------------------

def test_every_shape_imported_passes_check_evidence(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = cli("import", "anthropic", *sorted(SDK / name for name in IMPORTED),
              SDK / "batch_results.jsonl", "-o", out, "--json")
    assert res.exit == 0, res.out
    summary = res.json()["summary"]
    assert (summary["runs"], summary["skipped"], summary["ignored_blocks"]) == (
        len(IMPORTED) + 2, 3, 3)
    checked = cli("check", "--evidence", out, "--json")
    assert checked.exit == 0, checked.out
    # Uncaptured: web search results (4 files and a batch line) and the Files API document.
    assert checked.codes() == ["TC203"] * 6


def test_a_tampered_quote_of_a_searched_and_fetched_page_fails_offline(
        cli: Cli, tmp_path: Path) -> None:
    exchange = json.loads((SDK / "pair_search_then_fetch.json").read_text(encoding="utf-8"))
    exchange["response"]["content"][-1]["citations"][0]["cited_text"] = (
        "The bridge was closed to traffic in March 1932 ...")
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(exchange), encoding="utf-8")
    out = tmp_path / "out"
    assert cli("import", "anthropic", path, "-o", out).exit == 0
    res = cli("check", "--evidence", out, "--json")
    assert res.exit == 2 and res.codes() == ["TC202"]


def test_an_object_of_no_known_shape_says_which_shapes_are(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_text('{"exchange": {}}', encoding="utf-8")
    (refused,) = read_runs(path, "odd.json")
    assert isinstance(refused, RefusedRun)
    assert refused.finding.message == (
        "expected an exchange {request, response}, a Message (model_dump_json or to_json), a "
        "Message Batches result line {custom_id, result} or stream events; save "
        "{request, response} at $")


def test_streams_one_after_another_are_exchanges_of_their_own(tmp_path: Path) -> None:
    events = (SDK / "stream_events.jsonl").read_text(encoding="utf-8")
    cut = (SDK / "stream_cut.jsonl").read_text(encoding="utf-8")
    path = tmp_path / "streams.jsonl"
    # A ping between events (raw server-sent data) changes nothing.
    path.write_text(events + cut + '{"type": "ping"}\n' + events, encoding="utf-8")
    first, refused, last = read_runs(path, "streams.jsonl")
    assert isinstance(first, ImportedRun) and isinstance(last, ImportedRun)
    assert isinstance(refused, RefusedRun) and refused.label == "exchange 2"
    assert refused.finding.line == len(events.splitlines()) + 1
    assert (first.name, last.name) == ("streams-1", "streams-3")
    assert quotes(first) == quotes(last) == [("web-search-1", BRIDGE_QUOTE)]


def test_a_citations_delta_on_no_text_block_and_an_unknown_delta_are_refused(
        tmp_path: Path) -> None:
    lines = (SDK / "stream_events.jsonl").read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[8])
    assert event["delta"]["type"] == "text_delta"
    event["delta"] = {"type": "markup_delta", "markup": "x"}
    lines[8] = json.dumps(event)
    path = tmp_path / "stream.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (refused,) = read_runs(path, "stream.jsonl")
    assert isinstance(refused, RefusedRun) and refused.finding.line == 9
    assert refused.finding.message == (
        "unknown text block delta type 'markup_delta': expected text_delta or citations_delta "
        "at $.delta.type")


def test_a_search_citation_finds_the_fetch_of_the_same_page_spelled_otherwise(
        tmp_path: Path) -> None:
    exchange = json.loads((SDK / "pair_search_then_fetch.json").read_text(encoding="utf-8"))
    citation = exchange["response"]["content"][-1]["citations"][0]
    citation["url"] = "https://EXAMPLE.test:443/bridge#opening"
    exchange["response"]["content"][1]["content"][0]["url"] = citation["url"]
    path = tmp_path / "spelled.json"
    path.write_text(json.dumps(exchange), encoding="utf-8")
    (run,) = read_runs(path, "spelled.json")
    assert isinstance(run, ImportedRun) and quotes(run) == [("document-0", BRIDGE_QUOTE)]


@pytest.mark.parametrize("path", sorted((HERE / "fixtures" / "anthropic").glob("*.json")),
                         ids=lambda p: p.name)
def test_the_hand_written_exchanges_are_what_the_sdk_accepts(path: Path) -> None:
    """The exchanges written by hand beside the generated ones: each response is a ``Message``
    the SDK validates, each request's messages are ``MessageParam`` as the SDK types them."""
    import pydantic
    from anthropic.types import Message, MessageParam

    exchange = json.loads(path.read_text(encoding="utf-8"))
    Message.model_validate(exchange["response"])
    pydantic.TypeAdapter(list[MessageParam]).validate_python(exchange["request"]["messages"])


def test_stream_events_saved_as_a_json_list_are_one_exchange(tmp_path: Path) -> None:
    events = [json.loads(line) for line in
              (SDK / "stream_events.jsonl").read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "events.json"
    path.write_text(json.dumps(events, indent=2), encoding="utf-8")
    (run,) = read_runs(path, "events.json")
    assert isinstance(run, ImportedRun) and quotes(run) == [("web-search-1", BRIDGE_QUOTE)]
    assert run.name == "events-1" and run.run_id == "msg_01Stream"


def test_a_deeply_nested_stream_event_is_no_traceback(tmp_path: Path) -> None:
    """JSON decodes nesting that copying it would not (a RecursionError, before): a stream
    whose message holds a deep array is read, and its bad citations are refused by path."""
    lines = (SDK / "stream_events.jsonl").read_text(encoding="utf-8").splitlines()
    start = json.loads(lines[0])
    start["message"]["metadata"] = json.loads("[" * 900 + "]" * 900)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n", encoding="utf-8")
    assert [type(o) for o in read_runs(deep, "deep.jsonl")] == [ImportedRun]


def test_a_text_block_whose_citations_are_no_list_is_refused(tmp_path: Path) -> None:
    events = [json.loads(line) for line in
              (SDK / "stream_events.jsonl").read_text(encoding="utf-8").splitlines()]
    for event in events:
        if event["type"] == "content_block_start" and event["content_block"]["type"] == "text":
            event["content_block"]["citations"] = 5
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    (refused,) = read_runs(bad, "bad.jsonl")
    assert isinstance(refused, RefusedRun)
    assert "citations" in refused.finding.message
