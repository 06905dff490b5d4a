"""Make the Inspect AI fixtures of tests/importers/fixtures/inspect/real/ with the real library.

Runs a task with ``inspect_ai.eval`` on ``mockllm/model``, offline and without any API key:
the model's outputs are built here with inspect_ai's own types (``ModelOutput``,
``ContentText`` with ``UrlCitation`` / ``DocumentCitation`` / ``ContentCitation``,
``ContentToolUse``, ``ContentDocument``), each with its token ``usage`` set (counting tokens
would download an encoding). Custom tools "fetch" pages: they return text or fail; Inspect's
``web_search`` with its Tavily provider searches through a loopback stand-in of Tavily's API.
The task runs two epochs, one sample ends in an error, and the log is written as ``.eval``
and as ``.json``, converted with ``inspect log convert`` and printed with ``inspect log
dump``. A second task runs samples through Inspect's own Anthropic provider, talking to a
loopback stand-in of the Messages API: a web fetch and a text document, each cited by
``char_location``; a web search, and a web search whose result the same response also
fetched, each cited by ``web_search_result_location``.

    python tests/importers/make_inspect_fixtures.py OUT_DIR

writes ``research.eval``, ``research.json``, ``converted.json``, ``dumped.json`` and
``anthropic.eval`` into OUT_DIR; the committed fixtures are the two ``.eval`` logs and
``research.json`` gzipped (docs/development.md). The test ``test_inspect_real.py`` runs this
again in a temporary directory and checks that the importer makes the same of the fresh logs as
of the committed ones, so an Inspect release that changes a shape the importer reads turns it
red.
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
SEARCHED = "https://www.iana.org/help/example-domains"
SNIPPET = "example.com and example.org are maintained for documentation purposes."

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
    "tavily": "tavily: who maintains example.com?",
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
    if kind == "tavily":
        if not answered:
            return _call("web_search", {"query": "example.com maintained"}, "call-search")
        return _output([ContentText(text="IANA maintains it.", citations=[
            UrlCitation(url=SEARCHED, cited_text="maintained for documentation purposes")])])
    if kind == "spans":
        return _output([ContentText(text="Spans only.", citations=[
            UrlCitation(url=PAGE, cited_text=(0, 5))])])
    return _output("Hello.")


def _task() -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
    from inspect_ai.tool import ContentDocument, ContentText, ToolError, tool, web_search

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
    search = web_search(["tavily"])
    return Task(dataset=samples, solver=[crash_on_request(),
                                         use_tools(fetch_page(), open_link(), search),
                                         generate()],
                name=TASK)


ANTHROPIC_PAGE = "https://council.example.org/minutes"
ANTHROPIC_TEXT = "The council met on Monday. It approved the new library by seven votes to two."


def _anthropic_message(prompt: str) -> dict[str, Any]:
    """What the stand-in Messages API answers: a text block citing the fetched document by
    ``char_location`` after a web fetch (``fetch``), the request's text document
    (``document``), or a search result by ``web_search_result_location`` after a web search
    (``search``), and a fetch of that result (``search-fetch``)."""
    quote = "It approved the new library by seven votes to two."
    start = ANTHROPIC_TEXT.index(quote)
    location = {"type": "char_location", "cited_text": quote, "document_index": 0,
                "document_title": "Minutes", "start_char_index": start,
                "end_char_index": start + len(quote)}
    content: list[dict[str, Any]] = []
    if prompt.startswith("search"):
        content = [
            {"type": "server_tool_use", "id": "srvtoolu_02", "name": "web_search",
             "input": {"query": "council library vote"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_02", "content": [
                {"type": "web_search_result", "url": ANTHROPIC_PAGE, "title": "Minutes",
                 "encrypted_content": "RW5jcnlwdGVkIHJlc3VsdA==", "page_age": "2 days ago"}]}]
        location = {"type": "web_search_result_location", "cited_text": quote,
                    "url": ANTHROPIC_PAGE + "/", "title": "Minutes",
                    "encrypted_index": "RW5jcnlwdGVkIGluZGV4"}
    if prompt.startswith(("fetch", "search-fetch")):
        content += [
            {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_fetch",
             "input": {"url": ANTHROPIC_PAGE}},
            {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_01",
             "content": {"type": "web_fetch_result", "url": ANTHROPIC_PAGE,
                         "retrieved_at": "2025-11-03T09:00:00Z",
                         "content": {"type": "document", "title": "Minutes",
                                     "source": {"type": "text", "media_type": "text/plain",
                                                "data": ANTHROPIC_TEXT},
                                     "citations": {"enabled": True}}}}]
    content.append({"type": "text", "text": "The library was approved.",
                    "citations": [location]})
    return {"id": "msg_01", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": content, "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


class _TavilyStandIn:
    """Inspect's Tavily web search provider, pointed at a loopback stand-in: an HTTPS proxy
    (``HTTPS_PROXY``, which httpx follows) that answers the CONNECT to api.tavily.com itself,
    with a certificate of a test CA (``SSL_CERT_FILE``) and one search result."""

    def __enter__(self) -> None:
        import socketserver
        import ssl
        import threading

        import trustme

        self._folder = tempfile.TemporaryDirectory()
        ca = trustme.CA()
        ca_file = Path(self._folder.name, "ca.pem")
        ca.cert_pem.write_to_path(str(ca_file))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("api.tavily.com").configure_cert(context)
        body = json.dumps({"query": "q", "answer": "IANA maintains them.", "images": [],
                           "response_time": 0.1, "results": [
                               {"title": "Example Domains", "url": SEARCHED,
                                "content": SNIPPET, "score": 0.9}]}).encode()

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # the CONNECT request and its headers
                self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                with context.wrap_socket(self.connection, server_side=True) as tls:
                    reader = tls.makefile("rb")
                    length = 0
                    while (line := reader.readline()) not in (b"\r\n", b"\n", b""):
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":", 1)[1])
                    reader.read(length)
                    tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                + f"Content-Length: {len(body)}\r\n".encode()
                                + b"Connection: close\r\n\r\n" + body)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._saved = {key: os.environ.get(key) for key in
                       ("HTTPS_PROXY", "SSL_CERT_FILE", "TAVILY_API_KEY", "NO_PROXY")}
        os.environ.update({"HTTPS_PROXY": f"http://127.0.0.1:{self._server.server_address[1]}",
                           "SSL_CERT_FILE": str(ca_file), "TAVILY_API_KEY": "no-key-needed",
                           "NO_PROXY": "127.0.0.1,localhost"})

    def __exit__(self, *_: object) -> None:
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._server.shutdown()
        self._server.server_close()
        self._folder.cleanup()


class _StandIn:
    """A loopback stand-in for the Messages API: Inspect's own Anthropic provider talks to it,
    so the log holds what the provider makes of Anthropic's blocks."""

    def __enter__(self) -> str:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                first = request["messages"][0]["content"]
                prompt = first if isinstance(first, str) else first[0]["text"]
                body = json.dumps(_anthropic_message(prompt)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _anthropic_task() -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.solver import generate
    from inspect_ai.tool import ContentDocument, ContentText

    data = base64.b64encode(ANTHROPIC_TEXT.encode()).decode()
    minutes = ContentDocument(document=f"data:text/plain;base64,{data}", filename="minutes.txt",
                              citations=True)
    return Task(dataset=[
        Sample(id="fetch", input=[ChatMessageUser(content="fetch: what did the council do?")]),
        Sample(id="search", input=[ChatMessageUser(content="search: what did the council do?")]),
        Sample(id="search-fetch", input=[ChatMessageUser(
            content="search-fetch: what did the council do?")]),
        Sample(id="document", input=[ChatMessageUser(content=[
            ContentText(text="document: what did the council do?"), minutes])]),
    ], solver=[generate()], name="anthropic")


def generate_logs(out: Path) -> None:
    """Run the tasks and write ``research.eval``, ``research.json``, ``converted.json``,
    ``dumped.json`` and ``anthropic.eval`` into ``out``, working in a temporary folder."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    home = os.getcwd()
    with tempfile.TemporaryDirectory() as work:
        os.environ["INSPECT_LOG_DIR"] = work
        os.chdir(work)  # whatever Inspect writes beside its logs stays in the temporary folder
        try:
            _write_logs(Path(work), out)
        finally:
            os.chdir(home)


def _write_logs(work: Path, out: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    def outputs(messages: list[Any], *_: Any) -> Any:
        kind = next(m for m in messages if m.role == "user").text.split(":", 1)[0]
        return _answer(kind, messages)

    for fmt in ("eval", "json"):
        model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
        with _TavilyStandIn():
            logs = inspect_eval(_task(), model=model, epochs=2, log_format=fmt,
                                log_dir=str(work), fail_on_error=False, display="none",
                                max_samples=1, log_realtime=False, score=False)
        shutil.copyfile(logs[0].location, out / f"{TASK}.{fmt}")
    with _StandIn() as base_url:
        model = get_model("anthropic/claude-sonnet-4-5", base_url=base_url,
                          api_key="no-key-needed", streaming=False, memoize=False)
        logs = inspect_eval(_anthropic_task(), model=model, log_format="eval",
                            log_dir=str(work), display="none", max_samples=1,
                            log_realtime=False, score=False, max_tokens=100)
        shutil.copyfile(logs[0].location, out / "anthropic.eval")
    inspect_cli = str(Path(sys.executable).parent / "inspect")
    converted = work / "converted"
    subprocess.run([inspect_cli, "log", "convert", str(out / f"{TASK}.eval"), "--to", "json",
                    "--output-dir", str(converted)], check=True, capture_output=True, cwd=work)
    shutil.copyfile(next(converted.glob("*.json")), out / "converted.json")
    with open(out / "dumped.json", "wb") as dumped:  # what `inspect log dump` prints
        subprocess.run([inspect_cli, "log", "dump", str(out / f"{TASK}.eval")], check=True,
                       stdout=dumped, cwd=work)


if __name__ == "__main__":
    generate_logs(Path(sys.argv[1]))
