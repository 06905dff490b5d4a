"""The Inspect AI importer on logs the real inspect_ai wrote (docs/guides/importers.md#inspect-ai).

tests/importers/make_inspect_fixtures.py ran a task on ``mockllm/model`` (offline, mocked outputs
built with inspect_ai's own types) and wrote the committed fixtures: ``research.eval`` and the
same eval as a ``.json`` log (``research.json.gz``, compressed to keep the repository small).
Each sample is one shape: a fetch cited through a URL of the same page, a URL in an argument of
another name, a fetch that failed, an Anthropic web fetch cited by document index, text
documents cited by document and content citations, a cited PDF, an uncited answer, span
citations, a search by Inspect's web_search (Tavily, at a loopback stand-in) and a sample that
crashed; two epochs of each. The slow test runs the generator again
and checks that the importer makes the same of the fresh logs. ``anthropic.eval`` holds
samples that Inspect's own Anthropic provider made of a loopback stand-in's Messages API
responses: a web fetch and a text document, each cited by ``char_location``, and a web search,
alone and with a fetch of its result, cited by ``web_search_result_location``."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.importers.make_inspect_fixtures import (
    ANTHROPIC_PAGE,
    ANTHROPIC_TEXT,
    BROKEN,
    DOCUMENT_TEXT,
    FETCHED,
    FETCHED_TEXT,
    ODD,
    ODD_TEXT,
    PAGE,
    PAGE_TEXT,
    SEARCHED,
    SNIPPET,
)
from tracecite import api
from tracecite.codes import Code
from tracecite.importers.command import run_import
from tracecite.importers.inspect import read_runs
from tracecite.importers.model import (
    ImportedRun,
    RefusedRun,
    RunOutcome,
    SkippedRun,
    trace_lines,
)

REAL = Path(__file__).parent / "fixtures" / "inspect" / "real"
GENERATOR = Path(__file__).parent / "make_inspect_fixtures.py"
CITED = ("fetch", "odd-argument", "failed", "web-fetch", "document", "content", "tavily")


@pytest.fixture(params=["eval", "json"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The committed log, as the ``.eval`` archive and as the ``.json`` log."""
    if request.param == "eval":
        return REAL / "research.eval"
    path = tmp_path / "research.json"
    path.write_bytes(gzip.decompress((REAL / "research.json.gz").read_bytes()))
    return path


def outcomes(path: Path) -> dict[str, RunOutcome]:
    """Each outcome by sample id and epoch (``fetch/1``)."""
    found: dict[str, RunOutcome] = {}
    for outcome in read_runs(path, path.name):
        if isinstance(outcome, ImportedRun):
            key = outcome.run_id.split("/", 1)[1].replace("epoch-", "")
        else:
            _, sample, _, epoch = outcome.label.split(" ")
            key = f"{sample}/{epoch}"
        assert key not in found
        found[key] = outcome
    return found


def run(found: dict[str, RunOutcome], key: str) -> ImportedRun:
    outcome = found[key]
    assert isinstance(outcome, ImportedRun)
    return outcome


def cited(run: ImportedRun) -> list[tuple[str, str | None, str | None, str]]:
    """Each citation as (its source's uri, content, error, quote)."""
    sources = {s.id: s for call in run.calls for s in call.sources}
    return [(sources[c.source_id].uri, sources[c.source_id].content,
             sources[c.source_id].error, c.quote)
            for claim in run.claims for c in claim.citations]


def test_every_sample_and_epoch_has_its_outcome(log: Path) -> None:
    found = outcomes(log)
    kinds = {key: type(outcome).__name__ for key, outcome in found.items()}
    expected = {f"{sample}/{epoch}": "ImportedRun" for sample in
                (*CITED, "uncited", "spans") for epoch in (1, 2)}
    expected.update({f"pdf/{epoch}": "RefusedRun" for epoch in (1, 2)})
    expected.update({f"crash/{epoch}": "SkippedRun" for epoch in (1, 2)})
    assert kinds == expected


def test_a_url_of_the_same_page_is_cited_at_its_fetch(log: Path) -> None:
    """The citation's URL has no trailing ``/``, a ``utm_source`` and a fragment: the same
    page as the one fetched."""
    assert cited(run(outcomes(log), "fetch/1")) == [
        (PAGE, PAGE_TEXT, None, "Example domains are reserved for documentation.")]


def test_a_url_in_an_argument_of_any_name_is_the_address_read(log: Path) -> None:
    assert cited(run(outcomes(log), "odd-argument/2")) == [
        (ODD, ODD_TEXT, None, "names three reserved second-level domains")]


def test_a_tavily_search_result_is_the_text_its_citation_quotes(log: Path) -> None:
    """Inspect's web_search (its Tavily provider, at a loopback stand-in) marks each result with
    a URL citation whose cited_text is the result's content: that is the source's text."""
    found = run(outcomes(log), "tavily/1")
    assert cited(found) == [(SEARCHED, SNIPPET, None, "maintained for documentation purposes")]
    assert [(call.tool, call.ok) for call in found.calls] == [("web_search", True)]


def test_a_citation_of_a_page_whose_every_read_failed_has_the_error(log: Path) -> None:
    found = run(outcomes(log), "failed/1")
    assert cited(found) == [
        (BROKEN, None, "unknown: timeout: the server did not answer", "costs fell by a third")]
    assert [(call.tool, call.ok) for call in found.calls] == [
        ("fetch_page", False), ("cited-urls", True)]


def test_an_anthropic_web_fetch_is_the_text_a_document_citation_quotes(log: Path) -> None:
    found = run(outcomes(log), "web-fetch/1")
    assert cited(found) == [(FETCHED, FETCHED_TEXT, None,
                             "The council approved the budget on Tuesday.")]
    [call] = found.calls
    assert (call.tool, call.ok, call.sources[0].captured_at) == (
        "web_fetch", True, "2025-11-03T10:00:00Z")


@pytest.mark.parametrize(("sample", "uri", "quote"), [
    ("document/1", "document:1", "The committee agreed to publish the report in May."),
    ("content/2", "document:0", "Questions go to the secretary."),
])
def test_document_and_content_citations_quote_the_documents_text(
        log: Path, sample: str, uri: str, quote: str) -> None:
    assert cited(run(outcomes(log), sample)) == [(uri, DOCUMENT_TEXT, None, quote)]


def test_a_cited_pdf_that_cannot_be_read_refuses_its_sample(log: Path) -> None:
    refused = outcomes(log)["pdf/2"]
    assert isinstance(refused, RefusedRun)
    assert refused.label == "sample pdf epoch 2"
    assert refused.finding.code is Code.IMPORT_UNSUPPORTED
    assert "a PDF document that cannot be read" in refused.finding.message


def test_an_errored_sample_is_skipped_with_a_warning(log: Path) -> None:
    skipped = outcomes(log)["crash/1"]
    assert isinstance(skipped, SkippedRun)
    assert skipped.finding.code is Code.IMPORT_SKIPPED
    assert skipped.finding.message.startswith("sample crash epoch 1 ended in an error")
    assert "on purpose" not in skipped.finding.message  # the error's text is not shown


def test_uncited_and_span_only_answers_cite_nothing(log: Path) -> None:
    found = outcomes(log)
    assert not run(found, "uncited/1").cited
    spans = run(found, "spans/2")
    assert (spans.cited, spans.not_importable) == (False, 1)


def test_the_import_writes_the_cited_runs_and_names_the_others(log: Path,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = run_import("inspect", [str(log)], str(out), None)
    summary = report.summary
    assert (summary.runs, summary.uncited, summary.refused, summary.skipped,
            summary.not_importable) == (14, 4, 2, 2, 2)
    # The .json log orders samples by id, the .eval archive as they ran.
    assert sorted((f.code.code, f.message.split(":")[0]) for f in report.findings) == [
        ("TC107", "sample pdf epoch 1"),
        ("TC107", "sample pdf epoch 2"),
        ("TC108", "sample crash epoch 1 ended in an error and has no answer"),
        ("TC108", "sample crash epoch 2 ended in an error and has no answer"),
    ]
    assert report.exit_code == 1
    assert len(list(out.glob("*.trace.jsonl"))) == 14


@pytest.mark.slow
def test_the_written_traces_pass_check_and_only_the_failed_read_fails_evidence(
        log: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = run_import("inspect", [str(log)], str(out), None, skip_unsupported=True)
    assert report.exit_code == 0
    traces = sorted(str(p) for p in out.glob("*.trace.jsonl"))
    assert api.check(traces).exit_code == 0
    checked = api.check(traces, evidence=True)
    assert sorted((Path(f.file or "").name.split("-epoch")[0], f.code.code)
                  for f in checked.findings) == [
        ("research-failed", "TC204"), ("research-failed", "TC204")]
    assert checked.exit_code == 2


def comparable(path: Path) -> list[Any]:
    """What the importer makes of a log, without what differs between two runs of the same
    eval (its id in run ids, the log's file name in run names), in sample order."""
    made: list[Any] = []
    for outcome in read_runs(path, path.name):
        if isinstance(outcome, ImportedRun):
            lines = [json.loads(line) for line in trace_lines(outcome)]
            for line in lines:
                line["run_id"] = line["run_id"].split("/", 1)[1]
            made.append(("run", outcome.name.split("-", 1)[1], outcome.not_importable, lines))
        else:
            message = outcome.finding.message.rsplit(" at ", 1)[0]
            made.append((type(outcome).__name__, outcome.label, outcome.finding.code.code,
                         message))
    return sorted(made, key=lambda item: (str(item[1]), item[0]))


@pytest.mark.slow
@pytest.mark.skipif(any(importlib.util.find_spec(name) is None
                        for name in ("inspect_ai", "anthropic")),
                    reason="inspect_ai or anthropic is not installed (the test extra brings "
                           "both)")
def test_fresh_logs_of_the_current_inspect_ai_import_as_the_committed_ones(
        tmp_path: Path) -> None:
    """Run the generator with the inspect_ai installed; its .eval, .json and converted logs must
    give what the committed log gives. Red here means an Inspect release changed a shape."""
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "NO_COLOR": "1"}
    for key in [k for k in env if k.endswith("_API_KEY")]:
        del env[key]  # the generator needs none
    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, str(GENERATOR), str(fresh)], cwd=tmp_path, env=env,
                   check=True, capture_output=True, timeout=240)
    committed = comparable(REAL / "research.eval")
    for name in ("research.eval", "research.json", "converted.json", "dumped.json"):
        assert comparable(fresh / name) == committed, name
    assert comparable(fresh / "anthropic.eval") == comparable(REAL / "anthropic.eval")


@pytest.mark.parametrize(("sample", "uri", "content", "tools"), [
    ("fetch", ANTHROPIC_PAGE, ANTHROPIC_TEXT, ["web_fetch"]),
    ("document", "document:0", ANTHROPIC_TEXT, ["documents"]),
    ("search", ANTHROPIC_PAGE, None, ["web_search"]),
    ("search-fetch", ANTHROPIC_PAGE, ANTHROPIC_TEXT, ["web_search", "web_fetch"]),
])
def test_inspects_anthropic_provider_keeps_the_text_its_citations_quote(
        sample: str, uri: str, content: str | None, tools: list[str]) -> None:
    """Inspect's own Anthropic provider made these samples of the Messages API's blocks. A web
    fetch and a text document cited by ``char_location``: the quote is checked against the
    document's text (it was TC107 "the log does not keep the document text"). A search result
    cited by ``web_search_result_location`` has no text (checked live), unless the same
    response fetched that page: then the fetched text, though the citation's URL ends in ``/``."""
    imported = run(outcomes(REAL / "anthropic.eval"), f"{sample}/1")
    assert cited(imported) == [
        (uri, content, None, "It approved the new library by seven votes to two.")]
    assert [call.tool for call in imported.calls] == tools
