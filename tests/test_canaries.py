"""No report echoes quotes, claims or source content, and no input-derived name can drive a
terminal or a GitHub Actions log (docs/reference/reports.md).

Canary strings — terminal escapes, workflow commands, markup and a unique token per field — are
planted in every field of notes and traces and in file names; every offline command runs in
every format, including ``--report-file`` outputs and the step summary, and every byte written
is searched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    ANSI_SGR,
    BREAKS,
    CANARY_FORMATS,
    Cli,
    check_canaries,
    token,
    write_trace,
)
from tests.conftest import all_outputs as _outputs
from tracecite.reporters.escape import printable

# Hostile text without "/" (it also goes into file names) and without line breaks (notes values
# are single lines); BREAKS adds those where a field can hold them.
HOSTILE = ("\x1b[31m\x1b]0;pwned\x07::error::x%0A::warning::y<script>alert(1)<\\script>"
           "##[error]z\u2028\x85")


def canary(kind: str, *, breaks: bool = True) -> str:
    """A hostile value for one field, identified by its unique token."""
    return f"{HOSTILE}{BREAKS if breaks else ''}{token(kind)}{HOSTILE}"


# Tokens of text that must never be shown, in any form.
SECRET_KINDS = [
    "claim1", "claim2", "claim3", "quote1", "quote2", "quote3", "content1", "content2",
    "content3", "contentA", "contentA2", "contentB", "contentC", "contentD", "tool", "extra",
    "extrakey", "eventtype", "badjson", "notobject", "okvalue", "badutf8", "notesclaim",
    "notesquote", "notesclaim2", "notesquote2", "notesclaim3", "notesquote3", "noteskey",
    "notesline", "notesvalue", "failedcontent",
]


@dataclass(frozen=True)
class Inputs:
    notes_bad: Path
    notes_ok: Path
    evidence: Path
    no_claims: Path
    broken: Path
    old: Path
    new: Path
    missing: Path


def _name(kind: str, suffix: str) -> str:
    # File names hold everything but "/" and NUL.
    return f"{HOSTILE}{BREAKS}{token(kind)}{suffix}"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    d = tmp_path_factory.mktemp("canaries")
    run = canary("runid")
    call_id = canary("callid")
    tool = canary("tool")
    extra = {canary("extrakey"): canary("extra")}
    sid1, sid2 = canary("sid1"), canary("sid2")

    notes_bad = d / _name("notesbadfile", ".md")
    one = {k: canary(k, breaks=False) for k in (
        "notesclaim", "notesquote", "notesurl", "notesclaim2", "notesquote2", "notesclaim3",
        "notesquote3", "notesline", "noteskey", "notesvalue")}
    notes_bad.write_text(
        f"# {one['notesline']}\n"
        f"claim: {one['notesclaim']}\nquote: {one['notesquote']}\nurl: {one['notesurl']}\n\n"
        f"claim: {one['notesclaim2']}\nquote: {one['notesquote2']}\n\n"  # TC113
        f"claim: {one['notesclaim3']}\nclaim: {one['notesclaim3']}\n"  # TC112
        f"{one['notesline']}\n"  # TC110
        f"{token('noteskey')}: {one['notesvalue']}\n"  # TC111
        f"quote: {one['notesquote3']}\nurl:\n",  # TC114
        encoding="utf-8",
    )
    notes_ok = d / _name("notesokfile", ".md")
    notes_ok.write_text(
        f"claim: {one['notesclaim']}\nquote: {one['notesquote']}\nurl: {one['notesurl']}\n",
        encoding="utf-8")

    evidence = write_trace(d / _name("evidencefile", ".jsonl"), [
        {"type": "tool_call", "run_id": run, "call_id": call_id, "tool": tool, **extra},
        {"type": "tool_result", "run_id": run, "call_id": call_id, "ok": True, **extra,
         "sources": [
             {"id": sid1, "uri": canary("uri1"), "content": canary("content1") + " kept words",
              **extra},
             {"id": sid2, "uri": "https://example.com/" + canary("uri2"),
              "content": canary("content2")},
         ]},
        {"type": canary("eventtype"), "run_id": run, **extra},
        {"type": "answer", "run_id": run, **extra, "claims": [
            {"text": canary("claim1"), **extra, "citations": [
                {"source_id": sid1, "quote": "kept words"},
                {"source_id": sid1, "quote": canary("quote1"), **extra},
                {"source_id": sid2, "quote": canary("quote2")},
            ]},
            {"text": canary("claim2"), "citations": []},
        ]},
    ])
    no_claims = write_trace(d / _name("noclaimsfile", ".jsonl"), [
        {"type": "tool_call", "run_id": run, "call_id": call_id, "tool": tool},
        {"type": "answer", "run_id": run, "claims": [], **extra},
    ])
    call2, call3, call4 = canary("callid2"), canary("callid3"), canary("callid4")
    sid_a = canary("sidA")
    broken = write_trace(d / _name("brokenfile", ".jsonl"), [
        {"type": "tool_call", "run_id": run, "call_id": call_id, "tool": tool},
        '{"type": "tool_call", ' + json.dumps(canary("badjson")),  # TC120
        json.dumps(canary("notobject")),  # TC121
        {"type": "tool_result", "run_id": run, "call_id": call_id, "ok": canary("okvalue")},
        {"type": "tool_call", "run_id": canary("runid2"), "call_id": call2, "tool": tool},
        {"type": "tool_call", "run_id": run, "call_id": call_id, "tool": tool},  # TC125
        {"type": "tool_result", "run_id": run, "call_id": call3, "ok": True,  # TC126
         "sources": [{"id": canary("sid3"), "uri": canary("uri3"), "content": canary("content3")}]},
        {"type": "tool_result", "run_id": run, "call_id": call2, "ok": True,
         "sources": [{"id": sid_a, "uri": canary("uriA"), "content": canary("contentA")}]},
        {"type": "tool_result", "run_id": run, "call_id": call2, "ok": True,  # TC127, TC129
         "sources": [{"id": sid_a, "uri": canary("uriA"), "content": canary("contentA2")}]},
        {"type": "tool_call", "run_id": run, "call_id": call4, "tool": tool},
        {"type": "tool_result", "run_id": run, "call_id": call4, "ok": False,  # TC128
         "sources": [{"id": canary("sid4"), "uri": canary("uri4"),
                      "content": canary("failedcontent")}]},
        {"type": "tool_call", "run_id": run, "tool": tool},  # TC122
        {"type": "answer", "run_id": run, "claims": [
            {"text": [canary("claim3")], "citations": [  # TC123
                {"source_id": canary("sidunknown"), "quote": canary("quote3")},  # TC131
                {"source_id": sid_a, "quote": [canary("quote3")]},  # TC123
            ]}]},
        {"type": "answer", "run_id": run, "claims": []},  # TC130
        b'{"type": "' + token("badutf8").encode() + b'\xff\xfe"}',  # TC102
    ])

    def capture(sources: list[tuple[str, str, str]]) -> list[Any]:
        return [
            {"type": "tool_call", "run_id": run, "call_id": call_id, "tool": tool},
            {"type": "tool_result", "run_id": run, "call_id": call_id, "ok": True,
             "sources": [{"id": i, "uri": u, "content": c} for i, u, c in sources]},
            {"type": "answer", "run_id": run, "claims": []},
        ]

    # Distinct before the "#" of the canary: the fragment is not part of a stable URI.
    uri = {k: f"https://example.com/{k}/" + canary(k) for k in ("uriB", "uriC", "uriD")}
    old = write_trace(d / _name("oldfile", ".jsonl"), capture([
        (sid1, uri["uriB"], canary("contentB")), (sid2, uri["uriC"], canary("contentC"))]))
    new = write_trace(d / _name("newfile", ".jsonl"), capture([
        (sid1, uri["uriB"], canary("contentB") + " more"),
        (sid2, uri["uriD"], canary("contentD"))]))
    return Inputs(notes_bad, notes_ok, evidence, no_claims, broken, old, new,
                  d / _name("missingfile", ".md"))


COMMANDS: dict[str, Any] = {
    "check-format": lambda i: ["check", i.notes_bad, i.notes_ok, i.broken, i.missing],
    "check-evidence": lambda i: ["check", "--evidence", i.evidence, i.no_claims, i.notes_ok],
    "bare-evidence": lambda i: [i.evidence, "--evidence"],
    "compare": lambda i: ["compare", i.old, i.new],
    "compare-broken": lambda i: ["compare", i.broken, i.new],
    # No spaces: argparse takes an argument with a space for a file name.
    "usage": lambda i: ["check", f"--{HOSTILE}\r\n::error::x\n{token('argument')}", i.notes_ok],
}
EXPECTED = {
    "check-format": {"TC101", "TC102", "TC110", "TC111", "TC112", "TC113", "TC114", "TC120",
                     "TC121", "TC122", "TC123", "TC124", "TC125", "TC126", "TC127", "TC128",
                     "TC129", "TC130", "TC131"},
    "check-evidence": {"TC200", "TC201", "TC202"},
    "bare-evidence": {"TC201", "TC202"},
    "compare": {"TC400", "TC401", "TC402"},
    "compare-broken": {"TC102", "TC120", "TC121", "TC122", "TC123", "TC124", "TC125", "TC126",
                       "TC127", "TC128", "TC129", "TC130", "TC131"},
    "usage": {"TC100"},
}
EXIT = {"check-format": 1, "check-evidence": 2, "bare-evidence": 2, "compare": 2,
        "compare-broken": 1, "usage": 1}
@pytest.fixture
def report_dir(tmp_path: Path) -> Path:
    return tmp_path


@pytest.mark.parametrize("fmt", CANARY_FORMATS)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_canary_escapes(cli: Cli, inputs: Inputs, report_dir: Path,
                           monkeypatch: pytest.MonkeyPatch, command: str, fmt: str) -> None:
    argv = COMMANDS[command](inputs)
    run, texts = _outputs(cli, argv, fmt, report_dir, monkeypatch)
    assert run.exit == EXIT[command]
    for where, text in texts.items():
        check_canaries(where, text, fmt, SECRET_KINDS)
    if fmt == "console-colour":
        plain = _outputs(cli, argv, "console", report_dir, monkeypatch)[1]["stdout"]
        assert ANSI_SGR.sub("", texts["stdout"]) == plain
    if fmt == "github" and command != "usage":
        assert "step summary" in texts


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_canary_runs_find_what_they_should(cli: Cli, inputs: Inputs, command: str) -> None:
    """The test above is only as good as the findings it provokes."""
    report = cli(*COMMANDS[command](inputs), "--json").json()
    assert {f["code"] for f in report["findings"]} == EXPECTED[command]


def test_names_are_shown_escaped_not_dropped(cli: Cli, inputs: Inputs) -> None:
    report = cli("check", "--evidence", inputs.evidence, "--json").json()
    mismatch = next(f for f in report["findings"] if f["code"] == "TC202")
    assert mismatch["source_id"] in (canary("sid1"), canary("sid2"))
    assert mismatch["file"] == str(inputs.evidence)
    console = cli("check", "--evidence", inputs.evidence).out
    assert printable(canary("sid2")) in console
    assert printable(str(inputs.evidence)) in console


# ---- near misses: a diagnosis says what is wrong without a word of the quote or the source ----

NEAR_MISS_SECRETS = ["nearcontent", "nearquote", "nearother"]


@pytest.fixture(scope="module")
def near_misses(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trace whose quotes miss their capture by every kind of diagnosis captured content can
    have; the quotes and the content hold hostile canaries, in other cases and forms too."""
    d = tmp_path_factory.mktemp("near-misses")
    content = (f"{canary('nearcontent')} don\u2019t {canary('nearquote')} "
               f"soft\u00adhyphen {canary('nearcontent')}")
    quotes = [
        canary("nearquote").upper(),  # case
        f"don't {canary('nearquote')}",  # typography
        f"\u201c{canary('nearquote')}\u201d",  # wrapped
        "don\u2019t ... hyphen",  # ellipsis
        "softhyphen",  # invisible
        f"{canary('nearcontent')} don\u2019t {canary('nearother')}",  # partial
        f"{canary('nearother')} {canary('nearother')}",  # none
    ]
    return write_trace(d / "near.jsonl", [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "t"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True,
         "sources": [{"id": "s", "uri": "https://example.com/a", "content": content}]},
        {"type": "answer", "run_id": "r", "claims": [
            {"text": "claim", "citations": [{"source_id": "s", "quote": q} for q in quotes]}]},
    ])


def test_near_misses_provoke_every_text_diagnosis(cli: Cli, near_misses: Path) -> None:
    """The test below is only as good as the diagnoses it provokes."""
    report = cli("check", "--evidence", near_misses, "--json").json()
    kinds = [f["diagnosis"]["kinds"] for f in report["findings"]]
    assert kinds == [["case"], ["typography"], ["wrapped"], ["ellipsis"],
                     ["invisible"], ["partial"], ["none"]]


@pytest.mark.parametrize("fmt", CANARY_FORMATS)
def test_no_canary_in_a_diagnosis(cli: Cli, near_misses: Path, report_dir: Path,
                                  monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    run, texts = _outputs(cli, ["check", "--evidence", near_misses], fmt, report_dir,
                          monkeypatch)
    assert run.exit == 2
    for where, text in texts.items():
        check_canaries(where, text, fmt, NEAR_MISS_SECRETS, fold=True)  # in any case
        for character in ("\u2019", "\u00ad", "\u201c", "\u201d"):  # named, never shown
            assert character not in text, (where, character)
