"""Shard reports for ``tracecite merge`` (figure 8, docs/guides/scale.md): the JSON reports
two shards of one run write, as ``--json`` writes them, with ``count`` findings each.

Each report is written a finding at a time (the generator never holds one), in the shape
tracecite gives it: schema 2, the shard ``K/N``, the run's SHA-256 digests (the same for every
shard of the run), the summary's counts, and findings of quotes not found in their captures,
one in two with its diagnosis.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracecite.findings import Finding

# tracecite is imported when reports are made, not with this module: the benchmark measures
# another checkout's code with inputs this one made and cached (bench_memory.py).
INPUTS_DIGEST = hashlib.sha256(b"inputs of the benchmark run").hexdigest()
OPTIONS_DIGEST = hashlib.sha256(b"options of the benchmark run").hexdigest()


def _finding(shard: int, n: int) -> Finding:
    """The ``n``-th finding of shard ``shard``: a quote its capture lacks, near-missed."""
    from tracecite.codes import Code
    from tracecite.findings import Diagnosis, Finding

    return Finding(Code.QUOTE_NOT_IN_CAPTURE,
                   "quote not found in the captured source (the nearest passage differs)",
                   file=f"traces/shard{shard}/run-{n // 1000:05d}.jsonl", line=3 + n % 1000,
                   column=17, claim=1 + n % 7, citation=1, source_id=f"s{n % 50}",
                   uri=f"https://example.com/articles/{n % 5000}/page",
                   # One in two near-missed, as a check's quotes not found mostly are.
                   diagnosis=None if n % 2 else Diagnosis(
                       ("typography",), 40 + n % 60, 30 + n % 10, first_difference=12,
                       characters=("U+2019 '",)))


def shard_report(path: str, shard: int, shards: int, count: int) -> None:
    """Write shard ``shard``/``shards``'s report of ``count`` findings to ``path`` (of one
    shard: the unsharded run's report)."""
    from tracecite.findings import Report, RunDigests, Summary
    from tracecite.report_writer import finding_dict, report_dict

    empty = Report("check", (), Summary(inputs=count // 1000 + 1, records=count * 2,
                                        citations=count * 3),
                   shard=(shard, shards) if shards > 1 else None,
                   run=RunDigests(INPUTS_DIGEST, OPTIONS_DIGEST))
    doc: dict[str, Any] = report_dict(empty)
    doc["exit_code"] = 2
    doc["summary"].update(findings=count, errors=count)
    head, tail = json.dumps(doc, indent=2, ensure_ascii=True).split('"findings": []', 1)
    with open(path, "w", encoding="utf-8") as out:
        out.write(head + '"findings": [')
        for n in range(count):
            item = json.dumps(finding_dict(_finding(shard, n)), indent=2, ensure_ascii=True)
            out.write(("\n" if n == 0 else ",\n") + item.replace("\n", "\n    ").join(
                ("    ", "")))
        out.write("\n  ]" + tail + "\n")


def shard_reports(paths: list[str], count: int) -> None:
    """One run's shard reports, one per path (shard K of len(paths)), ``count`` findings each."""
    for k, path in enumerate(paths, start=1):
        shard_report(path, k, len(paths), count)


def size_for(mb: float) -> int:
    """About how many findings a report of ``mb`` megabytes holds."""
    from tracecite.report_writer import finding_dict

    probes = [json.dumps(finding_dict(_finding(1, n)), indent=2).replace("\n", "\n    ")
              for n in (123_456, 123_457)]  # one with a diagnosis, one without
    return int(mb * 1_000_000 / (sum(map(len, probes)) / 2 + 6))


if __name__ == "__main__":
    shard_reports(sys.argv[2:], int(sys.argv[1]))
