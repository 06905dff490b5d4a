"""The hook's configuration: where it is found, what it may say, and how a bad file is reported."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tracecite.cli import main
from tracecite.config import Config, find_config, load_config
from tracecite.errors import ConfigError
from tracecite.settings import DEFAULT_NOTES, DEFAULT_TRACES, Settings, resolve


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def _error(path: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.finding.code.code == "TC104"
    assert caught.value.finding.file == path
    return caught.value


def test_defaults_without_a_file() -> None:
    config = load_config(None)
    assert config == Config()
    assert config.values == {}
    settings = resolve("hook", {}, config=config.values)
    assert settings == Settings()
    assert settings.notes == DEFAULT_NOTES
    assert settings.traces == DEFAULT_TRACES
    assert (settings.exclude, settings.verify_files, settings.root) == ((), False, ".")


def test_project_file_top_level_keys(tmp_path: Path) -> None:
    path = _write(tmp_path / ".tracecite.toml", """
notes = ["docs/**/*.md"]
traces = ["runs/*.jsonl"]
exclude = "docs/drafts"
timeout = 5
concurrency = 4
per-host = 2
max-bytes = 1000
user_agent = "docs-bot/1.0 (+https://example.org)"
verify_files = true
files_root = "site"
""")
    config = load_config(path)
    (tmp_path / "site").mkdir()
    settings = resolve("hook", {}, config=config.values, config_path=config.path)
    assert settings.notes == ("docs/**/*.md",)
    assert settings.traces == ("runs/*.jsonl",)
    assert settings.exclude == ("docs/drafts",)
    assert (settings.timeout, settings.concurrency, settings.per_host, settings.max_bytes) == (
        5.0, 4, 2, 1000)
    assert settings.user_agent == "docs-bot/1.0 (+https://example.org)"
    assert settings.verify_files is True
    # files_root is relative to the configuration file, as the globs are.
    assert os.path.abspath(settings.root) == str(tmp_path / "site")
    assert settings.config_base == str(tmp_path)
    # Flags win over the file.
    flagged = resolve("hook", {"timeout": 7.0, "root": "."}, config=config.values,
                      config_path=config.path)
    assert (flagged.timeout, flagged.root, flagged.concurrency) == (7.0, ".", 4)


def test_pyproject_table(tmp_path: Path) -> None:
    path = _write(tmp_path / "pyproject.toml", """
[project]
name = "docs"

[tool.tracecite]
notes = ["*.cite"]

[tool.other]
notes = 1
""")
    assert find_config(str(tmp_path)) == path
    assert load_config(path).values["notes"] == ("*.cite",)


def test_pyproject_without_the_table_is_not_a_config(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n[tool.black]\n")
    assert find_config(str(tmp_path)) is None
    # Mentioning the name elsewhere is fine too: the defaults apply.
    path = _write(tmp_path / "pyproject.toml", "[project]\nname = 'tracecite-docs'\n")
    assert load_config(path) == Config(path=path)


def test_broken_pyproject_of_another_tool_is_never_parsed(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", "[tool.black\nthis is not toml")
    assert find_config(str(tmp_path)) is None


def test_project_file_wins_over_pyproject(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", "[tool.tracecite]\ntimeout = 3\n")
    path = _write(tmp_path / ".tracecite.toml", "timeout = 4\n")
    assert find_config(str(tmp_path)) == path


def test_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path / ".tracecite.toml", 'timeout = 5\nnotes = ["a"\n')
    error = _error(path)
    assert error.finding.line == 2
    assert error.finding.message.startswith("not valid TOML")
    path = _write(tmp_path / ".tracecite.toml", "timeout = 5\nnotes = = 1\n")
    error = _error(path)
    assert (error.finding.line, error.finding.column) == (2, 9)


@pytest.mark.parametrize(("text", "line", "words"), [
    ("timeout = 5\ncolour = 'blue'\n", 2, "unknown key 'colour'"),
    ("timeout = '5'\n", 1, "must be a number"),
    ("timeout = 50\n", 1, "at most 20"),
    ("timeout = 0\n", 1, "more than 0"),
    ("timeout = nan\n", 1, "more than 0"),
    ("concurrency = true\n", 1, "whole number"),
    ("concurrency = 65\n", 1, "from 1 to 64"),
    ("per_host = 0\n", 1, "from 1 to 64"),
    ("per_host = 65\n", 1, "from 1 to 64"),
    ("per_host = 2.5\n", 1, "whole number"),
    ("per_host = 2\nper-host = 3\n", 2, "same key"),
    ("max_bytes = 3000000\n", 1, "from 1 to"),
    ("\n\nnotes = [1]\n", 3, "list of non-empty glob strings"),
    ("notes = ['']\n", 1, "list of non-empty glob strings"),
    ("notes = ['*.jsonl']\n", 1, "read as a trace"),
    ("traces = ['traces/*']\n", 1, "must end in .jsonl"),
    # A class whose range runs backwards was an internal error (TC900) once a folder was read.
    ("notes = ['ok.md', 'n[z-a].md']\n", 1, "'n[z-a].md' is not a glob"),
    ("exclude = '[a-\\\\]'\n", 1, "range in it runs backwards"),
    ("\ndocuments = ['[\\\\d-a].md']\n", 2, "is not a glob"),
    ("exclude = 3\n", 1, "list of non-empty glob strings"),
    ('user_agent = "bot\\u00e9"\n', 1, "printable ASCII"),
    ("user_agent = ''\n", 1, "non-empty string"),
    ("verify_files = 'yes'\n", 1, "true or false"),
    ("files_root = 1\n", 1, "non-empty path"),
    ("timeout = 1\n'time-out' = 2\n", 2, "unknown key"),
    ("user_agent = 'a'\nuser-agent = 'b'\n", 2, "same key"),
])
def test_bad_values_name_the_key_and_its_line(tmp_path: Path, text: str, line: int,
                                              words: str) -> None:
    error = _error(_write(tmp_path / ".tracecite.toml", text))
    assert words in error.finding.message
    assert error.finding.line == line


@pytest.mark.parametrize("key", ["allow_net", "allow-net", "connect_to", "connect-to",
                                 "ca_cert", "ca-cert"])
def test_network_widening_options_are_refused(tmp_path: Path, key: str) -> None:
    error = _error(_write(tmp_path / ".tracecite.toml", f'timeout = 1\n{key} = ["x"]\n'))
    assert "never read from a configuration file" in error.finding.message
    assert error.finding.line == 2
    path = _write(tmp_path / "pyproject.toml",
                  f"[project]\nname = 'x'\n\n[tool.tracecite]\n{key} = 'x'\n")
    error = _error(path)
    assert error.finding.line == 5


def test_pyproject_key_lines_are_found_in_the_table(tmp_path: Path) -> None:
    path = _write(tmp_path / "pyproject.toml",
                  "[tool.other]\ncolour = 1\n\n[ tool . tracecite ]  # ours\ncolour = 2\n")
    assert _error(path).finding.line == 5
    path = _write(tmp_path / "pyproject.toml", "[tool]\ntracecite.colour = 2\n")
    assert _error(path).finding.line == 2
    path = _write(tmp_path / "pyproject.toml", "[tool]\ntracecite = 3\n")
    error = _error(path)
    assert "must be a table" in error.finding.message
    assert error.finding.line == 2


def test_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    assert "cannot be read" in _error(str(tmp_path / "missing.toml")).finding.message
    path = tmp_path / ".tracecite.toml"
    path.write_bytes(b"timeout = 5 # \xff\n")
    assert "not UTF-8" in _error(str(path)).finding.message


def test_cli_reports_a_bad_config_as_tc104_with_file_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / ".tracecite.toml", "notes = ['*.notes']\nallow_net = ['10.0.0.0/8']\n")
    assert main(["hook", "--json", "a.notes"]) == 1
    report = json.loads(capsys.readouterr().out)
    (finding,) = report["findings"]
    assert (finding["code"], finding["name"], finding["file"], finding["line"]) == (
        "TC104", "config-invalid", ".tracecite.toml", 2)
    # An explicit --config is used instead of the one found here.
    other = _write(tmp_path / "ci.toml", "notes = ['*.cite']\n")
    (tmp_path / "a.cite").write_text("claim: c\nquote: q\n", encoding="utf-8")
    assert main(["hook", "--json", "--config", other, "a.cite"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in report["findings"]] == ["TC113"]


def test_a_bad_config_on_the_console_names_its_file_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: the location was built with a text replace that also rewrote '::' in a
    file name."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    odd = _write(tmp_path / "a:: b.toml", "colour = 1\n")
    assert main(["hook", "--config", odd, "x.notes"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tracecite: {odd}:1: TC104 config-invalid: unknown key")
