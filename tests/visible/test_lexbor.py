"""The fast parser (lexbor, the ``fast`` extra) gives the text html5lib gives, sends the pages it
does not suit to html5lib, and keeps the parse bounded."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.visible.test_parser import _TAGS, _dump
from tracecite.matching import normalise
from tracecite.visible import ParseLimitError, lexbor, parse_visible, tree_builder, visible_text

pytest.importorskip("selectolax", reason="the fast extra is not installed")


@pytest.fixture(scope="module", autouse=True)
def html_parser() -> str:
    """These tests name the parser of each call: no need to run them under both."""
    return "lexbor"


def both(page: str) -> tuple[str, str]:
    """The text of ``page`` from lexbor, then from html5lib."""
    return visible_text(page, parser="lexbor"), visible_text(page, parser="html5lib")


# The markup where html5lib 1.1 drifts from today's standard, which lexbor and browsers follow
# (test_lexbor_follows_the_standard_where_html5lib_drifts): left out of the generated pages.
_DRIFTS = ("frameset", "plaintext", "select", "rp", "rt", "rb", "dialog")
_VOCABULARY = [tag for tag in _TAGS if tag not in _DRIFTS]
_PIECES = st.one_of(
    st.sampled_from(_VOCABULARY).map(lambda tag: f"<{tag}>"),
    st.sampled_from([tag for tag in _VOCABULARY if tag not in ("br", "p")]).map(
        lambda tag: f"</{tag}>"),
    st.sampled_from(["x", " ", "&amp;", "&lt;b&gt;", "<!--c-->", "<!DOCTYPE html>", "\n", "\r\n",
                     "\x00", "<![CDATA[z]]>", "<p hidden>", "<template>", "</template>",
                     "<span style='display:none'>", "<svg><title>t</title><text>s</text>",
                     "<math><annotation>a</annotation>", "<isindex>", "<noscript>n"]),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_generated_markup_gives_html5libs_text(page: str) -> None:
    # The text quotes are matched in: the parsers may disagree on how many line breaks stand
    # together at a block boundary (`<pre></a>\n`, an `<li>` in a hidden `<span>`), which no
    # verdict can see, and must agree on every word and on where words are apart.
    fast, reference = both(page)
    assert normalise(fast) == normalise(reference)


@pytest.mark.parametrize(
    ("page", "browser", "html5lib"),
    [
        # </br> and </p> end foreign content (the standard since 2017; html5lib 1.1 predates it)
        ("<svg></br>shown", "shown", ""),
        ("<svg></p>shown", "shown", ""),
        # a <dialog> closes an open <p>: the closed dialog hides what follows, not the p
        ("<p hidden><dialog><hr>in the dialog", "", "in the dialog"),
        # </br> is a <br>, which makes a <frameset> too late to replace the body
        ("</br><frameset>shown", "shown", ""),
        # an end tag inside an SVG <desc> does not reach the <a> outside the drawing
        ("<a><svg><desc></a>in the description", "", "in the description"),
        # the customizable-select parser (2025) keeps a <style> in a <select>: raw text to its end
        ("<select><style></select>in the style", "", "in the style"),
    ],
)
def test_lexbor_follows_the_standard_where_html5lib_drifts(
        page: str, browser: str, html5lib: str) -> None:
    fast, reference = both(page)
    assert fast.split() == browser.split()
    assert reference.split() == html5lib.split()


@pytest.mark.parametrize(
    "page",
    [
        "<svg viewbox='0 0 1 1' xlink:href=x xml:lang=en><foreignObject><p>html</p>"
        "</foreignObject><clippath/><lineargradient/><text>t</text></svg>",
        "<math definitionurl=u><mi>x<mglyph/><b>y</b></mi><annotation-xml encoding=text/html>"
        "<p>a</p></annotation-xml><annotation-xml><svg><desc><i>d</i></desc></svg>"
        "</annotation-xml></math>",
        "<svg><math><mi>n</mi></math><font color=red>out</font></svg>",
        "<!--before--><html a=1 b><head><title>t</title></head><body><!--in-->x</body></html>"
        "<!--after-->",
        "<p>a<template>t<b>u</b></template>b<br>c<!--c-->d</p>",
        "<table><tr><td>a<td>b</table><b>c<p>d</b>e</p>",
        "<div>\r\nx\ry\x00z&nbsp;&amp;&#x1F600;</div>",
        "<noscript><p>seen</p></noscript><isindex prompt=p>i</isindex>",
        # An attribute name lowered as ASCII only: a Kelvin sign is no "k" (no xlink:href).
        "<svg><a xlin\u212a:href=x definitionUR\u212a=y>t</a></svg>",
    ],
)
def test_the_tree_is_html5libs(page: str) -> None:
    fast = lexbor.parse(page, 20.0)
    assert fast is not None
    reference, _ = parse_visible(page, parser="html5lib")
    assert _texts(fast) == _texts(reference)
    assert _dump_without_empty_text(fast) == _dump_without_empty_text(reference)


def _texts(root: ET.Element) -> str:
    return "".join(root.itertext())


def _dump_without_empty_text(root: ET.Element) -> list[str]:
    # html5lib leaves "" where an element's text was moved away; no text either way.
    return [line.replace("''", "None") for line in _dump(root)]


def test_template_content_is_left_out_and_the_text_around_it_joins() -> None:
    root = lexbor.parse("<p>a<template>t</template>b<template><i>u</i></template>c</p>", 20.0)
    assert root is not None
    assert not any(element.tag == "template" for element in root.iter())
    assert "".join(root.itertext()) == "abc"


@pytest.mark.parametrize(
    ("page", "why"),
    [
        ("<div>" * (lexbor.FAST_DEPTH + 1) + "x", "deeper than FAST_DEPTH"),
        ("<span>" * (lexbor.FAST_DEPTH + 1) + "x", "deeper than FAST_DEPTH"),
        ("".join(f"<b id={i}>" for i in range(lexbor.FORMATTING_SURPLUS)) + "x", "left open"),
        ("<frameset><frame></frameset>", "a frameset"),
        ("<p><desc>x</desc><mi>y</mi>", "names the tree does not give a namespace"),
        ("<p>\ud800</p>", "not UTF-8"),
        ("<div><object></div></object>" * 500, "an unbroken stack of open elements"),
        ("<form><div></form>" * 500, "a form closed alone"),
    ],
)
def test_pages_lexbor_does_not_suit_go_to_html5lib(page: str, why: str) -> None:
    assert lexbor.parse(page, 20.0) is None, why
    fast, reference = both(page)
    assert fast == reference


def test_real_pages_and_balanced_markup_stay_with_lexbor() -> None:
    icons = "<svg>" + "<path d='M0 0'/>" * 200 + "</svg>"
    scripts = "<script>" + "'<div>'" * 1000 + "</script>"
    links = "<p>" + "<a href=x>link</a> " * 2000
    nested = "<div>" * 80 + "deep" + "</div>" * 80
    for page in (icons * 20, scripts, links, nested, "<b><i>x</b>y</i>" * 40):
        assert lexbor.parse(page, 20.0) is not None


def test_deep_nesting_is_found_before_lexbor_parses_it() -> None:
    # lexbor takes minutes over 100,000 nested <div>s; the scan decides in a fraction of that.
    start = time.perf_counter()
    assert lexbor.parse("<div>" * 100_000 + "x", 20.0) is None
    assert time.perf_counter() - start < 5


def test_the_scan_lowers_tag_names_as_the_parser_does() -> None:
    # As ASCII only: "divK" (a Kelvin sign, which str.lower makes a "k") is no "divk", so that
    # end tag closes nothing and the stack grows by one a pair. lexbor is quadratic there
    # (16,000 pairs take 0.4 s, a page of 2 MiB about a minute), and only the scan, before the
    # parse, can keep such a page from it.
    page = "<div\u212a>x</divk>" * 500
    assert lexbor._unsuited(page)
    assert not lexbor._unsuited("<div\u212a>x</div\u212a>" * 500)
    assert not lexbor._unsuited("<DIV>x</div>" * 500)
    fast, reference = both(page)
    assert fast == reference


@pytest.mark.parametrize("space", ["\u00a0", "\u2003", "\u0085", "\x0b", "\x1c"])
def test_the_scan_ends_tag_names_where_the_parser_does(space: str) -> None:
    # At HTML's whitespace (tab, line feed, form feed, carriage return, space), "/" and ">"
    # only: what else str.isspace takes is part of the name, so "</div\u00a0x>" closes no
    # <div> and the stack grows by one a pair, as above.
    page = f"<div>x</div{space}x>" * 500
    assert lexbor._unsuited(page)
    assert not lexbor._unsuited("<div>x</div\tx>" * 500)  # a tab ends it: the div closes
    fast, reference = both(page)
    assert fast == reference


@pytest.mark.parametrize(
    ("unit", "where"),
    [
        ("<div>x<!--</div>-->", "a comment"),
        ("<!-- a --!><div>x", "a comment ended by --!>: what follows is markup"),
        ("<div title='</div>'>x", "a quoted attribute value"),
        ('<div title="a>b</div>">x', "a quoted value holding >"),
        ("<div>x<?</div>", "a bogus comment"),
        ("<div>x<!DOCTYPE </div>", "a declaration"),
        ("<div>x</ </div>", "</ and no letter"),
        ("<svg><g><![CDATA[ > </g> ]]>", "CDATA in SVG"),
        ("<div><script><!--<script></script></div>--></script>", "a double-escaped script"),
        ("<div><style>x</div></style >", "raw text"),
        ("<svg><title><g></title>", "an SVG title, markup there"),
    ],
)
def test_an_end_tag_the_parser_never_sees_closes_nothing_for_the_scan(unit: str, where: str
                                                                       ) -> None:
    # Each unit leaves one element more open in the parser's stack than the scan would see if
    # it took the end tag inside it for one (or, for a comment, did not see where it ends).
    page = unit * 500
    assert lexbor._unsuited(page), where
    fast, reference = both(page)
    assert fast == reference


def test_what_the_scan_skips_still_leaves_real_pages_to_lexbor() -> None:
    pages = [
        "<div><!-- </div> -->x</div>" * 500,
        "<div title='a>b'>x</div>" * 500,
        "<div><script>if (a</div>) {}</script>x</div>" * 500,
        "<div><script><!-- var a = '<b>'; --></script></div>" * 500,
        "<svg><title>t</title><g></g></svg>" * 200,
        "<div><svg><style><![CDATA[ .a > .b {} ]]></style></svg></div>" * 200,
    ]
    for page in pages:
        assert not lexbor._unsuited(page), page[:60]


def test_half_the_node_limit_sends_the_page_to_html5lib(monkeypatch: pytest.MonkeyPatch) -> None:
    # html5lib counts some elements twice (<meta> after </head> puts <head> on its stack again):
    # from half the limit on, it decides.
    monkeypatch.setattr(tree_builder, "MAX_NODES", 1000)
    assert lexbor.parse("<span>x</span>" * 496, 20.0) is not None  # with html, head and body
    assert lexbor.parse("<span>x</span>" * 498, 20.0) is None
    after_head = "<head></head>" + "<meta>" * 600 + "<p>x"
    with pytest.raises(ParseLimitError, match="more than 1000 elements and comments"):
        visible_text(after_head, parser="lexbor")
    assert lexbor.parse(after_head, 20.0) is None


def test_a_page_of_more_tags_than_half_the_node_limit_is_not_parsed_by_lexbor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_builder, "MAX_NODES", 1000)
    assert lexbor._unsuited("<p>x" * 501)
    assert lexbor._unsuited("<!---->" * 501)
    assert not lexbor._unsuited("<p>x" * 500)


def test_the_time_budget_holds() -> None:
    with pytest.raises(ParseLimitError) as raised:
        lexbor.parse("<p>SECRET words</p>" * 100, 0)
    assert str(raised.value) == "the page's markup takes more than 0 s to parse"


def test_the_parser_is_chosen_by_argument_then_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(lexbor.PARSER_VARIABLE, raising=False)
    assert lexbor.chosen() == "lexbor"
    monkeypatch.setenv(lexbor.PARSER_VARIABLE, "html5lib")
    assert lexbor.chosen() == "html5lib"
    assert lexbor.chosen("lexbor") == "lexbor"
    monkeypatch.setenv(lexbor.PARSER_VARIABLE, "lxml")
    assert lexbor.chosen() == "lexbor"  # the environment never stops a run: the default
    with pytest.raises(ValueError, match="html5lib or lexbor"):
        lexbor.chosen("lxml")


def test_without_the_extra_html5lib_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexbor, "_Parser", None)
    monkeypatch.delenv(lexbor.PARSER_VARIABLE, raising=False)
    assert not lexbor.available()
    assert lexbor.chosen() == "html5lib"
    monkeypatch.setenv(lexbor.PARSER_VARIABLE, "lexbor")
    assert lexbor.chosen() == "html5lib"
    assert visible_text("<p>a</p><template>t</template>b").split() == ["a", "b"]
    with pytest.raises(ValueError, match=r"tracecite\[fast\]"):
        lexbor.chosen("lexbor")


def test_the_environment_choice_reaches_html5lib(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where the two differ (the drifts above), the environment decides which text comes back.
    monkeypatch.setenv(lexbor.PARSER_VARIABLE, "html5lib")
    assert visible_text("<svg></br>shown").split() == []
    monkeypatch.setenv(lexbor.PARSER_VARIABLE, "lexbor")
    assert visible_text("<svg></br>shown").split() == ["shown"]
