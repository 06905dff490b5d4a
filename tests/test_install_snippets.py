"""Every install and pin snippet the README, the docs and the examples show works from what is
shipped (docs/releasing.md): nothing from a package index and no tag until CHANGELOG.md has
released that version; a clone (`pip install -e '.[fast]'`), a git URL at a commit, and a
commit SHA for pre-commit's `rev:` and the Action's `uses:` work today."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from tracecite import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
REPOSITORY = "https://github.com/tracecite/tracecite"
"""The repository as the README names it (its placeholder until the project has its home)."""
COMMIT = re.compile(r"COMMIT_SHA|[0-9a-f]{40}")
"""What a pin to a commit may say: the README's placeholder, or a full SHA."""
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
             ["project"]["optional-dependencies"])
_RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\]", re.MULTILINE)


def released() -> set[str]:
    """The versions CHANGELOG.md lists as released (its ``## [X.Y.Z] - date`` sections)."""
    return set(_RELEASE.findall((ROOT / "CHANGELOG.md").read_text(encoding="utf-8")))


def _extras_known(requirement: str) -> list[str]:
    found = re.search(r"\[([^\]]*)\]", requirement)
    names = [n.strip() for n in found.group(1).split(",")] if found else []
    return [f"unknown extra {n!r}" for n in names if n not in EXTRAS]


def _pip_problems(line: str, releases: set[str]) -> list[str]:
    words = shlex.split(line.split("pip install", 1)[1].split("#", 1)[0].split("&&")[0])
    problems = []
    for n, word in enumerate(words):
        if word.startswith("-"):
            continue
        if word.startswith(".") or word.startswith("$"):
            problems += _extras_known(word)  # a clone, or the Action's own checkout
        elif re.fullmatch(r"tracecite(\[[^\]]*\])?", word):
            problems += _extras_known(word)
            if n + 1 < len(words) and words[n + 1] == "@":
                continue  # "tracecite[x] @ URL" as separate words: the URL is checked next
            if not releases:
                problems.append(f"{word!r} from an index, but nothing is released")
        elif word.startswith("tracecite") and " @ " in word:
            name, _, url = word.partition(" @ ")
            problems += _extras_known(name)
            ref = url.rpartition("@")[2]
            if not url.startswith(f"git+{REPOSITORY}@") or not _pinned(ref, releases):
                problems.append(f"{url!r} is not the repository at a commit or a released tag")
    return problems


def _pinned(ref: str, releases: set[str]) -> bool:
    """A commit, or the tag of a version CHANGELOG.md has released."""
    return bool(COMMIT.fullmatch(ref)) or ref.removeprefix("v") in releases


def snippet_problems(lines: list[str], releases: set[str]) -> list[str]:
    """What in these snippet lines would fail from what is shipped, with ``releases`` the
    versions released so far."""
    problems: list[str] = []
    after_our_repo = False
    for line in lines:
        text = line.strip()
        if "pip install" in text:
            problems += [f"{text}: {p}" for p in _pip_problems(text, releases)]
        if text.startswith("- repo:") or text.startswith("repo:"):
            after_our_repo = text.split(":", 1)[1].strip() == REPOSITORY
        rev = re.match(r"rev:\s*(\S+)", text)
        if rev and after_our_repo and not _pinned(rev.group(1), releases):
            problems.append(f"{text}: rev is neither a commit nor a released tag")
        uses = re.search(r"uses:\s*tracecite/tracecite@(\S+)", text)
        if uses and not _pinned(uses.group(1), releases):
            problems.append(f"{text}: the Action's ref is neither a commit nor a released tag")
    return problems


def _snippets(path: Path) -> list[str]:
    """The lines a reader copies: a Markdown file's code blocks, an example file whole."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".md":
        return text.splitlines()
    return [line for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.DOTALL)
            for line in block.splitlines()]


FILES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md"),
                *(ROOT / "examples").rglob("*.yml"), *(ROOT / "examples").rglob("*.py")])


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_install_and_pin_snippet_works_today(path: Path) -> None:
    assert snippet_problems(_snippets(path), released()) == []


def test_the_readme_shows_each_form_that_works() -> None:
    lines = _snippets(ROOT / "README.md")
    assert any("pip install -e '.[fast]'" in line for line in lines)
    assert any(f"'tracecite[fast] @ git+{REPOSITORY}@COMMIT_SHA'" in line for line in lines)
    assert any(re.search(r"rev: COMMIT_SHA\b", line) for line in lines)
    assert any("uses: tracecite/tracecite@COMMIT_SHA" in line for line in lines)


@pytest.mark.parametrize(("line", "releases", "bad"), [
    ("python -m pip install 'tracecite[fast]'", set(), True),
    ("pip install tracecite", set(), True),
    ("pip install tracecite", {"0.1.0"}, False),
    ("pip install -e '.[fast]'", set(), False),
    ("pip install -e '.[turbo]'", set(), True),
    ("pip install 'tracecite[inspect] @ git+https://github.com/tracecite/tracecite@COMMIT_SHA'",
     set(), False),
    ("pip install 'tracecite @ git+https://github.com/tracecite/tracecite@main'", set(), True),
    ("pip install 'tracecite @ git+https://github.com/tracecite/tracecite@v0.1.0'",
     {"0.1.0"}, False),
    ('"$py" -m pip install --quiet "$GITHUB_ACTION_PATH"', set(), False),
    ("uses: tracecite/tracecite@v0.1.0", set(), True),
    ("uses: tracecite/tracecite@v0.1.0", {"0.1.0"}, False),
    ("uses: tracecite/tracecite@" + "a" * 40, set(), False),
])
def test_the_check_tells_forms_that_fail(line: str, releases: set[str], bad: bool) -> None:
    assert bool(snippet_problems([line], releases)) is bad


def test_a_pre_commit_rev_is_a_commit_or_a_released_tag() -> None:
    config = ["repos:", f"  - repo: {REPOSITORY}", "    rev: v0.1.0", "    hooks:",
              "  - repo: https://github.com/pre-commit/pre-commit-hooks", "    rev: v4.6.0"]
    assert len(snippet_problems(config, set())) == 1  # ours only: another repo's tags exist
    assert snippet_problems(config, {"0.1.0"}) == []


def test_the_changelog_has_an_unreleased_section_and_the_version_is_not_behind() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in text
    version = tuple(int(p) for p in __version__.split("."))
    assert all(tuple(int(p) for p in v.split(".")) <= version for v in released())
