"""The notes format (docs/guides/notes.md): every rule, and properties over generated files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import note
from tracecite.inputs.notes import NotesFile, parse_notes, read_notes
from tracecite.model import NoteRecord, NoteRecords


def parse(text: str) -> NotesFile:
    return parse_notes(text, "n.md")


def fields(parsed: NotesFile) -> list[tuple[str, str, str]]:
    return [(r.claim, r.quote, r.url) for r in parsed.records]


def where(parsed: NotesFile) -> list[tuple[str, int | None, int | None]]:
    return [(f.code.code, f.line, f.column) for f in parsed.findings]


def test_one_record() -> None:
    parsed = parse(note("C", "Q", "https://example.com/"))
    assert parsed.findings == ()
    assert parsed.records == (NoteRecord(
        file="n.md", index=1, line=1, claim="C", quote="Q", url="https://example.com/",
        quote_line=2, url_line=3, claim_line=1,
    ),)
    assert parsed.record_count == 1


def test_field_lines_in_any_order_past_comments() -> None:
    parsed = parse("# heading\n\nurl: https://example.com/\n# aside\nquote: Q\nclaim: C\n")
    (record,) = parsed.records
    assert (record.line, record.field_lines) == (3, (6, 5, 3))


def test_empty_file_is_valid() -> None:
    for text in ("", "\n\n", "# only a heading\n", "---\n---\n", "\ufeff"):
        parsed = parse(text)
        assert (parsed.records, parsed.findings, parsed.record_count) == ((), (), 0)


def test_bom_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_bytes(b"\xef\xbb\xbf" + note().encode())
    parsed = read_notes(str(path))
    assert parsed.findings == ()
    assert fields(parsed) == [("A fox jumps.", "quick brown fox", "https://example.com/a")]


def test_only_one_bom_is_ignored(tmp_path: Path) -> None:
    """docs/guides/notes.md ignores a leading BOM; a second one is content (it was dropped too)."""
    path = tmp_path / "n.md"
    path.write_bytes(b"\xef\xbb\xbf" * 2 + note().encode())
    parsed = read_notes(str(path))
    assert [(f.code.code, f.line) for f in parsed.findings][:1] == [("TC110", 1)]


def test_a_bad_byte_after_a_bom_is_located_without_counting_it(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_bytes(b"\xef\xbb\xbfab\xff")
    parsed = read_notes(str(path))
    assert [(f.code.code, f.line, f.column) for f in parsed.findings] == [("TC102", 1, 3)]


def test_crlf() -> None:
    parsed = parse("claim: a\r\nquote: b\r\nurl: c\r\n\r\nclaim: d\r\nquote: e\r\nurl: f\r\n")
    assert parsed.findings == ()
    assert fields(parsed) == [("a", "b", "c"), ("d", "e", "f")]
    assert [r.line for r in parsed.records] == [1, 5]


def test_first_colon_splits_and_url_colons_stay() -> None:
    parsed = parse("claim: Time: 10:30\nquote: a: b: c\nurl: https://h:443/p?q=1:2#f\n")
    assert parsed.findings == ()
    assert fields(parsed) == [("Time: 10:30", "a: b: c", "https://h:443/p?q=1:2#f")]


def test_value_whitespace_stripped_inner_kept() -> None:
    parsed = parse("claim:\t  two  spaces \t\nquote:x\u00a0 y\u00a0\nurl:   u  \n")
    assert parsed.findings == ()
    assert fields(parsed) == [("two  spaces", "x\u00a0 y", "u")]


def test_separators() -> None:
    text = (
        "\n---\n\n"  # separators before the first record
        + note("a") + "  ---  \n" + note("b") + "\t---\n\n\n" + note("c") + "\n \t \n"
        + note("d") + "---\n---\n"
    )
    parsed = parse(text)
    assert parsed.findings == ()
    assert [r.claim for r in parsed.records] == ["a", "b", "c", "d"]
    assert [r.index for r in parsed.records] == [1, 2, 3, 4]


def test_dashes_with_text_are_not_separators() -> None:
    parsed = parse(note("a") + "----\n" + note("b"))
    assert ("TC110", 4, 1) in where(parsed)


def test_comments_inside_records_do_not_end_them() -> None:
    parsed = parse("claim: a\n# a comment\n   # indented comment\nquote: b\n#\nurl: c\n")
    assert parsed.findings == ()
    assert fields(parsed) == [("a", "b", "c")]


def test_markdown_headings_are_comments() -> None:
    parsed = parse("# Notes\n\n## Section\nclaim: a\n### Sub\nquote: b\nurl: c\n")
    assert parsed.findings == ()
    assert parsed.records[0].line == 4


def test_any_field_order() -> None:
    parsed = parse("url: c\nclaim: a\nquote: b\n\nquote: e\nurl: f\nclaim: d\n")
    assert parsed.findings == ()
    assert fields(parsed) == [("a", "b", "c"), ("d", "e", "f")]
    assert [(r.quote_line, r.url_line) for r in parsed.records] == [(3, 1), (5, 6)]


def test_bad_line() -> None:
    parsed = parse("claim: a\nno colon here\nquote: b\nurl: c\n")
    assert where(parsed) == [("TC110", 2, 1)]
    assert parsed.records == ()
    assert parsed.findings[0].record == 1


@pytest.mark.parametrize("field", ["quote", "claim", "url"])
def test_a_wrapped_value_says_to_join_it_to_its_field(field: str) -> None:
    lines = {"claim": "claim: a", "quote": "quote: b", "url": "url: c"}
    text = "\n".join([*(v for k, v in lines.items() if k != field), f"{lines[field]} and",
                      "  its wrapped rest", "and more of it", ""])
    parsed = parse(text)
    assert where(parsed) == [("TC110", 4, 3), ("TC110", 5, 1)]
    assert [f.message for f in parsed.findings] == [
        "line is not a field (key: value), a comment, a blank line or ---; values are one "
        f"line: join this line to the `{field}:` on line 3"] * 2


def test_a_bad_line_after_no_field_has_no_join_hint() -> None:
    parsed = parse("# notes\nno colon here\nquote: b\nurl: c\nclaim: a\n\nclaim: x\n"
                   "Claim: y\nwrapped?\n")
    assert [(f.code.code, f.line, "join" in f.message) for f in parsed.findings] == [
        ("TC110", 2, False), ("TC111", 8, False), ("TC110", 9, False), ("TC113", 7, False)]


def test_a_colon_after_non_key_text_is_a_bad_line() -> None:
    parsed = parse("claim: a\nsome words: x\nquote: b\nurl: c\n")
    assert where(parsed) == [("TC110", 2, 1)]


def test_unknown_field_and_upper_case_key() -> None:
    parsed = parse("Claim: a\nquote: b\nurl: c\nsource: d\n")
    assert where(parsed) == [("TC111", 1, 1), ("TC111", 4, 1), ("TC113", 1, 1)]
    assert "lower case" in parsed.findings[0].message
    assert "lower case" not in parsed.findings[1].message


def test_duplicate_field() -> None:
    parsed = parse("claim: a\nquote: b\n  quote: b\nurl: c\n")
    assert where(parsed) == [("TC112", 3, 3)]
    assert "line 2" in parsed.findings[0].message


def test_missing_fields() -> None:
    parsed = parse("claim: a\n\nquote: b\n\n\nurl: c\n")
    assert where(parsed) == [("TC113", 1, 1), ("TC113", 3, 1), ("TC113", 6, 1)]
    assert [f.record for f in parsed.findings] == [1, 2, 3]
    assert [f.message for f in parsed.findings] == [
        "record has no quote or url field", "record has no claim or url field",
        "record has no claim or quote field"]
    assert parsed.record_count == 3


@pytest.mark.parametrize(("text", "message"), [
    ("claim: a\nquote: b\n", "record has no url field"),
    ("quote: b\n", "record has no claim or url field"),
    ("# only a comment\n---\nsome: thing\n", "record has no claim, quote or url field"),
])
def test_missing_fields_are_named_as_a_sentence_names_them(text: str, message: str) -> None:
    assert [f.message for f in parse(text).findings if f.code.code == "TC113"] == [message]


def test_empty_value() -> None:
    parsed = parse("claim: a\nquote:\nurl: \t \n")
    assert where(parsed) == [("TC114", 2, 1), ("TC114", 3, 1)]
    assert parsed.records == ()


def test_good_records_survive_bad_ones() -> None:
    parsed = parse(note("a") + "\nclaim: b\n\n" + note("c"))
    assert [r.claim for r in parsed.records] == ["a", "c"]
    assert [r.index for r in parsed.records] == [1, 3]
    assert where(parsed) == [("TC113", 5, 1)]


def test_findings_never_carry_input_text() -> None:
    parsed = parse("claim: SECRET1\nSECRET2\nSECRET3: x\nclaim: SECRET4\nquote:\n")
    assert len(parsed.findings) == 5
    for finding in parsed.findings:
        assert "SECRET" not in repr(finding)


# ---- properties -----------------------------------------------------------------------------

# A value: printable text on one line, not blank, without surrounding whitespace.
values = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                 max_size=20).map(str.strip).filter(lambda v: v != "" and v.isprintable())
records = st.lists(st.tuples(values, values, values), max_size=5)


@st.composite
def rendered(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, str]]]:
    """A notes file for generated records, with random layout that must not matter."""
    recs = draw(records)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    blank_ws = st.sampled_from(["", " ", "\t", "  \t "])
    separator = st.one_of(
        blank_ws,
        st.builds(lambda a, b: f"{a}---{b}", blank_ws, blank_ws),
    )
    comment = st.builds(lambda ws, text: f"{ws}#{text}", blank_ws,
                        st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc",
                                                                                 "Zl", "Zp")),
                                max_size=10))
    lines: list[str] = []
    lines += draw(st.lists(st.one_of(separator, comment), max_size=3))
    for i, (claim, quote, url) in enumerate(recs):
        if i:
            lines += draw(st.lists(separator, min_size=1, max_size=3))
        body = draw(st.permutations([("claim", claim), ("quote", quote), ("url", url)]))
        for key, value in body:
            lines += draw(st.lists(comment, max_size=1))
            pad = draw(blank_ws)
            lines.append(f"{key}:{pad}{value}{draw(blank_ws)}")
    lines += draw(st.lists(st.one_of(separator, comment), max_size=3))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return bom + newline.join(lines) + draw(st.sampled_from(["", newline])), recs


@settings(max_examples=150, deadline=None)
@given(rendered())
def test_rendered_records_round_trip(case: tuple[str, list[tuple[str, str, str]]]) -> None:
    text, recs = case
    parsed = parse(text)
    assert parsed.findings == ()
    assert fields(parsed) == recs
    assert parsed.record_count == len(recs)
    lines = text.lstrip("\ufeff").split("\n")
    for record in parsed.records:
        assert lines[record.quote_line - 1].startswith("quote:")
        assert lines[record.url_line - 1].startswith("url:")


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from("claim quote url:#-\t\r\n xé\u00a0\u2028\ufeff"), max_size=200)
       | st.text(max_size=200))
def test_arbitrary_text_never_raises(text: str) -> None:
    parsed = parse(text)
    lines = text.removeprefix("\ufeff").split("\n")
    assert len(parsed.records) <= parsed.record_count
    for finding in parsed.findings:
        assert finding.file == "n.md"
        assert finding.line is not None and 1 <= finding.line <= len(lines)
        line = lines[finding.line - 1].removesuffix("\r")
        assert finding.column is not None and 1 <= finding.column <= max(len(line), 1)
        assert finding.code.code.startswith("TC11")
        assert finding.record is not None and 1 <= finding.record <= parsed.record_count


# ---- reading a file as it streams by ----------------------------------------------------------

def _many(count: int) -> str:
    return "".join(note(f"c{i}", f"q{i}", f"https://example.com/{i % 3}") + "\n"
                   for i in range(count))


def test_a_file_read_in_blocks_is_parsed_as_its_text(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks end mid-line and lines are longer than a block: the result is parse_notes'."""
    from tracecite.inputs import notes

    text = "\ufeff# heading\r\n" + _many(40) + "claim: x\nbad line\n" + "quote: " + "y" * 300
    path = tmp_path / "n.md"
    path.write_bytes(text.encode())
    monkeypatch.setattr(notes, "_BLOCK", 7)
    read = read_notes(str(path))
    parsed = parse_notes(text, str(path))
    assert (read.records, read.findings, read.record_count) == (
        parsed.records, parsed.findings, parsed.record_count)
    assert len(read.records) == 40 and read.record_count == 41


@pytest.mark.parametrize("block", [3, 1 << 20])
def test_a_bad_byte_in_a_later_block_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                block: int) -> None:
    from tracecite.inputs import notes

    path = tmp_path / "n.md"
    path.write_bytes(b"\xef\xbb\xbf" + _many(5).encode() + "claim: é\xe9".encode() + b"\xff\n")
    monkeypatch.setattr(notes, "_BLOCK", block)
    parsed = read_notes(str(path))
    # Only the TC102: a file that is not UTF-8 is not parsed (the findings before it are gone).
    assert [(f.code.code, f.line, f.column) for f in parsed.findings] == [("TC102", 21, 10)]
    assert (parsed.records, parsed.record_count) == ((), 0)


def test_a_read_that_fails_is_tc101(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tracecite.inputs import notes

    path = tmp_path / "n.md"
    path.write_text(_many(3))

    def failing(handle: object) -> object:
        yield "claim: a"
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(notes, "_lines", failing)
    parsed = read_notes(str(path))
    assert [(f.code.code, f.message) for f in parsed.findings] == [
        ("TC101", "input cannot be read (Input/output error)")]


def test_records_and_claims_are_kept_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_text(_many(3) + "claim: a\n")
    counted = read_notes(str(path), records=False)
    assert (counted.records, counted.record_count) == ((), 4)
    assert [f.code.code for f in counted.findings] == ["TC113"]
    kept = read_notes(str(path), claims=False)
    assert [(r.claim, r.quote, r.url) for r in kept.records] == [
        (None, f"q{i}", f"https://example.com/{i}") for i in range(3)]
    assert kept.findings == counted.findings and kept.record_count == 4


def test_records_are_a_sequence_of_note_records() -> None:
    import pickle

    parsed = parse(_many(4))
    records = parsed.records
    assert records[-1] == records[3] and records[-1].claim == "c3"
    assert list(records[1:3]) == [records[1], records[2]]
    assert records == tuple(records) and records != tuple(records)[:3] and records != "x"
    with pytest.raises(IndexError):
        records[4]
    assert pickle.loads(pickle.dumps(records)) == records
    # The URLs cited by many records are one string each.
    assert records[0].url is parse(_many(4)).records[3].url


def test_a_records_url_and_quote_are_read_without_making_the_record() -> None:
    parsed = parse("claim: c\nquote: caf\u00e9  \u201cau\u201d lait\nurl: https://a.example/\n\n"
                   + _many(2))
    records = parsed.records
    assert isinstance(records, NoteRecords)
    for i in (0, 1, 2, -1, -3):
        assert (records.url(i), records.quote(i)) == (records[i].url, records[i].quote)
    assert records.quote(0) == "caf\u00e9  \u201cau\u201d lait"
    with pytest.raises(IndexError):
        records.quote(3)
    with pytest.raises(IndexError):
        records.url(3)


def test_a_subset_of_records_shares_their_columns() -> None:
    import pickle

    records = parse("# a comment\n\n" + _many(6)).records
    assert isinstance(records, NoteRecords)
    chosen = records.subset([1, 4, 5])
    assert list(chosen) == [records[1], records[4], records[5]]
    assert chosen == (records[1], records[4], records[5]) and len(chosen) == 3
    assert chosen[-1] == records[5] and list(chosen[:2]) == [records[1], records[4]]
    assert [(chosen.url(i), chosen.quote(i), chosen.field_lines(i)) for i in range(3)] == [
        (r.url, r.quote, r.field_lines) for r in chosen]
    assert records.field_lines(0) == records[0].field_lines == (3, 4, 5)
    assert list(chosen.subset([2, 0])) == [records[5], records[1]]
    assert list(records.subset([])) == []
    assert pickle.loads(pickle.dumps(chosen)) == chosen
    with pytest.raises(IndexError):
        chosen[3]
    with pytest.raises(IndexError):
        records.subset([6])
    with pytest.raises(ValueError):
        chosen.append(9, 99, {"claim": ("c", 99), "quote": ("q", 100), "url": ("u", 101)})
