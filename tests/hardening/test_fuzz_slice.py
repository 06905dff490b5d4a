"""The CI slice of the fuzzing (issue 6, item 3): a few hundred generated inputs per entry point.

The long run is fuzz/run.py (not in CI). Here, for notes, traces with one broken field, random
bytes, URLs and HTML: no exception escapes, the CLI's exit code stays in {0, 1, 2}, ``--json``
output always parses and agrees with the exit code, and other formats never carry a raw
control character.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fetch.servers import HTTPTestServer, Reply
from tests.hardening import strategies as hs
from tests.hardening.conftest import Resolver
from tests.hardening.guards import network_guard
from tracecite.cli import main
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.url_policy import Target, parse_target
from tracecite.settings import CONFIG_KEYS
from tracecite.visible import visible_text

SLICE = settings(max_examples=120, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow, HealthCheck.data_too_large])
URL_CODES = {"TC300", "TC301", "TC302", "TC303", "TC304", "TC305"}
FETCH_CODES = URL_CODES | {"TC306", "TC307"}
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="tracecite-fuzz-") as name:
        yield Path(name)


def run(*argv: str | Path) -> tuple[int, str, str]:
    """``tracecite.cli.main`` in-process; any exception escaping it fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def check_json(code: int, out: str, allowed: set[int]) -> dict[str, object]:
    assert code in allowed, out
    report = json.loads(out)
    assert isinstance(report, dict)
    assert report["exit_code"] == code
    return report


def check_plain(out: str, err: str) -> None:
    assert not RAW_CONTROL.search(out), out
    assert not RAW_CONTROL.search(err), err


@SLICE
@given(data=hs.notes_bytes(), fmt=st.sampled_from(["console", "github", "sarif"]))
@pytest.mark.slow
def test_notes(workdir: Path, data: bytes, fmt: str) -> None:
    path = workdir / "notes.md"
    path.write_bytes(data)
    report = check_json(*run("check", path, "--json")[:2], allowed={0, 1})
    assert all(f["code"].startswith("TC1") for f in report["findings"])  # type: ignore[attr-defined]
    code, out, err = run("check", path, "--format", fmt)
    assert code == report["exit_code"]
    check_plain(out, err)


@SLICE
@given(trace=hs.broken_traces())
@pytest.mark.slow
def test_traces_with_one_broken_field(workdir: Path, trace: hs.BrokenTrace) -> None:
    path = workdir / "trace.jsonl"
    path.write_bytes(trace.data)
    report = check_json(*run("check", "--evidence", path, "--json")[:2], allowed={0, 1, 2})
    if trace.must_fail:
        assert report["exit_code"] == 1, (trace.breakage, report)
    code, out, err = run("check", path, "--evidence", "--format", "github")
    assert code == report["exit_code"]
    check_plain(out, err)


@settings(SLICE, max_examples=60)
@given(old=hs.broken_traces() | hs.valid_trace().map(
    lambda events: hs.BrokenTrace(tuple(hs.encode(json.dumps(e)) for e in events), "", False)),
       new=hs.broken_traces())
def test_compare(workdir: Path, old: hs.BrokenTrace, new: hs.BrokenTrace) -> None:
    (workdir / "old.jsonl").write_bytes(old.data)
    (workdir / "new.jsonl").write_bytes(new.data)
    check_json(*run("compare", workdir / "old.jsonl", workdir / "new.jsonl", "--json")[:2],
               allowed={0, 1, 2})


@SLICE
@given(data=hs.random_bytes())
def test_random_bytes(workdir: Path, data: bytes) -> None:
    for name in ("random.md", "random.jsonl"):
        path = workdir / name
        path.write_bytes(data)
        check_json(*run("check", path, "--json", "--evidence")[:2], allowed={0, 1, 2})


@settings(SLICE, max_examples=300)
@given(markup=hs.html() | hs.hostile_text)
def test_visible_text(markup: str) -> None:
    text = visible_text(markup)
    assert isinstance(text, str)


@settings(SLICE, max_examples=400)
@given(url=hs.urls())
def test_parse_target(url: str) -> None:
    try:
        target = parse_target(url)
    except FetchError as error:
        assert error.code.code in URL_CODES
        assert error.detail.isascii() and error.detail.isprintable()
        return
    assert isinstance(target, Target)
    assert re.fullmatch(r"[a-z0-9.\-]+", target.host)
    assert target.url.isascii() and target.url.isprintable()
    assert parse_target(target.url) == target


@settings(SLICE, max_examples=80)
@given(urls=st.lists(hs.urls(), min_size=1, max_size=4))
@pytest.mark.slow
def test_verify_notes_with_generated_urls(
    workdir: Path, resolver: Resolver, urls: list[str],
) -> None:
    resolver.default = ["192.0.2.1"]  # TEST-NET-1: refused, so nothing is ever connected to
    path = workdir / "urls.md"
    path.write_bytes(hs.encode("\n".join(
        f"claim: c\nquote: q\nurl: {url.replace(chr(10), ' ')}\n" for url in urls)))
    with network_guard() as net:
        code, out, _ = run("verify-notes", path, "--json")
    assert net.violations == []
    report = check_json(code, out, allowed={1, 2})
    for finding in report["findings"]:  # type: ignore[attr-defined]
        assert finding["code"] in FETCH_CODES or finding["code"].startswith("TC1"), finding


@pytest.fixture(scope="module")
def page_server() -> Iterator[HTTPTestServer]:
    with HTTPTestServer() as server:
        yield server


@settings(SLICE, max_examples=60)
@given(markup=hs.html(), quote=hs.line_text, kind=st.sampled_from(
    ["text/html", "application/xhtml+xml", "application/json", "text/plain"]))
def test_verify_notes_with_generated_pages(
    workdir: Path, page_server: HTTPTestServer, single_core: None, markup: str, quote: str,
    kind: str,
) -> None:
    page_server.routes["/"] = Reply(200, (("Content-Type", f"{kind}; charset=utf-8"),),
                                    hs.encode(markup))
    path = workdir / "page.md"
    path.write_bytes(hs.encode(f"claim: c\nquote: {quote}\nurl: http://example.test/\n"))
    code, out, _ = run("verify-notes", path, "--json", "--connect-to",
                       f"example.test:80:127.0.0.1:{page_server.port}", "--allow-net",
                       "127.0.0.1/32")
    report = check_json(code, out, allowed={0, 1, 2})
    codes = {f["code"] for f in report["findings"]}  # type: ignore[attr-defined]
    assert codes <= {"TC114", "TC210", "TC317", "TC102"}, codes


# ---- configuration files and transcripts --------------------------------------------------

GLOB_PIECES = st.sampled_from(["*", "**", "?", "[", "]", "!", "-", "a", "z", "/", ".md",
                               ".jsonl", "\\", "x", "[a-z]", "[z-a]", "[!0-9]", "[9-0]"])
TOML_SCALARS = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.sampled_from(["nan", "inf", "-inf", "0.5", "1e300", "true", "false", "1970-01-01"]),
    st.text(max_size=12).map(json.dumps),  # a JSON string is a TOML basic string (or a bad one)
    st.lists(GLOB_PIECES, min_size=1, max_size=6).map(lambda parts: json.dumps("".join(parts))),
)
GLOBS = st.lists(st.lists(GLOB_PIECES, min_size=1, max_size=5).map("".join), min_size=1,
                 max_size=3).map(json.dumps)  # a list of glob strings, as the keys want
TOML_VALUES = TOML_SCALARS | st.lists(TOML_SCALARS, max_size=4).map(
    lambda items: "[" + ", ".join(items) + "]")


@settings(SLICE, max_examples=150)
@given(entries=st.lists(
    st.tuples(st.sampled_from([*sorted(CONFIG_KEYS), "unknown"]), TOML_VALUES)
    | st.tuples(st.sampled_from(["notes", "documents", "exclude"]), GLOBS),
    min_size=1, max_size=3))
def test_configuration_files(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                             entries: list[tuple[str, str]]) -> None:
    """A bad value is TC104 at its line; a glob whose [...] range ran backwards was TC900.
    The configuration is the current directory's, as for a project's own checks."""
    folder = workdir / "configured"
    folder.mkdir(exist_ok=True)
    (folder / "a.notes.md").write_text(
        "claim: c\nquote: q\nurl: https://example.org/\n", encoding="utf-8")
    (folder / ".tracecite.toml").write_text(
        "".join(f"{key} = {value}\n" for key, value in entries), encoding="utf-8")
    monkeypatch.chdir(folder)
    report = check_json(*run("check", ".", "--json")[:2], allowed={0, 1, 2})
    codes = {f["code"] for f in report["findings"]}  # type: ignore[attr-defined]
    assert "TC900" not in codes


EXCHANGES = sorted((Path(__file__).parents[1] / "importers" / "fixtures" / "anthropic")
                   .glob("**/*.json"))
ODD_JSON = st.sampled_from([None, 0, -1, 2**70, 1.5, "", "x", [], {}, True, [None],
                            {"type": "text"}, "\ud800", ["message_start"]]).map(copy.deepcopy)
"""Values put in a transcript, each a fresh copy (a mutation must not change the strategy)."""


def _mutated(value: object, random: Any, odd: Callable[[], object]) -> None:
    """Delete, replace or descend into one element of ``value``, chosen by ``random``."""
    if not isinstance(value, (dict, list)) or not value:
        return
    slot: Any = (random.choice(sorted(value)) if isinstance(value, dict)
                 else random.randrange(len(value)))
    roll = random.random()
    if roll < 0.2:
        del value[slot]
    elif roll < 0.5 or not isinstance(value[slot], (dict, list)):
        value[slot] = odd()
    else:
        _mutated(value[slot], random, odd)


@settings(SLICE, max_examples=150)
@given(fixture=st.sampled_from(EXCHANGES), random=st.randoms(use_true_random=False),
       data=st.data(), changes=st.integers(min_value=1, max_value=4))
def test_anthropic_exchanges(workdir: Path, fixture: Path, random: Any, data: st.DataObject,
                             changes: int) -> None:
    """An exchange changed in a few places imports or is TC107/TC108; one whose ``type`` was
    a list was TC900."""
    exchange = json.loads(fixture.read_text(encoding="utf-8"))
    for _ in range(changes):
        _mutated(exchange, random, lambda: data.draw(ODD_JSON))
    path = workdir / "exchange.json"
    path.write_text(json.dumps(exchange), encoding="utf-8")
    out = workdir / "imported"
    shutil.rmtree(out, ignore_errors=True)
    report = check_json(*run("import", "anthropic", path, "-o", out, "--json")[:2],
                        allowed={0, 1})
    codes = {f["code"] for f in report["findings"]}  # type: ignore[attr-defined]
    assert codes <= {"TC107", "TC108"}, codes


def test_codes_used_above_exist() -> None:
    known = {code.code for code in Code}
    assert known >= FETCH_CODES
