"""Writes the Anthropic fixtures of tests/importers/fixtures/anthropic/sdk/ with the Anthropic SDK's
own types: each response is a ``Message`` or ``BetaMessage`` validated by the SDK and saved the
ways people save them (``model_dump()`` in a ``{request, response}`` pair, ``model_dump_json()``,
``to_json()``), batch results are ``MessageBatchIndividualResponse`` lines and streams are the
SDK's raw stream events. No network: nothing is sent.

    python tests/importers/make_anthropic_fixtures.py [DIR]

tests/importers/test_anthropic_sdk.py runs it into a temporary folder and compares: an SDK release
that changes a shape changes a fixture, and the test says so.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.beta import BetaMessage
from anthropic.types.messages import MessageBatchIndividualResponse

OUT = Path(__file__).parent / "fixtures" / "anthropic" / "sdk"
USAGE = {"input_tokens": 12, "output_tokens": 8}
MODEL = "claude-sonnet-4-5"
PDF = "JVBERi0xLjQKJcOkw7zDtsOfCg=="  # the first bytes of a PDF: no page is read


def message(content: list[dict[str, Any]], msg_id: str) -> Message:
    return Message.model_validate({"id": msg_id, "type": "message", "role": "assistant",
                                   "model": MODEL, "content": content,
                                   "stop_reason": "end_turn", "usage": USAGE})


def beta_message(content: list[dict[str, Any]], msg_id: str) -> BetaMessage:
    return BetaMessage.model_validate({"id": msg_id, "type": "message", "role": "assistant",
                                       "model": MODEL, "content": content,
                                       "stop_reason": "end_turn", "usage": USAGE})


def request(*content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 1024, **extra,
            "messages": [{"role": "user", "content": list(content)}]}


def text_document(data: str, **extra: Any) -> dict[str, Any]:
    return {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                           "data": data},
            "citations": {"enabled": True}, **extra}


def cited(text: str, *citations: dict[str, Any]) -> dict[str, Any]:
    return {"type": "text", "text": text, "citations": list(citations)}


def char(quote: str, index: int, start: int, title: str | None = None) -> dict[str, Any]:
    return {"type": "char_location", "cited_text": quote, "document_index": index,
            "document_title": title, "start_char_index": start,
            "end_char_index": start + len(quote)}


def blocks(quote: str, index: int, start: int, end: int) -> dict[str, Any]:
    return {"type": "content_block_location", "cited_text": quote, "document_index": index,
            "document_title": None, "start_block_index": start, "end_block_index": end}


def web_citation(url: str, quote: str) -> dict[str, Any]:
    return {"type": "web_search_result_location", "cited_text": quote, "url": url,
            "title": "A page", "encrypted_index": "EpMBCioIAhgBIiQ"}


SEARCH_CALL = {"type": "server_tool_use", "id": "srvtoolu_01Search", "name": "web_search",
               "input": {"query": "bridge opening"}}
BRIDGE = "https://example.test/bridge"
BRIDGE_TEXT = ("The bridge was opened to traffic in March 1932 after eight years of "
               "construction, and it is still in use.")


def search_result(url: str = BRIDGE) -> dict[str, Any]:
    return {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01Search",
            "content": [{"type": "web_search_result", "url": url, "title": "A page",
                         "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgx",
                         "page_age": "2 days ago"}]}


def fetch(url: str, data: str) -> list[dict[str, Any]]:
    return [{"type": "server_tool_use", "id": "srvtoolu_01Fetch", "name": "web_fetch",
             "input": {"url": url}},
            {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_01Fetch",
             "content": {"type": "web_fetch_result", "url": url,
                         "retrieved_at": "2025-08-25T10:30:00Z",
                         "content": {"type": "document", "title": "Fetched",
                                     "source": {"type": "text", "media_type": "text/plain",
                                                "data": data},
                                     "citations": {"enabled": True}}}}]


def pair(req: dict[str, Any], response: Message | BetaMessage) -> str:
    """As people save an exchange: the request as sent, the response's ``model_dump()``."""
    return json.dumps({"request": req, "response": response.model_dump(mode="json")},
                      indent=1) + "\n"


def pairs() -> dict[str, str]:
    colours = "The grass is green. The sky is blue."
    out = {
        # A JSON context and a title are metadata, never the document's address.
        "pair_text_document.json": pair(
            request(text_document(colours, title="Colours", context='{"source": "survey"}'),
                    {"type": "text", "text": "What colour is the grass?"}),
            message([{"type": "thinking", "thinking": "Look it up.", "signature": "c2ln"},
                     {"type": "text", "text": "According to the document, "},
                     cited("the grass is green", char("The grass is green. ", 0, 0, "Colours")),
                     {"type": "text", "text": "."}], "msg_01TextDocument")),
        # Several blocks in one cited_text: concatenated, as the API documents; a plain string
        # content is one block.
        "pair_custom_content.json": pair(
            request({"type": "document", "source": {"type": "content", "content": [
                {"type": "text", "text": "Tides follow the moon."},
                {"type": "text", "text": "Spring tides come twice a month."}]},
                     "citations": {"enabled": True}},
                    {"type": "document", "source": {"type": "content",
                                                    "content": "Neap tides are weaker."},
                     "citations": {"enabled": True}}),
            message([cited("Tides follow the moon; spring tides come twice a month.",
                           blocks("Tides follow the moon.Spring tides come twice a month.",
                                  0, 0, 2)),
                     cited("Neap tides are weaker.", blocks("Neap tides are weaker.", 1, 0, 1))],
                    "msg_01CustomContent")),
        # Where the exchange's own citation shows a newline between blocks, that one.
        "pair_custom_newline.json": pair(
            request({"type": "document", "source": {"type": "content", "content": [
                {"type": "text", "text": "First line"},
                {"type": "text", "text": "Second line"}]}, "citations": {"enabled": True}}),
            message([cited("Two lines.", blocks("First line\nSecond line", 0, 0, 2))],
                    "msg_01CustomNewline")),
        "pair_search_results.json": pair(
            request({"type": "search_result", "source": "https://example.test/kb/intro",
                     "title": "Intro", "content": [
                         {"type": "text", "text": "The product ships in three editions."},
                         {"type": "text", "text": "Each edition is sold worldwide."}],
                     "citations": {"enabled": True}}),
            message([cited("Three editions, sold worldwide.", {
                "type": "search_result_location", "cited_text":
                    "The product ships in three editions.Each edition is sold worldwide.",
                "search_result_index": 0, "source": "https://example.test/kb/intro",
                "title": "Intro", "start_block_index": 0, "end_block_index": 2})],
                "msg_01SearchResults")),
        "pair_web_search.json": pair(
            request({"type": "text", "text": "When did the bridge open?"},
                    tools=[{"type": "web_search_20250305", "name": "web_search"}]),
            message([SEARCH_CALL, search_result(),
                     cited("It opened in 1932.", web_citation(
                         BRIDGE, "The bridge was opened to traffic in March 1932 after ..."))],
                    "msg_01WebSearch")),
        "pair_web_fetch.json": pair(
            request({"type": "text", "text": "Read https://example.test/owls"},
                    tools=[{"type": "web_fetch_20250910", "name": "web_fetch"}]),
            message([*fetch("https://example.test/owls",
                            "Owls hunt at night. Their feathers are soft."),
                     cited("Owls hunt at night.", char("Owls hunt at night.", 0, 0, "Fetched"))],
                    "msg_01WebFetch")),
        # A search result the response also fetched whole: its quote is checked against the
        # fetched text, not left to a live check.
        "pair_search_then_fetch.json": pair(
            request({"type": "text", "text": "When did the bridge open?"}),
            message([SEARCH_CALL, search_result(), *fetch(BRIDGE, BRIDGE_TEXT),
                     cited("It opened in 1932.", web_citation(
                         BRIDGE, "The bridge was opened to traffic in March 1932 after ..."))],
                    "msg_01SearchFetch")),
        # A Files API document: no text in the transcript.
        "pair_files_api.json": pair(
            request({"type": "document", "source": {"type": "file",
                                                    "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"},
                     "citations": {"enabled": True}},
                    betas=["files-api-2025-04-14"]),
            beta_message([cited("Filed.", {**char("The filed text.", 0, 0),
                                           "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"})],
                         "msg_01FilesApi")),
        # A PDF that nothing cites does not stop the exchange; a cited one does, for now.
        "pair_uncited_pdf.json": pair(
            request({"type": "document", "source": {"type": "base64",
                                                    "media_type": "application/pdf",
                                                    "data": PDF}},
                    text_document(colours)),
            message([cited("The sky is blue.", char("The sky is blue.", 1, 20))],
                    "msg_01UncitedPdf")),
        "pair_cited_pdf.json": pair(
            request({"type": "document", "source": {"type": "base64",
                                                    "media_type": "application/pdf",
                                                    "data": PDF}, "citations": {"enabled": True}}),
            message([cited("Page one.", {"type": "page_location", "cited_text": "Page one.",
                                         "document_index": 0, "document_title": None,
                                         "start_page_number": 1, "end_page_number": 2})],
                    "msg_01CitedPdf")),
        # Beta blocks TraceCite does not know, that nothing cites: left out and counted.
        "beta_unknown_blocks.json": pair(
            request(text_document(colours), betas=["mcp-client-2025-04-04"]),
            beta_message([{"type": "compaction", "content": "Earlier turns, summarised."},
                          {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "lookup",
                           "server_name": "kb", "input": {"q": "sky"}},
                          {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01",
                           "is_error": False, "content": [{"type": "text", "text": "blue"}]},
                          cited("The sky is blue.", char("The sky is blue.", 0, 20))],
                         "msg_01BetaBlocks")),
    }
    out["params_message.json"] = json.dumps({
        "params": request(text_document(colours)),
        "message": message([cited("Green.", char("The grass is green.", 0, 0))],
                           "msg_01ParamsMessage").model_dump(mode="json")}) + "\n"
    return out


def responses() -> dict[str, str]:
    """Responses saved alone: fine when what they cite is in them, refused otherwise."""
    searched = message([SEARCH_CALL, search_result(), cited("It opened in 1932.", web_citation(
        BRIDGE, "The bridge was opened to traffic in March 1932 after ..."))],
        "msg_01ResponseAlone")
    return {
        "response_model_dump_json.json": searched.model_dump_json() + "\n",
        "response_to_json.json": searched.to_json() + "\n",
        "response_document_index.json": message(
            [cited("Green.", char("The grass is green.", 0, 0))],
            "msg_01ResponseDocument").to_json() + "\n",
    }


def batch() -> dict[str, str]:
    def line(custom_id: str, result: dict[str, Any], params: dict[str, Any] | None = None
             ) -> str:
        entry = MessageBatchIndividualResponse.model_validate(
            {"custom_id": custom_id, "result": result}).model_dump(mode="json")
        if params is not None:
            entry["params"] = params
        return json.dumps(entry) + "\n"

    searched = message([SEARCH_CALL, search_result(), cited("It opened in 1932.", web_citation(
        BRIDGE, "The bridge was opened to traffic in March 1932 after ..."))], "msg_01Batch1")
    documented = message([cited("Green.", char("The grass is green.", 0, 0))], "msg_01Batch2")
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return {"batch_results.jsonl": "".join([
        line("search-1", {"type": "succeeded", "message": searched.model_dump(mode="json")}),
        line("document-2", {"type": "succeeded", "message": documented.model_dump(mode="json")},
             request(text_document("The grass is green. The sky is blue."))),
        line("errored-3", {"type": "errored", "error": error}),
        line("canceled-4", {"type": "canceled"}),
        line("expired-5", {"type": "expired"}),
    ])}


def stream_events() -> list[RawMessageStreamEvent]:
    """A web search answer as the API streams it: citations come as ``citations_delta``."""
    raw: list[dict[str, Any]] = [
        {"type": "message_start", "message": {
            "id": "msg_01Stream", "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": USAGE}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "server_tool_use", "id": "srvtoolu_01Search", "name": "web_search",
            "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": '{"query": "bridge opening"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": search_result()},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {
            "type": "text", "text": "", "citations": None}},
        {"type": "content_block_delta", "index": 2, "delta": {
            "type": "citations_delta", "citation": web_citation(
                BRIDGE, "The bridge was opened to traffic in March 1932 after ...")}},
        {"type": "content_block_delta", "index": 2, "delta": {
            "type": "text_delta", "text": "It opened "}},
        {"type": "content_block_delta", "index": 2, "delta": {
            "type": "text_delta", "text": "in 1932."}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 30}},
        {"type": "message_stop"},
    ]
    adapter: pydantic.TypeAdapter[RawMessageStreamEvent] = pydantic.TypeAdapter(
        RawMessageStreamEvent)
    return [adapter.validate_python(event) for event in raw]


def streams() -> dict[str, str]:
    events = [event.model_dump_json() + "\n" for event in stream_events()]
    error = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n'
    return {"stream_events.jsonl": "".join(events),
            "stream_cut.jsonl": "".join(events[:8]),
            "stream_error.jsonl": "".join(events[:8]) + error}


BUILDERS: tuple[Callable[[], dict[str, str]], ...] = (pairs, responses, batch, streams)


def build() -> dict[str, str]:
    """Every fixture: its file name and its text."""
    out: dict[str, str] = {}
    for builder in BUILDERS:
        out.update(builder())
    return out


def main(argv: list[str]) -> int:
    target = Path(argv[1]) if len(argv) > 1 else OUT
    target.mkdir(parents=True, exist_ok=True)
    for name, text in build().items():
        (target / name).write_text(text, encoding="utf-8", newline="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
