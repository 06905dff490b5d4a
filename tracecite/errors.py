"""The error boundary's exception: a user-caused problem with the command line (TC100)."""

from __future__ import annotations


class UsageError(Exception):
    """A bad command line or option value; the CLI turns it into TC100 and exit 1."""
