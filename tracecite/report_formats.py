"""The report formats by their ``--format`` names (docs/reference/reports.md).

A module of its own, below both readers of the names: the option checks
(:mod:`tracecite.values`, ``--report-file FORMAT:PATH``) and the reporters' table
(:data:`tracecite.reporters.REPORTERS`, one reporter per name).
"""

from __future__ import annotations

REPORT_FORMATS = ("console", "json", "github", "sarif")
"""Every output format, in the order of the reporters' table."""
