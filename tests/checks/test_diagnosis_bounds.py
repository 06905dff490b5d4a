"""The near-miss diagnosis is bounded: at most 1 s and 64 MB per missed quote, whatever the
quote's and the text's sizes; past that it says so (``cut_short``) and holds what it measured
(docs/reference/reports.md#near-misses)."""

from __future__ import annotations

import random
import time
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracecite.checks import diagnosis as diagnosis_module
from tracecite.checks.diagnosis import MEMORY_BOUND, TIME_BOUND, Diagnoser, phrase
from tracecite.findings import Diagnosis

TEXT = "The quick brown fox jumps over the lazy dog. " * 200


def _reference_run(quote: str, text: str, at_least: int) -> tuple[int, int]:
    """The greedy longest run as it was first written: extended one character at a time."""
    n = len(quote)
    if at_least > n:
        return 0, 0
    best_length, best_end, i = 0, 0, 0
    while n - i >= max(at_least, best_length + 1):
        position = text.find(quote[i])
        if position < 0:
            i += 1
            continue
        length = 1
        while i + length < n:
            if text.startswith(quote[i + length], position + length):
                length += 1
                continue
            position = text.find(quote[i:i + length + 1], position + 1)
            if position < 0:
                break
            length += 1
        if length >= at_least and length > best_length:
            best_length, best_end = length, i + length
        i += length
    return best_length, best_end


@given(st.text("abc ", max_size=40), st.text("abc ", min_size=1, max_size=60),
       st.integers(1, 30))
def test_the_longest_run_is_the_one_extended_character_by_character(
        quote: str, text: str, at_least: int) -> None:
    length, end, complete = diagnosis_module._longest_run(quote, text, at_least)
    assert complete
    assert (length, end) == _reference_run(quote, text, at_least)


def test_agreeing_compares_stretches_to_the_first_difference() -> None:
    quote = "x" * 5000 + "y"
    text = "x" * 7000
    assert diagnosis_module._agreeing(quote, 0, text, 0) == 5000
    assert diagnosis_module._agreeing(quote, 10, text, 3000) == 4000  # the text ends first
    assert diagnosis_module._agreeing("abc", 0, "abd", 0) == 2
    assert diagnosis_module._agreeing("abc", 3, "abc", 0) == 0


def test_without_time_a_diagnosis_is_cut_short_and_claims_nothing() -> None:
    diagnosis = Diagnoser([TEXT], seconds=0.0).diagnose("THE QUICK BROWN FOX")
    assert diagnosis == Diagnosis((), quote_chars=19, cut_short="time")
    assert phrase(diagnosis) == ("the diagnosis was cut short (its 1 s per quote passed), so "
                                 "it may not have tried every kind")


def test_past_the_memory_bound_the_folds_are_not_tried() -> None:
    quote = "THE QUICK BROWN FOX"
    assert Diagnoser([TEXT]).diagnose(quote).kinds == ("case",)
    small = Diagnoser([TEXT], memory=10_000).diagnose(quote)
    # The runs were all looked for: nothing close, as far as runs go; the folds were not tried.
    assert small == Diagnosis(("none",), quote_chars=19, cut_short="memory")
    assert phrase(small).endswith("the diagnosis was cut short (the quote or the text is too "
                                  "large for its 64 MB per quote), so it may not have tried "
                                  "every kind")
    partial = Diagnoser([TEXT], memory=10_000).diagnose("quick brown fox jumps over the cat")
    assert (partial.kinds, partial.matched_chars, partial.cut_short) == (
        ("partial",), 31, "memory")


def test_a_complete_diagnosis_is_not_cut_short() -> None:
    diagnosis = Diagnoser([TEXT]).diagnose("quick brown fox jumps over the cat")
    assert diagnosis.cut_short is None
    assert "cut short" not in phrase(diagnosis)


def _words(rng: random.Random, chars: int) -> str:
    words = ["caf\u00e9", "na\u00efve", "alpha", "beta", "gamma", "delta", "epsilon", "zeta",
             "theta", "iota", "kappa", "lambda", "omicron", "sigma", "upsilon", "omega"]
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(words) + str(rng.randrange(1000))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


@pytest.mark.slow
def test_a_huge_quote_missing_a_huge_capture_stays_in_bounds() -> None:
    rng = random.Random(22)
    capture = _words(rng, 24 << 20)
    first = 8 << 20
    quote = capture[1000:1000 + first] + " Zebrafold " + capture[-(4 << 20):]
    tracemalloc.start()
    try:
        started = time.perf_counter()
        diagnosis = Diagnoser([capture]).diagnose(quote)
        spent = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= MEMORY_BOUND
    assert spent <= 2 * TIME_BOUND  # the bound, with room for tracing and a loaded machine
    assert diagnosis.kinds == ("partial",)
    assert diagnosis.matched_chars is not None and diagnosis.matched_chars >= first
    assert diagnosis.cut_short == "memory"  # the folds of 24 MB were not tried


@pytest.mark.parametrize("cut", [None, "time", "memory"])
def test_the_cache_keeps_whether_a_diagnosis_was_cut_short(cut: str | None) -> None:
    from tracecite import cache

    diagnosis = Diagnosis(("partial",), quote_chars=10, matched_chars=6, first_difference=6,
                          cut_short=cut)
    assert cache._diagnosis(cache._stored(diagnosis)) == diagnosis
