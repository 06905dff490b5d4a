"""``compare``: stable URIs, last capture wins, normalised contents, TC400–TC402."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Cli, answer, call, cite, claim, result, source, write_trace
from tracecite.checks.compare import stable_uri


@pytest.mark.parametrize("uri, expected", [
    ("https://example.com/a", "https://example.com/a"),
    ("HTTPS://Example.COM/Path/Kept", "https://example.com/Path/Kept"),
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("https://example.com:80/a", "https://example.com:80/a"),
    ("http://example.com:443/a", "http://example.com:443/a"),
    ("http://example.com:8080/a", "http://example.com:8080/a"),
    ("https://example.com:/a", "https://example.com/a"),
    ("https://example.com", "https://example.com/"),
    ("https://example.com?q=1", "https://example.com/?q=1"),
    ("https://example.com/a#section", "https://example.com/a"),
    ("https://example.com/a?b=c#d", "https://example.com/a?b=c"),
    ("https://example.com/%7euser", "https://example.com/~user"),
    ("https://example.com/%7Euser", "https://example.com/~user"),
    ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
    ("https://example.com/a%2Fb", "https://example.com/a%2Fb"),
    ("https://example.com/%aa%bB", "https://example.com/%AA%BB"),
    ("https://example.com/%41%62%2D%2e%5F%30", "https://example.com/Ab-._0"),
    ("https://example.com/?q=%7e%3d", "https://example.com/?q=~%3D"),
    ("https://User:P%61ss@Example.com/", "https://User:Pass@example.com/"),
    ("https://[2001:DB8::1]:443/", "https://[2001:db8::1]/"),
    ("https://[2001:db8::1]:8443/", "https://[2001:db8::1]:8443/"),
    ("https://[2001:db8::1]x/", "https://[2001:db8::1]x/"),
    ("https://[2001:db8::1", "https://[2001:db8::1/"),
    ("https://EX%2fAMPLE.com/", "https://ex%2Fample.com/"),
    ("https://%45x.com/", "https://ex.com/"),
    ("file:docs/Guide.html", "file:docs/Guide.html"),
    ("FILE:///tmp/A%7e", "file:///tmp/A~"),
    ("urn:ISBN:0451450523", "urn:ISBN:0451450523"),
    ("", ""),
    ("not a uri at all", "not a uri at all"),
])
def test_stable_uri(uri: str, expected: str) -> None:
    assert stable_uri(uri) == expected


@pytest.mark.parametrize("uri", [
    "%%34%31",  # a stray % before escapes that decode to hex digits
    "http://h/%%34%31",
    "http://a:80:80/",  # a host with more than one colon
    "%41:x",  # a path that would decode into a scheme
    "//host:%38%30/",
    "http://H%41/",
])
def test_stable_uri_idempotent_edge_cases(uri: str) -> None:
    once = stable_uri(uri)
    assert stable_uri(once) == once


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from("%:/?#@[]aAfF09.~-_ ") | st.characters(), max_size=40))
def test_stable_uri_idempotent_for_any_text(text: str) -> None:
    once = stable_uri(text)
    assert stable_uri(once) == once


hex_escape = st.builds(lambda h: "%" + h, st.text(st.sampled_from("0123456789abcdefABCDEF"),
                                                  min_size=2, max_size=2))
segment = st.lists(st.sampled_from(list("aZ09-._~!$&'()*+,;=:@")) | hex_escape,
                   max_size=6).map("".join)
urls = st.builds(
    lambda scheme, host, port, path, query, fragment: (
        f"{scheme}://{host}{port}{path}{query}{fragment}"),
    st.sampled_from(["http", "https", "HTTP", "HtTpS"]),
    st.lists(st.text(st.sampled_from("aZq09-"), min_size=1, max_size=6), min_size=1,
             max_size=3).map(".".join),
    st.sampled_from(["", ":", ":80", ":443", ":8080"]),
    st.lists(segment, max_size=4).map(lambda segs: "".join("/" + s for s in segs)),
    st.sampled_from(["", "?"]).flatmap(lambda q: st.just("") if not q else
                                       segment.map(lambda s: "?" + s)),
    st.sampled_from(["", "#", "#frag", "#%41"]),
)


@settings(max_examples=150, deadline=None)
@given(urls)
def test_stable_uri_of_http_urls(url: str) -> None:
    once = stable_uri(url)
    assert stable_uri(once) == once
    assert once.startswith(("http://", "https://"))
    assert "#" not in once
    scheme, rest = once.split("://", 1)
    host = rest.split("/", 1)[0].split("?", 1)[0]
    assert host == host.lower()
    assert not host.endswith(":") and not host.endswith({"http": ":80", "https": ":443"}[scheme])
    assert "/" in rest  # an empty path became "/"
    # Escapes are upper case and never stand for unreserved characters.
    for i in range(len(once)):
        if once[i] == "%" and i + 2 < len(once):
            pair = once[i + 1:i + 3]
            assert pair == pair.upper()
            decoded = chr(int(pair, 16))
            assert not (decoded.isascii() and (decoded.isalnum() or decoded in "-._~"))


# ---- compare end to end --------------------------------------------------------------------------

def trace_with(tmp_path: Path, name: str, *sources: dict[str, Any]) -> Path:
    """A valid trace whose one result carries ``sources`` (no citations needed)."""
    return write_trace(tmp_path / name, [call(), result(sources=list(sources)),
                                         answer(claims=[])])


def test_equal_traces(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://a/", "x"))
    new = trace_with(tmp_path, "new.jsonl", source("b", "https://a/", "x"))
    run = cli("compare", old, new, "--json")
    assert run.exit == 0
    report = run.json()
    assert report["changes"] == {"added": [], "removed": [], "changed": []}
    assert report["findings"] == []
    assert report["command"] == "compare"


def test_added_removed_changed(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl",
                     source("a", "https://same/", "kept"),
                     source("b", "https://gone/", "x"),
                     source("c", "https://z-changed/", "before"),
                     source("d", "https://b-changed/", "before"),
                     source("e", "https://a-gone/", "x"))
    new = write_trace(tmp_path / "new.jsonl", [
        call(), result(sources=[source("a", "https://same/", "kept"),
                                source("c", "https://z-changed/", "after")]),
        call("c2"), result("c2", sources=[source("d", "https://b-changed/", "after"),
                                          source("f", "https://new/", "x"),
                                          source("g", "https://a-new/", "x")]),
        answer(claims=[]),
    ])
    run = cli("compare", old, new, "--json")
    assert run.exit == 2
    report = run.json()
    assert report["changes"] == {
        "added": ["https://a-new/", "https://new/"],
        "removed": ["https://a-gone/", "https://gone/"],
        "changed": ["https://b-changed/", "https://z-changed/"],
    }
    got = [(f["code"], f["file"], f["line"], f["uri"]) for f in report["findings"]]
    assert sorted(got) == sorted([
        ("TC400", str(new), 4, "https://a-new/"), ("TC400", str(new), 4, "https://new/"),
        ("TC401", str(old), 2, "https://a-gone/"), ("TC401", str(old), 2, "https://gone/"),
        ("TC402", str(new), 4, "https://b-changed/"),
        ("TC402", str(new), 2, "https://z-changed/"),
    ])
    assert "kept" not in run.out and "before" not in run.out and "after" not in run.out


def test_last_capture_wins(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://a/", "final"))
    new = write_trace(tmp_path / "new.jsonl", [
        call(), result(sources=[source("x", "https://a/", "draft")]),
        call("c2"), result("c2", sources=[source("y", "https://A:443/#top", "final")]),
        answer(claims=[]),
    ])
    assert cli("compare", old, new).exit == 0
    # And the other way round: the earlier capture matched, the last one did not.
    assert cli("compare", new, old).exit == 0
    changed = trace_with(tmp_path, "changed.jsonl", source("a", "https://a/", "draft"))
    run = cli("compare", new, changed, "--json")
    assert run.json()["changes"]["changed"] == ["https://a/"]


def test_a_source_not_captured_is_no_capture_of_its_uri(cli: Cli, tmp_path: Path) -> None:
    """``"content": null`` captured nothing: such a source is no change, and an earlier
    capture of its URI still counts; a URI captured in one trace only is added or removed,
    its message saying the other trace has it without content."""
    old = trace_with(tmp_path, "old.jsonl",
                     source("a", "https://kept/", "text"),
                     source("b", "https://both-null/", None),
                     source("c", "https://now-null/", "before"),
                     source("d", "https://was-null/", None))
    new = write_trace(tmp_path / "new.jsonl", [
        call(), result(sources=[source("a", "https://kept/", "text"),
                                source("b", "https://both-null/", None),
                                source("c", "https://now-null/", None),
                                source("d", "https://was-null/", "after")]),
        call("c2"), result("c2", sources=[source("e", "https://kept/", None)]),
        answer(claims=[]),
    ])
    run = cli("compare", old, new, "--json")
    assert run.exit == 2
    report = run.json()
    assert report["changes"] == {"added": ["https://was-null/"],
                                 "removed": ["https://now-null/"], "changed": []}
    assert [(f["code"], f["file"], f["line"], f["uri"], f["message"])
            for f in report["findings"]] == [
        ("TC400", str(new), 2, "https://was-null/",
         "source captured only in the new trace (the old trace has it with content null)"),
        ("TC401", str(old), 2, "https://now-null/",
         "source captured only in the old trace (the new trace has it with content null)"),
    ]
    assert "before" not in run.out and "after" not in run.out
    nulls = trace_with(tmp_path, "nulls.jsonl", source("b", "https://both-null/", None))
    assert cli("compare", nulls, nulls, "--json").json()["changes"] == {
        "added": [], "removed": [], "changed": []}


def test_whitespace_and_nfc_changes_are_not_changes(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://a/", "un caf\u00e9\nnoir"))
    new = trace_with(tmp_path, "new.jsonl",
                     source("a", "https://a/", "  un\u00a0\u00a0cafe\u0301 noir\t"))
    assert cli("compare", old, new).exit == 0


def test_stable_uri_is_the_key(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://example.com/~u?q=%2f", "x"))
    new = trace_with(tmp_path, "new.jsonl",
                     source("a", "HTTPS://EXAMPLE.com:443/%7Eu?q=%2F#frag", "x"))
    run = cli("compare", old, new, "--json")
    assert run.exit == 0


def test_case_change_in_content_is_a_change(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://a/", "Text"))
    new = trace_with(tmp_path, "new.jsonl", source("a", "https://a/", "text"))
    assert cli("compare", old, new).exit == 2


def test_failed_results_and_unknown_events_play_no_part(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://a/", "x"))
    new = write_trace(tmp_path / "new.jsonl", [
        {"type": "page", "run_id": "r1", "uri": "https://b/", "content": "y"},
        call(), result(sources=[source("a", "https://a/", "x")]),
        call("c2"), result("c2", ok=False), answer(claims=[]),
    ])
    assert cli("compare", old, new).exit == 0


def test_format_errors_stop_the_comparison(cli: Cli, tmp_path: Path) -> None:
    old = write_trace(tmp_path / "old.jsonl", [call(), result(sources=[source(content=1)])])
    new = trace_with(tmp_path, "new.jsonl", source("b", "https://b/", "y"))
    run = cli("compare", old, new, "--json")
    assert run.exit == 1
    report = run.json()
    assert "changes" not in report
    assert {f["code"] for f in report["findings"]} == {"TC123", "TC130"}
    assert "TC101" in cli("compare", old, tmp_path / "missing.jsonl", "--json").codes()


@pytest.mark.parametrize("last", [True, False], ids=["answer-last", "answer-first"])
def test_an_answers_format_errors_are_those_check_finds(cli: Cli, tmp_path: Path,
                                                        last: bool) -> None:
    """compare reads the answer on the last line ahead of the rest (as check --evidence does),
    and elsewhere as it comes: its findings are check's, in the same order, either way."""
    bad = answer([claim(citations=[cite("s9"), cite("s1", quote=3)]), claim(citations=[]),
                  {"text": 1}])
    events = [call(), result(sources=[source()])]
    old = write_trace(tmp_path / "old.jsonl", [*events, bad] if last else [bad, *events])
    new = trace_with(tmp_path, "new.jsonl", source("b", "https://b/", "y"))
    found = cli("compare", old, new, "--json").json()["findings"]
    checked = cli("check", old, "--json").json()["findings"]
    assert found == checked
    assert {f["code"] for f in found} >= {"TC122", "TC123", "TC131"}


def test_console_summary(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://a/", "x"))
    new = trace_with(tmp_path, "new.jsonl", source("a", "https://b/", "x"))
    run = cli("compare", old, new)
    assert run.exit == 2
    assert "1 added, 1 removed, 0 changed" in run.out


def test_the_line_of_a_change_is_its_last_capture(cli: Cli, tmp_path: Path) -> None:
    old = trace_with(tmp_path, "old.jsonl", source("a", "https://a/", "before"))
    new = write_trace(tmp_path / "new.jsonl", [
        call(), result(sources=[source("x", "https://a/", "before")]),
        call("c2"), result("c2", sources=[source("y", "https://a/", "after")]),
        answer(claims=[]),
    ])
    (finding,) = cli("compare", old, new, "--json").json()["findings"]
    assert (finding["code"], finding["line"]) == ("TC402", 4)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.sampled_from("abc")), max_size=150),
       st.lists(st.tuples(st.integers(0, 60), st.sampled_from("abc")), max_size=150))
def test_many_sources_compare_as_a_dict_of_contents_would(
        old_sources: list[tuple[int, str]], new_sources: list[tuple[int, str]]) -> None:
    """Many URIs, some captured several times: the changes are those of the last contents."""
    import tempfile

    from tracecite.checks.compare import compare_traces

    def write(path: Path, captured: list[tuple[int, str]]) -> dict[str, str]:
        events = [call(), result(sources=[source(f"s{i}", f"https://h/{n}", text)
                                          for i, (n, text) in enumerate(captured)]),
                  answer(claims=[])]
        write_trace(path, events)
        return {f"https://h/{n}": text for n, text in captured}

    with tempfile.TemporaryDirectory() as tmp:
        old = write(Path(tmp) / "old.jsonl", old_sources)
        new = write(Path(tmp) / "new.jsonl", new_sources)
        findings, changes = compare_traces(str(Path(tmp) / "old.jsonl"),
                                           str(Path(tmp) / "new.jsonl"))
    assert changes is not None
    assert changes.added == tuple(sorted(new.keys() - old.keys()))
    assert changes.removed == tuple(sorted(old.keys() - new.keys()))
    assert changes.changed == tuple(sorted(u for u in old.keys() & new.keys()
                                           if old[u] != new[u]))
    assert len(findings) == len(changes.added) + len(changes.removed) + len(changes.changed)
