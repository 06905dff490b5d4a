"""A corpus of Markdown documents for the documents figure (docs/guides/documents.md), and a
notes file holding the same citations, so the two can be checked side by side.

``python benchmarks/gen_docs.py OUT_DIR [FILES] [BASE_URL]`` writes ``OUT_DIR/docs/NNNNN.md``
(about 5 KB each, five citations: one of each form but ``cite`` twice as inline HTML and a block
quote, the rest prose, lists, code and tables that hold none) and ``OUT_DIR/notes.txt`` with the
same quotes and URLs. URLs point at ``BASE_URL`` (default ``https://docs.example``), one page
per ten documents, so the live pass fetches each page for several citations.
"""

from __future__ import annotations

import sys
from pathlib import Path

_PROSE = (
    "Documentation is written for people who need to get something done, and every page of it "
    "should say what a reader can do, what they need first, and what happens when it goes "
    "wrong. This paragraph is filler of the kind real pages hold, with *emphasis*, `code`, and "
    "a [link to elsewhere](https://elsewhere.example/page) that is no citation at all.\n\n"
)
_LIST = "- first item with `inline code`\n- second item, a little longer than the first\n\n"
_CODE = '```python\nprint("a quoted string in code is not a citation")\n```\n\n'
_TABLE = "| option | meaning |\n|---|---|\n| `--json` | the report as JSON |\n\n"


def quotes(index: int) -> list[str]:
    """The five quotes of document ``index`` (all different, so a check cannot share them)."""
    return [f"quoted passage number {index} part {part} of the page" for part in range(5)]


def document(index: int, base: str) -> tuple[str, list[tuple[str, str]]]:
    """One document's Markdown and its (quote, url) citations."""
    url = f"{base}/page{index // 10}.html"
    q = quotes(index)
    text = (
        f"# Page {index}\n\n" + _PROSE * 3 + _LIST
        + f"> {q[0]}\n>\n> — [The source]({url})\n\n" + _PROSE
        + f"As the guide puts it, “{q[1]}” ([guide]({url})).\n\n" + _CODE + _PROSE
        + f'Here <q cite="{url}">{q[2]}</q> stands quoted.\n\n' + _TABLE
        + f"It says so [here]({url}#:~:text={q[3].replace(' ', '%20')}).\n\n" + _PROSE
        + f"```tracecite\nclaim: Page {index}.\nquote: {q[4]}\nurl: {url}\n```\n\n" + _PROSE * 4
    )
    return text, [(quote, url) for quote in q]


def main(argv: list[str]) -> int:
    out = Path(argv[1])
    files = int(argv[2]) if len(argv) > 2 else 10_000
    base = argv[3] if len(argv) > 3 else "https://docs.example"
    (out / "docs").mkdir(parents=True, exist_ok=True)
    with open(out / "notes.txt", "w", encoding="utf-8") as notes:
        for index in range(files):
            text, cited = document(index, base)
            (out / "docs" / f"{index:05d}.md").write_text(text, encoding="utf-8")
            for number, (quote, url) in enumerate(cited):
                notes.write(f"claim: Page {index}, citation {number}.\nquote: {quote}\n"
                            f"url: {url}\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
