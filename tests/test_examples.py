"""The bundled examples give the results the README promises."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from tests.conftest import EXAMPLES, Cli
from tests.fetch.servers import HTTPTestServer, server_tls_context
from tests.live_fixtures import no_dns_fixture, text  # noqa: F401 - no_dns is a fixture
from tracecite import __version__

ROOT = EXAMPLES.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LIVE = ("verify-notes", "verify-urls", "verify-docs", "hook")


@pytest.mark.parametrize("argv, exit_code, codes", [
    (["check", "passing.trace.jsonl", "--evidence"], 0, []),
    (["passing.trace.jsonl", "--evidence"], 0, []),
    (["check", "changed.trace.jsonl"], 0, []),
    (["check", "changed.trace.jsonl", "--evidence"], 2, ["TC202"]),  # its capture changed
    (["check", "failing-evidence.trace.jsonl", "--evidence"], 2, ["TC201", "TC202"]),
    (["check", "failing-evidence.trace.jsonl"], 0, []),
    (["check", "failing-format.trace.jsonl"], 1, ["TC123", "TC126", "TC131"]),
    (["check", "failing-format.trace.jsonl", "--evidence"], 1, ["TC123", "TC126", "TC131"]),
    (["check", "citations.notes.md"], 0, []),
    (["check", "broken.notes.md"], 1, ["TC111", "TC112", "TC113", "TC113", "TC114"]),
    (["compare", "passing.trace.jsonl", "changed.trace.jsonl"], 2, ["TC402"]),
    (["compare", "passing.trace.jsonl", "passing.trace.jsonl"], 0, []),
])
def test_example(cli: Cli, monkeypatch: pytest.MonkeyPatch, argv: list[str], exit_code: int,
                 codes: list[str]) -> None:
    monkeypatch.chdir(EXAMPLES)
    run = cli(*argv, "--json")
    assert run.exit == exit_code
    assert sorted(run.codes()) == codes


def test_the_examples_folder_is_selected_by_the_default_globs(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tracecite check examples`: every bundled notes file and trace is named as the default
    globs expect, so the folder checks them all (the broken ones give exit 1), never TC106; the
    example site's three Markdown pages are read as documents."""
    monkeypatch.chdir(EXAMPLES.parent)
    run = cli("check", "examples", "--json")
    assert run.exit == 1
    assert run.json()["summary"]["inputs"] == 9
    assert run.json()["summary"]["document_citations"] == 7
    assert sorted(run.codes()) == ["TC111", "TC112", "TC113", "TC113", "TC114", "TC123",
                                   "TC126", "TC131"]
    checked = cli("check", "examples", "--evidence", "--json").json()
    assert {f["file"] for f in checked["findings"]} == {
        "examples/broken.notes.md", "examples/failing-format.trace.jsonl",
        "examples/changed.trace.jsonl", "examples/failing-evidence.trace.jsonl"}


def test_example_compare_changes(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    run = cli("compare", "passing.trace.jsonl", "changed.trace.jsonl", "--json")
    changes = run.json()["changes"]
    assert changes == {"added": [], "removed": [],
                       "changed": ["https://www.iana.org/help/example-domains"]}


def test_module_entry_point_version() -> None:
    done = subprocess.run([sys.executable, "-m", "tracecite", "--version"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tracecite {__version__}"


def test_module_entry_point_runs_an_example() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracecite", "check", "failing-evidence.trace.jsonl", "--evidence"],
        cwd=EXAMPLES, capture_output=True, text=True, check=False, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(EXAMPLES.parent)},
    )
    assert done.returncode == 2, done.stderr
    assert "TC202" in done.stdout and "TC201" in done.stdout


# ---- every example command the docs show ------------------------------------------------------

def _commands(page: Path) -> list[str]:
    """The command lines of a page's shell blocks that run on the bundled examples (they name
    ``examples``, or what an earlier line of the page wrote from them: ``runs/imported``,
    ``traces/``), in order."""
    lines = [line.strip() for block in re.findall(r"```(?:sh|bash)\n(.*?)```",
                                                  page.read_text(encoding="utf-8"), re.DOTALL)
             for line in block.splitlines()]
    return [line for line in lines if line.startswith(("tracecite ", "python examples/"))
            and (re.search(r"(^|\s)examples\b", line) or (
                not line.startswith("tracecite import")
                and re.search(r"runs/imported|traces/", line)))]


EXAMPLE_COMMANDS = [(page, line) for page in PAGES for line in _commands(page)]


def _captured_pages() -> dict[str, str]:
    """The text each bundled source URL serves here: every content captured for it in the
    bundled trace and in the bundled exchange (as imported), so every quote the examples cite
    is on its page."""
    import io

    from tracecite import api

    imported = io.StringIO()
    api.import_transcripts("anthropic", [EXAMPLES / "anthropic" / "exchange.json"],
                           stream=imported)
    pages: dict[str, list[str]] = {}
    trace = (EXAMPLES / "passing.trace.jsonl").read_text(encoding="utf-8")
    for line in [*trace.splitlines(), *imported.getvalue().splitlines()]:
        for source in json.loads(line).get("sources") or []:
            pages.setdefault(source["uri"], []).append(source["content"] or "")
    return {uri: "\n\n".join(texts) for uri, texts in pages.items()}


@pytest.fixture(name="example_site")
def example_site_fixture(ca: trustme.CA, ca_path: str, no_dns: object) -> Iterator[list[str]]:
    """The bundled examples' web sources, served with their captured text from 127.0.0.1 under
    their own names; yields the flags that reach them."""
    pages = {uri: text for uri, text in _captured_pages().items() if uri.startswith("https://")}
    hosts = sorted({uri.split("/")[2] for uri in pages})
    server = HTTPTestServer(tls=server_tls_context(ca, *hosts))
    server.routes = {"/" + uri.split("/", 3)[3]: text(body) for uri, body in pages.items()}
    server.start()
    try:
        flags = [flag for host in hosts
                 for flag in ("--connect-to", f"{host}:443:127.0.0.1:{server.port}")]
        yield [*flags, "--allow-net", "127.0.0.0/8", "--ca-cert", ca_path]
    finally:
        server.stop()


def _expected_exit(line: str) -> int:
    """The exit code the page's comment names (``# … exit 2``), else 0."""
    said = re.search(r"#.*\bexit (\d)", line)
    return int(said.group(1)) if said else 0


def test_the_pages_show_example_commands() -> None:
    shown = {line.split()[1] for _, line in EXAMPLE_COMMANDS if line.startswith("tracecite")}
    assert {"check", "verify-notes", "verify-urls", "verify-files", "compare",
            "import"} <= shown
    assert any(line.startswith("python examples/dask/") for _, line in EXAMPLE_COMMANDS)


@pytest.mark.parametrize("page", sorted({page for page, _ in EXAMPLE_COMMANDS}),
                         ids=lambda page: str(page.relative_to(ROOT)))
def test_every_example_command_runs(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    example_site: list[str], page: Path) -> None:
    """Each command as the page shows it, from a clone's root (its live ones reach the
    examples' sources here), in the page's order: it exits as the page says, with no usage
    error and no missing file."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    for line in _commands(page):
        words = shlex.split(line.split(" #", 1)[0])
        if ">" in words:  # the page's redirect: stdout to that file
            words = words[:words.index(">")]
        if words[0] == "python":
            continue  # the Dask example: test_the_dask_example_command_runs
        if ".eval" in line and sys.version_info < (3, 14):
            pytest.importorskip("zstandard", reason="the inspect extra reads zstd .eval logs")
        argv = words[1:] + (example_site if words[1] in LIVE else [])
        report_file = tmp_path / "report-of-the-line.json"
        report_file.unlink(missing_ok=True)
        run = cli(*argv, "--report-file", f"json:{report_file}")
        report = json.loads(report_file.read_text(encoding="utf-8"))
        codes = {f["code"] for f in report["findings"]}
        assert not codes & {"TC100", "TC101", "TC900"}, (line, report["findings"])
        assert run.exit == _expected_exit(line), (line, report["findings"])


@pytest.mark.slow
def test_the_dask_example_command_runs(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    (line,) = {line for _, line in EXAMPLE_COMMANDS if line.startswith("python examples/dask/")}
    words = shlex.split(line.split(" #", 1)[0])
    words[words.index("--output") + 1] = str(tmp_path / "report.json")
    done = subprocess.run([sys.executable, *words[1:]], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == _expected_exit(line), done.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["inputs"] == 9  # six notes and traces, three Markdown pages


def test_the_library_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline part of the library example in docs/guides/scale.md, as it is written."""
    page = (ROOT / "docs" / "guides" / "scale.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.DOTALL)
                if "api.check(" in b]
    offline = block.split("\n\n")[:2]  # the import, then the check of the bundled trace
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {}
    exec("\n\n".join(offline), names)  # the page's own code, as a reader runs it
    assert names["report"].exit_code == 0  # type: ignore[attr-defined]
    assert names["document"]["summary"]["captured"]["matched"] == 4  # type: ignore[index]
