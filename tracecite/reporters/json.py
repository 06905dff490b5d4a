"""``--format json``: one JSON object (docs/reference/reports.md), the stable machine-readable
report, as :mod:`tracecite.report_writer` writes it (:mod:`tracecite.report_reader` reads it
back: ``tracecite merge`` combines shards' reports)."""

from __future__ import annotations

import json

from tracecite.findings import Report
from tracecite.report_writer import report_dict


def format_json(report: Report) -> str:
    """The report as JSON text; ``ensure_ascii`` keeps control characters escaped."""
    return safe_json(report_dict(report))


def safe_json(document: object) -> str:
    """JSON text that is safe in a GitHub Actions log, decoding to the same values.

    Control characters are escaped (``ensure_ascii``), and so is the ``#`` of every ``##[`` (the
    runner reads the legacy ``##[command]`` anywhere in a line). ``#`` and ``[`` never occur
    in JSON outside strings, nor inside an escape sequence, so this changes strings only.
    """
    text = json.dumps(document, indent=2, ensure_ascii=True)
    return text.replace("##[", "#\\u0023[") + "\n"
