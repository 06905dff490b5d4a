"""The documentation holds together: every relative link in README.md, docs/ and
benchmarks/README.md leads to a file (and, with ``#anchor``, to a heading or an ``<a id>`` of it),
and every ``docs/PAGE.md[#anchor]`` that a docstring or comment of the code, the tests or the
benchmarks points at resolves the same way (docs/README.md is the map of the pages)."""

from __future__ import annotations

import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "benchmarks" / "README.md",
                *(ROOT / "docs").rglob("*.md")])
SOURCES = sorted([*(ROOT / "tracecite").rglob("*.py"), *(ROOT / "tests").rglob("*.py"),
                  *(ROOT / "benchmarks").glob("*.py")])

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")
ANCHOR_TAG = re.compile(r'<a id="([^"]+)"></a>')
POINTER = re.compile(r"docs/[a-z0-9_/-]+\.md(?:#[a-z0-9-]+)?")
LITERAL = re.compile(r"``[^`]*``")  # reST literals: file names in examples, not pointers


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (but ``-`` and ``_``),
    each space a ``-``."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors a Markdown page has: its headings' (``-1``, ``-2``… for repeats) and its
    ``<a id>`` tags."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found: set[str] = set(ANCHOR_TAG.findall(text))
    seen: dict[str, int] = {}
    for line in text.splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            base = slug(heading[1])
            found.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    return frozenset(found)


def problem(target: Path, anchor: str) -> str | None:
    """Why ``target#anchor`` does not resolve, or None when it does."""
    if not target.exists():
        return f"{target.relative_to(ROOT)} does not exist"
    if anchor and (target.suffix != ".md" or anchor not in anchors(target)):
        return f"{target.relative_to(ROOT)} has no heading or anchor #{anchor}"
    return None


def links(page: Path) -> list[str]:
    """The relative links of a page, outside code blocks and code spans."""
    text = CODE_SPAN.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def pointers(source: Path) -> list[str]:
    """The ``docs/…md`` pages the comments and docstrings (triple-quoted strings) of a Python
    file point at; plain string literals are data (test fixtures' file names)."""
    found = []
    tokens = tokenize.generate_tokens(io.StringIO(source.read_text(encoding="utf-8")).readline)
    for token in tokens:
        text = token.string
        docstring = token.type == tokenize.STRING and re.match(r"[rRuUbBfF]*('''|\"\"\")", text)
        if token.type == tokenize.COMMENT or docstring:
            found += POINTER.findall(LITERAL.sub("", text))
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        why = problem(resolved, anchor)
        if why:
            broken.append(f"{target}: {why}")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


def test_the_code_points_at_pages_that_exist() -> None:
    broken = []
    for source in SOURCES:
        for pointer in pointers(source):
            path, _, anchor = pointer.partition("#")
            why = problem(ROOT / path, anchor)
            if why:
                broken.append(f"{source.relative_to(ROOT)}: {pointer}: {why}")
    assert not broken, "\n".join(broken)


def test_the_code_points_at_the_docs() -> None:
    """The pointer test has something to test: the docstrings point at the pages."""
    pointed = {p.partition("#")[0] for source in SOURCES for p in pointers(source)}
    assert {"docs/reference/commands.md", "docs/web-over-time.md", "docs/hook.md"} <= pointed


def test_the_map_lists_every_page() -> None:
    """docs/README.md links to every page under docs/."""
    listed = {(ROOT / "docs" / t.partition("#")[0]).resolve()
              for t in links(ROOT / "docs" / "README.md")}
    pages = {p.resolve() for p in (ROOT / "docs").rglob("*.md")} - {ROOT / "docs" / "README.md"}
    assert not pages - listed, sorted(str(p.relative_to(ROOT)) for p in pages - listed)


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Checking only what changed", "checking-only-what-changed"),
    ("The web (`verify-notes`, `verify-urls`, `hook`)", "the-web-verify-notes-verify-urls-hook"),
    ("Uncaptured sources: `content: null`", "uncaptured-sources-content-null"),
    ("`file:` sources", "file-sources"),
    ("SARIF", "sarif"),
])
def test_slug_is_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
