"""``--shard K/N`` (docs/guides/scale.md): each shard checks its own sources, offline findings are
shard 1's, and ``tracecite merge`` of every shard's report is the unsharded run's report."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    Cli,
    answer,
    call,
    cite,
    claim,
    note,
    result,
    source,
    write_notes,
    write_trace,
)
from tests.git_repo import commit_all, git, make_repo, write
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.checks.compare import stable_uri
from tracecite.checks.shards import in_shard, shard_of
from tracecite.errors import UsageError
from tracecite.settings import BY_NAME, action_values
from tracecite.values import MAX_SHARDS, shard

pytestmark = pytest.mark.network

PAGE = "The quick brown fox jumps over the lazy dog."
SHARDS = 3
SITE_TEXT = "Quotes must appear word for word in the source."  # conftest's SITE_PAGE


# ---- the value and the hash -----------------------------------------------------------------

@pytest.mark.parametrize("value", ["1/1", "3/4", " 2/2 ", f"{MAX_SHARDS}/{MAX_SHARDS}"])
def test_shard_values(value: str) -> None:
    k, n = value.strip().split("/")
    assert shard(value) == (int(k), int(n))


@pytest.mark.parametrize("value", ["0/4", "5/4", "1/0", "4", "1/2/3", "a/b", "-1/4", "1 /4",
                                   f"1/{MAX_SHARDS + 1}", "", (1, True), 3])
def test_bad_shard_values_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="must be K/N"):
        shard(value)


def test_a_bad_shard_is_tc100_naming_the_flag_or_the_input(cli: Cli, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "a.notes", note())
    run = cli("verify-notes", "--shard", "5/4", notes, "--json")
    assert run.exit == 1 and run.codes() == ["TC100"]
    assert "--shard" in run.json()["findings"][0]["message"]
    with pytest.raises(UsageError, match="input shard must be K/N"):
        action_values({"shard": "0/3"})
    assert action_values({"shard": "2/3"}) == {"shard": (2, 3)}
    assert not BY_NAME["shard"].config, "one configuration would make every shard the same"


def test_only_the_live_commands_and_hook_act_on_a_shard(cli: Cli, tmp_path: Path) -> None:
    # A common option: the others take it, say it has no effect, and are no shard.
    trace = write_trace(tmp_path / "t.jsonl", [call(), result(), answer()])
    for argv in (["check", trace], ["compare", trace, trace]):
        run = cli(*argv, "--shard", "2/2", "--json")
        assert run.exit == 0 and run.codes() == []
        assert run.json()["shard"] is None
        assert run.json()["notices"] == [f"--shard has no effect on {argv[0]}"]
        assert cli(*argv, "--shard", "3/2", "--json").codes() == ["TC100"]


def test_the_shard_of_a_uri_is_the_documented_hash() -> None:
    uri = "HTTPS://Example.ORG:443/a%7eb#part"
    digest = hashlib.sha256(stable_uri(uri).encode("utf-8")).digest()
    for count in (1, 2, 3, 7, 256):
        assert shard_of(uri, count) == int.from_bytes(digest[:8], "big") % count + 1
        # One source, one shard: every spelling of a stable URI goes to the same one.
        assert shard_of("https://example.org/a~b", count) == shard_of(uri, count)
    assert sum(in_shard(uri, (k, 5)) for k in range(1, 6)) == 1
    assert in_shard(uri, None)


# ---- shards of a real run, merged -------------------------------------------------------------

def _inputs(tmp_path: Path, site: Site) -> tuple[list[Path], list[str]]:
    """Notes and a trace citing a dozen pages of the site (some missing the quote, some
    gone), with an evidence mismatch, a format warning and a file: source; the URLs."""
    urls = []
    for i in range(12):
        body = PAGE if i % 3 else "Nothing of the kind."
        reply = text(body, status=404 if i % 5 == 4 else 200)
        urls.append(site.route(f"/page-{i}", reply))
    notes = write_notes(tmp_path / "refs.notes", "\n".join(
        note(quote="quick brown fox", url=u) for u in [*urls[:8], urls[2]]))
    sources = [source(f"s{i}", u, PAGE) for i, u in enumerate(urls[6:], start=6)]
    sources.append(source("f1", "file:doc.txt", PAGE))
    trace = write_trace(tmp_path / "run.trace.jsonl", [call(), result(sources=sources), answer(
        claims=[claim(citations=[cite(s["id"]) for s in sources]),
                claim(citations=[cite("s6", quote="not captured at all")])])])
    stray = write_notes(tmp_path / "stray.txt", note())  # no glob selects it: TC106
    return [notes, trace, stray], urls


def _run(cli: Cli, argv: list[Any], report: Path) -> dict[str, Any]:
    run = cli(*argv, "--report-file", f"json:{report}", "--format", "console")
    document: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    assert run.exit == document["exit_code"]
    return document


def _without_shard(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k != "shard"}


def test_merged_shards_are_the_unsharded_run(cli: Cli, site: Site, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    files, urls = _inputs(tmp_path, site)
    argv = ["hook", "--stage", "all", *site.flags, *files]
    whole = _run(cli, argv, tmp_path / "whole.json")
    assert whole["exit_code"] == 2 and whole["shard"] is None
    assert {"TC106", "TC202", "TC210", "TC315"} <= {f["code"] for f in whole["findings"]}
    assert whole["summary"]["live"]["skipped"] == 1  # the file: source
    asked = len(site.paths)
    assert asked == len(urls)  # each page once, however many records cite it

    shards = []
    for k in range(1, SHARDS + 1):
        shards.append(_run(cli, [*argv, "--shard", f"{k}/{SHARDS}"],
                           tmp_path / f"shard-{k}.json"))
        assert shards[-1]["shard"] == f"{k}/{SHARDS}"
    # Every page was fetched by exactly one shard, and every shard had some.
    assert sorted(site.paths[asked:]) == sorted(site.paths[:asked])
    assert all(s["summary"]["live"]["checked"] for s in shards)
    # Offline findings and counts are shard 1's only.
    for later in shards[1:]:
        assert not {"TC106", "TC202"} & {f["code"] for f in later["findings"]}
        assert later["summary"]["captured"]["checked"] == 0
        assert later["summary"]["inputs"] == later["summary"]["records"] == 0

    merged = cli("merge", *(tmp_path / f"shard-{k}.json" for k in (2, 3, 1)), "--json")
    doc = merged.json()
    assert merged.exit == 2 and doc["shard"] is None and doc["command"] == "hook"
    assert doc == whole
    # Merged again in another format, the verdict is the same.
    console = cli("merge", *(tmp_path / f"shard-{k}.json" for k in (1, 2, 3)))
    assert console.exit == 2 and "TC210" in console.out


def test_merged_shards_of_verify_urls_and_verify_notes(cli: Cli, site: Site,
                                                       tmp_path: Path) -> None:
    """verify-urls and verify-notes too; skipped sources are counted in their own shard."""
    files, _ = _inputs(tmp_path, site)
    for command, path in (("verify-urls", files[1]), ("verify-notes", files[0])):
        whole = _run(cli, [command, *site.flags, path], tmp_path / f"{command}.json")
        reports = [tmp_path / f"{command}-{k}.json" for k in range(1, SHARDS + 1)]
        for k, report in enumerate(reports, start=1):
            _run(cli, [command, *site.flags, path, "--shard", f"{k}/{SHARDS}"], report)
        doc = cli("merge", *reports, "--json").json()
        assert _without_shard(doc) == _without_shard(whole), command


def test_an_input_error_stops_every_shard_and_is_reported_once(cli: Cli, site: Site,
                                                               tmp_path: Path) -> None:
    files, _ = _inputs(tmp_path, site)
    broken = write_notes(tmp_path / "broken.notes", "claim: c\nquote: q\n")
    whole = _run(cli, ["verify-notes", *site.flags, files[0], broken], tmp_path / "w.json")
    reports = [tmp_path / f"s{k}.json" for k in (1, 2)]
    for k, report in enumerate(reports, start=1):
        doc = _run(cli, ["verify-notes", *site.flags, files[0], broken, "--shard", f"{k}/2"],
                   report)
        assert doc["exit_code"] == 1 and [f["code"] for f in doc["findings"]] == ["TC113"]
    assert site.paths == []  # nothing fetched, in any shard
    assert _without_shard(cli("merge", *reports, "--json").json()) == _without_shard(whole)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_unchanged_records_are_counted_by_their_own_shard(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_site: int) -> None:
    """On a pull request, the records the diff leaves alone are ``unchanged`` in the shard of their
    source only, so the merged summary is the unsharded run's
    (docs/hook.md#checking-only-what-changed, docs/guides/scale.md)."""
    repo = make_repo(tmp_path / "repo")
    records = [note(quote="word for word", url=f"http://pages.test/old/{n}") for n in range(9)]
    write(repo, "docs/site.notes", "\n".join(records))
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "topic")
    records[4] = note(quote="not on the page", url="http://pages.test/changed")
    records.append(note(quote="word for word", url="http://pages.test/new"))
    write(repo, "docs/site.notes", "\n".join(records))
    sources = [source(f"s{i}", f"http://pages.test/t/{i}", SITE_TEXT) for i in range(6)]
    (repo / "traces").mkdir()
    write_trace(repo / "traces" / "run.jsonl", [call(), result(sources=sources), answer(
        claims=[claim(citations=[cite(s["id"], quote="word for word") for s in sources])])])
    commit_all(repo, "topic")
    monkeypatch.chdir(repo)
    argv = ["hook", "--stage", "online", "--since", "main", "--connect-to",
            f"pages.test:80:127.0.0.1:{local_site}", "--allow-net", "127.0.0.0/8"]
    whole = _run(cli, argv, tmp_path / "whole.json")
    assert whole["summary"]["live"]["unchanged"] == 8
    assert whole["summary"]["live"]["checked"] == 2 + 6  # the changed records, the trace
    reports = [tmp_path / f"s{k}.json" for k in range(1, SHARDS + 1)]
    for k, report in enumerate(reports, start=1):
        _run(cli, [*argv, "--shard", f"{k}/{SHARDS}"], report)
    counts = [json.loads(r.read_text(encoding="utf-8"))["summary"]["live"]["unchanged"]
              for r in reports]
    assert sum(counts) == 8 and max(counts) < 8
    assert _without_shard(cli("merge", *reports, "--json").json()) == _without_shard(whole)
