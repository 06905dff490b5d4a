"""The GitHub Action's script: its inputs (environment variables) → ``tracecite hook`` (or,
with the ``merge`` input, ``tracecite merge`` of shards' reports) → outputs.

``action.yml`` only wires each input into a ``TRACECITE_*`` environment variable and runs
``python -m tracecite.action``; no input is ever pasted into a shell line. The inputs go to
:func:`tracecite.cli.run` as they are: the settings table checks each (a bad one is TC100 naming
the input), and the returned report gives the step's outputs in ``$GITHUB_OUTPUT``:

- ``exit-code``: the hook's exit code (0 passed, 1 input or usage error, 2 findings, 3 bug);
- ``verdict``: the run's verdict in plain words (``failed: 2 quotes not found``, ``nothing
  verified: no file selected``, …) and the exit code in words;
- ``findings``, ``errors`` (exit-1 findings), ``mismatches`` (exit-2 findings): counts;
- ``report``: the JSON report's path; ``sarif-file``: the SARIF file's path when one was asked
  for (each empty when the run stopped before writing it).

Exit 2 fails the step unless ``fail-on-findings`` is false; exit 1 and 3 always fail it.
"""

from __future__ import annotations

if __name__ == "__main__":  # the Action's step: the stop signals are held from here on
    import tracecite.__main__ as _entry_point

import contextlib
import os
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence

from tracecite.command_table import HOOK, MERGE
from tracecite.findings import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, Report
from tracecite.reporters.github import escape_data
from tracecite.reporters.verdict import exit_words, verdict

INPUT_ENV: dict[str, str] = {
    name: "TRACECITE_" + name.upper().replace("-", "_")
    for name in ("stage", "paths", "since", "all", "format", "sarif-file", "sarif-category",
                 "json-file", "config",
                 "fail-on-findings", "warn", "timeout", "concurrency", "per-host", "retries",
                 "jobs", "skip-urls", "cache", "fail-after", "archive", "allow-net", "connect-to",
                 "ca-cert", "all-records", "shard", "merge")
}
"""Each Action input (``python-version`` aside) and the variable ``action.yml`` passes it in."""

OUTPUTS = ("exit-code", "verdict", "findings", "errors", "mismatches", "report", "sarif-file")
"""Every output this script sets; ``action.yml`` declares the same."""


def read_inputs(environ: Mapping[str, str]) -> dict[str, str]:
    """Every input's text by its name (empty when unset); checked later, by the settings."""
    inputs = {name: environ.get(variable, "") for name, variable in INPUT_ENV.items()}
    inputs["format"] = inputs["format"].strip() or "github"
    return inputs


def _lines(value: str) -> list[str]:
    """One item per line, surrounding blanks dropped (a file name may contain spaces)."""
    return [line.strip() for line in value.splitlines() if line.strip()]


def build_argv(inputs: Mapping[str, str], report_path: str) -> list[str]:
    """The ``tracecite`` command line besides the inputs the settings read themselves: the
    report files and the paths (never through a shell). With ``merge`` (the JSON reports of
    a run's shards), the command is ``tracecite merge`` of them instead of ``hook``."""
    merging = _lines(inputs.get("merge", ""))
    argv = [MERGE.name] if merging else [HOOK.name, "--no-progress"]
    argv += ["--report-file", f"json:{report_path}"]
    sarif = inputs.get("sarif-file", "").strip()
    if sarif:
        argv += ["--report-file", f"sarif:{os.path.abspath(sarif)}"]
    paths = merging or _lines(inputs.get("paths", ""))
    if paths:
        # "--" keeps a path that starts with "-" from being read as an option.
        argv += ["--", *paths]
    return argv


def counts(report: Report) -> dict[str, str]:
    """``findings``, ``errors`` and ``mismatches`` of the report."""
    return {
        "findings": str(len(report.findings)),
        "errors": str(sum(1 for f in report.findings if f.exit == EXIT_INPUT)),
        "mismatches": str(sum(1 for f in report.findings if f.exit == EXIT_FINDINGS)),
    }


def write_outputs(path: str, values: Mapping[str, str]) -> None:
    """Append ``name<<delimiter`` blocks to ``$GITHUB_OUTPUT`` (safe for any value)."""
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def _new_report_path(inputs: Mapping[str, str]) -> str:
    chosen = inputs.get("json-file", "").strip()
    if chosen:
        return chosen
    # A fresh name per step, so two TraceCite steps in one job do not overwrite each other.
    folder = os.environ.get("RUNNER_TEMP") or tempfile.gettempdir()
    return os.path.join(folder, f"tracecite-{uuid.uuid4().hex}.json")


def _written(path: str) -> bool:
    try:
        return os.path.isfile(path) and os.path.getsize(path) > 0
    except OSError:
        return False


def run(environ: Mapping[str, str]) -> int:
    """Run the Action step; return the step's exit status."""
    from tracecite.cli import run_with_settings, write_step_summary

    inputs = read_inputs(environ)
    report_path = os.path.abspath(_new_report_path(inputs))
    # Absent until this run writes it whole: never a stale report. A directory stays, and the
    # run refuses it as the report's path (TC100).
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        os.remove(report_path)
    sarif = inputs["sarif-file"].strip()
    sarif_path = os.path.abspath(sarif) if sarif else ""
    report, settings = run_with_settings(build_argv(inputs, report_path), action_inputs=inputs)
    sys.stdout.flush()
    summary_path = environ.get("GITHUB_STEP_SUMMARY", "")
    if summary_path and inputs["format"] != "github":  # for github, the run wrote it
        write_step_summary(report, summary_path, environ)
    output_path = environ.get("GITHUB_OUTPUT", "")
    if output_path:
        written = _written(report_path)  # not when the run stopped at a usage or internal error
        write_outputs(output_path, {
            "exit-code": str(report.exit_code),
            "verdict": f"{verdict(report)}; {exit_words(report.exit_code)}",
            **(counts(report) if written else dict.fromkeys(("findings", "errors",
                                                             "mismatches"), "")),
            "report": report_path if written else "",
            "sarif-file": sarif_path if sarif_path and _written(sarif_path) else "",
        })
    code = report.exit_code
    # Exit 2 comes only from a run that resolved its settings, fail_on_findings among them.
    if code == EXIT_FINDINGS and settings is not None and not settings.fail_on_findings:
        print(f"::warning title=TraceCite::{escape_data(str(verdict(report)))}; "
              "fail-on-findings is false, so this step passes", flush=True)
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
    raise SystemExit(_entry_point.run_held(main))
