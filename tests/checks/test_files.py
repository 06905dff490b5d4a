"""``file:`` sources: URI paths, the root they must stay in, and what may be read
(docs/reference/commands.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tracecite.checks.files import FileLoader, file_uri_path
from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.live.records import Loaded
from tracecite.checks.live.run import LiveRun
from tracecite.checks.quotes import QuoteCheck
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.findings import Counts

HTML, TEXT = MatchKind.HTML, MatchKind.TEXT

TEXT_BODY = "The quick brown fox."


@pytest.mark.parametrize(("uri", "path"), [
    ("file:a.txt", "a.txt"),
    ("file:docs/a.txt", "docs/a.txt"),
    ("file:/abs/a.txt", "/abs/a.txt"),
    ("file:///abs/a.txt", "/abs/a.txt"),
    ("file://localhost/abs/a.txt", "/abs/a.txt"),
    ("file:sub%20dir/%C3%A9t%C3%A9.txt", "sub dir/été.txt"),
    ("file:a%3Fb%23c.txt", "a?b#c.txt"),  # encoded ? and # are part of the name
    ("file:a.txt?query#fragment", "a.txt"),
    ("file:a.txt#fragment", "a.txt"),
    ("file:%2e%2e/x", "../x"),
    ("file:100%", "100%"),  # a lone % is not an escape
])
def test_file_uri_path(uri: str, path: str) -> None:
    assert file_uri_path(uri) == path


@pytest.mark.parametrize("uri", [
    "file:", "file://", "file://localhost", "file://host.example/a.txt", "file:a%00b",
    "file:?only-a-query",
])
def test_file_uri_path_refusals(uri: str) -> None:
    with pytest.raises(FetchError) as caught:
        file_uri_path(uri)
    assert caught.value.code == Code.URL_INVALID


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "root"
    project.mkdir()
    (project / "a.txt").write_text(TEXT_BODY, encoding="utf-8")
    return project


def code_of(loader: FileLoader, uri: str) -> Code:
    with pytest.raises(FetchError) as caught:
        loader.load(uri)
    return caught.value.code


def test_reads_text_and_html_by_the_cited_name(root: Path) -> None:
    (root / "p.html").write_text("<p>x</p>", encoding="utf-8")
    (root / "link.txt").symlink_to(root / "p.html")
    loader = FileLoader(str(root), 1000)
    assert loader.load("file:a.txt") == Loaded(TEXT, TEXT_BODY)
    assert loader.load("file:p.html") == Loaded(HTML, "<p>x</p>")
    assert loader.load("file:p.html?x=1") == Loaded(HTML, "<p>x</p>")
    assert loader.load("file:link.txt") == Loaded(TEXT, "<p>x</p>")  # the name cited decides


def test_a_leading_bom_is_dropped(root: Path) -> None:
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbf" + TEXT_BODY.encode())
    assert FileLoader(str(root), 1000).load("file:bom.txt") == Loaded(TEXT, TEXT_BODY)


def test_root_given_relative_or_through_a_symlink(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "alias").symlink_to(root)
    for given in (str(tmp_path / "alias"), "root"):
        monkeypatch.chdir(tmp_path)
        loader = FileLoader(given, 1000)
        assert loader.load("file:a.txt") == Loaded(TEXT, TEXT_BODY)
        assert loader.load(f"file://{root}/a.txt") == Loaded(TEXT, TEXT_BODY)
        assert loader.load(f"file://{tmp_path}/alias/a.txt") == Loaded(TEXT, TEXT_BODY)


def test_symlinks_inside_the_root_are_followed(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "in.txt").symlink_to(root / "a.txt")
    (root / "dir-link").symlink_to(root / "sub")
    loader = FileLoader(str(root), 1000)
    assert loader.load("file:sub/in.txt") == Loaded(TEXT, TEXT_BODY)
    assert loader.load("file:dir-link/in.txt") == Loaded(TEXT, TEXT_BODY)
    assert loader.resolve("file:dir-link/in.txt") == str(root / "a.txt")


@pytest.mark.parametrize("uri", [
    "file:../outside.txt", "file:sub/../../outside.txt", "file:%2E%2E/outside.txt",
    "file:/etc/passwd", "file:///", "file:////etc/passwd", "file:escape.txt",
    "file:../root-sibling/a.txt",
])
def test_outside_the_root(root: Path, tmp_path: Path, uri: str) -> None:
    (tmp_path / "outside.txt").write_text(TEXT_BODY, encoding="utf-8")
    (tmp_path / "root-sibling").mkdir()
    (tmp_path / "root-sibling" / "a.txt").write_text(TEXT_BODY, encoding="utf-8")
    (root / "escape.txt").symlink_to(tmp_path / "outside.txt")
    loader = FileLoader(str(root), 1000)
    with pytest.raises(FetchError) as caught:
        loader.resolve(uri)
    assert caught.value.code == Code.FILE_OUTSIDE_ROOT
    assert code_of(loader, uri) == Code.FILE_OUTSIDE_ROOT


def test_the_filesystem_root_allows_any_absolute_path(root: Path) -> None:
    assert FileLoader("/", 1000).load(f"file://{root}/a.txt") == Loaded(TEXT, TEXT_BODY)


def test_missing(root: Path) -> None:
    loader = FileLoader(str(root), 1000)
    assert code_of(loader, "file:nope.txt") == Code.FILE_MISSING
    assert code_of(loader, "file:no/such/dir.txt") == Code.FILE_MISSING
    (root / "dangling").symlink_to(root / "nope")
    assert code_of(loader, "file:dangling") == Code.FILE_MISSING


def test_a_file_on_the_way_means_missing(root: Path) -> None:
    # ENOTDIR: a.txt is no directory, so a.txt/b.txt does not exist (it is not unreadable).
    assert code_of(FileLoader(str(root), 1000), "file:a.txt/b.txt") == Code.FILE_MISSING


def test_not_regular_files(root: Path) -> None:
    (root / "dir").mkdir()
    os.mkfifo(root / "fifo")
    (root / "loop").symlink_to(root / "loop")
    loader = FileLoader(str(root), 1000)
    assert code_of(loader, "file:dir") == Code.FILE_UNREADABLE
    assert code_of(loader, "file:.") == Code.FILE_UNREADABLE
    assert code_of(loader, "file:fifo") == Code.FILE_UNREADABLE  # without blocking
    assert code_of(loader, "file:loop") == Code.FILE_UNREADABLE


def test_not_utf8(root: Path) -> None:
    (root / "latin1.txt").write_bytes(b"caf\xe9")
    (root / "utf16.txt").write_bytes("quick".encode("utf-16"))
    loader = FileLoader(str(root), 1000)
    assert code_of(loader, "file:latin1.txt") == Code.FILE_UNREADABLE
    assert code_of(loader, "file:utf16.txt") == Code.FILE_UNREADABLE


def test_the_cap_is_exact(root: Path) -> None:
    size = len(TEXT_BODY.encode())
    assert FileLoader(str(root), size).load("file:a.txt") == Loaded(TEXT, TEXT_BODY)
    assert code_of(FileLoader(str(root), size - 1), "file:a.txt") == Code.FILE_UNREADABLE


def test_a_sparse_file_over_the_cap_is_refused_without_reading(root: Path) -> None:
    with open(root / "sparse.txt", "wb") as handle:
        handle.truncate(1 << 40)  # a terabyte of holes
    assert code_of(FileLoader(str(root), 1000), "file:sparse.txt") == Code.FILE_UNREADABLE


def test_path_not_utf8_after_decoding(root: Path) -> None:
    assert code_of(FileLoader(str(root), 1000), "file:caf%E9.txt") == Code.URL_INVALID
    # A lone surrogate (which JSON can carry) was an internal error (TC900) before.
    assert code_of(FileLoader(str(root), 1000), "file:a\ud801.txt") == Code.URL_INVALID


def test_file_loader_tells_the_run_its_kind_keys_and_no_hosts(root: Path) -> None:
    loader = FileLoader(str(root), 1000)
    assert (loader.kind, loader.expects_html, loader.hosts) == (SourceKind.FILE, False, None)
    assert loader.key("file:a.txt") == "file:a.txt"
    assert loader.key("file:./a.txt") == "file:./a.txt"  # each URI as cited is one source
    assert loader.host("file:a.txt") is None


def test_a_live_run_reads_each_file_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "p.html").write_text("<p>quick <b>brown</b> fox</p>", encoding="utf-8")
    reads: list[str] = []
    real = FileLoader.read

    def counting(self: FileLoader, real_path: str) -> str:
        reads.append(real_path)
        return real(self, real_path)

    monkeypatch.setattr(FileLoader, "read", counting)
    checks = [QuoteCheck(quote, uri, "t.jsonl", 4, claim=1, citation=i, source_id="s")
              for i, (quote, uri) in enumerate([
                  ("quick brown", "file:p.html"), ("<b>", "file:p.html"),
                  ("quick brown fox", "file:a.txt"), ("nothing", "file:missing.txt")])]
    result = LiveRun(FileLoader(str(root), 1000), concurrency=2, parse_budget=20,
                     parse_workers=1).check(checks)
    assert sorted(reads) == [str(root / name) for name in ("a.txt", "missing.txt", "p.html")]
    assert result.counts == Counts(checked=4, matched=2, not_found=1, unavailable=1)
    assert sorted((f.citation, f.code, f.message) for f in result.findings) == [
        (1, Code.QUOTE_NOT_IN_FILE, "quote is not in the file; nothing close is in the file "
                                    "(no run of half the quote's 3 characters)"),  # markup
        (3, Code.FILE_MISSING, "file does not exist"),
    ]


def test_a_markdown_source_past_the_parsers_bounds_is_tc318(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its raw HTML is parsed to render it: a bound reached there is the source's finding, not
    a traceback of the run."""
    from tracecite.inputs import documents
    from tracecite.visible import ParseLimitError

    def too_big(text: str) -> str:
        raise ParseLimitError("too many elements")

    monkeypatch.setattr(documents, "rendered_text", too_big)
    (tmp_path / "page.md").write_text("<div>\n<i></i>\n</div>\n", encoding="utf-8")
    loader = FileLoader(str(tmp_path), 1000, rendered=frozenset({"file:page.md"}))
    with pytest.raises(FetchError) as raised:
        loader.load("file:page.md")
    assert raised.value.code is Code.PARSE_LIMIT
