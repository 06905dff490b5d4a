"""Lone surrogates are not text: wherever one comes in, it is an input error with file and line
(TC123 on a trace line, TC101 for a file name, TC107 for an import), or a clean verdict; never
an internal error, and never a character a report cannot write as UTF-8."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    CONTENT,
    Cli,
    all_outputs,
    answer,
    call,
    cite,
    claim,
    jsonl,
    result,
    source,
    write_trace,
)
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    html,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite import api
from tracecite.inputs import jsonl as jsonl_module
from tracecite.inputs.jsonl import LONE_SURROGATE_MESSAGE, LoneSurrogateError

LONE = "\ud800"
FORMATS = ["console", "json", "github", "sarif"]


def _line(event: dict[str, Any]) -> str:
    """An event as a JSON line whose lone surrogates are ``\\ud800`` escapes (what a writer's
    ``json.dumps`` makes of a Python string holding one)."""
    return json.dumps(event)


def _events(where: str) -> list[dict[str, Any]]:
    """A valid trace with a lone surrogate planted in one place."""
    src: dict[str, Any] = source()
    clm: dict[str, Any] = claim()
    events: list[dict[str, Any]] = [call(), result(sources=[src]), answer(claims=[clm])]
    if where == "quote":
        clm["citations"] = [cite(quote="quick " + LONE + " fox")]
    elif where == "content":
        src["content"] = CONTENT + LONE
    elif where == "claim":
        clm["text"] = "A fox" + LONE
    elif where == "source_id":
        src["id"] = "s1" + LONE
        clm["citations"] = [cite(source_id="s1" + LONE)]
    elif where == "uri":
        src["uri"] = "https://example.com/" + LONE
    elif where == "run_id":
        for event in events:
            event["run_id"] = "r" + LONE
    elif where == "tool":
        events[0]["tool"] = LONE
    elif where == "unknown-field":
        events[1]["note"] = {"deep": [LONE]}
    elif where == "key":
        events[2][LONE] = 1
    else:
        raise AssertionError(where)
    return events


PLACES = ["quote", "content", "claim", "source_id", "uri", "run_id", "tool", "unknown-field",
          "key"]
LINE_OF = {"quote": 3, "content": 2, "claim": 3, "source_id": 2, "uri": 2, "run_id": 1,
           "tool": 1, "unknown-field": 2, "key": 3}


def _only_tc123(report: dict[str, Any]) -> bool:
    """Whether the report's first finding is TC123 and the rest only what follows from the
    line it refuses (a source or an answer that is then missing), as for a line that is not
    JSON."""
    codes = [f["code"] for f in report["findings"]]
    return codes[:1] == ["TC123"] and set(codes) <= {"TC123", "TC130", "TC131"}


def _trace(tmp_path: Path, where: str) -> Path:
    return write_trace(tmp_path / f"{where}.jsonl", [_line(e) for e in _events(where)])


@pytest.mark.parametrize("where", PLACES)
def test_check_evidence_is_an_input_error_on_the_line(cli: Cli, tmp_path: Path,
                                                       where: str) -> None:
    res = cli("check", "--evidence", "--json", _trace(tmp_path, where))
    assert res.exit == 1, res.out
    lone = [f for f in res.json()["findings"] if f["message"] == LONE_SURROGATE_MESSAGE]
    assert lone and lone[0]["code"] == "TC123"
    assert lone[0]["line"] == LINE_OF[where]
    assert lone[0]["file"].endswith(f"{where}.jsonl")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_report_format_can_be_written(cli: Cli, tmp_path: Path, fmt: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _trace(tmp_path, "quote")
    res, texts = all_outputs(cli, ["check", "--evidence", trace], fmt, tmp_path, monkeypatch)
    assert res.exit == 1
    for where, written in texts.items():
        written.encode("utf-8")  # nothing unencodable, wherever it went
        assert LONE not in written, where
    assert "TC123" in texts["report-file json"]


def test_a_pair_of_surrogate_escapes_is_text(cli: Cli, tmp_path: Path) -> None:
    # "\ud83d\ude00" is one character (U+1F600): text, matched as any other.
    events = _events("quote")
    events[1]["sources"][0]["content"] = CONTENT + " \U0001f600"
    events[2]["claims"][0]["citations"] = [cite(quote="dog. \U0001f600")]
    trace = write_trace(tmp_path / "pair.jsonl", [_line(e) for e in events])
    assert "\\ud83d\\ude00" in trace.read_text()
    assert cli("check", "--evidence", "--json", trace).exit == 0


def test_an_escaped_backslash_before_u_is_not_a_surrogate(cli: Cli, tmp_path: Path) -> None:
    events = _events("claim")
    events[2]["claims"][0]["text"] = "a \\ud800 written out"  # backslash, then 'ud800'
    trace = write_trace(tmp_path / "backslash.jsonl", [_line(e) for e in events])
    assert cli("check", "--evidence", "--json", trace).exit == 0


def test_a_long_answer_line_read_lazily(cli: Cli, tmp_path: Path) -> None:
    # Past LAZY_FROM_CHARS the answer's claims are decoded one at a time (and read ahead).
    events = _events("quote")
    many = [claim() for _ in range(30_000)]
    events[2]["claims"] = many + events[2]["claims"]
    line = _line(events[2])
    assert len(line) >= jsonl_module.LAZY_FROM_CHARS
    trace = write_trace(tmp_path / "long.jsonl", [_line(events[0]), _line(events[1]), line])
    res = cli("check", "--evidence", "--json", trace)
    assert res.exit == 1
    assert [f["line"] for f in res.json()["findings"] if f["code"] == "TC123"] == [3]


@pytest.mark.parametrize("lazy", [False, True])
def test_loads_refuses_a_lone_surrogate(lazy: bool) -> None:
    padding = " " * (jsonl_module.LAZY_FROM_CHARS if lazy else 0)
    line = '{"type":"answer","claims":[{"text":"\\udc00"}]}' + padding
    with pytest.raises(LoneSurrogateError):
        jsonl_module.loads(line)
    with pytest.raises(LoneSurrogateError):
        jsonl_module.visit_claims(line, lambda element: None)
    seen: list[Any] = []
    with pytest.raises(LoneSurrogateError):  # after the claims, in another field
        jsonl_module.visit_claims('{"claims":[{"a":1}],"b":"\\udfff"}' + padding, seen.append)
    assert seen == [{"a": 1}]
    assert jsonl_module.loads('{"a":"\\ud83d\\ude00"}' + padding) == {"a": "\U0001f600"}


def test_without_orjson_the_same_finding(cli: Cli, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl_module, "_orjson", None)
    res = cli("check", "--evidence", "--json", _trace(tmp_path, "content"))
    assert res.exit == 1
    assert _only_tc123(res.json())


def test_compare_is_an_input_error(cli: Cli, tmp_path: Path) -> None:
    lines = [_line(e) for e in _events("claim")][:2]
    good = write_trace(tmp_path / "good.jsonl", [*lines, json.dumps(answer())])
    res = cli("compare", good, _trace(tmp_path, "content"), "--json")
    assert res.exit == 1
    assert _only_tc123(res.json())


def test_verify_files_is_an_input_error(cli: Cli, tmp_path: Path) -> None:
    events = _events("uri")
    events[1]["sources"][0]["uri"] = "file:notes" + LONE + ".txt"
    trace = write_trace(tmp_path / "files.jsonl", [_line(e) for e in events])
    res = cli("verify-files", trace, "--root", tmp_path, "--json")
    assert res.exit == 1
    assert _only_tc123(res.json())


def test_verify_files_a_percent_encoded_surrogate_is_a_clean_verdict(cli: Cli,
                                                                      tmp_path: Path) -> None:
    # %ED%A0%80 is the UTF-8 form of U+D800, which UTF-8 forbids: no file has that name.
    events = _events("claim")
    events[2]["claims"][0]["text"] = "A fox jumps."
    events[1]["sources"][0]["uri"] = "file:a%ED%A0%80.txt"
    trace = write_trace(tmp_path / "pct.jsonl", [_line(e) for e in events])
    res = cli("verify-files", trace, "--root", tmp_path, "--json")
    assert res.exit == 2, res.out
    res.out.encode("utf-8")
    assert all(f["code"].startswith("TC3") for f in res.json()["findings"])


def test_verify_urls_is_an_input_error_and_nothing_is_fetched(cli: Cli, site: Site,
                                                              tmp_path: Path) -> None:
    url = site.route("/a", text(CONTENT))
    events = _events("quote")
    events[1]["sources"][0]["uri"] = url
    trace = write_trace(tmp_path / "live.jsonl", [_line(e) for e in events])
    res = cli("verify-urls", trace, "--json", *site.flags)
    assert res.exit == 1
    assert _only_tc123(res.json())
    assert site.paths == []


def test_verify_urls_a_page_with_a_surrogate_reference_is_a_clean_verdict(
        cli: Cli, site: Site, tmp_path: Path) -> None:
    # A page cannot hold a lone surrogate as UTF-8; as a character reference, the parser
    # makes it U+FFFD. The verdict is a plain miss, with its diagnosis.
    url = site.route("/a", html("<p>The quick &#xD800; brown fox</p>"))
    events = _events("claim")
    events[2]["claims"][0]["text"] = "A fox jumps."
    events[1]["sources"][0]["uri"] = url
    events[1]["sources"][0]["content"] = "The quick brown fox"
    events[2]["claims"][0]["citations"] = [cite(quote="The quick brown fox")]
    trace = write_trace(tmp_path / "page.jsonl", [_line(e) for e in events])
    res = cli("verify-urls", trace, "--json", *site.flags)
    assert res.exit == 2, res.out
    res.out.encode("utf-8")
    assert [f["code"] for f in res.json()["findings"]] == ["TC210"]


def _plant(value: Any) -> Any:
    """Every string of a transcript longer than 20 characters with a lone surrogate in it."""
    if isinstance(value, dict):
        return {k: _plant(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plant(v) for v in value]
    if isinstance(value, str) and len(value) > 20:
        return value[:5] + LONE + value[5:]
    return value


FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"


@pytest.mark.parametrize("fmt,name", [("anthropic", "char_location.json"),
                                      ("anthropic", "web_search_result_location.json"),
                                      ("inspect", "research.json")])
def test_import_is_an_input_error_and_writes_nothing(cli: Cli, tmp_path: Path, fmt: str,
                                                     name: str) -> None:
    planted = _plant(json.loads((FIXTURES / fmt / name).read_text(encoding="utf-8")))
    transcript = tmp_path / name
    transcript.write_text(json.dumps(planted), encoding="utf-8")
    out = tmp_path / "out"
    res = cli("import", fmt, transcript, "--out", out, "--json")
    assert res.exit == 1
    # Each run holding one is refused on its own (here every run of the file).
    codes = [f["code"] for f in res.json()["findings"]]
    assert codes and set(codes) == {"TC107"}
    assert not out.exists() or not any(out.iterdir())


APIS: list[tuple[str, Callable[[str], api.Report]]] = [
    ("check", lambda p: api.check([p], evidence=True)),
    ("verify_files", lambda p: api.verify_files([p])),
    ("verify_notes", lambda p: api.verify_notes([p])),
    ("compare", lambda p: api.compare(p, p)),
]


@pytest.mark.parametrize("name,run", APIS, ids=[n for n, _ in APIS])
def test_api_a_lone_surrogate_in_a_path_is_tc101(name: str, run: Callable[[str], api.Report],
                                                 tmp_path: Path) -> None:
    report = run(str(tmp_path / f"a{LONE}.jsonl"))
    assert report.exit_code == 1
    assert {f.code.value[0] for f in report.findings} == {"TC101"}


def test_api_options_holding_a_lone_surrogate_are_usage_errors(tmp_path: Path) -> None:
    trace = str(write_trace(tmp_path / "t.jsonl", [_line(e) for e in _events("claim")]))
    with pytest.raises(api.UsageError):
        api.verify_urls([trace], user_agent="agent" + LONE)
    with pytest.raises(api.UsageError):
        api.verify_files([trace], root=str(tmp_path / LONE))


@pytest.mark.skipif(os.name != "posix", reason="file names as bytes")
def test_a_file_name_that_is_not_utf8_is_read_and_reported(cli: Cli, tmp_path: Path) -> None:
    # Such a name arrives as a surrogateescape string; reports escape it, never crash.
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xff.jsonl")
    Path(name).write_bytes(jsonl([call(), result(), answer()]))
    for fmt in FORMATS:
        res = cli("check", "--evidence", "--format", fmt, name)
        assert res.exit == 0, res.out
        (res.out + res.err).encode("utf-8")


def test_the_diagnosis_and_the_digest_take_any_string() -> None:
    # Inputs holding a lone surrogate are refused, but these pure functions never fail on one.
    from tracecite.checks.diagnosis import Diagnoser
    from tracecite.matching import digest

    diagnosis = Diagnoser(["Caf\u00e9 " + LONE + " \u2019quoted\u2019"]).diagnose(
        "caf\u00e9 " + LONE + " 'quoted'")
    assert diagnosis.kinds == ("case", "typography")
    assert digest(LONE) != digest("\udfff")
