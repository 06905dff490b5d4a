"""The code registry: stable, unique, and identical in docs/codes.md and the specification."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO_ROOT, SHARED
from tracecite.codes import BY_CODE, Code, registry_markdown, registry_page

CODES_PAGE = REPO_ROOT / "docs" / "codes.md"
SPEC = SHARED / "SPEC.md"
# Codes the contract has added for features still being built (importers, documents, PDF
# sources); each leaves this set in the change that implements it, and the test fails once the
# registry has it and it is still listed here.
NOT_YET_BUILT = frozenset({"TC108", "TC204", "TC323", "TC324"})
ROW = re.compile(r"^\| (TC\d{3}) \| ([a-z0-9-]+) \| (\d) \| (.*) \|$")


def test_codes_and_names_unique() -> None:
    codes = [c.code for c in Code]
    names = [c.label for c in Code]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    assert codes == sorted(codes)
    assert set(BY_CODE) == set(codes)
    assert all(BY_CODE[c.code] is c for c in Code)


@pytest.mark.parametrize("code", list(Code), ids=[c.code for c in Code])
def test_entry(code: Code) -> None:
    assert re.fullmatch(r"TC\d{3}", code.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code.label)
    assert code.exit in {0, 1, 2, 3}  # 0: a warning (docs/web-over-time.md#warnings-and-skips)
    # The hundreds say what kind of problem it is, and so which exit code it gives.
    expected = {"1": 1, "2": 2, "3": 2, "4": 2, "9": 3}[code.code[2]]
    # Warnings (exit 0) are the registry's own; they start with "warning:"
    # (docs/reference/reports.md).
    assert code.exit == expected or (code.exit == 0 and code.when.startswith("warning:"))
    assert code.when and "|" not in code.when
    assert str(code) == f"{code.code} {code.label}"


@pytest.mark.parametrize("code", list(Code), ids=[c.code for c in Code])
def test_every_code_says_how_to_fix_it(code: Code) -> None:
    # One sentence in TraceCite's words: it starts with a capital and ends with a full stop,
    # and it fits a Markdown table cell (docs/codes.md) and a SARIF rule's help.
    assert code.fix, f"{code.code} has no fix text"
    assert code.fix[0].isupper() and code.fix.endswith("."), code.fix
    assert "|" not in code.fix and "\n" not in code.fix
    assert code.fix != code.when
    assert code.anchor == code.code.lower()


README_ROW = re.compile(
    r'^\| <a id="(tc\d{3})"></a>(TC\d{3}) \| ([a-z0-9-]+) \| (\d) \| (.*) \| (.*) \|$')


def test_registry_markdown() -> None:
    lines = registry_markdown().splitlines()
    assert lines[:2] == ["| code | name | exit | when | how to fix |", "|---|---|---|---|---|"]
    rows = [README_ROW.match(line) for line in lines[2:]]
    assert all(rows)
    assert [(m[1], m[2], m[3], int(m[4]), m[5], m[6]) for m in rows if m] == [
        (c.anchor, c.code, c.label, c.exit, c.when, c.fix) for c in Code]


def test_every_code_has_its_own_anchor_on_the_codes_page() -> None:
    """The SARIF rules' helpUri points at ``docs/codes.md#tc210``: the page must have that
    anchor, once (a heading of that name would give GitHub's automatic anchor the same name)."""
    text = CODES_PAGE.read_text(encoding="utf-8")
    anchors = re.findall(r'<a id="([^"]+)"></a>', text)
    for code in Code:
        assert anchors.count(code.anchor) == 1, code.code
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert not any(re.search(r"\btc\d{3}\b", h, flags=re.IGNORECASE) for h in headings)


def test_the_codes_page_is_the_registry() -> None:
    """docs/codes.md is generated whole from the registry: its introduction and its table."""
    text = CODES_PAGE.read_text(encoding="utf-8")
    assert registry_markdown() in text
    assert text == registry_page(), (
        "docs/codes.md is out of date: python -m tracecite.codes > docs/codes.md")


def test_spec_rows_are_in_the_registry() -> None:
    if not SPEC.is_file():
        pytest.skip(f"the SPEC is not at {SPEC}")
    rows = [ROW.match(line) for line in SPEC.read_text(encoding="utf-8").splitlines()]
    spec = [(m[1], m[2], int(m[3])) for m in rows if m]
    assert len(spec) > 40
    for code, name, exit_code in spec:
        if code in NOT_YET_BUILT:
            assert code not in BY_CODE, f"{code} is built: take it out of NOT_YET_BUILT"
            continue
        assert code in BY_CODE, f"{code} is in the SPEC but not in the registry"
        assert (BY_CODE[code].label, BY_CODE[code].exit) == (name, exit_code), code
    assert {code for code, _, _ in spec} >= NOT_YET_BUILT, "a pending code the contract dropped"
