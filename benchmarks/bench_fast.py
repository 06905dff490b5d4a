"""Figure 9, the ``fast`` extra's HTML parser: the visible text of every corpus page with
html5lib (the reference) and with lexbor (selectolax), in this one process.

Each page is parsed with each parser in turn (interleaved, so a noisy moment hits both alike),
``repeats`` times; a page's time is its fastest run, and a parser's figure the sum over the
pages. The texts must be the same, character for character: the table counts the pages where
they are, and those where lexbor left the page to html5lib (lexbor.py says when).
"""

from __future__ import annotations

import time

from bench_util import MB, Log, Table, ratio, seconds, verdict
from bench_web import corpus_dir

SPEED_GOAL = 5.0


def figure(repeats: int, limit: int | None = None, log: Log = print) -> Table:
    """Time ``visible_text`` over the corpus with each parser; ``limit`` pages at most."""
    from tracecite.visible import lexbor, visible_text

    table = Table(
        "The fast extra: corpus visible text with html5lib vs lexbor (selectolax)",
        ["parser", "pages", "MB", "sum of parses", "MB/s", "html5lib ÷ this", "goal"],
    )
    folder = corpus_dir()
    if folder is None:
        table.note("corpus not found (../shared/corpus/readability or $TRACECITE_CORPUS)")
        return table
    if not lexbor.available():
        table.note("selectolax is not installed (pip install 'tracecite[fast]'): html5lib only")
    paths = sorted(folder.glob("*.html"))
    if limit is not None:
        paths = paths[:: max(1, len(paths) // limit)][:limit]
    pages = [path.read_bytes().decode("utf-8") for path in paths]
    size = sum(len(page.encode("utf-8")) for page in pages)
    parsers = ["html5lib", *(["lexbor"] if lexbor.available() else [])]
    log(f"  {len(pages)} pages, {size / MB:.1f} MB: {repeats} run(s) of each parser …")
    best = {name: [float("inf")] * len(pages) for name in parsers}
    texts: dict[str, list[str]] = {name: [""] * len(pages) for name in parsers}
    for _ in range(repeats):
        for index, page in enumerate(pages):
            for name in parsers:
                start = time.perf_counter()
                text = visible_text(page, parser=name)
                elapsed = time.perf_counter() - start
                best[name][index] = min(best[name][index], elapsed)
                texts[name][index] = text
    reference = sum(best["html5lib"])
    for name in parsers:
        total = sum(best[name])
        speedup = reference / total
        goal = "" if name == "html5lib" else f"≥ {SPEED_GOAL:g}× {verdict(speedup >= SPEED_GOAL)}"
        table.add(name, len(pages), f"{size / MB:.1f}", seconds(total), f"{size / MB / total:.1f}",
                  ratio(speedup), goal)
    if "lexbor" in parsers:
        same = sum(a == b for a, b in zip(texts["html5lib"], texts["lexbor"], strict=True))
        left = sum(lexbor.parse(page, 20.0) is None for page in pages)
        table.note(f"the same text from both: {same} of {len(pages)} pages "
                   f"({verdict(same == len(pages))}); pages lexbor left to html5lib: {left}")
    table.note(f"a page's time is its fastest of {repeats} interleaved runs; lexbor's includes "
               "its checks and building the tree the renderer walks")
    return table
