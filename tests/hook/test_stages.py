"""The hook's stages: which checks run, on what was read once, and the one report."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from tests.git_repo import BROKEN_NOTES, commit_all, git, make_repo, write
from tests.hook.conftest import GOOD_NOTES, files_in, run_json
from tracecite.checks.evidence import EvidenceScan
from tracecite.checks.kinds import SourceKind
from tracecite.checks.live.records import LiveResult
from tracecite.cli import main, run
from tracecite.codes import Code
from tracecite.findings import Counts, Finding, Report
from tracecite.hook.stages import stage_plan
from tracecite.run.inputs import Inputs
from tracecite.settings import STAGES, Settings

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")



def test_explicit_files_not_selected_are_warned_about(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "README.rst", "this is not notes\n")
    write(tmp_path, "docs/a.notes", GOOD_NOTES)
    write(tmp_path, "runs/agent.json", "{}\n")  # a misnamed trace: never skipped in silence
    code, report = run_json(["hook", "README.rst", "docs/a.notes", "runs/agent.json"], capsys)
    assert code == 0  # a run with only TC106 warnings passes
    assert report["command"] == "hook"
    assert report["summary"]["inputs"] == 1
    assert [(f["code"], f["file"], f["severity"], f["exit"]) for f in report["findings"]] == [
        ("TC106", "README.rst", "warning", 0), ("TC106", "runs/agent.json", "warning", 0)]


def test_excluded_files_are_not_warned_about(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, ".tracecite.toml", 'exclude = ["drafts"]\n')
    write(tmp_path, "drafts/a.notes", BROKEN_NOTES)
    write(tmp_path, "drafts/b.md", "x\n")
    write(tmp_path, "c.txt", "x\n")
    code, report = run_json(["hook", "drafts/a.notes", "drafts/b.md", "c.txt"], capsys)
    assert code == 0
    (finding,) = report["findings"]
    assert (finding["code"], finding["file"]) == ("TC106", "c.txt")
    assert "in .tracecite.toml" in finding["message"]


def test_a_directory_stands_for_the_files_the_globs_select_under_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, ".tracecite.toml", 'exclude = ["docs/drafts"]\n')
    write(tmp_path, "docs/a.notes", GOOD_NOTES)
    write(tmp_path, "docs/guide.txt", "not notes\n")  # under the directory, not selected: quiet
    write(tmp_path, "docs/drafts/b.notes", BROKEN_NOTES)  # excluded: never read
    write(tmp_path, "empty/README.txt", "x\n")
    code, report = run_json(["hook", "docs"], capsys)
    assert code == 0
    assert report["findings"] == []
    assert (report["summary"]["inputs"], report["summary"]["records"]) == (1, 1)
    code, report = run_json(["hook", "docs", "empty"], capsys)
    assert code == 0  # as for `check`: a directory that selects nothing is a TC106 warning
    assert [(f["code"], f["file"]) for f in report["findings"]] == [("TC106", "empty")]


def test_offline_stage_checks_format_structure_and_evidence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "bad.notes", BROKEN_NOTES)
    shutil.copy(EXAMPLES / "failing-evidence.trace.jsonl", tmp_path / "bad.trace.jsonl")
    shutil.copy(EXAMPLES / "passing.trace.jsonl", tmp_path / "good.trace.jsonl")
    code, report = run_json(["hook", "bad.notes", "bad.trace.jsonl", "good.trace.jsonl"], capsys)
    codes = {f["code"] for f in report["findings"]}
    assert code == 1
    assert {"TC113", "TC202"} <= codes
    code, report = run_json(["hook", "good.trace.jsonl", "bad.trace.jsonl"], capsys)
    assert code == 2
    assert files_in(report) == {"bad.trace.jsonl"}


def test_the_offline_stage_warns_about_sources_not_captured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    example = (EXAMPLES / "passing.trace.jsonl").read_text()
    events = [json.loads(line) for line in example.splitlines()
              if line.strip()]
    for event in events:
        for source in event.get("sources") or []:
            source["content"] = None
    write(tmp_path, "run.trace.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    code, report = run_json(["hook", "--stage", "offline", "run.trace.jsonl"], capsys)
    assert code == 0
    assert {(f["code"], f["severity"]) for f in report["findings"]} == {("TC203", "warning")}
    captured = report["summary"]["captured"]
    assert captured["skipped"] == len(report["findings"]) > 0
    assert captured["checked"] == captured["matched"] == 0


def test_no_selected_files_passes_without_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for stage in STAGES:
        code, report = run_json(["hook", "--stage", stage, "missing.txt"], capsys)
        assert code == 0
        assert [f["code"] for f in report["findings"]] == ["TC106"]
        assert report["summary"]["inputs"] == 0



# ---- stages: which commands run, and the merged report --------------------------------------

class Recorder:
    """Stands in for the live checks, recording what each was given: which check, the inputs
    (already read) by path, and the settings."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from tracecite.run import assemble as commands

        self.calls: list[tuple[str, list[str], Settings]] = []
        monkeypatch.setattr(commands, "_check_live", self._check)

    def _check(self, inputs: Inputs, settings: Settings, kind: SourceKind, label: str, *,
               parser: object = None) -> LiveResult:
        found, counts = (self._web if kind is SourceKind.WEB else self._files)(
            inputs, settings, label)
        return LiveResult(tuple(found), counts)

    def _web(self, inputs: Inputs, settings: Settings, label: str
             ) -> tuple[list[Finding], Counts]:
        paths = [n.path for n in inputs.notes] + [t.scan.path for t in inputs.traces]
        self.calls.append(("web", paths, settings))
        findings, counts = [], Counts()
        if inputs.notes:
            counts += Counts(checked=2, matched=2)
        if inputs.traces:
            findings, web = self._live(inputs.traces, "web")
            counts += web
        return findings, counts

    def _files(self, inputs: Inputs, settings: Settings, label: str
               ) -> tuple[list[Finding], Counts]:
        self.calls.append(("file", [t.scan.path for t in inputs.traces], settings))
        return self._live(inputs.traces, "file")

    @staticmethod
    def _live(traces: Sequence[EvidenceScan], kind: str) -> tuple[list[Finding], Counts]:
        code = Code.QUOTE_NOT_ON_PAGE if kind == "web" else Code.QUOTE_NOT_IN_FILE
        live = Finding(code, "quote is not in the source now", file=traces[0].scan.path,
                       line=7, claim=1, citation=1)
        if kind == "web":
            return [live], Counts(checked=3, matched=2, not_found=1, skipped=1)
        return [live], Counts(checked=1, not_found=1, skipped=3)


def _hook(args: list[str]) -> Report:
    """``tracecite hook ARGS`` in-process, its report (written as JSON to a file)."""
    return run(["hook", "--report-file", "json:/dev/null", *args], stdout=io.StringIO())


def test_online_checks_the_notes_and_the_traces_web_sources(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    write(tmp_path, "a.notes", GOOD_NOTES)
    shutil.copy(EXAMPLES / "passing.trace.jsonl", tmp_path / "run.trace.jsonl")

    report = _hook(["--stage", "online", "a.notes", "run.trace.jsonl"])
    # One fetch of pages for notes and traces together: a page both cite is fetched once.
    assert [call[:2] for call in recorder.calls] == [("web", ["a.notes", "run.trace.jsonl"])]
    assert report.command == "hook"
    assert [f.code for f in report.findings] == [Code.QUOTE_NOT_ON_PAGE]
    s = report.summary
    # Evidence counted as captured (the trace's 4 quotes), the live verdicts apart.
    assert (s.inputs, s.records, s.citations) == (2, 1, 4)
    assert s.captured == Counts(checked=4, matched=4)
    assert s.live == Counts(checked=5, matched=4, not_found=1, skipped=1)
    assert s.files == Counts()


def test_all_reports_evidence_once_and_verify_files_when_configured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    shutil.copy(EXAMPLES / "passing.trace.jsonl", tmp_path / "run.trace.jsonl")
    shutil.copy(EXAMPLES / "failing-evidence.trace.jsonl", tmp_path / "bad.trace.jsonl")
    write(tmp_path, ".tracecite.toml", "verify_files = true\nfiles_root = 'site'\n")
    (tmp_path / "site").mkdir()
    report = _hook(["--stage", "all", "run.trace.jsonl", "bad.trace.jsonl"])
    traces = ["run.trace.jsonl", "bad.trace.jsonl"]
    assert [call[:2] for call in recorder.calls] == [("web", traces), ("file", traces)]
    assert recorder.calls[1][2].root == "site"
    assert sorted(f.code.code for f in report.findings) == ["TC201", "TC202", "TC210", "TC211"]
    s = report.summary
    # Evidence (4 + 2 quotes) once, in captured; the live checks in live and files.
    assert s.citations == 6
    assert s.captured == Counts(checked=6, matched=5, not_found=1)
    assert (s.live.checked, s.files.checked) == (3, 1)


@pytest.mark.parametrize("stage", ["online", "all"])
@pytest.mark.parametrize(("bad", "code"), [("bad.notes", "TC113"),
                                           ("bad.trace.jsonl", "TC123")])
def test_input_errors_stop_the_run_before_anything_is_fetched(
        stage: str, bad: str, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    write(tmp_path, "good.notes", GOOD_NOTES)
    write(tmp_path, "bad.notes", BROKEN_NOTES)
    shutil.copy(EXAMPLES / "failing-format.trace.jsonl", tmp_path / "bad.trace.jsonl")
    shutil.copy(EXAMPLES / "failing-evidence.trace.jsonl", tmp_path / "evidence.trace.jsonl")
    report = _hook(["--stage", stage, "good.notes", bad, "evidence.trace.jsonl"])
    assert report.exit_code == 1
    assert recorder.calls == []
    codes = {f.code.code for f in report.findings}
    assert code in codes
    # Every stage reports the evidence it read, as check --evidence does.
    assert "TC202" in codes


def test_flags_win_over_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    from tracecite.fetch.limits import MAX_BYTES

    monkeypatch.chdir(tmp_path)
    recorder = Recorder(monkeypatch)
    write(tmp_path, "pyproject.toml", "[tool.tracecite]\ntimeout = 5\nconcurrency = 3\n"
                                      "user-agent = 'docs-bot/1'\nnotes = ['*.md']\n")
    write(tmp_path, "x.md", GOOD_NOTES)
    _hook(["--stage", "online", "--timeout", "7", "x.md"])
    _hook(["--stage", "online", "x.md"])
    first, second = (call[2] for call in recorder.calls)
    assert (first.timeout, first.concurrency, first.user_agent, first.max_bytes) == (
        7.0, 3, "docs-bot/1", MAX_BYTES)
    assert second.timeout == 5.0


def test_verify_files_root_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, ".tracecite.toml", "verify_files = true\nfiles_root = 'nowhere'\n")
    assert main(["hook", "--stage", "online", "--json", "x.notes"]) == 1


def test_unknown_stage_is_refused() -> None:
    with pytest.raises(Exception, match="unknown stage"):
        stage_plan(Settings(stage="sometimes"))


# ---- one real online run against a local server ---------------------------------------------

    """The paths `local_site` was asked for, in order."""


@pytest.mark.network
def test_online_end_to_end_against_a_local_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_site: int,
        site_requests: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    url = "http://docs.test/page"
    write(tmp_path, "site.notes",
          f"claim: ok\nquote: appear word for word in\nurl: {url}\n\n"
          f"claim: bad\nquote: this sentence is not there\nurl: {url}\n")
    trace = [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "fetch"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True,
         "sources": [{"id": "s", "uri": url, "content": "must appear word for word"}]},
        {"type": "answer", "run_id": "r", "claims": [
            {"text": "t", "citations": [{"source_id": "s", "quote": "appear word for word"}]}]},
    ]
    write(tmp_path, "run.trace.jsonl", "\n".join(json.dumps(e) for e in trace) + "\n")
    net = ["--connect-to", f"docs.test:80:127.0.0.1:{local_site}", "--allow-net", "127.0.0.0/8"]
    code, report = run_json(["hook", "--stage", "all", *net, "site.notes", "run.trace.jsonl"],
                            capsys)
    assert code == 2
    findings = report["findings"]
    assert [(f["code"], f["file"], f.get("record")) for f in findings] == [
        ("TC210", "site.notes", 2)]
    # Two notes records and the trace's citation, on the one page they cite.
    assert report["summary"]["live"]["checked"] == 3
    assert site_requests == ["/page"]  # cited by the notes and the trace, fetched once
    # Without --allow-net the loopback address is refused, never connected to.
    code, report = run_json(["hook", "--stage", "online", "--connect-to",
                             f"docs.test:80:127.0.0.1:{local_site}", "site.notes"], capsys)
    assert code == 2
    assert {f["code"] for f in report["findings"]} == {"TC306"}


def _count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
                 seen: list[str]) -> None:
    """Wrap ``owner.name`` (a function of a path) so that each call appends its path."""
    real = getattr(owner, name)

    def counting(path: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)


@pytest.mark.network
@pytest.mark.parametrize("stage", ["online", "all"])
def test_each_input_is_read_once_however_many_checks_use_it(
        stage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_site: int,
        site_requests: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A trace can be hundreds of MB: evidence, the web check and the file check share one
    scan of it, and the notes are parsed once for their format and their live check."""
    from tracecite.run import inputs as commands

    monkeypatch.chdir(tmp_path)
    url = "http://docs.test/page"
    write(tmp_path, "site.notes", f"claim: ok\nquote: appear word for word in\nurl: {url}\n")
    write(tmp_path, "site/guide.txt", "Quotes must appear word for word.\n")
    trace = [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "fetch"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True, "sources": [
            {"id": "web", "uri": url, "content": "must appear word for word"},
            {"id": "file", "uri": "file:guide.txt", "content": "must appear word for word"},
            {"id": "other", "uri": "urn:isbn:0451450523", "content": "appear word for word"}]},
        {"type": "answer", "run_id": "r", "claims": [{"text": "t", "citations": [
            {"source_id": s, "quote": "appear word for word"}
            for s in ("web", "file", "other")]}]},
    ]
    write(tmp_path, "run.trace.jsonl", "\n".join(json.dumps(e) for e in trace) + "\n")
    scans: list[str] = []
    notes_read: list[str] = []
    from tracecite.checks import evidence
    from tracecite.inputs import trace as trace_reader

    # With evidence, and without: where they are defined, as they are imported when used.
    _count_calls(monkeypatch, evidence, "scan_with_evidence", scans)
    _count_calls(monkeypatch, trace_reader, "scan_trace", scans)
    _count_calls(monkeypatch, commands, "read_notes", notes_read)
    net = ["--connect-to", f"docs.test:80:127.0.0.1:{local_site}", "--allow-net", "127.0.0.0/8"]
    code, report = run_json(["hook", "--stage", stage, "--verify-files", "--root", "site", *net,
                             "site.notes", "run.trace.jsonl"], capsys)
    assert (code, report["findings"]) == (0, [])
    assert scans == ["run.trace.jsonl"]
    assert notes_read == ["site.notes"]
    summary = report["summary"]
    assert (summary["inputs"], summary["records"], summary["citations"]) == (2, 1, 3)
    # Every stage counts the same: each kind of check apart. Captured: the three citations.
    # Live: the notes' quote and the web citation (the file: and urn: ones skipped); files:
    # the file citation (the other two skipped). The page both cite is fetched once.
    checks = {k: (summary[k]["checked"], summary[k]["matched"], summary[k]["skipped"])
              for k in ("captured", "live", "files")}
    assert checks == {"captured": (3, 3, 0), "live": (2, 2, 2), "files": (1, 1, 2)}
    assert site_requests == ["/page"]



# ---- pull requests check what they change (docs/hook.md#checking-only-what-changed) --------------

PAGE_HOST = "docs.test"
GOOD_QUOTE = "appear word for word in"  # on every page of `local_site`


def _record(n: int, quote: str, path: str) -> str:
    return f"claim: claim {n}\nquote: {quote}\nurl: http://{PAGE_HOST}/{path}\n"


OLD_RECORDS = [_record(n, f"sentence {n} is not there", f"old/{n}") for n in range(1, 8)]


def _net(port: int) -> list[str]:
    return ["--connect-to", f"{PAGE_HOST}:80:127.0.0.1:{port}", "--allow-net", "127.0.0.0/8"]


@pytest.fixture
def pull_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose ``main`` has a notes file of seven records, each quote missing from
    its page, and a branch that adds one good record (and a comment) to it."""
    repo = make_repo(tmp_path / "repo")
    write(repo, "docs/site.notes", "# Sources\n\n" + "\n".join(OLD_RECORDS))
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    text = (repo / "docs/site.notes").read_text(encoding="utf-8")
    write(repo, "docs/site.notes", text + "\n# added in this pull request\n"
          + _record(8, GOOD_QUOTE, "new"))
    commit_all(repo, "topic")
    monkeypatch.chdir(repo)
    return repo


@pytest.mark.network
def test_a_pull_request_checks_only_the_records_it_adds(
        pull_request: Path, local_site: int, site_requests: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(["hook", "--stage", "online", "--since", "main",
                             *_net(local_site)], capsys)
    assert (code, report["findings"]) == (0, [])
    live = report["summary"]["live"]
    assert (live["checked"], live["matched"], live["unchanged"]) == (1, 1, 7)
    assert report["summary"]["records"] == 8  # all read (and format-checked)
    assert site_requests == ["/new"]


@pytest.mark.network
def test_all_records_checks_every_record_of_the_changed_files(
        pull_request: Path, local_site: int, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(["hook", "--stage", "all", "--since", "main", "--all-records",
                             *_net(local_site)], capsys)
    assert code == 2
    assert [f["record"] for f in report["findings"] if f["code"] == "TC210"] == list(
        range(1, 8))
    live = report["summary"]["live"]
    assert (live["checked"], live["unchanged"]) == (8, 0)


@pytest.mark.network
def test_files_given_without_since_check_every_record(
        pull_request: Path, local_site: int, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = run_json(["hook", "--stage", "online", "docs/site.notes",
                             *_net(local_site)], capsys)
    assert code == 2
    assert report["summary"]["live"]["checked"] == 8


@pytest.mark.network
def test_a_push_checks_only_the_records_it_adds(
        pull_request: Path, local_site: int, site_requests: list[str],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """pre-commit's pre-push hook gives the pushed files and the refs: the records the push
    did not touch are not fetched."""
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", git(pull_request, "rev-parse", "main").strip())
    monkeypatch.setenv("PRE_COMMIT_TO_REF", git(pull_request, "rev-parse", "topic").strip())
    code, report = run_json(["hook", "--stage", "online", "docs/site.notes",
                             *_net(local_site)], capsys)
    assert (code, report["findings"]) == (0, [])
    live = report["summary"]["live"]
    assert (live["checked"], live["matched"], live["unchanged"]) == (1, 1, 7)
    assert site_requests == ["/new"]
    site_requests.clear()
    code, report = run_json(["hook", "--stage", "online", "docs/site.notes", "--all-records",
                             *_net(local_site)], capsys)
    assert code == 2 and report["summary"]["live"]["checked"] == 8


@pytest.mark.network
@pytest.mark.parametrize("refs", [("0" * 40, "HEAD"), ("main", ""), ("", "HEAD")])
def test_a_push_whose_refs_git_cannot_use_checks_every_record(
        pull_request: Path, local_site: int, refs: tuple[str, str],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A ref not in the clone, or only one of the two: the files are checked whole, and the
    push is not failed for it."""
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", refs[0])
    monkeypatch.setenv("PRE_COMMIT_TO_REF", refs[1])
    code, report = run_json(["hook", "--stage", "online", "docs/site.notes",
                             *_net(local_site)], capsys)
    assert code == 2 and report["summary"]["live"]["checked"] == 8
    assert "TC103" not in {f["code"] for f in report["findings"]}


@pytest.mark.network
def test_the_pull_requests_base_from_the_actions_event(
        pull_request: Path, tmp_path: Path, local_site: int, site_requests: list[str],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {
        "sha": git(pull_request, "rev-parse", "main").strip()}}}), encoding="utf-8")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    code, report = run_json(["hook", "--stage", "all", *_net(local_site)], capsys)
    assert code == 0
    assert report["summary"]["live"]["unchanged"] == 7
    assert site_requests == ["/new"]


@pytest.mark.network
def test_a_changed_field_changes_its_record_and_a_comment_or_separator_does_not(
        pull_request: Path, local_site: int, site_requests: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    text = (pull_request / "docs/site.notes").read_text(encoding="utf-8")
    text = text.replace("url: http://docs.test/old/3\n", "url: http://docs.test/moved/3\n")
    text = text.replace("quote: sentence 5 is not there\n",
                        "# a note about the quote\nquote: sentence 5 is not there\n")
    text = text.replace("url: http://docs.test/old/6\n\n", "url: http://docs.test/old/6\n---\n")
    text = text.replace("claim: claim 2\n", "claim: claim 2, reworded\n")
    write(pull_request, "docs/site.notes", text)  # in the working tree, not committed
    code, report = run_json(["hook", "--stage", "online", "--since", "main",
                             *_net(local_site)], capsys)
    assert code == 2
    assert sorted(f["record"] for f in report["findings"]) == [2, 3]
    live = report["summary"]["live"]
    assert (live["checked"], live["not_found"], live["unchanged"]) == (3, 2, 5)
    assert sorted(site_requests) == ["/moved/3", "/new", "/old/2"]


@pytest.mark.network
def test_a_changed_trace_is_checked_whole(
        pull_request: Path, local_site: int, site_requests: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://{PAGE_HOST}/trace"
    trace = [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "fetch"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True,
         "sources": [{"id": "s", "uri": url, "content": "must appear word for word in it"}]},
        {"type": "answer", "run_id": "r", "claims": [{"text": "t", "citations": [
            {"source_id": "s", "quote": "appear word for word"},
            {"source_id": "s", "quote": "word for word in"}]}]},
    ]
    write(pull_request, "runs/agent-run.jsonl", "\n".join(json.dumps(e) for e in trace) + "\n")
    write(pull_request, "traces/untouched.jsonl", "not even json\n")
    git(pull_request, "add", "traces/untouched.jsonl")
    git(pull_request, "commit", "-q", "-m", "a trace", "--", "traces/untouched.jsonl")
    git(pull_request, "tag", "before-trace")
    code, report = run_json(["hook", "--stage", "online", "--since", "before-trace",
                             *_net(local_site)], capsys)
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["inputs"] == 1  # the untouched (broken) trace is not read
    live = report["summary"]["live"]
    assert (live["checked"], live["matched"], live["unchanged"]) == (2, 2, 0)
    assert site_requests == ["/trace"]


def test_the_offline_stage_reads_whole_files(pull_request: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A format error in a record the change did not touch still stops the run."""
    write(pull_request, "docs/site.notes",
          "claim: broken\nquote: no url\n\n"
          + (pull_request / "docs/site.notes").read_text(encoding="utf-8"))
    git(pull_request, "commit", "-q", "-am", "break an old record")
    git(pull_request, "tag", "broken")
    write(pull_request, "docs/site.notes",
          (pull_request / "docs/site.notes").read_text(encoding="utf-8") + "\n# a change\n")
    for stage in STAGES:
        code, report = run_json(["hook", "--stage", stage, "--since", "broken"], capsys)
        assert code == 1
        assert [(f["code"], f["line"]) for f in report["findings"]] == [("TC113", 1)]


# ---- the one-line offline verdict (docs/hook.md#checking-only-what-changed) ----------------------

@pytest.fixture
def nxdomain(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every name lookup answers "no such name" here (the machine's resolver is never asked;
    IP literals still pass); returns the names asked for."""
    import socket

    asked: list[Any] = []
    real = socket.getaddrinfo

    def lookup(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name and name.replace(".", "").isdigit():
            return real(host, port, *args, **kwargs)
        asked.append(name)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return asked


def test_no_host_resolved_adds_one_notice_beside_the_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nxdomain: list[Any],
        capsys: pytest.CaptureFixture[str]) -> None:
    from tracecite.hook.stages import OFFLINE_NOTICE

    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.notes", "claim: c\nquote: q\nurl: https://one.invalid/a\n\n"
                               "claim: c\nquote: q\nurl: https://two.invalid/b\n\n"
                               "claim: c\nquote: q\nurl: ftp://refused.invalid/\n")
    code, report = run_json(["hook", "--stage", "online", "a.notes"], capsys)
    assert code == 2
    assert [f["code"] for f in report["findings"]] == ["TC307", "TC307", "TC301"]
    assert report["notices"] == [OFFLINE_NOTICE]
    assert OFFLINE_NOTICE == ("no source host resolved: offline? To skip the online hook: "
                              "SKIP=tracecite-online git push")
    assert sorted(nxdomain) == ["one.invalid", "two.invalid"]
    code, report = run_json(["hook", "--stage", "offline", "a.notes"], capsys)
    assert (code, report.get("notices")) == (0, None)  # nothing was looked up


def test_the_skip_hint_names_the_online_hook_of_the_manifest() -> None:
    from tests.test_precommit import _manifest
    from tracecite.hook.stages import OFFLINE_NOTICE, ONLINE_HOOK

    hook = next(h for h in _manifest() if h["id"] == ONLINE_HOOK)
    assert "pre-push" in hook["stages"] and "--stage online" in hook["entry"]
    assert f"SKIP={ONLINE_HOOK} " in OFFLINE_NOTICE


@pytest.mark.network
def test_no_notice_when_one_host_resolved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nxdomain: list[Any], local_site: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a.notes", "claim: c\nquote: q\nurl: https://one.invalid/a\n\n"
                               f"claim: c\nquote: not on the page\nurl: http://{PAGE_HOST}/p\n")
    code, report = run_json(["hook", "--stage", "all", *_net(local_site), "a.notes"], capsys)
    assert code == 2
    assert sorted(f["code"] for f in report["findings"]) == ["TC210", "TC307"]
    assert "notices" not in report
    assert nxdomain == ["one.invalid"]
