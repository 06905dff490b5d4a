"""The settings table: one check per option, shared by the command line, the configuration
file and the Action's inputs; flags over the Action's inputs over the configuration."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tracecite.cli import build_parser
from tracecite.config import load_config
from tracecite.errors import ConfigError, UsageError
from tracecite.fetch.limits import MAX_TIMEOUT
from tracecite.settings import (
    BY_NAME,
    COMMAND_GROUPS,
    CONFIG_KEYS,
    OPTIONS,
    REFUSED_KEYS,
    Settings,
    action_values,
    resolve,
)


def test_every_option_is_a_field_and_every_field_an_option() -> None:
    resolved = {"config_path", "origins", "ca_bundle"}  # what resolving adds to the options
    fields = {f.name for f in dataclasses.fields(Settings)} - resolved
    assert {o.name for o in OPTIONS} == fields
    for option in OPTIONS:
        assert getattr(Settings(), option.name) == option.default, option.name


def test_the_options_that_widen_the_network_have_no_configuration_key() -> None:
    assert not set(CONFIG_KEYS) & REFUSED_KEYS
    for name in REFUSED_KEYS:
        assert BY_NAME[name].flag is not None and BY_NAME[name].action is not None


def test_every_group_belongs_to_a_command_or_the_configuration_or_the_action() -> None:
    used = {g for groups in COMMAND_GROUPS.values() for g in groups}
    for option in OPTIONS:
        assert option.group in used or not option.flag, option.name


@pytest.mark.parametrize(("name", "text", "words"), [
    ("timeout", "50", "at most 20"),
    ("timeout", "nan", "more than 0"),
    ("timeout", "soon", "number of seconds"),
    ("concurrency", "65", "from 1 to 64"),
    ("per_host", "0", "from 1 to 64"),
    ("per_host", "2.5", "whole number"),
    ("retries", "-1", "from 0 to 5"),
    ("retries", "6", "from 0 to 5"),
    ("retries", "1.5", "whole number"),
    ("max_retry_wait", "500", "from 0 to 120"),
    ("max_retry_wait", "-1", "from 0 to 120"),
    ("max_retry_wait", "soon", "number of seconds"),
    ("fail_after", "0", "from 1 to 1000"),
    ("fail_after", "-2", "from 1 to 1000"),
    ("cache_max_age", "soon", "duration such as 30m"),
])
def test_one_check_says_the_same_from_a_flag_the_configuration_and_the_action(
        tmp_path: Path, name: str, text: str, words: str) -> None:
    option = BY_NAME[name]
    assert option.flag is not None
    command = "hook"
    with pytest.raises(UsageError, match=words):  # the command line
        build_parser(only=command).parse_args([command, option.flag, text])
    if option.config:  # the configuration file: the same words, naming the key
        key = next(k for k, o in CONFIG_KEYS.items() if o is option)
        config = tmp_path / ".tracecite.toml"
        config.write_text(f"{key} = {text if text != 'soon' else repr(text)}\n",
                          encoding="utf-8")
        with pytest.raises(ConfigError, match=words):
            load_config(str(config))
    if option.action:  # the Action: the same words, naming the input
        with pytest.raises(UsageError, match=f"input {option.action} must .*{words}"):
            action_values({option.action: text})


def test_flags_win_over_the_action_which_wins_over_the_configuration() -> None:
    config = {"timeout": 5.0, "concurrency": 3, "user_agent": "docs-bot/1"}
    action = {"timeout": 6.0, "concurrency": 4}
    settings = resolve("hook", {"timeout": 7.0}, action=action, config=config)
    assert (settings.timeout, settings.concurrency, settings.user_agent) == (7.0, 4, "docs-bot/1")
    assert resolve("hook", {}).timeout == MAX_TIMEOUT


def test_a_bad_ca_bundle_and_a_missing_root_are_tc100_at_resolve(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("junk\n", encoding="utf-8")
    with pytest.raises(UsageError, match="CA certificates"):
        resolve("verify-urls", {"ca_cert": str(junk)})
    with pytest.raises(UsageError, match="root"):
        resolve("verify-files", {"root": str(tmp_path / "nowhere")})
    # The hook looks at the root only when a stage reads files.
    assert resolve("hook", {"root": str(tmp_path / "nowhere")}).stage == "offline"
    with pytest.raises(UsageError, match="root"):
        resolve("hook", {"root": str(tmp_path / "nowhere"), "stage": "online",
                         "verify_files": True})


def test_files_root_is_relative_to_the_configuration_file(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    (tmp_path / "docs" / "site").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    settings = resolve("hook", {}, config={"root": "site"}, config_path="docs/.tracecite.toml")
    assert settings.root == str(Path("docs") / "site")
    assert settings.config_base == str(tmp_path / "docs")


def test_warn_takes_exit_2_codes_only() -> None:
    assert BY_NAME["warn"].from_config(["TC319", "TC313"]) == ("TC319", "TC313")
    assert BY_NAME["warn"].from_config("TC202") == ("TC202",)
    for code, words in (("TC999", "codes of the registry"), ("TC113", "cannot be a warning"),
                        ("TC900", "cannot be a warning")):
        with pytest.raises(UsageError, match=words):
            build_parser(only="check").parse_args(["check", "--warn", code, "n.md"])


def test_warned_findings_keep_their_code_and_never_fail_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tests.conftest import EXAMPLES
    from tracecite.cli import main

    trace = EXAMPLES / "failing-evidence.trace.jsonl"
    assert main(["check", "--evidence", "--json", str(trace)]) == 2
    capsys.readouterr()
    assert main(["check", "--evidence", "--json", "--warn", "TC202", "--warn", "TC201",
                 str(trace)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {(f["code"], f["severity"], f["exit"]) for f in report["findings"]} == {
        ("TC202", "warning", 0), ("TC201", "warning", 0)}
    assert (report["summary"]["errors"], report["summary"]["warnings"]) == (0, 2)
