"""The Anthropic importer: each citation kind of the Messages API, and every input it refuses.

The fixtures under fixtures/anthropic/ are written by hand in the shapes of the Anthropic SDK's
types (``TextBlock``, ``CitationCharLocation``, ``WebFetchToolResultBlock``, …; that the SDK
accepts them is tested in test_anthropic_sdk.py, beside the fixtures the SDK itself writes); the
bad inputs are those fixtures with one element changed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tracecite.codes import Code
from tracecite.errors import TraceCiteError
from tracecite.findings import Finding
from tracecite.importers.anthropic import REQUEST_CALL, read_runs
from tracecite.importers.model import ImportedRun, RefusedRun, Unsupported

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"


def fixture(name: str) -> dict[str, Any]:
    """A fixture exchange, parsed (a fresh copy each time)."""
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def runs_of(path: Path) -> list[ImportedRun]:
    """The runs of the file, every one imported (a refused run fails the test)."""
    runs = []
    for outcome in read_runs(path, path.name):
        assert isinstance(outcome, ImportedRun), outcome
        runs.append(outcome)
    return runs


def refusal(path: Path, number: int = 1) -> Finding:
    """The finding of the refused run that is the ``number``-th outcome of the file (the others
    imported)."""
    outcomes = list(read_runs(path, path.name))
    refused = outcomes[number - 1]
    assert isinstance(refused, RefusedRun), refused
    assert refused.label == f"exchange {number}"
    assert all(isinstance(o, ImportedRun) for o in outcomes if o is not refused)
    return refused.finding


def one_run(path: Path) -> ImportedRun:
    (run,) = runs_of(path)
    return run


def write(tmp_path: Path, value: Any, name: str = "exchange.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def sources(run: ImportedRun) -> dict[str, tuple[str, str | None]]:
    """Every source of the run: id → (uri, content)."""
    return {s.id: (s.uri, s.content) for c in run.calls for s in c.sources}


def quotes(run: ImportedRun) -> list[list[tuple[str, str]]]:
    """Each claim's citations as (source id, quote)."""
    return [[(c.source_id, c.quote) for c in claim.citations] for claim in run.claims]


# ---- one fixture per citation kind ------------------------------------------------------------

def test_char_location_cites_a_plain_text_document_of_the_request() -> None:
    run = one_run(FIXTURES / "char_location.json")
    assert run.run_id == "msg_01CharLocation" and run.name == "char_location"
    assert [(c.call_id, c.tool, c.ok) for c in run.calls] == [(REQUEST_CALL, REQUEST_CALL, True)]
    # Neither the document's context nor its title is its URI (metadata; the title is kept).
    assert sources(run) == {"document-0": ("document:0", "The grass is green. The sky is blue.")}
    assert run.calls[0].sources[0].title == "Colours"
    # The thinking block and the uncited text block are no claims; the cited text keeps no
    # trailing space (the API's range includes it, its cited_text need not).
    assert [c.text for c in run.claims] == ["the grass is green"]
    assert quotes(run) == [[("document-0", "The grass is green.")]]


def test_content_block_location_cites_a_custom_content_document() -> None:
    run = one_run(FIXTURES / "content_block_location.json")
    assert sources(run) == {
        # A title is no URI; the blocks are concatenated, as the API joins them.
        "document-0": ("document:0", "An unrelated first document."),
        "document-1": ("document:1",
                       "Tides follow the moon.Spring tides come twice a month."),
    }
    assert quotes(run) == [[("document-1", "Spring tides come twice a month.")]]


def test_a_document_without_context_or_title_is_named_by_its_index(tmp_path: Path) -> None:
    exchange = fixture("content_block_location")
    del exchange["request"]["messages"][0]["content"][0]["title"]
    assert sources(one_run(write(tmp_path, exchange)))["document-0"][0] == "document:0"


def test_search_result_location_counts_the_request_and_tool_results_in_order() -> None:
    run = one_run(FIXTURES / "search_result_location.json")
    assert [(c.call_id, c.tool, c.ok) for c in run.calls] == [
        (REQUEST_CALL, REQUEST_CALL, True), ("toolu_01Search", "knowledge_base", True)]
    assert [s.id for s in run.calls[1].sources] == ["search-result-1"]
    assert sources(run) == {
        "search-result-0": ("https://example.test/kb/intro",
                            "The product ships in three editions."),
        "search-result-1": ("https://example.test/kb/warranty",
                            "Every edition has a two-year warranty."
                            "Batteries are covered for one year."),
    }
    # The earlier assistant turn is history: its text is no claim.
    assert quotes(run) == [[("search-result-1", "Every edition has a two-year warranty.")],
                           [("search-result-0", "The product ships in three editions.")]]


def test_web_search_results_are_sources_without_content_and_quotes_lose_their_ellipsis() -> None:
    run = one_run(FIXTURES / "web_search_result_location.json")
    assert [(c.call_id, c.tool, c.ok) for c in run.calls] == [
        ("srvtoolu_01Search", "web_search", True)]
    assert sources(run) == {"web-search-1": ("https://example.test/bridge", None),
                            "web-search-2": ("https://example.test/other", None)}
    assert quotes(run) == [[("web-search-1", "The bridge was opened to traffic in March 1932 "
                                             "after eight years of construction, and i")]]


def test_web_fetch_documents_are_sources_and_a_failed_fetch_captures_nothing() -> None:
    run = one_run(FIXTURES / "web_fetch.json")
    assert [(c.call_id, c.ok, len(c.sources)) for c in run.calls] == [
        ("srvtoolu_01Gone", False, 0), ("srvtoolu_01Fetch", True, 1)]
    fetched = run.calls[1].sources[0]
    assert (fetched.id, fetched.uri, fetched.captured_at) == (
        "document-0", "https://example.test/fetched", "2025-08-25T10:30:00Z")
    assert quotes(run) == [[("document-0", "Their feathers are soft, so they fly silently.")]]


def test_a_retrieved_at_that_is_no_rfc_3339_date_is_left_out(tmp_path: Path) -> None:
    exchange = fixture("web_fetch")
    exchange["response"]["content"][3]["content"]["retrieved_at"] = "last Tuesday"
    assert one_run(write(tmp_path, exchange)).calls[1].sources[0].captured_at is None


def test_fetched_documents_are_counted_after_the_request_documents(tmp_path: Path) -> None:
    """document_index: the request's documents first, then the fetched ones in response order
    (the web fetch docs' example cites its one fetched document as index 0)."""
    exchange = fixture("web_fetch")
    request_document = fixture("char_location")["request"]["messages"][0]["content"][0]
    exchange["request"]["messages"][0]["content"] = [request_document,
                                                     {"type": "text", "text": "Summarise."}]
    exchange["response"]["content"][4]["citations"][0]["document_index"] = 1
    run = one_run(write(tmp_path, exchange))
    assert [c.call_id for c in run.calls] == [REQUEST_CALL, "srvtoolu_01Gone", "srvtoolu_01Fetch"]
    assert sources(run)["document-1"][0] == "https://example.test/fetched"
    assert quotes(run) == [[("document-1", "Their feathers are soft, so they fly silently.")]]


def test_a_document_in_a_tool_result_is_counted_where_it_is(tmp_path: Path) -> None:
    exchange = fixture("search_result_location")
    document = fixture("char_location")["request"]["messages"][0]["content"][0]
    exchange["request"]["messages"][2]["content"][0]["content"].append(document)
    exchange["response"]["content"].append({"type": "text", "text": "Green.", "citations": [
        {"type": "char_location", "cited_text": "The grass is green.", "document_index": 0,
         "start_char_index": 0, "end_char_index": 19}]})
    run = one_run(write(tmp_path, exchange))
    assert [s.id for s in run.calls[1].sources] == ["search-result-1", "document-0"]
    assert quotes(run)[-1] == [("document-0", "The grass is green.")]


def test_a_continued_assistant_turn_is_part_of_the_final_message(tmp_path: Path) -> None:
    """A request that ends with an assistant turn (prefilled, or a paused turn sent back) is
    continued by the response: the final message's cited blocks come from both."""
    exchange = fixture("web_fetch")
    response = exchange["response"]["content"]
    owls = {"type": "text", "text": "Owls hunt at night.", "citations": [
        {"type": "char_location", "cited_text": "Owls hunt at night.", "document_index": 0,
         "start_char_index": 0, "end_char_index": 20}]}
    exchange["request"]["messages"].append({"role": "assistant",
                                            "content": [*response[:4], owls]})
    exchange["response"]["content"] = response[4:]
    run = one_run(write(tmp_path, exchange))
    assert quotes(run) == [[("document-0", "Owls hunt at night.")],
                           [("document-0", "Their feathers are soft, so they fly silently.")]]


def test_a_tool_call_without_a_result_captured_nothing(tmp_path: Path) -> None:
    exchange = fixture("char_location")
    exchange["response"]["content"].append(
        {"type": "tool_use", "id": "toolu_01Open", "name": "lookup", "input": {}})
    run = one_run(write(tmp_path, exchange))
    assert [(c.call_id, c.ok, c.sources) for c in run.calls][1:] == [("toolu_01Open", False, ())]


def test_a_tool_result_marked_as_an_error_captured_nothing(tmp_path: Path) -> None:
    exchange = fixture("search_result_location")
    exchange["request"]["messages"][2]["content"][0] = {
        "type": "tool_result", "tool_use_id": "toolu_01Search", "is_error": True,
        "content": "the knowledge base is down"}
    del exchange["response"]["content"][0]
    run = one_run(write(tmp_path, exchange))
    assert [(c.call_id, c.ok) for c in run.calls] == [(REQUEST_CALL, True),
                                                      ("toolu_01Search", False)]


def test_a_list_of_exchanges_gives_numbered_runs(tmp_path: Path) -> None:
    path = write(tmp_path, [fixture("char_location"), fixture("web_fetch")], "two.json")
    runs = runs_of(path)
    assert [(r.name, r.run_id) for r in runs] == [("two-1", "msg_01CharLocation"),
                                                  ("two-2", "msg_01WebFetch")]


def test_jsonl_of_exchanges_gives_numbered_runs(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps(fixture(n)) for n in ("web_fetch", "char_location"))
                    + "\n\n", encoding="utf-8")
    assert [r.name for r in runs_of(path)] == ["runs-1", "runs-2"]


def test_a_type_that_is_no_string_is_an_unknown_field(tmp_path: Path) -> None:
    """Regression: a list as an exchange's ``type`` was looked up among the stream events'
    names, and ended the import as TC900 (an unhashable list)."""
    exchange = fixture("char_location")
    exchange["type"] = ["message_start"]
    assert one_run(write(tmp_path, exchange, "typed.json")).run_id == "msg_01CharLocation"


def test_a_response_without_an_id_is_named_by_the_run(tmp_path: Path) -> None:
    exchange = fixture("char_location")
    del exchange["response"]["id"]
    run = one_run(write(tmp_path, exchange, "odd name!.json"))
    assert run.run_id == run.name == "odd-name"


# ---- what cannot be imported ------------------------------------------------------------------

Change = Callable[[dict[str, Any]], object]
SECRET = "\u2063secret-input-text\u2063"
"""Input text that no message may repeat."""


def _set(path: str, value: Any) -> Change:
    """A change that sets the element at ``path`` (keys and indexes, dot-separated)."""
    def change(exchange: dict[str, Any]) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        target: Any = exchange
        for key in parents:
            target = target[key]
        target[last] = value
    return change


def _delete(path: str) -> Change:
    def change(exchange: dict[str, Any]) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        target: Any = exchange
        for key in parents:
            target = target[key]
        del target[last]
    return change


CITATION = "response.content.2.citations.0"
DOCUMENT = "request.messages.0.content.0"

BAD: list[tuple[str, str, Change, str, str]] = [
    # (fixture, what, change, JSON path, words of the message)
    ("char_location", "cited base64 PDF", _set(f"{DOCUMENT}.source", {
        "type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}),
     "$.response.content[2].citations[0]",
     "a char_location citation of a PDF document: expected page_location"),
    ("char_location", "cited URL PDF", _set(f"{DOCUMENT}.source", {
        "type": "url", "url": "https://example.test/a.pdf"}),
     "$.response.content[2].citations[0]",
     "a char_location citation of a PDF document: expected page_location"),
    ("web_fetch", "cited fetched PDF", _set("response.content.3.content.content.source", {
        "type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}),
     "$.response.content[4].citations[0]",
     "a char_location citation of a PDF document: expected page_location"),
    ("char_location", "page_location of a text document", _set(CITATION, {
        "type": "page_location", "cited_text": "x", "document_index": 0,
        "start_page_number": 1, "end_page_number": 2}),
     "$.response.content[2].citations[0]",
     "a page_location citation of a plain text document: expected char_location"),
    ("char_location", "citations in an unknown block", _set("response.content.2.type",
                                                            "widget"),
     "$.response.content[2].citations",
     "citations in a block of a kind TraceCite does not know ('widget' block)"),
    ("char_location", "citations in an unknown block, named with input text",
     _set("response.content.2.type", SECRET),
     "$.response.content[2].citations", "of a kind TraceCite does not know (block)"),
    ("char_location", "unknown citation", _set(f"{CITATION}.type", "span_location"),
     "$.response.content[2].citations[0].type",
     "unknown citation type 'span_location': expected char_location, content_block_location, "
     "page_location, search_result_location or web_search_result_location"),
    ("char_location", "unknown document source", _set(f"{DOCUMENT}.source.type", "Text"),
     "$.request.messages[0].content[0].source.type",
     "unknown document source type: expected text, content, file, base64 or url at"),
    ("char_location", "missing cited_text", _delete(f"{CITATION}.cited_text"),
     "$.response.content[2].citations[0].cited_text", "a required field is missing"),
    ("char_location", "missing document data", _delete(f"{DOCUMENT}.source.data"),
     "$.request.messages[0].content[0].source.data", "a required field is missing"),
    ("char_location", "index as a string", _set(f"{CITATION}.document_index", "0"),
     "$.response.content[2].citations[0].document_index",
     "wrong JSON type (a string; expected an integer)"),
    ("char_location", "index as a boolean", _set(f"{CITATION}.document_index", False),
     "$.response.content[2].citations[0].document_index", "wrong JSON type"),
    ("char_location", "negative index", _set(f"{CITATION}.document_index", -1),
     "$.response.content[2].citations[0].document_index", "a negative index"),
    ("char_location", "index out of range", _set(f"{CITATION}.document_index", 1),
     "$.response.content[2].citations[0].document_index", "no document has this index"),
    ("content_block_location", "char_location of custom content", _set(
        "response.content.0.citations.0", {
            "type": "char_location", "cited_text": "Spring tides", "document_index": 1,
            "start_char_index": 0, "end_char_index": 12}),
     "$.response.content[0].citations[0]", "of a custom-content document"),
    ("search_result_location", "search result out of range", _set(
        "response.content.0.citations.0.search_result_index", 2),
     "$.response.content[0].citations[0].search_result_index",
     "no search result has this index"),
    ("search_result_location", "search result of another source", _set(
        "response.content.0.citations.0.source", "https://example.test/kb/intro"),
     "$.response.content[0].citations[0].source", "not the source of the search result"),
    ("web_search_result_location", "URL of no result", _set(
        "response.content.3.citations.0.url", "https://example.test/elsewhere"),
     "$.response.content[3].citations[0].url",
     "no web search result or fetched page has this url"),
    ("web_search_result_location", "result for no call", _set(
        "response.content.2.tool_use_id", "srvtoolu_01Nobody"),
     "$.response.content[2].tool_use_id", "a result for no earlier tool call"),
    ("web_fetch", "second result", _set("response.content.3.tool_use_id", "srvtoolu_01Gone"),
     "$.response.content[3].tool_use_id", "a second result for one tool call"),
    ("web_fetch", "empty quote", _set("response.content.4.citations.0.cited_text", " ..."),
     "$.response.content[4].citations[0].cited_text", "an empty cited_text"),
    ("char_location", "lone surrogate", _set(f"{CITATION}.cited_text", "grass \ud800"),
     "$.response.content[2].citations[0].cited_text", "cannot be written as UTF-8"),
    ("char_location", "lone surrogate in a block's text", _set("response.content.1.text",
                                                               "\udfff"),
     "$.response.content[1].text", "cannot be written as UTF-8"),
    ("char_location", "citations not a list", _set("response.content.2.citations", {}),
     "$.response.content[2].citations", "wrong JSON type (an object; expected a list)"),
    ("char_location", "messages not a list", _set("request.messages", "hello"),
     "$.request.messages", "wrong JSON type"),
    ("char_location", "content not blocks", _set("response.content", [1]),
     "$.response.content[0]", "expected a JSON object, not a number"),
    ("char_location", "no response", _delete("response"), "$.response",
     "a required field is missing"),
    ("char_location", "an error response", _set("response", {
        "type": "error", "error": {"type": "overloaded_error", "message": SECRET}}),
     "$.response.type", "not a message"),
    ("char_location", "a document from the assistant", _set("response.content.1", copy.deepcopy(
        fixture("char_location")["request"]["messages"][0]["content"][0])),
     "$.response.content[1].type", "a 'document' block in an assistant message"),
    ("search_result_location", "sources in an error result", _set(
        "request.messages.2.content.0.is_error", True),
     "$.request.messages[2].content[0]", "an error result that carries sources"),
    ("char_location", "message content a number", _set("request.messages.0.content", 5),
     "$.request.messages[0].content", "wrong JSON type (a number; expected a list or a string)"),
    ("char_location", "a response from the user", _set("response.role", "user"),
     "$.response.role", "the response is not an assistant message"),
    ("char_location", "unknown role", _set("request.messages.0.role", "robot"),
     "$.request.messages[0].role", "unknown role: expected user or assistant"),
    ("web_fetch", "lone surrogate in a string message", _set("request.messages.0.content",
                                                             "\udfff"),
     "$.request.messages[0].content", "a string that cannot be written as UTF-8"),
    ("web_fetch", "tool call without an id", _delete("response.content.2.id"),
     "$.response.content[2].id", "a required field is missing"),
    ("web_fetch", "tool call with an empty id", _set("response.content.2.id", ""),
     "$.response.content[2]", "a tool call without an id or a name"),
    ("web_fetch", "two tool calls of one id", _set("response.content.2.id", "srvtoolu_01Gone"),
     "$.response.content[2].id", "a second tool call with this id"),
    ("web_fetch", "fetched url empty", _set("response.content.3.content.url", " "),
     "$.response.content[3].content.url", "an empty url"),
    ("web_fetch", "unknown fetch result", _set("response.content.3.content.type", "fetched"),
     "$.response.content[3].content.type", "unknown web fetch result type 'fetched'"),
    ("search_result_location", "search result source empty", _set(
        "request.messages.0.content.0.source", ""),
     "$.request.messages[0].content[0].source", "an empty source"),
    ("web_search_result_location", "unknown search result", _set(
        "response.content.2.content.0.type", "web_page"),
     "$.response.content[2].content[0].type", "unknown web search result type 'web_page'"),
    ("web_search_result_location", "search result url empty", _set(
        "response.content.2.content.0.url", ""),
     "$.response.content[2].content[0].url", "an empty url"),
    ("web_search_result_location", "unknown search error", _set(
        "response.content.2.content", {"type": "search_failed"}),
     "$.response.content[2].content.type", "unknown web search result type 'search_failed'"),
]


@pytest.mark.parametrize(("name", "change", "where", "words"),
                         [(name, change, where, words) for name, _, change, where, words in BAD],
                         ids=[what for _, what, *_ in BAD])
def test_what_cannot_be_imported_is_tc107_at_its_json_path(
        tmp_path: Path, name: str, change: Change, where: str, words: str) -> None:
    exchange = fixture(name)
    change(exchange)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(exchange), encoding="utf-8")  # \ud800 stays an escape
    finding = refusal(path)
    assert finding.code is Code.IMPORT_UNSUPPORTED and finding.file == "bad.json"
    assert finding.message.endswith(f" at {where}") and words in finding.message
    assert SECRET not in finding.message and "secret" not in finding.message


@pytest.mark.parametrize(("text", "line", "words"), [
    ("", None, "holds no exchange"),
    ("  \n\n", None, "holds no exchange"),
    ("[]", None, "holds no exchange"),
    ("42", None, "expected an exchange {request, response}, a Message .* not a number"),
    ('{\n  "request": {},\n  "response": \n}\n', 4, "not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, None, "nested too deeply"),
])
def test_a_file_that_is_no_exchange_is_tc107(tmp_path: Path, text: str, line: int | None,
                                             words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(Unsupported, match=words) as raised:
        runs_of(path)
    assert raised.value.finding.line == line and raised.value.json_path == "$"


def test_jsonl_problems_name_their_line(tmp_path: Path) -> None:
    good = json.dumps(fixture("char_location"))
    bad = fixture("char_location")
    bad["response"]["content"][2]["citations"][0]["document_index"] = 7
    path = tmp_path / "runs.jsonl"
    path.write_text(f"{good}\n\n{json.dumps(bad)}\n", encoding="utf-8")
    finding = refusal(path, 2)
    assert finding.line == 3
    assert finding.message.endswith(" at $.response.content[2].citations[0].document_index")
    path.write_text(f"{good}\n{{\"request\": \n", encoding="utf-8")
    finding = refusal(path, 2)
    assert finding.line == 2 and finding.message.startswith("not valid JSON")


def test_a_list_names_the_exchange_by_its_index(tmp_path: Path) -> None:
    bad = fixture("web_fetch")
    bad["response"]["content"][4]["citations"][0]["type"] = "span_location"
    finding = refusal(write(tmp_path, [fixture("char_location"), bad]), 2)
    assert finding.message.endswith(" at $[1].response.content[4].citations[0].type")
    assert finding.line is None


def test_a_missing_or_non_utf8_file_is_tc101_or_tc102(tmp_path: Path) -> None:
    with pytest.raises(TraceCiteError) as raised:
        runs_of(tmp_path / "gone.json")
    assert raised.value.finding.code is Code.INPUT_UNREADABLE
    assert raised.value.finding.file == "gone.json"
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"request": "caf\xe9"}')
    with pytest.raises(TraceCiteError) as raised:
        runs_of(path)
    assert (raised.value.finding.code, raised.value.finding.line) == (Code.INPUT_NOT_UTF8, 1)


def test_jsonl_is_read_a_line_at_a_time(tmp_path: Path) -> None:
    """Each exchange of a JSONL is read when it is reached: the runs before a line that is not
    UTF-8 come out before that line's TC102 (line and column), which the whole file's text
    would have given first."""
    good = json.dumps(fixture("char_location")).encode()
    path = tmp_path / "runs.jsonl"
    path.write_bytes(good + b"\n\n" + good + b'\n{"request": "caf\xe9"}\n')
    outcomes = read_runs(path, "runs.jsonl")
    assert isinstance(next(outcomes), ImportedRun)
    assert isinstance(next(outcomes), ImportedRun)
    with pytest.raises(TraceCiteError) as raised:
        next(outcomes)
    finding = raised.value.finding
    assert (finding.code, finding.file, finding.line, finding.column) == (
        Code.INPUT_NOT_UTF8, "runs.jsonl", 4, 17)


def test_a_document_keeps_its_line_numbers_and_its_bom(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('\ufeff\n\n{\n  "request": {},\n\n  "response": \n}\n', encoding="utf-8")
    with pytest.raises(Unsupported, match="not valid JSON") as raised:
        runs_of(path)
    assert raised.value.finding.line == 7
    path.write_text("\ufeff" + json.dumps(fixture("char_location"), indent=1),
                    encoding="utf-8")
    assert len(runs_of(path)) == 1
