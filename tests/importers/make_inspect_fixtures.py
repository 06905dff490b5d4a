"""Make the Inspect AI fixtures of tests/importers/fixtures/inspect/real/ with the real library.

Runs one task with ``inspect_ai.eval`` on ``mockllm/model``, offline and without any API key:
the model's outputs are built here with inspect_ai's own types (``ModelOutput``,
``ContentText`` with ``UrlCitation`` / ``DocumentCitation`` / ``ContentCitation``,
``ContentToolUse``, ``ContentDocument``), each with its token ``usage`` set (counting tokens would
download an encoding). Custom tools "fetch" pages: they return text or fail. The task runs two
epochs, one sample ends in an error, and the log is written as ``.eval`` and as ``.json``, and
converted with ``inspect log convert``.

    python tests/importers/make_inspect_fixtures.py OUT_DIR

writes ``research.eval``, ``research.json`` and ``converted.json`` into OUT_DIR (the committed
fixtures are made with OUT_DIR = tests/importers/fixtures/inspect/real). The test
``test_inspect_real.py`` runs this again in a temporary directory and checks that the importer
makes the same of the fresh logs as of the committed ones, so an Inspect release that changes a
shape the importer reads turns it red.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PAGE = "https://docs.example.org/guide/"
PAGE_TEXT = ("Example domains are reserved for documentation. They may be used in manuals "
             "without asking anyone for permission.")
ODD = "https://www.example.net/spec"
ODD_TEXT = "The specification names three reserved second-level domains."
BROKEN = "https://broken.example.com/report"
FETCHED = "https://news.example.com/story"
FETCHED_TEXT = ("The council approved the budget on Tuesday. Spending on parks rises by "
                "four percent next year.")
DOCUMENT_TEXT = ("Minutes of the meeting. The committee agreed to publish the report in May. "
                 "Questions go to the secretary.")
TASK = "research"

# What each sample asks; the mock model answers by the first word of its input.
SAMPLES = {
    "fetch": "fetch: what are example domains for?",
    "odd-argument": "odd-argument: how many reserved domains?",
    "failed": "failed: what does the report say?",
    "web-fetch": "web-fetch: what did the council approve?",
    "document": "document: when is the report published?",
    "content": "content: who takes questions?",
    "pdf": "pdf: what does the scan say?",
    "uncited": "uncited: say hello",
    "spans": "spans: answer with span citations",
    "crash": "crash: this sample fails",
}


def _usage() -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


def _output(content: Any) -> Any:
    from inspect_ai.model import ChatMessageAssistant, ModelOutput
    from inspect_ai.model._model_output import ChatCompletionChoice

    return ModelOutput(model="mockllm/model", usage=_usage(), choices=[ChatCompletionChoice(
        message=ChatMessageAssistant(content=content, model="mockllm/model", source="generate"),
        stop_reason="stop")])


def _call(tool: str, arguments: dict[str, Any], call_id: str) -> Any:
    from inspect_ai.model import ModelOutput

    output = ModelOutput.for_tool_call("mockllm/model", tool, arguments, tool_call_id=call_id)
    output.usage = _usage()
    return output


def _web_fetch_result(url: str, text: str, use_id: str) -> str:
    """What Inspect's Anthropic provider stores as a ``web_fetch`` tool use's result: the
    ``web_fetch_tool_result`` block as JSON."""
    return json.dumps({
        "type": "web_fetch_tool_result", "tool_use_id": use_id,
        "content": {"type": "web_fetch_result", "url": url,
                    "retrieved_at": "2025-11-03T10:00:00Z",
                    "content": {"type": "document", "title": "Council news",
                                "source": {"type": "text", "media_type": "text/plain",
                                           "data": text},
                                "citations": {"enabled": True}}}})


def _answer(kind: str, messages: list[Any]) -> Any:
    """The model's next output for the sample of ``kind``, given the messages so far."""
    from inspect_ai.model import ChatMessageTool
    from inspect_ai.tool import (
        ContentCitation,
        ContentText,
        ContentToolUse,
        DocumentCitation,
        UrlCitation,
    )
    from inspect_ai.tool._tool_call import ToolCall  # noqa: F401 (the calls' type)

    answered = sum(1 for m in messages if isinstance(m, ChatMessageTool))
    if kind == "fetch":
        if not answered:
            return _call("fetch_page", {"url": PAGE}, "call-fetch")
        return _output([ContentText(text="Example domains are for documentation.", citations=[
            UrlCitation(url=PAGE.rstrip("/") + "?utm_source=agent#top",
                        cited_text="Example domains are reserved for documentation.")])])
    if kind == "odd-argument":
        if not answered:
            return _call("open_link", {"address": ODD}, "call-odd")
        return _output([ContentText(text="Three are reserved.", citations=[
            UrlCitation(url=ODD, cited_text="names three reserved second-level domains")])])
    if kind == "failed":
        if not answered:
            return _call("fetch_page", {"url": BROKEN}, "call-broken")
        return _output([ContentText(text="The report says costs fell.", citations=[
            UrlCitation(url=BROKEN, cited_text="costs fell by a third")])])
    if kind == "web-fetch":
        use = ContentToolUse(tool_type="web_search", id="srvtoolu_fetch", name="web_fetch",
                             arguments=json.dumps({"url": FETCHED}),
                             result=_web_fetch_result(FETCHED, FETCHED_TEXT, "srvtoolu_fetch"))
        return _output([use, ContentText(text="The council approved the budget.", citations=[
            DocumentCitation(cited_text="The council approved the budget on Tuesday.",
                             title="Council news", internal={"document_index": 0},
                             range={"type": "char", "start_index": 0, "end_index": 43})])])
    if kind == "document":
        return _output([ContentText(text="The report comes out in May.", citations=[
            DocumentCitation(cited_text="The committee agreed to publish the report in May.",
                             title="minutes.txt", internal={"document_index": 1},
                             range={"type": "char", "start_index": 24, "end_index": 75})])])
    if kind == "content":
        return _output([ContentText(text="The secretary does.", citations=[
            ContentCitation(cited_text="Questions go to the secretary.",
                            internal={"document_index": 0})])])
    if kind == "pdf":
        return _output([ContentText(text="The scan says hello.", citations=[
            DocumentCitation(cited_text="hello", internal={"document_index": 0},
                             range={"type": "page", "start_index": 0, "end_index": 1})])])
    if kind == "spans":
        return _output([ContentText(text="Spans only.", citations=[
            UrlCitation(url=PAGE, cited_text=(0, 5))])])
    return _output("Hello.")


def _task() -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
    from inspect_ai.tool import ContentDocument, ContentText, ToolError, tool

    @tool
    def fetch_page() -> Any:
        async def execute(url: str) -> str:
            """Fetch a web page.

            Args:
                url: The page's address.
            """
            if url == PAGE:
                return PAGE_TEXT
            raise ToolError("timeout: the server did not answer")

        return execute

    @tool
    def open_link() -> Any:
        async def execute(address: str) -> str:
            """Open a link.

            Args:
                address: Where the link points.
            """
            return ODD_TEXT

        return execute

    @solver
    def crash_on_request() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if state.input_text.startswith("crash:"):
                raise RuntimeError("the sample failed on purpose")
            return state

        return solve

    def data_url(mime: str, data: bytes) -> str:
        return f"data:{mime};base64,{base64.b64encode(data).decode()}"

    minutes = ContentDocument(document=data_url("text/plain", DOCUMENT_TEXT.encode()),
                              filename="minutes.txt", citations=True)
    cover = ContentDocument(document=data_url("text/plain", b"Cover sheet."),
                            filename="cover.txt", citations=True)
    scan = ContentDocument(document=data_url("application/pdf", b"%PDF-1.4\n%%EOF\n"),
                           filename="scan.pdf", citations=True)
    samples = []
    for kind, prompt in SAMPLES.items():
        content: list[Any] = [ContentText(text=prompt)]
        if kind == "document":
            content += [cover, minutes]
        elif kind == "content":
            content += [minutes]
        elif kind == "pdf":
            content += [scan]
        samples.append(Sample(id=kind, input=[ChatMessageUser(content=content)]))
    return Task(dataset=samples, solver=[crash_on_request(), use_tools(fetch_page(), open_link()),
                                         generate()],
                name=TASK)


def generate_logs(out: Path) -> None:
    """Run the task and write ``research.eval``, ``research.json`` and ``converted.json`` (the
    ``.eval`` converted by ``inspect log convert``) into ``out``."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    def outputs(messages: list[Any], *_: Any) -> Any:
        kind = next(m for m in messages if m.role == "user").text.split(":", 1)[0]
        return _answer(kind, messages)

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        os.environ["INSPECT_LOG_DIR"] = work
        for fmt in ("eval", "json"):
            model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
            logs = inspect_eval(_task(), model=model, epochs=2, log_format=fmt, log_dir=work,
                                fail_on_error=False, display="none", max_samples=1,
                                log_realtime=False, score=False)
            shutil.copyfile(logs[0].location, out / f"{TASK}.{fmt}")
        converted = Path(work, "converted")
        subprocess.run([str(Path(sys.executable).parent / "inspect"), "log", "convert",
                        str(out / f"{TASK}.eval"), "--to", "json", "--output-dir",
                        str(converted)], check=True, capture_output=True, cwd=work)
        shutil.copyfile(next(converted.glob("*.json")), out / "converted.json")


if __name__ == "__main__":
    generate_logs(Path(sys.argv[1]))
