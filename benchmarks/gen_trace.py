"""Write a synthetic agent trace of about a given size, for the evidence benchmark.

One run; each tool result carries ``--sources`` sources of ~3.5 KB; the answer cites two quotes
per result (for 150 MB: ~14,000 results × 3 sources, ~28,000 citations). Deterministic.

    python benchmarks/gen_trace.py OUT.jsonl --mb 150
"""

from __future__ import annotations

import argparse
import json
import random

WORDS = [
    "source", "quote", "claim", "agent", "trace", "evidence", "capture", "page", "network",
    "answer", "citation", "reference", "document", "archive", "record", "result", "search",
    "index", "query", "server", "client", "browser", "request", "response", "report", "metric",
    "value", "signal", "header", "footer", "section", "chapter", "paragraph", "sentence",
]


def paragraph(rng: random.Random, size: int) -> str:
    """Roughly ``size`` characters of sentences, with some Unicode and odd whitespace."""
    out: list[str] = []
    length = 0
    while length < size:
        words = rng.choices(WORDS, k=rng.randint(8, 18))
        sentence = " ".join(words).capitalize() + rng.choice([".", ".", "!", "?"])
        if rng.random() < 0.05:
            sentence = sentence.replace(" ", "\u00a0", 1) + " café naïve"
        out.append(sentence)
        length += len(sentence) + 1
    return " ".join(out)


def generate(path: str, megabytes: float, sources_per_result: int = 3, seed: int = 1,
             source_chars: int = 3500) -> int:
    """Write the trace (each source about ``source_chars`` characters); return the number of
    citations."""
    rng = random.Random(seed)
    target = int(megabytes * 1024 * 1024)
    written = 0
    claims = []
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            n += 1
            call = {"type": "tool_call", "run_id": "bench", "call_id": f"c{n}", "tool": "fetch",
                    "input": {"url": f"https://example.com/page/{n}"}}
            sources = []
            for s in range(sources_per_result):
                content = paragraph(rng, source_chars)
                sources.append({"id": f"s{n}-{s}", "uri": f"https://example.com/page/{n}#{s}",
                                "content": content})
            # Two citations per result: quotes cut from its sources, whitespace reshaped.
            cites = []
            for s in rng.sample(range(sources_per_result), 2):
                content = sources[s]["content"]
                start = rng.randrange(0, max(1, len(content) - 200))
                quote = " ".join(content[start:start + rng.randint(40, 160)].split()[1:-1])
                cites.append({"source_id": f"s{n}-{s}", "quote": quote or "Source"})
            claims.append({"text": f"Claim {n}.", "citations": cites})
            result = {"type": "tool_result", "run_id": "bench", "call_id": f"c{n}", "ok": True,
                      "sources": sources}
            for event in (call, result):
                line = json.dumps(event, ensure_ascii=False) + "\n"
                out.write(line)
                written += len(line.encode("utf-8"))
        out.write(json.dumps({"type": "answer", "run_id": "bench", "claims": claims}) + "\n")
    return sum(len(c["citations"]) for c in claims)


def main() -> None:
    """Command line: output path and size."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--mb", type=float, default=150.0)
    parser.add_argument("--sources", type=int, default=3)
    args = parser.parse_args()
    citations = generate(args.out, args.mb, args.sources)
    print(f"wrote {args.out}: {args.mb:g} MB target, {citations} citations")


if __name__ == "__main__":
    main()
