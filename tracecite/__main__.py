"""``python -m tracecite``."""

from tracecite.cli import entry

raise SystemExit(entry())
