"""Check a directory of agent traces on a dask.distributed cluster, through ``tracecite.api``.

Each task checks a chunk of traces with ``api.check`` (offline: trace structure, and every quote
against its captured content); the workers send their reports back (a ``Report`` is frozen and
picklable) and ``api.merge`` combines them into the report of the whole directory: the same
findings and summary as ``tracecite check --evidence DIR``, which reads the same files (the
configured globs, as the command line selects them).

    python examples/dask/check_traces.py examples --output report.json
    python examples/dask/check_traces.py examples --scheduler tcp://scheduler:8786

Without ``--scheduler`` it starts a local cluster on 127.0.0.1 (worker processes, no
dashboard). It prints one summary line, writes the merged JSON report with ``--output`` and
exits with the report's exit code (0 passed, 1 an input is malformed, 2 findings).
Needs the ``dask`` extra: ``pip install -e '.[dask]'`` in a clone of TraceCite.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Sequence

from dask.distributed import Client, LocalCluster

from tracecite import api
from tracecite.findings import Report
from tracecite.reporters import summary_line
from tracecite.reporters.json import format_json
from tracecite.surroundings import expand_directories


def check_chunk(paths: list[str], evidence: bool) -> Report:
    """One task: the offline check of a few traces, in a worker."""
    return api.check(paths, evidence=evidence)


def check_directory(client: Client, directory: str, *, chunk_size: int = 100,
                    evidence: bool = True) -> Report:
    """The report of every trace under ``directory``, checked in chunks on ``client``'s
    cluster and merged in the order of the files."""
    given = expand_directories([directory])
    if given.findings or not given.paths:  # no file selected: the check says so (TC106)
        return api.check([directory], evidence=evidence)
    paths = list(given.paths)
    chunks = [paths[i:i + chunk_size] for i in range(0, len(paths), chunk_size)]
    futures = client.map(check_chunk, chunks, evidence=evidence, pure=False)
    reports: list[Report] = client.gather(futures)
    return api.merge(reports)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, check the directory, report; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", help="the traces (and notes) to check")
    parser.add_argument("--scheduler", help="address of a running scheduler (default: a "
                                            "local cluster)")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes of the local cluster (default 2)")
    parser.add_argument("--chunk-size", type=int, default=100,
                        help="traces per task (default 100)")
    parser.add_argument("--no-evidence", dest="evidence", action="store_false",
                        help="structure only, quotes not checked against their captures")
    parser.add_argument("--output", help="write the merged JSON report here")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.scheduler:
            client = stack.enter_context(Client(args.scheduler))
        else:
            cluster = stack.enter_context(LocalCluster(
                n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None, silence_logs=logging.ERROR))
            client = stack.enter_context(Client(cluster))
        report = check_directory(client, args.directory, chunk_size=args.chunk_size,
                                 evidence=args.evidence)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(format_json(report))
    print(summary_line(report))
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
