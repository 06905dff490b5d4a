"""Strict JSON for trace lines, and the claim-by-claim decoding of huge answer lines."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracecite.inputs.jsonl import (
    LAZY_FROM_CHARS,
    LazyArray,
    loads,
    quote_positions,
    visit_claims,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=4),
    max_leaves=12,
)


def _answer(claims: list[Any], **extra: Any) -> str:
    return json.dumps({"type": "answer", "claims": claims, **extra})


def test_a_long_line_gets_a_lazy_claims_array_that_decodes_the_same() -> None:
    claims = [{"text": "x" * 100, "citations": [{"source_id": f"s{i}", "quote": "q"}]}
              for i in range(LAZY_FROM_CHARS // 80)]
    line = _answer(claims, after=[1, 2])
    assert len(line) >= LAZY_FROM_CHARS
    value = loads(line)
    assert isinstance(value["claims"], LazyArray)
    assert len(value["claims"]) == len(claims) and value["claims"]
    assert list(value["claims"]) == claims
    assert value["after"] == [1, 2]
    assert list(loads(line.encode())["claims"]) == claims


@pytest.mark.parametrize("damage", [
    lambda s: s[:-1], lambda s: s + "x", lambda s: s.replace('"after"', "after", 1),
    lambda s: s.replace("[1, 2]", "[1 2]"), lambda s: s.replace('"q"', "NaN", 1),
])
def test_a_long_broken_line_is_a_json_error(damage: Any) -> None:
    claims = [{"citations": [{"source_id": "s", "quote": "q"}]}] * (LAZY_FROM_CHARS // 40)
    with pytest.raises(ValueError):
        loads(damage(_answer(claims, after=[1, 2])))


@settings(max_examples=150, deadline=None)
@given(st.lists(JSON, max_size=6), st.dictionaries(st.text(max_size=5), JSON, max_size=3))
def test_visit_claims_sees_every_claim_once_in_order(claims: list[Any],
                                                     extra: dict[str, Any]) -> None:
    extra.pop("claims", None)
    seen: list[Any] = []
    line = json.dumps({**extra, "claims": claims})
    value = visit_claims(line, seen.append)
    assert seen == claims
    assert {k: v for k, v in value.items() if k != "claims"} == extra


@pytest.mark.parametrize("line", ["[1]", "{}", '{"claims": 3}', '{"claims": []}'])
def test_visit_claims_on_other_shapes(line: str) -> None:
    seen: list[Any] = []
    assert visit_claims(line, seen.append) == json.loads(line)
    assert seen == []


# ---- where a citation's quote is ----------------------------------------------------------------

def _quote_at(text: str, found: dict[tuple[int, int], int]) -> dict[tuple[int, int], Any]:
    """Each position decoded: the value that starts there."""
    return {where: json.JSONDecoder().raw_decode(text, i)[0] for where, i in found.items()}


def test_quote_positions_find_only_what_is_asked() -> None:
    text = json.dumps({"type": "answer", "claims": [
        {"text": 'says "quote": "no"', "quote": "a claim's own",
         "citations": [{"meta": {"quote": "nested"}, "quote": "one"}, {"quote": "two"}]},
        "not a claim",
        {"citations": ["not a citation", {"source_id": "s", "quote": "three"}]},
    ]}, ensure_ascii=False)
    found = quote_positions(text, {(1, 1), (1, 2), (2, 1), (3, 1), (3, 2), (4, 1)})
    assert _quote_at(text, found) == {(1, 1): "one", (1, 2): "two", (3, 2): "three"}
    assert quote_positions(text, {(1, 2)}).keys() == {(1, 2)}


def test_quote_positions_count_characters_and_take_the_last_of_two_keys() -> None:
    text = '\x1e{"claims": [{"citations": [{"quote": "é", "quote" :  "ü"}]}]}'
    (position,) = quote_positions(text, {(1, 1)}).values()
    assert text[position:].startswith('"ü"')
    assert position == text.index('"ü"')  # characters, not bytes; the separator counts


@pytest.mark.parametrize("text", ["[]", '{"claims": [{"citations": [{"quote": "a"}', "{nope}"])
def test_quote_positions_refuse_what_is_not_the_json_object(text: str) -> None:
    with pytest.raises(ValueError):
        quote_positions(text, {(1, 1)})
