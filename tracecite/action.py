"""The GitHub Action's script: its inputs (environment variables) → ``tracecite hook`` → outputs.

``action.yml`` only wires each input into a ``TRACECITE_*`` environment variable and runs
``python -m tracecite.action``; no input is ever pasted into a shell line. This module builds the
command line, runs :func:`tracecite.cli.main` in-process (annotations go to the step log), then
reads the JSON report it wrote and sets the step's outputs in ``$GITHUB_OUTPUT``:

- ``exit-code``: the hook's exit code (0 passed, 1 input or usage error, 2 findings, 3 bug);
- ``findings``, ``errors`` (exit-1 findings), ``mismatches`` (exit-2 findings): counts, empty
  when the run stopped before writing a report (a usage or internal error);
- ``report``: the JSON report's path; ``sarif-file``: the SARIF file's path when one was asked for.

Exit 2 fails the step unless ``fail-on-findings`` is false; exit 1 and 3 always fail it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from tracecite.findings import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK
from tracecite.reporters import REPORTERS

TRUE = ("true", "True", "TRUE")
FALSE = ("false", "False", "FALSE")

INPUT_ENV: dict[str, str] = {
    name: "TRACECITE_" + name.upper().replace("-", "_")
    for name in ("stage", "paths", "since", "all", "format", "sarif-file", "json-file", "config",
                 "fail-on-findings", "timeout", "concurrency", "per-host", "allow-net",
                 "connect-to", "ca-cert")
}
"""Each Action input (``python-version`` aside) and the variable ``action.yml`` passes it in."""

OUTPUTS = ("exit-code", "findings", "errors", "mismatches", "report", "sarif-file")
"""Every output this script sets; ``action.yml`` declares the same."""


class InputError(Exception):
    """An Action input that cannot be used (the step fails with exit 1)."""


@dataclass(frozen=True)
class ActionInputs:
    """The Action's inputs, read from ``TRACECITE_*`` variables (see ``action.yml``)."""

    stage: str = "offline"
    paths: tuple[str, ...] = ()
    since: str = ""
    all_files: bool = False
    format: str = "github"
    sarif_file: str = ""
    json_file: str = ""
    config: str = ""
    allow_net: tuple[str, ...] = ()
    connect_to: tuple[str, ...] = ()
    ca_cert: str = ""
    timeout: str = ""
    concurrency: str = ""
    per_host: str = ""
    fail_on_findings: bool = True


def _boolean(name: str, value: str, default: bool) -> bool:
    """The toolkit's ``getBooleanInput``: true/True/TRUE or false/False/FALSE; empty is the
    default."""
    value = value.strip()
    if not value:
        return default
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise InputError(f"input '{name}' must be true or false")


def _lines(value: str) -> tuple[str, ...]:
    """One item per line, surrounding blanks dropped (a file name may contain spaces)."""
    return tuple(line.strip() for line in value.splitlines() if line.strip())


def _words(value: str) -> tuple[str, ...]:
    """Items separated by blanks, commas or line breaks (CIDRs and connect-to specs)."""
    return tuple(item for item in re.split(r"[\s,]+", value) if item)


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    """The inputs from the environment; :class:`InputError` for a value that cannot be used."""
    def get(name: str) -> str:
        return environ.get(INPUT_ENV[name], "")

    fmt = get("format").strip() or "github"
    if fmt not in REPORTERS:
        raise InputError(f"input 'format' must be one of {', '.join(sorted(REPORTERS))}")
    return ActionInputs(
        stage=get("stage").strip() or "offline",
        paths=_lines(get("paths")),
        since=get("since").strip(),
        all_files=_boolean("all", get("all"), False),
        format=fmt,
        sarif_file=get("sarif-file").strip(),
        json_file=get("json-file").strip(),
        config=get("config").strip(),
        allow_net=_words(get("allow-net")),
        connect_to=_words(get("connect-to")),
        ca_cert=get("ca-cert").strip(),
        timeout=get("timeout").strip(),
        concurrency=get("concurrency").strip(),
        per_host=get("per-host").strip(),
        fail_on_findings=_boolean("fail-on-findings", get("fail-on-findings"), True),
    )


def build_argv(inputs: ActionInputs, report_path: str) -> list[str]:
    """The ``tracecite`` command line for these inputs (never through a shell)."""
    argv = ["hook", "--stage", inputs.stage, "--format", inputs.format, "--no-progress",
            "--report-file", f"json:{report_path}"]
    if inputs.sarif_file:
        argv += ["--report-file", f"sarif:{inputs.sarif_file}"]
    if inputs.all_files:
        argv.append("--all")
    for flag, value in (("--since", inputs.since), ("--config", inputs.config),
                        ("--timeout", inputs.timeout), ("--concurrency", inputs.concurrency),
                        ("--per-host", inputs.per_host), ("--ca-cert", inputs.ca_cert)):
        if value:  # an empty input leaves the flag out: the configuration or default holds
            argv += [flag, value]
    for cidr in inputs.allow_net:
        argv += ["--allow-net", cidr]
    for spec in inputs.connect_to:
        argv += ["--connect-to", spec]
    if inputs.paths:
        # "--" keeps a path that starts with "-" from being read as an option.
        argv += ["--", *inputs.paths]
    return argv


def read_counts(report: dict[str, Any] | None) -> dict[str, str]:
    """``findings``, ``errors`` and ``mismatches`` from the JSON report (empty if absent)."""
    if report is None:
        return {"findings": "", "errors": "", "mismatches": ""}
    findings = report.get("findings", [])
    return {
        "findings": str(len(findings)),
        "errors": str(sum(1 for f in findings if f.get("exit") == EXIT_INPUT)),
        "mismatches": str(sum(1 for f in findings if f.get("exit") == EXIT_FINDINGS)),
    }


def _read_report(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            if os.fstat(handle.fileno()).st_size == 0:
                return None
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_outputs(path: str, values: Mapping[str, str]) -> None:
    """Append ``name<<delimiter`` blocks to ``$GITHUB_OUTPUT`` (safe for any value)."""
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def write_summary(data: dict[str, Any], summary_path: str) -> None:
    """The Markdown step summary from the JSON report (``--format github`` writes its own)."""
    from tracecite.codes import BY_CODE
    from tracecite.findings import Finding, Report, Summary
    from tracecite.reporters.github import step_summary

    known = {f.name for f in fields(Summary)}
    counts = {k: v for k, v in data.get("summary", {}).items() if k in known}
    findings = tuple(
        Finding(BY_CODE[f["code"]], f["message"], file=f.get("file"), line=f.get("line"),
                column=f.get("column"), record=f.get("record"), claim=f.get("claim"),
                citation=f.get("citation"), source_id=f.get("source_id"), uri=f.get("uri"),
                status=f.get("status"))
        for f in data.get("findings", []) if f.get("code") in BY_CODE
    )
    report = Report(str(data.get("command", "hook")), findings, Summary(**counts))
    with open(summary_path, "a", encoding="utf-8") as handle:
        handle.write(step_summary(report))


def _new_report_path(inputs: ActionInputs) -> str:
    if inputs.json_file:
        return inputs.json_file
    # A fresh file per step, so two TraceCite steps in one job do not overwrite each other.
    handle, path = tempfile.mkstemp(prefix="tracecite-", suffix=".json",
                                    dir=os.environ.get("RUNNER_TEMP") or None)
    os.close(handle)
    return path


def run(environ: Mapping[str, str]) -> int:
    """Run the Action step; return the step's exit status."""
    from tracecite.cli import main as tracecite_main

    output_path = environ.get("GITHUB_OUTPUT", "")
    try:
        inputs = read_inputs(environ)
    except InputError as exc:
        print(f"::error title=TraceCite::{exc}", flush=True)
        if output_path:
            write_outputs(output_path, {"exit-code": str(EXIT_INPUT)})
        return EXIT_INPUT
    report_path = os.path.abspath(_new_report_path(inputs))
    with open(report_path, "w", encoding="utf-8"):
        pass  # empty until this run writes it: never report a stale file
    if inputs.sarif_file:
        inputs = replace(inputs, sarif_file=os.path.abspath(inputs.sarif_file))
    code = tracecite_main(build_argv(inputs, report_path))
    sys.stdout.flush()
    report = _read_report(report_path)  # read once, for the summary and the outputs
    report_written = report is not None
    summary_path = environ.get("GITHUB_STEP_SUMMARY", "")
    if summary_path and inputs.format != "github" and report is not None:
        write_summary(report, summary_path)
    if output_path:
        write_outputs(output_path, {
            "exit-code": str(code),
            **read_counts(report),
            "report": report_path if report_written else "",
            "sarif-file": inputs.sarif_file if inputs.sarif_file and report_written else "",
        })
    if code == EXIT_FINDINGS and not inputs.fail_on_findings:
        print("::warning title=TraceCite::findings reported, but fail-on-findings is false, "
              "so this step passes", flush=True)
        return EXIT_OK
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tracecite.action``: takes no arguments, only the environment."""
    if argv is None:
        argv = sys.argv[1:]
    if argv:
        print("tracecite.action takes no arguments; it reads the TRACECITE_* environment "
              "variables that action.yml sets", file=sys.stderr)
        return EXIT_INPUT
    return run(os.environ)


if __name__ == "__main__":
    raise SystemExit(main())
