"""The checks of a live run read by index (docs/guides/scale.md: memory): notes records from their
columns, citations as made, several inputs one after the other, and a choice of them."""

from __future__ import annotations

import pytest

from tracecite.checks.quotes import (
    CheckList,
    JoinedChecks,
    NoteChecks,
    QuoteCheck,
    as_checks,
)
from tracecite.inputs.notes import parse_notes
from tracecite.model import NoteRecords


def notes(count: int, path: str = "n.md") -> NoteRecords:
    text = "".join(f"claim: c{i}\nquote:  q{i}\u00a0 e\u0301 \nurl: https://example.com/{i % 3}\n\n"
                   for i in range(count))
    records = parse_notes(text, path).records
    assert isinstance(records, NoteRecords)
    return records


def cited(count: int) -> list[QuoteCheck]:
    return [QuoteCheck(f"quote {i}", f"https://example.org/{i}", "t.jsonl", 7, claim=1,
                       citation=i + 1, source_id=f"s{i}") for i in range(count)]


def test_notes_checks_read_from_the_columns_are_those_of_the_records() -> None:
    records = notes(5)
    checks = NoteChecks(records)
    assert len(checks) == 5
    for i in range(5):
        made = QuoteCheck.from_note(records[i])
        assert checks[i] == checks.check(i) == made
        assert (checks.target(i), checks.quote(i)) == (made.target, made.quote)
    assert checks.quote(0) == "q0 \u00e9"  # normalised: whitespace runs, NFC
    assert checks[-1] == checks[4] and list(checks[1:3]) == [checks[1], checks[2]]
    with pytest.raises(IndexError):
        checks[5]
    # Records kept as objects (a shard's, a diff's) are read the same way.
    assert list(NoteChecks(tuple(records))) == list(checks)
    assert [NoteChecks(tuple(records)).quote(i) for i in range(5)] == [
        checks.quote(i) for i in range(5)]


def test_joined_checks_are_their_parts_one_after_the_other() -> None:
    first, second, citations = NoteChecks(notes(3, "a.md")), NoteChecks(notes(2, "b.md")), \
        CheckList(cited(2))
    joined = JoinedChecks([first, NoteChecks(()), second, citations])
    assert len(joined) == 7
    assert list(joined) == [*first, *second, *citations]
    assert [joined.target(i) for i in range(7)] == [c.target for c in joined]
    assert [joined.quote(i) for i in range(7)] == [c.quote for c in joined]
    assert joined[-1] == citations[1] and joined[3].file == "b.md"
    with pytest.raises(IndexError):
        joined[7]
    assert len(JoinedChecks([])) == 0 and list(JoinedChecks([CheckList([])])) == []


def test_chosen_checks_keep_their_order_and_read_through() -> None:
    checks = JoinedChecks([NoteChecks(notes(6)), CheckList(cited(3))])
    chosen = checks.where(lambda target: not target.endswith("/1"))
    assert list(chosen) == [c for c in checks if not c.target.endswith("/1")]
    assert [chosen.quote(i) for i in range(len(chosen))] == [c.quote for c in chosen]
    assert [chosen.target(i) for i in range(len(chosen))] == [c.target for c in chosen]
    assert len(chosen.where(lambda target: False)) == 0


def test_a_list_of_checks_is_read_as_it_is() -> None:
    made = cited(2)
    assert list(as_checks(made)) == made
    columns = NoteChecks(notes(1))
    assert as_checks(columns) is columns
