"""The renderer: small adversarial pages, one rule each (docs/reference/fetching.md): boundaries,
characters, what is never visible, forms, details and dialog, SVG and MathML, malformed input."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.visible.conftest import norm, shown
from tracecite.visible import visible_text

# --- Boundaries -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("<b>foo</b><i>bar</i>", "foobar"),
        ("<span>foo</span><a href=x>bar</a><em>baz</em>", "foobarbaz"),
        ("foo<img src=x alt=ALT>bar", "foobar"),
        ("foo<wbr>bar", "foobar"),
        ("<div>foo</div><div>bar</div>", "foo bar"),
        ("<p>foo</p><p>bar</p>", "foo bar"),
        ("foo<p>bar</p>baz", "foo bar baz"),
        ("<h1>Title</h1>Body", "Title Body"),
        ("<ul><li>one</li><li>two</li></ul>", "one two"),
        ("<dl><dt>term</dt><dd>definition</dd></dl>", "term definition"),
        ("foo<br>bar", "foo bar"),
        ("foo<br class=x>bar", "foo bar"),
        ("foo<hr>bar", "foo bar"),
        ("<blockquote>quoted</blockquote>after", "quoted after"),
        ("<section>a</section><article>b</article><aside>c</aside><nav>d</nav>", "a b c d"),
        ("<header>a</header><main>b</main><footer>c</footer>", "a b c"),
        ("<figure>img<figcaption>caption</figcaption></figure>", "img caption"),
        ("<form>a<fieldset><legend>b</legend>c</fieldset></form>", "a b c"),
        ("<address>a</address>b", "a b"),
        ("<pre>a\n  b</pre>c", "a b c"),
        ("<button>Go</button><button>Stop</button>", "GoStop"),  # inline-block: no break
        ("<span style='display:block'>a</span><span>b</span>", "a b"),
        ("<div style='display:flex'><span>a</span><span>b</span></div>", "a b"),
        ("<span style='display:inline-flex'><b>a</b><i>b</i></span>", "a b"),
        ("<span style='display:table-cell'>a</span><span>b</span>", "a b"),
        # An inline display never removes a boundary (a person sees the items apart).
        ("<ul><li style='display:inline'>a</li><li style='display:inline'>b</li></ul>", "a b"),
    ],
)
def test_block_boundaries_separate_and_inline_ones_do_not(page: str, expected: str) -> None:
    assert shown(page) == expected


def test_table_cells_and_rows_are_separated() -> None:
    page = "<table><tr><th>h1<th>h2<tr><td>a</td><td>b</td></tr><tr><td>c</table>after"
    raw = visible_text(page)
    assert shown(page) == "h1 h2 a b c after"
    assert "a\tb" in re.sub(r"\t+", "\t", raw)  # cells: tabs; innerText has one between
    assert raw.index("h2") < raw.index("\n", raw.index("h2")) < raw.index("a")


def test_caption_and_table_sections() -> None:
    page = "<table><caption>cap</caption><thead><tr><td>x</thead><tbody><tr><td>y</table>"
    assert shown(page) == "cap x y"


def test_text_of_a_page_without_markup() -> None:
    assert shown("just some text") == "just some text"


# --- Characters -------------------------------------------------------------------------------


def test_entities_and_character_references_are_decoded() -> None:
    page = "<p>&amp; &lt;b&gt; &quot;q&quot; &#65;&#x42; &eacute;t&eacute; &notit; &copy</p>"
    assert shown(page) == '& <b> "q" AB été ¬it; ©'


def test_nbsp_stays_u00a0_and_normalises_to_a_space() -> None:
    raw = visible_text("<p>a&nbsp;b&#160;c</p>")
    assert "a\u00a0b\u00a0c" in raw
    assert shown("<p>a&nbsp;&nbsp; b</p>") == "a b"


def test_pre_keeps_its_text() -> None:
    raw = visible_text("<pre>line 1\n    indented\tx</pre>")
    assert "line 1\n    indented\tx" in raw


def test_soft_hyphen_and_zero_width_space_stay() -> None:
    assert shown("<p>co&shy;op zero&#8203;width</p>") == "co\u00adop zero\u200bwidth"


def test_decomposed_text_matches_after_nfc() -> None:
    assert shown("<p>Cafe\u0301</p>") == "Café"


def test_a_leading_byte_order_mark_is_dropped() -> None:
    assert visible_text("\ufeff<p>x</p>").strip() == "x"


# --- Never visible ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "page",
    [
        "<head><title>SECRET</title><meta name=description content=SECRET></head><p>ok",
        "<title>SECRET</title><p>ok",
        "<p>ok<title>SECRET</title>",  # a <title> in the body is display:none too
        "<p>ok</p><script>var s = 'SECRET';</script>",
        '<p>ok</p><script type=application/ld+json>{"a": "SECRET"}</script>',
        "<p>ok</p><style>p::after { content: 'SECRET' }</style>",
        "<p>ok</p><template><p>SECRET</p></template>",
        "<p>ok</p><!-- SECRET -->",
        "<p>ok<!-- SECRET --></p>",
        "<p title=SECRET aria-label=SECRET data-x=SECRET>ok<img alt=SECRET></p>",
        "<p>ok<input value=SECRET><input type=hidden value=SECRET></p>",
        "<p>ok</p><textarea>SECRET</textarea>",
        "<p>ok</p><noembed>SECRET</noembed><noframes>SECRET</noframes>",
        "<p>ok</p><iframe>SECRET</iframe>",
        "<p>ok</p><object data=x><param name=SECRET value=SECRET></object>",
        "<p>ok</p><video><p>SECRET</p></video><audio controls>SECRET</audio>",
        "<p>ok</p><embed src=x>",
        "<p>ok</p><datalist><option>SECRET</option></datalist>",
        "<p>ok</p><progress value=1 max=2>SECRET</progress><meter>SECRET</meter>",
        "<p>ok<ruby>漢<rp>(SECRET</rp><rt>kan</rt><rp>)</rp></ruby></p>",
    ],
)
def test_invisible_containers(page: str) -> None:
    text = shown(page)
    assert "SECRET" not in text
    assert "ok" in text


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        # A canvas draws nothing without a script: its fallback is what a browser renders.
        ("<p>a</p><canvas width=9><p>Canvas fallback</p></canvas>", "a Canvas fallback"),
        ("x<canvas>in<b>line</b></canvas>y", "xinliney"),  # inline, like an unknown element
        # An object TraceCite does not load (none is loaded) shows its fallback; a <param>
        # shows nothing, and a nested object's fallback shows in turn.
        ("<object data=movie.swf type=application/x-shockwave-flash>"
         "<param name=movie value=movie.swf><p>Get the plug-in</p></object>", "Get the plug-in"),
        ("<object data=a.svg>outer <object data=b.png>inner <embed src=c></object></object>",
         "outer inner"),
        ("<p>x<object>fallback</object>y</p>", "xfallbacky"),
        ("<object hidden>SECRET</object><object style=display:none>SECRET</object>ok", "ok"),
    ],
)
def test_canvas_and_object_fallback_is_visible(page: str, expected: str) -> None:
    assert shown(page) == expected


def test_ruby_text_is_visible_and_parentheses_are_not() -> None:
    assert shown("<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby>") == "漢kan"


def test_noscript_is_visible_with_scripting_off() -> None:
    assert shown("<noscript><p>Please enable JavaScript</p></noscript>") == (
        "Please enable JavaScript"
    )
    # pixnet: escaped markup inside <noscript> is text a person sees.
    assert shown("<noscript>&lt;iframe src=x&gt;</noscript>") == "<iframe src=x>"


def test_noscript_in_head_shows_nothing_but_what_breaks_out() -> None:
    page = "<head><noscript><style>x{}</style><link rel=x></noscript></head><p>body"
    assert shown(page) == "body"


# --- The hidden attribute ---------------------------------------------------------------------


def test_hidden_attribute() -> None:
    assert shown("<p>a<span hidden>SECRET</span>b</p>") == "ab"
    assert shown("<div hidden=''><p>SECRET</p></div><p>ok</p>") == "ok"
    assert shown("<p hidden=until-found>SECRET</p>ok") == "ok"


# --- Forms ------------------------------------------------------------------------------------


def test_every_option_label_of_a_select_is_visible() -> None:
    page = "Format <select><option>Basic HTML<option selected>Plain text</select> end"
    raw = visible_text(page)
    assert shown(page) == "Format Basic HTML Plain text end"
    assert norm(raw.split("Basic HTML")[1].split("Plain")[0]) == ""  # on lines of their own
    assert "\n" in raw.split("Basic HTML")[1].split("Plain")[0]


def test_optgroups_and_buttons_and_labels() -> None:
    page = "<label>Name</label><select><optgroup label=G><option>one</optgroup></select>"
    assert shown(page) == "Name one"


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        # Chromium's innerText of a <select>: the text of every option among its descendants,
        # one per line, and nothing else in it (since the customizable-select changes the
        # parser keeps more there, and innerText looks through all of it).
        ("<select><option>A<b>B</b>C</option><div>D</div>E<option>F</select>after",
         "ABC F after"),
        ("<select><button>Pick</button><option>One</option></select>", "One"),
        ("<select><optgroup label=G><option>one<option>two</optgroup><option>three</select>",
         "one two three"),
        ("<select><datalist><option>listed</option></datalist></select>", "listed"),
        # An option's text: all of it but scripts, whitespace collapsed, hidden parts included.
        ("<select><option> a \n b <script>s</script><!--c-->x<span hidden>y</span></select>",
         "a b xy"),
        ("<select><option hidden>still listed</select>", "still listed"),
        # A select that is not rendered shows nothing.
        ("<select hidden><option>SECRET</select>ok", "ok"),
        ("<select style='visibility:hidden'><option>SECRET</select>ok", "ok"),
        # An option outside a select is a line of its text.
        ("<div>ab<option>12</option>cd</div>", "ab 12 cd"),
    ],
)
def test_select_shows_its_options_and_nothing_else(page: str, expected: str) -> None:
    assert shown(page) == expected


# --- details, dialog --------------------------------------------------------------------------


def test_closed_details_shows_only_its_first_summary() -> None:
    page = "<details>SECRET<summary>Sum</summary><p>SECRET</p><summary>SECRET</summary></details>"
    assert shown(page) == "Sum"


def test_open_details_shows_everything() -> None:
    page = "<details open><summary>Sum</summary><p>Body</p></details>"
    assert shown(page) == "Sum Body"


def test_closed_details_without_summary_shows_nothing() -> None:
    assert shown("<details><p>SECRET</p></details>ok") == "ok"


def test_dialog_needs_open() -> None:
    assert shown("<dialog>SECRET</dialog>ok") == "ok"
    assert shown("<dialog id=d class=c>SECRET</dialog>ok") == "ok"
    assert shown("<dialog open>Shown</dialog>") == "Shown"


# --- SVG and MathML ---------------------------------------------------------------------------


def test_svg_text_is_visible_but_title_desc_metadata_are_not() -> None:
    page = (
        "<p>before</p><svg><title>SECRET</title><desc>SECRET</desc><metadata>SECRET</metadata>"
        "<g><text x=0 y=0>Label <tspan>one</tspan></text></g><text>Two</text></svg><p>after</p>"
    )
    assert shown(page) == "before Label one Two after"


def test_svg_character_data_outside_text_is_not_painted() -> None:
    assert shown("<svg><g>SECRET</g><a>SECRET</a>SECRET</svg>ok") == "ok"


def test_svg_defs_style_script_and_display_attribute() -> None:
    page = (
        "<svg><defs><text>SECRET</text></defs><style>SECRET{}</style><script>SECRET</script>"
        "<text display='none'>SECRET</text><g visibility='hidden'><text>SECRET</text></g>"
        "<text>ok</text></svg>"
    )
    assert shown(page) == "ok"


def test_svg_foreign_object_holds_html() -> None:
    page = "<svg><foreignObject><div>Inside</div><p hidden>SECRET</p></foreignObject></svg>"
    assert shown(page) == "Inside"


def test_mathml_annotations_are_not_visible() -> None:
    page = (
        "<p>E = <math><semantics><mrow><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup></mrow>"
        "<annotation encoding='application/x-tex'>SECRET</annotation>"
        "<annotation-xml encoding='MathML-Content'><ci>SECRET</ci></annotation-xml>"
        "</semantics></math> holds</p>"
    )
    assert shown(page) == "E = mc2 holds"


def test_mathml_block_and_tables() -> None:
    page = (
        "a<math display=block><mtable><mtr><mtd><mi>x</mi></mtd><mtd><mi>y</mi></mtd></mtr>"
        "</mtable></math>b"
    )
    assert shown(page) == "a x y b"


# --- Malformed input --------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["", " ", "\n\t", "<!DOCTYPE html>", "<html><head></head></html>"])
def test_empty_documents(page: str) -> None:
    assert shown(page) == ""


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("<p>one<p>two", "one two"),  # implied end tags
        ("<b><i>bold italic</b> italic</i>", "bold italic italic"),  # adoption agency
        ("<table>stray<tr><td>cell</table>", "stray cell"),  # foster parenting
        ("</div></p>text</span>", "text"),  # stray end tags
        ("<p>unterminated <b>bold", "unterminated bold"),
        ("<div <p>>x", ">x"),
        ("<p>a</p><!-- unclosed comment <p>SECRET", "a"),
        ("<script>unclosed SECRET", ""),
        ("<p>a<textarea>SECRET", "a"),
        ("<title>SECRET", ""),
        ("\x00<p>x\x00y</p>", "xy"),
        ("<p>x</p></body></html><p>after the end</p>", "x after the end"),
        ("<plaintext><b>raw</b>", "<b>raw</b>"),
        ("<xmp><b>raw</b></xmp>", "<b>raw</b>"),
    ],
)
def test_malformed_html(page: str, expected: str) -> None:
    assert shown(page) == expected


# --- Properties -------------------------------------------------------------------------------

_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff")
    | st.sampled_from(" \n\t\u00a0"),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_any_paragraph_text_is_found(text: str) -> None:
    assert norm(text) in shown(f"<p>{html.escape(text)}</p>")


@settings(max_examples=200, deadline=None)
@given(_TEXT, st.sampled_from(["script", "style", "template", "textarea", "title"]))
def test_text_in_invisible_containers_is_never_found(text: str, container: str) -> None:
    secret = f"zq{text}qz"
    if f"</{container}" in secret.lower() or "<!--" in secret:
        return  # it would end (or, for scripts, re-nest) the container
    if container in ("template", "textarea", "title"):
        secret = html.escape(secret)
    page = f"<p>visible</p><{container}>{secret}</{container}><p>after</p>"
    text_shown = shown(page)
    assert "zq" not in text_shown and "qz" not in text_shown
    assert text_shown == "visible after"
