"""The Inspect AI importer's pages and documents (docs/guides/importers.md#inspect-ai): the
same-page key, the address a call read, failed reads, web fetches and documents, on small logs
in Inspect's shapes (the real library's logs are in test_inspect_real.py)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tracecite.codes import Code
from tracecite.importers.inspect import read_runs
from tracecite.importers.inspect.pages import argument_url, page_key
from tracecite.importers.model import (
    ImportedRun,
    RefusedRun,
    RunOutcome,
    SkippedRun,
    Unsupported,
)

PAGE = "https://a.example/guide/"
TEXT = "The guide says hello to every reader."
QUOTE = "says hello"


@pytest.mark.parametrize(("one", "other"), [
    ("https://a.example/guide/", "https://a.example/guide"),
    ("https://a.example/guide", "https://A.example:443/guide#part-2"),
    ("https://a.example/guide?utm_source=x&utm_medium=y", "https://a.example/guide"),
    ("https://a.example/g?id=3&fbclid=1&gclid=2&msclkid=3&mc_cid=4&mc_eid=5&UTM_Term=6",
     "https://a.example/g?id=3"),
    ("https://a.example/%7Eme/", "https://a.example/~me"),
    ("https://a.example", "https://a.example/"),
])
def test_urls_of_the_same_page_share_their_key(one: str, other: str) -> None:
    assert page_key(one) == page_key(other)


@pytest.mark.parametrize(("one", "other"), [
    ("https://a.example/guide", "https://a.example/guide/more"),
    ("https://a.example/g?id=3", "https://a.example/g?id=4"),
    ("https://a.example/g?utmost=1", "https://a.example/g"),  # not a tracking parameter
    ("http://a.example/g", "https://a.example/g"),
])
def test_urls_of_other_pages_do_not(one: str, other: str) -> None:
    assert page_key(one) != page_key(other)


def test_a_key_of_a_uri_that_is_not_http_is_its_stable_uri() -> None:
    assert page_key("file:docs/a.txt/") == "file:docs/a.txt/"


@pytest.mark.parametrize(("arguments", "url"), [
    ({"url": "https://a.example/x", "next": "https://b.example/"}, "https://a.example/x"),
    ({"uri": "file:a.txt"}, "file:a.txt"),
    ({"address": "https://a.example/x", "depth": 2}, "https://a.example/x"),
    ({"page": "https://a.example/x", "also": "https://a.example/x"}, "https://a.example/x"),
    ({"one": "https://a.example/x", "two": "https://b.example/y"}, None),  # which one?
    ({"query": "see https://a.example/x"}, None),  # text holding a URL is no address
    ({"link": "ftp://a.example/x"}, None),
    ({"link": "https:///nohost"}, None),
    ({}, None),
])
def test_the_address_a_call_read(arguments: dict[str, object], url: str | None) -> None:
    assert argument_url(arguments) == url


# -- small logs --------------------------------------------------------------------------------

def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": "go"}, *content]}


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": call_id, "function": "fetch", "arguments": arguments,
                            "type": "function"} for call_id, arguments in pairs]}


def tool(call_id: str, text: str = TEXT, error: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "" if error else text,
            "function": "fetch", "error": error}


def final(*citations: dict[str, Any], before: tuple[Any, ...] = ()) -> dict[str, Any]:
    return {"role": "assistant", "content": [
        *before, {"type": "text", "text": "The answer.", "citations": list(citations)}]}


def url_cite(url: str = PAGE, quote: str = QUOTE) -> dict[str, Any]:
    return {"type": "url", "url": url, "cited_text": quote}


def doc_cite(index: int | None, quote: str = QUOTE, kind: str = "document") -> dict[str, Any]:
    citation: dict[str, Any] = {"type": kind, "cited_text": quote}
    if index is not None:
        citation["internal"] = {"document_index": index}
    return citation


def document(text: str | None = TEXT, *, mime: str = "text/plain",
             path: str | None = None) -> dict[str, Any]:
    data = path or f"data:{mime};base64,{base64.b64encode((text or '').encode()).decode()}"
    return {"type": "document", "document": data, "filename": "d", "mime_type": mime}


def fetch_use(url: str, result: dict[str, Any], use_id: str = "srv1") -> dict[str, Any]:
    return {"type": "tool_use", "tool_type": "web_search", "id": use_id, "name": "web_fetch",
            "arguments": json.dumps({"url": url}), "result": json.dumps(result)}


def fetched(url: str, source: dict[str, Any]) -> dict[str, Any]:
    return {"type": "web_fetch_tool_result", "tool_use_id": "srv1",
            "content": {"type": "web_fetch_result", "url": url,
                        "retrieved_at": "2025-01-02T03:04:05Z",
                        "content": {"type": "document", "source": source}}}


def log_of(tmp_path: Path, *samples: dict[str, Any]) -> Path:
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"eval": {"task": "t", "eval_id": "E"}, "samples": [
        {"id": sample.pop("id", index + 1), "epoch": 1, **sample}
        for index, sample in enumerate(samples)]}), encoding="utf-8")
    return path


def sample(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"messages": list(messages), **extra}


def outcomes(path: Path, **options: Any) -> list[RunOutcome]:
    return list(read_runs(path, path.name, **options))


def only_run(path: Path) -> ImportedRun:
    [outcome] = outcomes(path)
    assert isinstance(outcome, ImportedRun), outcome
    return outcome


def cited(run: ImportedRun) -> list[tuple[str, str | None, str | None]]:
    sources = {s.id: s for call in run.calls for s in call.sources}
    return [(sources[c.source_id].uri, sources[c.source_id].content, sources[c.source_id].error)
            for claim in run.claims for c in claim.citations]


def refused(path: Path) -> RefusedRun:
    [outcome] = outcomes(path)
    assert isinstance(outcome, RefusedRun), outcome
    assert outcome.finding.code is Code.IMPORT_UNSUPPORTED
    return outcome


# -- pages read and not read -------------------------------------------------------------------

def test_a_citation_of_the_same_page_under_another_url_is_its_capture(tmp_path: Path) -> None:
    run = only_run(log_of(tmp_path, sample(
        user(), calls(("c1", {"url": PAGE})), tool("c1"),
        final(url_cite("https://A.example/guide?utm_source=news&fbclid=9#intro")))))
    assert cited(run) == [(PAGE, TEXT, None)]


def test_an_argument_of_any_name_holding_a_url_is_the_address_read(tmp_path: Path) -> None:
    run = only_run(log_of(tmp_path, sample(
        user(), calls(("c1", {"target_page": PAGE, "max_chars": 100})), tool("c1"),
        final(url_cite()))))
    assert cited(run) == [(PAGE, TEXT, None)]


def test_a_citation_of_a_page_every_read_of_which_failed_has_the_last_error(
        tmp_path: Path) -> None:
    run = only_run(log_of(tmp_path, sample(
        user(), calls(("c1", {"url": PAGE}), ("c2", {"link": PAGE + "#x"})),
        tool("c1", error={"type": "timeout", "message": "no answer in 30 s"}),
        tool("c2", error={"type": "unknown"}),
        final(url_cite("https://a.example/guide")))))
    assert cited(run) == [("https://a.example/guide", None, "unknown")]
    assert [(c.tool, c.ok) for c in run.calls] == [
        ("fetch", False), ("fetch", False), ("cited-urls", True)]


def test_a_page_read_once_after_a_failed_read_is_its_capture(tmp_path: Path) -> None:
    run = only_run(log_of(tmp_path, sample(
        user(), calls(("c1", {"url": PAGE}), ("c2", {"url": PAGE})),
        tool("c1", error={"type": "timeout", "message": "slow"}), tool("c2"),
        final(url_cite()))))
    assert cited(run) == [(PAGE, TEXT, None)]


def test_a_call_without_a_result_is_a_failed_read(tmp_path: Path) -> None:
    run = only_run(log_of(tmp_path, sample(
        user(), calls(("c1", {"url": PAGE})), final(url_cite()))))
    assert cited(run) == [(PAGE, None, "the tool call got no result")]


def test_a_citation_of_a_page_never_read_has_no_error(tmp_path: Path) -> None:
    run = only_run(log_of(tmp_path, sample(
        user(), calls(("c1", {"url": "https://b.example/"})),
        tool("c1", error={"type": "timeout"}), final(url_cite()))))
    assert cited(run) == [(PAGE, None, None)]


def search_use(*urls: str, use_id: str = "srv0") -> dict[str, Any]:
    results = [{"type": "web_search_result", "url": url, "title": "t",
                "encrypted_content": "x"} for url in urls]
    return {"type": "tool_use", "tool_type": "web_search", "id": use_id, "name": "web_search",
            "arguments": json.dumps({"query": "q"}), "result": json.dumps(results)}


def test_a_page_found_by_a_search_whose_every_read_failed_is_unread_not_uncaptured(
        tmp_path: Path) -> None:
    # Found, then never read: the citation is of a source the agent could not read (its
    # error set: TC204 under check --evidence), not of the search result (TC203, a warning).
    run = only_run(log_of(tmp_path, sample(
        user(), calls(("c1", {"url": PAGE})),
        tool("c1", error={"type": "timeout", "message": "no answer in 30 s"}),
        final(url_cite(), before=(search_use(PAGE),)))))
    assert cited(run) == [(PAGE, None, "timeout: no answer in 30 s")]
    found = only_run(log_of(tmp_path, sample(  # found and never tried: the search result
        user(), final(url_cite(), before=(search_use(PAGE),)))))
    assert cited(found) == [(PAGE, None, None)]
    assert [c.tool for c in found.calls] == ["web_search"]


def test_the_imported_trace_of_it_is_tc204(tmp_path: Path) -> None:
    from tracecite import api

    log = log_of(tmp_path, sample(
        user(), calls(("c1", {"url": PAGE})), tool("c1", error={"type": "timeout"}),
        final(url_cite(), before=(search_use(PAGE),))))
    assert api.import_transcripts("inspect", [log], tmp_path / "out").exit_code == 0
    report = api.check(sorted((tmp_path / "out").iterdir()), evidence=True)
    assert [f.code for f in report.findings] == [Code.CITES_UNREAD_SOURCE]
    assert report.exit_code == 2


# -- Anthropic's web fetch ---------------------------------------------------------------------

def test_a_web_fetch_is_the_page_a_url_or_document_citation_quotes(tmp_path: Path) -> None:
    use = fetch_use(PAGE, fetched(PAGE, {"type": "text", "media_type": "text/plain",
                                         "data": TEXT}))
    run = only_run(log_of(tmp_path, sample(
        user(), final(doc_cite(0), url_cite(PAGE + "?utm_campaign=z"), before=(use,)))))
    assert cited(run) == [(PAGE, TEXT, None), (PAGE, TEXT, None)]
    [call] = run.calls
    assert (call.tool, call.ok, call.sources[0].captured_at) == (
        "web_fetch", True, "2025-01-02T03:04:05Z")


def test_documents_are_counted_with_fetched_pages_in_message_order(tmp_path: Path) -> None:
    use = fetch_use(PAGE, fetched(PAGE, {"type": "text", "media_type": "text/plain",
                                         "data": "fetched text"}))
    run = only_run(log_of(tmp_path, sample(
        user(document("first text")), final(doc_cite(1, "fetched"), doc_cite(0, "first"),
                                            before=(use,)))))
    assert cited(run) == [(PAGE, "fetched text", None), ("document:0", "first text", None)]


def test_a_failed_web_fetch_cited_by_url_carries_its_error(tmp_path: Path) -> None:
    failure = {"type": "web_fetch_tool_result", "tool_use_id": "srv1",
               "content": {"type": "web_fetch_tool_result_error",
                           "error_code": "url_not_accessible"}}
    run = only_run(log_of(tmp_path, sample(
        user(), final(url_cite(), before=(fetch_use(PAGE, failure),)))))
    assert cited(run) == [(PAGE, None, "web_fetch failed (url_not_accessible)")]
    assert run.calls[0].ok is False


def test_a_fetched_pdf_cited_by_document_is_refused_when_it_cannot_be_read(
        tmp_path: Path) -> None:
    use = fetch_use(PAGE, fetched(PAGE, {"type": "base64", "media_type": "application/pdf",
                                         "data": "JVBERi0="}))
    refusal = refused(log_of(tmp_path, sample(user(), final(doc_cite(0), before=(use,)))))
    assert refusal.label == "sample 1 epoch 1"
    assert "a fetched PDF that cannot be read: the PDF is damaged" in refusal.finding.message


# -- documents ---------------------------------------------------------------------------------

def test_a_text_document_in_an_attachment_is_what_a_document_citation_quotes(
        tmp_path: Path) -> None:
    data = document()["document"]
    doc = {**document(), "document": "attachment://abc"}
    run = only_run(log_of(tmp_path, sample(user(doc), final(doc_cite(0, kind="content")),
                                           attachments={"abc": data})))
    assert cited(run) == [("document:0", TEXT, None)]
    assert [(c.call_id, c.tool) for c in run.calls] == [("documents", "documents")]


def test_a_percent_encoded_data_url_is_read_too(tmp_path: Path) -> None:
    doc = {**document(), "document": "data:text/plain,caf%C3%A9%20au%20lait"}
    run = only_run(log_of(tmp_path, sample(user(doc), final(doc_cite(0, "au lait")))))
    assert cited(run) == [("document:0", "café au lait", None)]


@pytest.mark.parametrize(("doc", "what"), [
    (document(path="/data/minutes.txt"), "a document given by file path, whose text the log "
     "does not keep; give the document as a data: URL"),
    (document(mime="application/pdf"), "a PDF document that cannot be read: the PDF is "
     "damaged"),
    (document(mime="image/png"), "an image document, which has no text to quote"),
    ({**document(), "document": "data:text/plain;base64,//79"}, "not UTF-8 text"),
])
def test_a_cited_document_without_text_refuses_its_sample(tmp_path: Path, doc: dict[str, Any],
                                                          what: str) -> None:
    refusal = refused(log_of(tmp_path, sample(user(doc), final(doc_cite(0)))))
    assert what in refusal.finding.message
    assert refusal.finding.message.endswith("at $.samples[0].messages[1].content[0]"
                                            ".citations[0]")


def test_an_uncited_pdf_blocks_nothing(tmp_path: Path) -> None:
    run = only_run(log_of(tmp_path, sample(
        user(document(mime="application/pdf"), document()), final(doc_cite(1)))))
    assert cited(run) == [("document:1", TEXT, None)]


@pytest.mark.parametrize(("citation", "what"), [
    (doc_cite(None), "a document citation that names no document (expected "
     "internal.document_index"),
    (doc_cite(2), "a document citation of document 2, but the sample holds 1 document(s)"),
    (doc_cite(None, kind="content"), "a content citation that names no document"),
])
def test_a_document_citation_that_names_no_document_refuses_its_sample(
        tmp_path: Path, citation: dict[str, Any], what: str) -> None:
    refusal = refused(log_of(tmp_path, sample(user(document()), final(citation))))
    assert what in refusal.finding.message


# -- one sample at a time ----------------------------------------------------------------------

def test_a_refused_or_errored_sample_leaves_the_others_runs(tmp_path: Path) -> None:
    good = sample(user(), calls(("c1", {"url": PAGE})), tool("c1"), final(url_cite()))
    path = log_of(tmp_path, {**good, "id": "a"},
                  sample(user(document(mime="application/pdf")), final(doc_cite(0)), id="b"),
                  sample(user(), id="c", error={"message": "SECRET boom", "traceback": ""}),
                  {**json.loads(json.dumps(good)), "id": "d"})
    found = outcomes(path)
    assert [type(o).__name__ for o in found] == [
        "ImportedRun", "RefusedRun", "SkippedRun", "ImportedRun"]
    skipped = found[2]
    assert isinstance(skipped, SkippedRun)
    assert skipped.label == "sample c epoch 1"
    assert skipped.finding.code is Code.IMPORT_SKIPPED
    assert "SECRET" not in skipped.finding.message


def test_a_json_log_past_the_bound_is_refused_unread(tmp_path: Path) -> None:
    path = log_of(tmp_path, sample(user(), final(url_cite())))
    size = path.stat().st_size
    assert len(outcomes(path, max_member_bytes=size)) == 1
    with pytest.raises(Unsupported) as caught:
        outcomes(path, max_member_bytes=size - 1)
    message = caught.value.finding.message
    assert f"the log is too large: past the bound of {size - 1} bytes" in message
    assert "save it as a .eval log" in message


def test_a_sample_without_an_id_is_named_by_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"eval": {"task": "t"}, "samples": [
        {"id": None, "epoch": 1, "messages": []}]}), encoding="utf-8")
    assert refused(path).label == "the sample at $.samples[0]"


def test_a_json_log_past_the_bound_is_read_no_further_than_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracecite.importers.inspect as inspect_importer

    path = log_of(tmp_path, sample(user(), final(url_cite())))
    real_open = inspect_importer.open_input
    asked: list[int] = []

    class Counting:
        def __init__(self, opened: Any) -> None:
            self._opened = opened

        def read(self, size: int = -1) -> bytes:
            asked.append(size)
            data: bytes = self._opened.read(size)
            return data

        def __getattr__(self, name: str) -> Any:
            return getattr(self._opened, name)

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self._opened.close()

    monkeypatch.setattr(inspect_importer, "open_input", lambda p: Counting(real_open(p)))
    with pytest.raises(Unsupported):
        outcomes(path, max_member_bytes=10)
    assert asked == [11]  # the bound and one byte, never the whole file (-1)


def test_a_fetched_url_that_looks_like_a_document_is_one_source(tmp_path: Path) -> None:
    use = fetch_use("document:0", fetched("document:0", {"type": "text",
                                                         "media_type": "text/plain",
                                                         "data": TEXT}))
    run = only_run(log_of(tmp_path, sample(user(), final(doc_cite(0), before=(use,)))))
    ids = [s.id for call in run.calls for s in call.sources]
    assert len(ids) == len(set(ids)) == 1
    assert [call.tool for call in run.calls] == ["web_fetch"]


@pytest.mark.parametrize("retrieved", ["yesterday", "2025-02-30T00:00:00Z",
                                       "2025-01-02T03:04:05+01:00"])
def test_a_fetch_time_is_kept_as_the_anthropic_importer_keeps_it(tmp_path: Path,
                                                                 retrieved: str) -> None:
    from tracecite.importers.anthropic import read_runs as read_exchanges
    from tracecite.importers.model import ImportedRun

    result = fetched(PAGE, {"type": "text", "media_type": "text/plain", "data": TEXT})
    result["content"]["retrieved_at"] = retrieved
    run = only_run(log_of(tmp_path, sample(user(), final(url_cite(),
                                                         before=(fetch_use(PAGE, result),)))))
    # The same web fetch result in a Messages API exchange: one rule for both importers.
    exchange = tmp_path / "exchange.json"
    exchange.write_text(json.dumps({
        "request": {"model": "m", "max_tokens": 9,
                    "messages": [{"role": "user", "content": "go"}]},
        "response": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                     "stop_reason": "end_turn", "content": [
                         {"type": "server_tool_use", "id": "srv1", "name": "web_fetch",
                          "input": {"url": PAGE}},
                         result,
                         {"type": "text", "text": "The answer.", "citations": [
                             {"type": "char_location", "document_index": 0,
                              "cited_text": QUOTE, "start_char_index": 0,
                              "end_char_index": 1}]}]}}), encoding="utf-8")
    [anthropic] = list(read_exchanges(exchange, exchange.name))
    assert isinstance(anthropic, ImportedRun), anthropic
    kept = None if retrieved.startswith(("y", "2025-02-30")) else retrieved
    captured = [s.captured_at for call in anthropic.calls for s in call.sources]
    assert run.calls[0].sources[0].captured_at == kept
    assert captured == [kept]
