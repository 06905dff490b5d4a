"""Findings, counts and reports as values (docs/reference/reports.md)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from tracecite.findings import Counts

counts = st.builds(Counts, *[st.integers(0, 10**6) for _ in dataclasses.fields(Counts)])


@given(st.lists(counts, max_size=20))
def test_the_total_of_counts_is_their_sum_field_by_field(many: list[Counts]) -> None:
    assert Counts.total(many) == sum(many, Counts())
    for field in dataclasses.fields(Counts):
        assert getattr(Counts.total(many), field.name) == sum(getattr(c, field.name)
                                                              for c in many)


def test_counts_are_true_when_any_field_is_not_zero() -> None:
    assert not Counts()
    assert Counts(interrupted=1) and Counts(checked=2)
