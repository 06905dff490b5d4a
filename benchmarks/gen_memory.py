"""Write the inputs of the memory benchmark (figure 8). Deterministic.

- ``notes``: a notes file of about ``--mb`` MB of short records (~120 bytes each, quoting 500
  pages, :func:`site`), the kind that costs the most memory per byte;
- ``sources``: a trace with ``--count`` small sources (ten per result, ~60 bytes of content
  each) and an answer citing one source in a hundred;
- ``failing``: a trace whose answer has ``--count`` claims, each quoting what is not in its
  capture (one finding per claim);
- ``one-line``: a trace whose one tool result holds ``--count`` sources on one line;
- ``bomb``: an Inspect ``.eval`` zip bomb whose sample decompresses to ``--mb`` MiB;
- ``pair``: two traces of about ``--mb`` MB each (``gen_trace``), the second with one source in
  ten captured again with changed content, for ``compare``.

    python benchmarks/gen_memory.py notes OUT.txt --mb 50
    python benchmarks/gen_memory.py sources OUT.jsonl --count 1000000
    python benchmarks/gen_memory.py pair OLD.jsonl NEW.jsonl --mb 150
    python benchmarks/gen_memory.py failing OUT.jsonl --count 1000000
    python benchmarks/gen_memory.py one-line OUT.jsonl --count 2000000
    python benchmarks/gen_memory.py bomb OUT.eval --mb 1600
"""

from __future__ import annotations

import argparse
import json
import random

from gen_trace import WORDS, generate


def page_words(number: int, words: int = 300) -> list[str]:
    """The words of page ``number`` of the notes' site (deterministic)."""
    return random.Random(number).choices(WORDS, k=words)


def site(urls: int = 500) -> dict[str, bytes]:
    """The pages the notes cite, by path: ``/page/N``, each a paragraph of its words."""
    return {f"/page/{n}": (f"<!doctype html><title>Page {n}</title><p>"
                           f"{' '.join(page_words(n))}</p>\n").encode() for n in range(urls)}


def notes(path: str, megabytes: float, urls: int = 500, host: str = "bench.test",
          seed: int = 1) -> int:
    """Write a notes file of short records, each quoting five words of one of the ``urls``
    pages of :func:`site` on ``host``; return the number of records."""
    rng = random.Random(seed)
    pages = [page_words(n) for n in range(urls)]
    target = int(megabytes * 1024 * 1024)
    written = count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write("# Notes for the memory benchmark\n\n")
        while written < target:
            count += 1
            claim = " ".join(rng.choices(WORDS, k=4))
            n = rng.randrange(urls)
            start = rng.randrange(len(pages[n]) - 5)
            quote = " ".join(pages[n][start:start + 5])
            record = f"claim: {claim}.\nquote: {quote}\nurl: http://{host}/page/{n}\n\n"
            out.write(record)
            written += len(record)
    return count


def many_sources(path: str, count: int, per_result: int = 10, seed: int = 1) -> int:
    """Write a trace with ``count`` small sources; return the number of citations."""
    rng = random.Random(seed)
    cites = []
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for n in range(1, count // per_result + 1):
            out.write(json.dumps({"type": "tool_call", "run_id": "mem", "call_id": f"c{n}",
                                  "tool": "search"}) + "\n")
            sources = []
            for s in range(per_result):
                content = " ".join(rng.choices(WORDS, k=8))
                sources.append({"id": f"source-{n}-{s}", "uri": f"https://example.com/{n}/{s}",
                                "content": content})
                if rng.random() < 0.01:
                    cites.append({"source_id": f"source-{n}-{s}",
                                  "quote": " ".join(content.split()[2:5])})
            out.write(json.dumps({"type": "tool_result", "run_id": "mem", "call_id": f"c{n}",
                                  "ok": True, "sources": sources}) + "\n")
        out.write(json.dumps({"type": "answer", "run_id": "mem",
                              "claims": [{"text": "Claim.", "citations": cites}]}) + "\n")
    return len(cites)


def failing_claims(path: str, count: int, sources: int = 1000, seed: int = 1) -> int:
    """Write a trace whose answer has ``count`` claims, each citing one of ``sources`` small
    captures with a quote that is not in it (every one a finding); return ``count``."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps({"type": "tool_call", "run_id": "mem", "call_id": "c1",
                              "tool": "search"}) + "\n")
        captured = [{"id": f"s{n}", "uri": f"https://example.com/{n}",
                     "content": " ".join(rng.choices(WORDS, k=40))} for n in range(sources)]
        out.write(json.dumps({"type": "tool_result", "run_id": "mem", "call_id": "c1",
                              "ok": True, "sources": captured}) + "\n")
        out.write('{"type": "answer", "run_id": "mem", "claims": [')
        for n in range(count):
            claim = {"text": f"Claim {n}.", "citations": [
                {"source_id": f"s{n % sources}", "quote": f"nowhere to be found {n}"}]}
            out.write(("" if n == 0 else ", ") + json.dumps(claim))
        out.write("]}\n")
    return count


def many_on_one_line(path: str, count: int, seed: int = 1) -> int:
    """Write a trace whose one ``tool_result`` holds ``count`` small sources on one line, and
    an answer citing one source in a thousand; return the number of citations."""
    rng = random.Random(seed)
    cites = []
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps({"type": "tool_call", "run_id": "mem", "call_id": "c1",
                              "tool": "search"}) + "\n")
        out.write('{"type": "tool_result", "run_id": "mem", "call_id": "c1", "ok": true, '
                  '"sources": [')
        for n in range(count):
            content = " ".join(rng.choices(WORDS, k=6))
            out.write(("" if n == 0 else ", ") + json.dumps(
                {"id": f"s{n}", "uri": f"https://example.com/{n}", "content": content}))
            if n % 1000 == 0:
                cites.append({"source_id": f"s{n}", "quote": " ".join(content.split()[1:4])})
        out.write("]}\n")
        out.write(json.dumps({"type": "answer", "run_id": "mem",
                              "claims": [{"text": "Claim.", "citations": cites}]}) + "\n")
    return len(cites)


def zip_bomb(path: str, megabytes: float) -> int:
    """Write an Inspect ``.eval`` archive whose one sample member is ``megabytes`` MiB of
    spaces after its JSON, deflated (a thousandth of that on disk): a zip bomb. Return the
    member's size decompressed."""
    import zipfile

    header = {"version": 2, "status": "success",
              "eval": {"eval_id": "bomb", "task": "bomb"}}
    sample = {"id": 1, "epoch": 1, "messages": []}
    chunk = b" " * (4 << 20)
    size = 0
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        with archive.open("samples/1_epoch_1.json", "w", force_zip64=True) as member:
            size += member.write(json.dumps(sample).encode())
            for _ in range(int(megabytes * (1 << 20)) // len(chunk)):
                size += member.write(chunk)
    return size


def pair(old: str, new: str, megabytes: float, source_chars: int = 3500) -> None:
    """Two traces for ``compare``: ``new`` is ``old`` with one source in ten changed (sources
    of about ``source_chars`` characters: 3,500 make 43,000 of them in 150 MB, 1,200 make
    120,000)."""
    generate(old, megabytes, source_chars=source_chars)
    rng = random.Random(2)
    with open(old, encoding="utf-8") as src, open(new, "w", encoding="utf-8") as out:
        for line in src:
            event = json.loads(line)
            if event.get("type") == "tool_result":
                for source in event["sources"]:
                    if rng.random() < 0.1:
                        source["content"] = source["content"][::-1]
            out.write(json.dumps(event, ensure_ascii=False) + "\n")


def main() -> None:
    """Command line: what to write, where, how much."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["notes", "sources", "pair", "failing", "one-line",
                                         "bomb"])
    parser.add_argument("out", nargs="+")
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.kind == "notes":
        print(f"{notes(args.out[0], args.mb)} records")
    elif args.kind == "sources":
        print(f"{many_sources(args.out[0], args.count)} citations")
    elif args.kind == "failing":
        print(f"{failing_claims(args.out[0], args.count)} failing claims")
    elif args.kind == "one-line":
        print(f"{many_on_one_line(args.out[0], args.count)} citations")
    elif args.kind == "bomb":
        print(f"{zip_bomb(args.out[0], args.mb)} bytes decompressed")
    else:
        pair(args.out[0], args.out[1], args.mb)


if __name__ == "__main__":
    main()
