"""``compare``'s shortcuts give what the plain rules give: the stable form of already stable URIs,
the normalised bytes of Latin-1 text, equal raw digests only for equal contents, the cited
lines read again for contents that differ, and both traces read at once."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracecite.jobs
from tests.conftest import answer, call, result, source, write_trace
from tracecite.checks import compare
from tracecite.checks.compare import normalised_utf8, raw_digest, stable_uri
from tracecite.codes import Code
from tracecite.matching import normalise

WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def test_str_split_splits_on_exactly_the_isspace_characters() -> None:
    # The normaliser's " ".join(text.split()) is its whitespace rule only if so; U+001C-U+001F,
    # U+0085 and U+00A0 are whitespace, U+200B (zero width space) and U+FEFF are not.
    splitters = {c for c in map(chr, range(sys.maxunicode + 1)) if f"a{c}b".split() == ["a", "b"]}
    assert splitters == set(WHITESPACE)
    assert {"\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u3000"} <= splitters
    assert "\u200b" not in splitters and "\ufeff" not in splitters


def test_latin1_text_is_nfc_already() -> None:
    # normalised_utf8 skips NFC for Latin-1 text: nothing below U+0100 composes or decomposes.
    latin1 = "".join(map(chr, range(256)))
    assert unicodedata.is_normalized("NFC", latin1)
    assert all(unicodedata.normalize("NFC", a + b) == a + b for a in latin1 for b in latin1)


texts = st.text(st.sampled_from([" ", "a", "é", "\xa0", "\t", "\n", "\x1c", "\x85", "\u0301",
                                 "\u200b", "\u2028", "\u3000", "\ud800", "Å", "\u212b"])
                | st.characters(), max_size=60)


@settings(max_examples=1500, deadline=None)
@given(texts)
def test_normalised_utf8_is_the_normaliser_in_utf8(text: str) -> None:
    assert normalised_utf8(text) == normalise(text).encode("utf-8", "surrogatepass")


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(max_codepoint=255), max_size=80))
def test_normalised_utf8_of_any_latin1_text(text: str) -> None:
    assert normalised_utf8(text) == normalise(text).encode("utf-8")


def test_normalised_utf8_of_each_whitespace_character() -> None:
    for space in WHITESPACE:
        text = f"{space}a{space}{space} b {space}"
        assert normalised_utf8(text) == normalise(text).encode() == b"a b", hex(ord(space))


def test_raw_digests_tell_latin1_from_utf8_bytes() -> None:
    # "Ā" in UTF-8 is the bytes of the Latin-1 text "Ä\x80": the two must not look equal.
    other = "\u0100"
    latin1 = other.encode("utf-8").decode("latin-1")
    assert raw_digest(other) != raw_digest(latin1)
    assert raw_digest("é") == raw_digest("e\u0301".replace("e\u0301", "é"))
    assert raw_digest("a b") != raw_digest("a  b")


@settings(max_examples=1000, deadline=None)
@given(st.text(st.sampled_from("%:/?#@[]aAfFzZ09.~-_ \n") | st.characters(), max_size=40)
       | st.builds(
           lambda scheme, host, rest: f"{scheme}://{host}{rest}",
           st.sampled_from(["http", "https", "HTTP", "ftp"]),
           st.text(st.sampled_from("abcXY09.-:@[]%"), max_size=12),
           st.text(st.sampled_from("/?#%aA9:@. \n\u00e9"), max_size=20)))
def test_the_stable_uri_shortcut_agrees_with_the_parse(uri: str) -> None:
    assert stable_uri(uri) == compare._stable_uri_parsed(uri)


def _pair(tmp_path: Path, old_content: str, new_content: str) -> tuple[Path, Path]:
    def trace(name: str, content: str) -> Path:
        return write_trace(tmp_path / name, [
            call("c1"),
            result("c1", [source("s1", "https://example.com/a", content),
                          source("s2", "https://example.com/b#x", "same text"),
                          source("s3", "https://example.com/b#y", content)]),
            answer([]),
        ])

    return trace("old.jsonl", old_content), trace("new.jsonl", new_content)


@pytest.mark.parametrize("old_content, new_content, changed", [
    ("a  b\u00a0c", "a b c", ()),  # captured differently, the same once normalised
    ("e\u0301 x", "é x", ()),
    ("a b c", "a b d", ("https://example.com/a", "https://example.com/b")),
])
def test_contents_captured_differently_are_compared_normalised(
        tmp_path: Path, old_content: str, new_content: str, changed: tuple[str, ...]) -> None:
    old, new = _pair(tmp_path, old_content, new_content)
    findings, changes = compare.compare_traces(str(old), str(new), jobs=1)
    assert changes is not None and changes.changed == changed
    assert [f.code for f in findings] == [Code.SOURCE_CHANGED] * len(changed)


@pytest.mark.parametrize("jobs", [1, 2])  # the lines read again here, or one trace's in a worker
def test_a_trace_changed_before_its_line_is_read_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    monkeypatch.setattr(tracecite.jobs, "MIN_PARALLEL_BYTES", 0)
    old, new = _pair(tmp_path, "a b c", "a b d")
    lines_of = compare._lines_of
    seen: list[object] = []

    def then_change(captures: object, wanted: object) -> compare.Lines:
        seen.append(captures)
        if len(seen) == 2:  # the new trace changes after its first reading
            new.write_text(new.read_text(encoding="utf-8").replace("a b d", "a b e"),
                           encoding="utf-8")
        return lines_of(captures, wanted)  # type: ignore[arg-type]

    monkeypatch.setattr(compare, "_lines_of", then_change)
    findings, changes = compare.compare_traces(str(old), str(new), jobs=jobs)
    assert changes is None
    assert [(f.code, f.file) for f in findings] == [(Code.INPUT_UNREADABLE, str(new))]


@pytest.mark.slow
def test_both_traces_read_at_once_compare_as_one_after_the_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def trace(name: str, shift: int) -> Path:
        events = []
        for n in range(300):
            events.append(call(f"c{n}"))
            events.append(result(f"c{n}", [source(f"s{n}", f"https://example.com/{n}",
                                                  f"text {n * (1 + (n % 7 == shift))}")]))
        return write_trace(tmp_path / name, [*events, answer([])])

    old, new = trace("old.jsonl", 0), trace("new.jsonl", 3)
    serial = compare.compare_traces(str(old), str(new), jobs=1)
    monkeypatch.setattr(tracecite.jobs, "MIN_PARALLEL_BYTES", 0)
    assert compare.compare_traces(str(old), str(new), jobs=2) == serial
    differ = [n for n in range(1, 300) if n % 7 in (0, 3)]
    assert serial[1] is not None
    assert serial[1].changed == tuple(sorted(f"https://example.com/{n}" for n in differ))


def test_lines_read_again_are_found_past_uncaptured_sources(tmp_path: Path) -> None:
    # Each capture is found again on its line by its number among the trace's sources, which
    # sources with content null are numbered among too.
    def trace(name: str, first: str, second: str) -> Path:
        return write_trace(tmp_path / name, [
            call("c1"),
            result("c1", [source("s0", "https://example.com/x", None),  # type: ignore[arg-type]
                          source("s1", "https://example.com/a", first)]),
            call("c2"),
            result("c2", [source("s2", "https://example.com/y", None),  # type: ignore[arg-type]
                          source("s3", "https://example.com/b", second),
                          source("s4", "https://example.com/a", first + " ")]),
            answer([]),
        ])

    old = trace("old.jsonl", "one two", "three four")
    new = trace("new.jsonl", "one\ttwo", "three  five")
    findings, changes = compare.compare_traces(str(old), str(new), jobs=1)
    assert changes is not None and changes.changed == ("https://example.com/b",)
    assert [(f.code, f.line) for f in findings] == [(Code.SOURCE_CHANGED, 4)]
