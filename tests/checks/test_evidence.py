"""Evidence mode: every quote must be in its source's captured content (TC200–TC202)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli, answer, call, cite, claim, result, source, write_trace
from tracecite.checks.evidence import _QuoteTester, scan_with_evidence
from tracecite.findings import Counts, Finding
from tracecite.matching import normalise

DONE = {"type": "done", "run_id": "r1"}


class Evidence:
    """``evidence(events)`` checks a valid trace's evidence; with ``answer_last`` false an event
    follows the answer, so the verdicts come from the second pass over the cited lines."""

    def __init__(self, folder: Path, answer_last: bool) -> None:
        self.folder = folder
        self.answer_last = answer_last

    def __call__(self, events: list[Any]) -> tuple[list[Finding], Counts]:
        path = write_trace(self.folder / "t.jsonl", events if self.answer_last
                           else [*events, DONE])
        checked = scan_with_evidence(str(path), keep_uris=False)
        assert checked.scan.findings == ()
        assert checked.scan.answer_read_ahead is self.answer_last
        return list(checked.findings), checked.summary


@pytest.fixture(params=[True, False], ids=["answer-last", "answer-not-last"])
def evidence(tmp_path: Path, request: pytest.FixtureRequest) -> Evidence:
    """Checks a trace's evidence in one pass, and in two."""
    return Evidence(tmp_path, request.param)


def one_quote(content: str, quote: str) -> list[Any]:
    return [call(), result(sources=[source(content=content)]),
            answer([claim(citations=[cite(quote=quote)])])]


def test_matching_quote(evidence: Evidence) -> None:
    findings, summary = evidence(one_quote("The quick brown fox.", "quick brown"))
    assert findings == []
    assert (summary.checked, summary.matched, summary.not_found) == (1, 1, 0)


def test_no_claims(evidence: Evidence) -> None:
    findings, summary = evidence([call(), result(), answer(claims=[])])
    assert [(f.code.code, f.line, f.claim) for f in findings] == [("TC200", 3, None)]
    assert summary.checked == 0


def test_uncited_claims(evidence: Evidence) -> None:
    findings, _ = evidence([call(), result(), answer([
        claim(citations=[]), claim(), claim(citations=[])])])
    assert [(f.code.code, f.line, f.claim) for f in findings] == [("TC201", 3, 1), ("TC201", 3, 3)]
    assert all(f.file is not None and f.file.endswith("t.jsonl") for f in findings)


def test_quote_not_in_capture_is_located(evidence: Evidence) -> None:
    findings, summary = evidence([
        call(), result(sources=[source("s1", "https://one/", "alpha beta"),
                                source("s2", "https://two/", "gamma delta")]),
        answer([claim(citations=[cite("s1", "alpha")]),
                claim(citations=[cite("s2", "gamma"), cite("s2", "epsilon")])]),
    ])
    assert len(findings) == 1
    f = findings[0]
    assert (f.code.code, f.line, f.claim, f.citation, f.source_id, f.uri) == (
        "TC202", 3, 2, 2, "s2", "https://two/")
    assert (summary.checked, summary.matched, summary.not_found) == (3, 2, 1)


def test_each_source_read_once_whatever_the_citation_order(evidence: Evidence,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.inputs import trace

    reads: list[int] = []
    original = trace.read_sources_at

    def counting(handle: Any, offset: int, wanted: Any = None) -> dict[str, tuple[str, str]]:
        reads.append(offset)
        return original(handle, offset, wanted)

    monkeypatch.setattr(trace, "read_sources_at", counting)
    findings, summary = evidence([
        call(), result(sources=[source("a", content="one two"), source("b", content="three"),
                                source("c", content="unused")]),
        answer([claim(citations=[cite("b", "three"), cite("a", "two"), cite("b", "thre")]),
                claim(citations=[cite("a", "one")])]),
    ])
    assert findings == []
    assert summary.matched == 4
    # In one pass nothing is read again; in two, a and b are on one line, read once.
    assert len(reads) == (0 if evidence.answer_last else 1)


@pytest.mark.parametrize("content, quote", [
    ("un caf\u00e9 noir", "cafe\u0301 noir"),  # NFD quote, NFC content
    ("un cafe\u0301 noir", "caf\u00e9 noir"),  # NFC quote, NFD content
    ("no\u00a0break", "no break"),
    ("line\none", "line one"),
    ("wide\u3000gap\u2003and\u2009thin", "wide gap and thin"),
    ("tabs\t\tand  spaces", "tabs and spaces"),
    ("x", "  x\n"),
])
def test_normalised_matches(evidence: Evidence, content: str, quote: str) -> None:
    findings, _ = evidence(one_quote(content, quote))
    assert findings == []


@pytest.mark.parametrize("content, quote", [
    ("The Quick fox", "the quick fox"),
    ("quick fox", "quick, fox"),
    ("it's", "it\u2019s"),
    ("caf\u00e9", "cafe"),
])
def test_case_and_punctuation_are_kept(evidence: Evidence, content: str, quote: str) -> None:
    findings, _ = evidence(one_quote(content, quote))
    assert [f.code.code for f in findings] == ["TC202"]


def test_a_citation_of_a_source_not_captured_is_tc203_and_skipped(evidence: Evidence) -> None:
    """``"content": null``: each citation of the source is a TC203 warning, counted as
    skipped, never as matched or not found; the other sources are checked as usual."""
    findings, summary = evidence([
        call(), result(sources=[source("s1", "https://one/", None),
                                source("s2", "https://two/", "alpha beta")]),
        answer([claim(citations=[cite("s1", "alpha"), cite("s2", "alpha")]),
                claim(citations=[cite("s2", "gamma"), cite("s1", "anything")])]),
    ])
    assert [(f.code.code, f.severity, f.exit, f.line, f.claim, f.citation, f.source_id, f.uri)
            for f in findings] == [
        ("TC203", "warning", 0, 3, 1, 1, "s1", "https://one/"),
        ("TC202", "error", 2, 3, 2, 1, "s2", "https://two/"),
        ("TC203", "warning", 0, 3, 2, 2, "s1", "https://one/"),
    ]
    assert all(f.column is not None for f in findings)
    assert findings[0].diagnosis is None
    assert summary == Counts(checked=2, matched=1, not_found=1, skipped=2)


@pytest.mark.parametrize("uri, how", [
    ("https://example.com/a", "verify it live with tracecite verify-urls"),
    ("file:docs/a.txt", "verify it live with tracecite verify-files"),
    ("urn:isbn:0451450523", "no command of TraceCite can verify it"),
])
def test_tc203_says_how_to_verify_the_citation(evidence: Evidence, uri: str, how: str) -> None:
    findings, summary = evidence([call(), result(sources=[source("s1", uri, None)]),
                                  answer([claim(citations=[cite("s1", "SECRET quote")])])])
    assert [f.code.code for f in findings] == ["TC203"]
    assert how in findings[0].message
    assert "SECRET" not in findings[0].message
    assert summary == Counts(skipped=1)


def test_a_citation_of_a_source_never_read_is_tc204_and_not_found(evidence: Evidence) -> None:
    """``"content": null`` with an ``"error"``: every read failed, so each citation is a TC204
    error, counted not found; the error text is never shown. Without an error (or with a null
    one), the source is only uncaptured (TC203)."""
    findings, summary = evidence([
        call(), result(sources=[source("s1", "https://one/", None, error="SECRET timeout"),
                                source("s2", "https://two/", None, error=None),
                                source("s3", "https://three/", "alpha", error="ignored")]),
        answer([claim(citations=[cite("s1", "alpha"), cite("s2", "alpha"),
                                 cite("s3", "alpha")])]),
    ])
    assert [(f.code.code, f.severity, f.exit, f.claim, f.citation, f.source_id, f.uri)
            for f in findings] == [
        ("TC204", "error", 2, 1, 1, "s1", "https://one/"),
        ("TC203", "warning", 0, 1, 2, "s2", "https://two/"),
    ]
    assert "SECRET" not in findings[0].message
    assert findings[0].column is not None
    assert summary == Counts(checked=2, matched=1, not_found=1, skipped=1)


def test_a_source_error_that_is_not_a_string_is_tc123(cli: Cli, tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source("s1", "https://one/", None, error=3)]),
        answer([claim(citations=[cite("s1", "alpha")])])])
    run = cli("check", path, "--json")
    assert run.exit == 1
    found = json.loads(run.out)["findings"]
    assert [(f["code"], f["line"]) for f in found] == [("TC123", 2)]
    assert "sources[1].error must be a string or null" in found[0]["message"]


def test_check_evidence_exits_2_on_a_citation_never_read(cli: Cli, tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source("s1", "https://one/", None, error="refused")]),
        answer([claim(citations=[cite("s1", "alpha")])])])
    run = cli("check", path, "--evidence")
    assert run.exit == 2
    assert "TC204" in run.out


def test_an_uncited_source_not_captured_is_no_finding(evidence: Evidence) -> None:
    findings, summary = evidence([
        call(), result(sources=[source("s1"), source("s2", "https://two/", None)]),
        answer()])
    assert findings == []
    assert summary == Counts(checked=1, matched=1)


def test_cli_reports_no_quote_text(cli: Cli, tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", one_quote("The SECRET content.", "SECRET quote"))
    run = cli("check", path, "--evidence")
    assert run.exit == 2
    assert "TC202" in run.out
    assert "SECRET" not in run.out + run.err


def test_evidence_skipped_for_invalid_trace(cli: Cli, tmp_path: Path) -> None:
    events = one_quote("alpha", "beta")
    events.insert(0, call())  # duplicate call id: a format error
    path = write_trace(tmp_path / "t.jsonl", events)
    run = cli("check", path, "--evidence", "--json")
    assert run.exit == 1
    assert run.codes() == ["TC125"]


@pytest.mark.parametrize("after_answer", [False, True], ids=["answer-last", "answer-not-last"])
@pytest.mark.parametrize("prefix", ["\ufeff", "\x1e"], ids=["bom", "record-separator"])
def test_lines_that_the_reader_tolerates_are_read_back(cli: Cli, tmp_path: Path,
                                                       prefix: str, after_answer: bool) -> None:
    """The JSONL reader skips a BOM or an RS (RFC 7464) before each line; the evidence check
    must read such a line's sources just as well (also when it reads them a second time)."""
    good = [call(), result(sources=[source(content="alpha beta")]),
            answer([claim(citations=[cite(quote="alpha")])])]
    if after_answer:
        good.append({"type": "done", "run_id": "r1"})
    lines = [json.dumps(event) for event in good]
    lines[1] = prefix + lines[1]
    path = tmp_path / "t.jsonl"
    path.write_bytes("\r\n".join(lines).encode() + b"\r\n")
    run = cli("check", path, "--evidence", "--json")
    assert (run.exit, run.codes()) == (0, [])
    lines[2] = json.dumps(answer([claim(citations=[cite(quote="gamma")])]))
    path.write_bytes("\n".join(lines).encode())
    run = cli("check", path, "--evidence", "--json")
    assert (run.exit, run.codes()) == (2, ["TC202"])


# ---- one pass, the answer read ahead from the last line; the second-pass fallback --------

def _events_with_miss() -> list[Any]:
    return [call(), result(sources=[source("s1", "https://one/", "alpha beta gamma"),
                                    source("s2", "https://two/", "delta")]),
            call("c2"), result("c2", sources=[source("s3", "https://three/", "eta theta")]),
            answer([claim(citations=[cite("s1", "beta  gamma"), cite("s3", "theta")]),
                    claim(citations=[cite("s2", "omega")])])]


def _verdicts(result: Any) -> tuple[list[tuple[str, int | None, int | None, str | None]],
                                    tuple[int, int, int]]:
    found = [(f.code.code, f.claim, f.citation, f.uri) for f in result.findings]
    s = result.summary
    return found, (s.checked, s.matched, s.not_found)


EXPECTED = ([("TC202", 2, 1, "https://two/")], (3, 2, 1))


@pytest.mark.parametrize("keep_uris", [True, False])
def test_scan_with_evidence_one_pass(tmp_path: Path, keep_uris: bool) -> None:
    path = write_trace(tmp_path / "t.jsonl", _events_with_miss())
    result = scan_with_evidence(str(path), keep_uris=keep_uris)
    assert result.scan.valid and result.scan.answer_read_ahead
    assert _verdicts(result) == EXPECTED
    everything = {"s1": "https://one/", "s2": "https://two/", "s3": "https://three/"}
    assert result.uris == (everything if keep_uris else {"s2": "https://two/"})


@pytest.mark.parametrize("keep_uris", [True, False])
def test_scan_with_evidence_answer_not_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            keep_uris: bool) -> None:
    """An event after the answer: nothing is read ahead, the second pass decides, reading
    each cited line once (regression: they were read once for the quotes and again for the
    URIs)."""
    from tracecite.inputs import trace

    offsets: list[int] = []
    original = trace.read_sources_at

    def counted(handle: Any, offset: int, wanted: Any = None) -> dict[str, tuple[str, str]]:
        offsets.append(offset)
        return original(handle, offset, wanted)

    monkeypatch.setattr(trace, "read_sources_at", counted)
    path = write_trace(tmp_path / "t.jsonl", [*_events_with_miss(), DONE, ""])
    result = scan_with_evidence(str(path), keep_uris=keep_uris)
    assert result.scan.valid and not result.scan.answer_read_ahead
    assert _verdicts(result) == EXPECTED
    everything = {"s1": "https://one/", "s2": "https://two/", "s3": "https://three/"}
    assert result.uris == (everything if keep_uris else {"s2": "https://two/"})
    assert len(offsets) == 2 and offsets == sorted(set(offsets))


def test_scan_with_evidence_agrees_with_two_passes(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.jsonl", _events_with_miss())
    one_pass = scan_with_evidence(str(path))
    write_trace(path, [*_events_with_miss(), DONE])
    two_pass = scan_with_evidence(str(path))
    assert one_pass.scan.answer_read_ahead and not two_pass.scan.answer_read_ahead
    assert one_pass.findings == two_pass.findings
    assert one_pass.summary == two_pass.summary
    assert one_pass.uris == two_pass.uris


def test_a_trace_changed_between_passes_is_an_input_error(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The claims' own findings, then one TC101 for the trace; no verdicts, no counts."""
    from tracecite.inputs import trace

    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(), answer([claim(citations=[]), claim()]), DONE])
    assert [f.code.code for f in scan_with_evidence(str(path)).findings] == ["TC201"]
    original = trace.open_input
    opened: list[str] = []

    def second_open_rewrites(name: str, **options: Any) -> Any:
        opened.append(name)
        if len(opened) == 2:  # the second pass: the trace was validated
            path.write_text("{}\n" * 10)
        return original(name, **options)

    monkeypatch.setattr(trace, "open_input", second_open_rewrites)
    checked = scan_with_evidence(str(path))
    assert checked.scan.valid
    assert [(f.code.code, f.claim) for f in checked.findings] == [("TC201", 1), ("TC101", None)]
    assert (checked.summary, checked.uris) == (Counts(), {})


def test_a_trace_that_changes_before_it_is_read_again(cli: Cli, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """One TC101 for the trace (not one per read), and no internal error."""
    from tracecite.inputs import sources

    def changed(handle: Any, offset: int, wanted: Any = None) -> dict[str, tuple[str, str]]:
        raise sources.TraceChangedError("the trace changed while it was being checked")

    monkeypatch.setattr("tracecite.inputs.trace.read_sources_at", changed)
    path = write_trace(tmp_path / "t.jsonl", [  # the answer is not last: a second pass reads
        call(), result(), answer(), DONE])
    run = cli("check", path, "--evidence", "--json")
    assert run.exit == 1
    assert [(f["code"], f["file"]) for f in run.json()["findings"]] == [("TC101", str(path))]


def test_the_quote_tester_starts_over_when_told_what_to_wait_for() -> None:
    tester = _QuoteTester(keep_uris=False)
    tester.wait_for({"s1": ("quick", "slow"), "s2": ("x",)})
    tester.test("s1", "https://one/", "the quick fox")
    assert (set(tester.missed), tester.uris, tester.waiting) == (
        {("s1", "slow")}, {"s1": "https://one/"}, True)
    tester.test("s1", "https://one/", "slow")  # handed over once: a second time is ignored
    assert set(tester.missed) == {("s1", "slow")}
    tester.wait_for({"s2": ("x",)})  # the answer changed: earlier verdicts are forgotten
    assert (set(tester.missed), tester.uris, tester.waiting) == (set(), {}, True)
    tester.test("s2", "https://two/", "x")
    assert (set(tester.missed), tester.uris, tester.waiting) == (set(), {}, False)
    tester.wait_for({"s3": ("y",)})
    tester.test("s3", "https://three/", None)  # not captured: noted, with its URI
    assert (tester.uncaptured, tester.uris, tester.waiting) == (
        {"s3"}, {"s3": "https://three/"}, False)
    tester.wait_for({})
    assert tester.uncaptured == set()


# ---- the verdict, however the check gets there --------------------------------------------------

ALPHABET = st.sampled_from(["a", "b", "c", " ", "\u00a0", "\n", "e", "\u0301", "\u00e9", "."])


@st.composite
def cited_traces(draw: st.DrawFn
                 ) -> tuple[list[Any], set[tuple[int, int]], set[tuple[int, int]]]:
    """A valid trace with random contents and quotes (some sources not captured), the (claim,
    citation) pairs whose quote is not in its source by the definition of
    docs/reference/matching.md, and those that cite a source not captured."""
    contents: dict[str, str | None] = {}
    events: list[Any] = []
    for n in range(draw(st.integers(1, 3))):
        sources = []
        for _ in range(draw(st.integers(0, 3))):
            sid = f"s{len(contents)}"
            contents[sid] = draw(st.none() | st.text(ALPHABET, max_size=12))
            sources.append(source(sid, f"https://example.com/{sid}", contents[sid]))
        events += [call(f"c{n}"), result(f"c{n}", sources=sources)]
    claims, missing, uncaptured = [], set(), set()
    for c in range(1, draw(st.integers(1, 3)) + 1):
        citations = []
        for n in range(1, draw(st.integers(0, 3)) + 1):
            if not contents:
                break
            sid = draw(st.sampled_from(sorted(contents)))
            text = contents[sid] or ""
            i, j = sorted(draw(st.tuples(st.integers(0, len(text)), st.integers(0, len(text)))))
            quote = draw(st.just(text[i:j]) | st.text(ALPHABET, min_size=1, max_size=6))
            if not normalise(quote):
                quote = "a"
            citations.append(cite(sid, quote))
            if contents[sid] is None:
                uncaptured.add((c, n))
            elif normalise(quote) not in normalise(text):
                missing.add((c, n))
        claims.append(claim(citations=citations))
    events.append(answer(claims))
    return events, missing, uncaptured


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cited_traces())
def test_verdicts_match_the_definition_in_one_pass_and_two(
        cli: Cli, tmp_path: Path,
        case: tuple[list[Any], set[tuple[int, int]], set[tuple[int, int]]]) -> None:
    events, missing, uncaptured = case
    one_pass = write_trace(tmp_path / "last.jsonl", events)
    # An event after the answer: the answer is not on the last line, so a second pass decides.
    two_pass = write_trace(tmp_path / "not-last.jsonl", [*events, {"type": "end", "run_id": "r1"}])
    reports = [cli("check", path, "--evidence", "--json").json() for path in (one_pass, two_pass)]
    for report in reports:
        found = {(f["claim"], f["citation"]) for f in report["findings"] if f["code"] == "TC202"}
        assert found == missing
        not_captured = {(f["claim"], f["citation"]) for f in report["findings"]
                        if f["code"] == "TC203"}
        assert not_captured == uncaptured
        uncited = [f["claim"] for f in report["findings"] if f["code"] == "TC201"]
        assert uncited == [c for c, cl in enumerate(events[-1]["claims"], 1)
                           if not cl["citations"]]
        captured = report["summary"]["captured"]
        assert (captured["not_found"], captured["skipped"]) == (len(missing), len(uncaptured))
        assert captured["checked"] == captured["matched"] + captured["not_found"]
        assert captured["checked"] + captured["skipped"] == report["summary"]["citations"]
        assert report["exit_code"] == (2 if missing or uncited else 0)
    strip = [[{k: v for k, v in f.items() if k != "file"} for f in r["findings"]]
             for r in reports]
    assert strip[0] == strip[1]
    assert reports[0]["summary"] == reports[1]["summary"]
