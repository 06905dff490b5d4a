"""ASCII-only lowering, as HTML compares tag and attribute names."""

from tracecite.ascii_case import ascii_lower


def test_only_ascii_capitals_are_lowered() -> None:
    assert ascii_lower("DIV Http-Equiv") == "div http-equiv"
    # A Kelvin sign and a dotted capital I stay: str.lower makes the first a "k".
    assert ascii_lower("DIV\u212a\u0130") == "div\u212a\u0130"
    assert "\u212a".lower() == "k"
