"""``tracecite merge`` refuses mixed input (docs/guides/scale.md#merging-shards): shards of
another run, a report given twice, a shard missing, a shard written without its run's digests.
Run as the link-rot example runs it: four shards of ``hook --stage online --all`` over a loopback
site, each with its own cache, merged by one job."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, Cli
from tests.git_repo import commit_all, make_repo, write
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.checks.shards import shard_of

yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit (the test extra)")
pytestmark = [pytest.mark.network,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]

LINK_ROT = REPO_ROOT / "examples" / "workflows" / "link-rot.yml"
PAGE = "The quick brown fox jumps over the lazy dog."


def _example() -> tuple[list[int], list[str]]:
    """The link-rot example's shards and the flags its shard step's inputs stand for."""
    jobs = yaml.safe_load(LINK_ROT.read_text(encoding="utf-8"))["jobs"]
    matrix = jobs["shard"]["strategy"]["matrix"]["shard"]
    inputs = next(s["with"] for s in jobs["shard"]["steps"] if "tracecite" in s.get("uses", ""))
    assert (inputs["stage"], inputs["all"], inputs["fail-after"]) == ("online", True, 3)
    assert inputs["shard"] == f"${{{{ matrix.shard }}}}/{len(matrix)}"
    # archive: the Internet Archive is never reached from the tests (tests/test_action.py looks
    # snapshots up on a stand-in).
    return matrix, ["hook", "--stage", "online", "--all", "--fail-after", "3"]


class Run:
    """One scheduled run: its notes committed, each shard's report in its own folder."""

    def __init__(self, cli: Cli, site: Site, root: Path) -> None:
        self.cli, self.site, self.root = cli, site, root
        self.shards, self.argv = _example()

    def shard(self, name: str, k: int) -> Path:
        report = self.root / name / f"tracecite-shard-{k}.json"
        report.parent.mkdir(exist_ok=True)
        run = self.cli(*self.argv, *self.site.flags, "--no-progress", "--shard",
                       f"{k}/{len(self.shards)}", "--cache", self.root / f"cache-{k}.sqlite",
                       "--report-file", f"json:{report}", "--format", "console")
        assert run.exit in (0, 2), run.out
        return report

    def all_shards(self, name: str) -> list[Path]:
        return [self.shard(name, k) for k in self.shards]

    def whole(self, name: str) -> Path:
        report = self.root / f"{name}.json"
        run = self.cli(*self.argv, *self.site.flags, "--no-progress", "--cache",
                       self.root / f"cache-{name}.sqlite", "--report-file", f"json:{report}",
                       "--format", "console")
        assert run.exit in (0, 2), run.out
        return report


def _urls(site: Site, count: int, shard: int, of: int) -> list[str]:
    """``count`` page URLs that fall in shard ``shard`` of ``of``."""
    urls: list[str] = []
    i = 0
    while len(urls) < count:
        url = site.route(f"/page-{i}", text(PAGE))
        if shard_of(url, of) == shard:
            urls.append(url)
        i += 1
    return urls


def _notes(repo: Path, urls: list[str], missing: str | None = None) -> None:
    write(repo, "refs.notes", "\n".join(
        f"claim: c\nquote: {'not on the page at all' if u == missing else 'quick brown fox'}\n"
        f"url: {u}\n" for u in urls))
    commit_all(repo)


def _document(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = make_repo(tmp_path / "repo")
    monkeypatch.chdir(path)
    return path


def test_the_example_merges_its_shards_into_the_whole_run(cli: Cli, site: Site, repo: Path,
                                                          tmp_path: Path) -> None:
    urls = [u for k in (1, 2, 3, 4) for u in _urls(site, 2, k, 4)]
    _notes(repo, urls, missing=urls[3])
    run = Run(cli, site, tmp_path)
    shards = run.all_shards("shards")
    docs = [_document(p) for p in shards]
    assert len({json.dumps(d["run"]) for d in docs}) == 1  # one run, one digest pair
    merged = cli("merge", "--json", "--", tmp_path / "shards")
    assert merged.exit == 2 and merged.codes() == ["TC210"]
    whole = _document(run.whole("whole"))
    assert merged.json() == whole and whole["run"] == docs[0]["run"]


def test_a_shard_of_another_run_is_refused(cli: Cli, site: Site, repo: Path,
                                           tmp_path: Path) -> None:
    """Shards 1, 3 and 4 of one run and shard 2 of another: the first run's own shard 2
    fails, so a green merge would hide it."""
    urls = [u for k in (1, 2, 3, 4) for u in _urls(site, 2, k, 4)]
    run = Run(cli, site, tmp_path)
    _notes(repo, urls, missing=urls[2])  # a page of shard 2
    first = run.all_shards("first")
    assert _document(first[1])["exit_code"] == 2
    assert all(_document(p)["exit_code"] == 0 for p in (first[0], *first[2:]))
    _notes(repo, urls)  # the next run: every quote is on its page
    second = run.shard("second", 2)
    assert _document(second)["exit_code"] == 0
    mixed = cli("merge", "--json", first[0], second, first[2], first[3])
    assert mixed.exit == 1 and mixed.codes() == ["TC100"]
    finding = mixed.json()["findings"][0]
    assert finding["file"] == str(second)
    assert "another run" in finding["message"] and str(first[0]) in finding["message"]
    assert "inputs" in finding["message"]


def test_a_report_given_twice_is_refused_whatever_its_name(cli: Cli, site: Site, repo: Path,
                                                           tmp_path: Path) -> None:
    urls = _urls(site, 2, 1, 1)
    _notes(repo, urls, missing=urls[0])
    run = Run(cli, site, tmp_path)
    whole = run.whole("whole")
    copy = tmp_path / "copy.json"
    shutil.copyfile(whole, copy)
    for given in ((whole, whole), (whole, copy)):
        twice = cli("merge", "--json", *given)
        assert twice.exit == 1 and twice.codes() == ["TC100"]
        assert twice.json()["findings"][0]["file"] == str(given[1])
        assert "given twice" in twice.json()["findings"][0]["message"]
    # The same inputs checked again (another report, the same run): counted twice, so refused.
    again = tmp_path / "again.json"
    cli(*run.argv, *site.flags, "--no-progress", "--cache", tmp_path / "again.sqlite",
        "--warn", "TC210", "--report-file", f"json:{again}", "--format", "console")
    assert again.read_bytes() != whole.read_bytes()
    rerun = cli("merge", "--json", whole, again)
    assert rerun.exit == 1 and rerun.codes() == ["TC100"]
    assert "same inputs" in rerun.json()["findings"][0]["message"]


def test_a_missing_shard_and_a_shard_without_run_are_refused(cli: Cli, site: Site, repo: Path,
                                                             tmp_path: Path) -> None:
    _notes(repo, [u for k in (1, 2, 3, 4) for u in _urls(site, 1, k, 4)])
    run = Run(cli, site, tmp_path)
    shards = run.all_shards("shards")
    missing = cli("merge", "--json", *shards[:3])
    assert missing.exit == 1 and missing.codes() == ["TC100"]
    message = missing.json()["findings"][0]["message"]
    assert "4/4 missing" in message and all(str(p) in message for p in shards[:3])
    # A shard's report as an older tracecite wrote it (no "run"): not taken for a shard.
    old = _document(shards[1])
    del old["run"]
    shards[1].write_text(json.dumps(old), encoding="utf-8")
    older = cli("merge", "--json", *shards)
    assert older.exit == 1 and older.codes() == ["TC100"]
    assert older.json()["findings"][0]["file"] == str(shards[1])
    assert "without its run's digests" in older.json()["findings"][0]["message"]
