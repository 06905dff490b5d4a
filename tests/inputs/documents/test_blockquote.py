"""The blockquote form: a block quote whose last paragraph attributes it with one link."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inputs.documents.helpers import citations, read


def test_attributed_block_quote(tmp_path: Path) -> None:
    [found] = citations(tmp_path, "Intro.\n\n> The *quick* brown &amp; fox\n> jumps over.\n>\n"
                                  "> More `code` here.\n>\n> — [Source](https://e.org/fox)\n")
    assert found.form == "blockquote"
    assert found.quote == "The quick brown & fox jumps over. More code here."
    assert found.url == "https://e.org/fox"
    assert (found.line, found.column) == (3, 3)
    assert found.lines == (3, 4, 5, 6, 7, 8)
    assert found.ordinal == 1
    assert not found.ignored


@pytest.mark.parametrize("attribution", ["— [S](https://e.org)", "― [S](https://e.org)",
                                         "-- [S](https://e.org)", "--[S](https://e.org)",
                                         "*— Ann, [S](https://e.org)*",
                                         "— Ann in <https://e.org>"])
def test_attribution_starts(tmp_path: Path, attribution: str) -> None:
    [found] = citations(tmp_path, f"> Words to check.\n>\n> {attribution}\n")
    assert found.url == "https://e.org"
    assert found.quote == "Words to check."


@pytest.mark.parametrize("text", [
    "> No attribution here.\n",
    "> Words.\n>\n> - [S](https://e.org)\n",  # a list, not an attribution paragraph
    "> Words.\n>\n> — no link\n",
    "> Words.\n>\n> — [a](https://a.org) and [b](https://b.org)\n",
    "> Words.\n>\n> See [S](https://e.org)\n",
    "> — [S](https://e.org)\n",  # nothing quoted
    "> Words.\n>\n> — [S](#heading)\n",  # same document
    "```\n> Words.\n>\n> — [S](https://e.org)\n```\n",
    "    > Words.\n    >\n    > — [S](https://e.org)\n",
    "<!--\n> Words.\n>\n> — [S](https://e.org)\n-->\n",
])
def test_not_citations(tmp_path: Path, text: str) -> None:
    assert citations(tmp_path, text) == []


def test_reference_link_and_its_line(tmp_path: Path) -> None:
    [found] = citations(tmp_path, "> Words.\n>\n> — [Src][s]\n\nText.\n\n[s]: https://e.org/r\n")
    assert found.url == "https://e.org/r"
    assert found.lines == (1, 2, 3, 7)


def test_nested_in_a_list_with_crlf_and_tabs(tmp_path: Path) -> None:
    text = "- item\r\n\r\n  >\tQuoted words\r\n  >\r\n  > — [S](https://e.org)\r\n"
    [found] = citations(tmp_path, text)
    assert (found.line, found.column) == (3, 5)
    assert found.quote == "Quoted words"


def test_bom_is_not_counted(tmp_path: Path) -> None:
    [found] = citations(tmp_path, "\ufeff> Words.\n>\n> — [S](https://e.org)\n")
    assert (found.line, found.column) == (1, 3)


def test_forms_choose(tmp_path: Path) -> None:
    text = "> Words.\n>\n> — [S](https://e.org)\n"
    assert read(tmp_path, text, forms=frozenset({"inline"})).citations == ()
    assert len(read(tmp_path, text, forms=frozenset({"blockquote"})).citations) == 1


def test_display_name(tmp_path: Path) -> None:
    document = read(tmp_path, "> Words.\n>\n> — [S](https://e.org)\n", display="docs/a.md")
    assert document.file == "docs/a.md"
    assert document.citations[0].file == "docs/a.md"
