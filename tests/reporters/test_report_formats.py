"""The format names the option checks know are the reporters' table's, in its order."""

from __future__ import annotations

from tracecite.report_formats import REPORT_FORMATS
from tracecite.reporters import REPORTERS


def test_every_format_name_has_its_reporter() -> None:
    assert tuple(REPORTERS) == REPORT_FORMATS
