"""The standard streams as TraceCite writes to them: either may be closed (``>&-``, ``2>&-``)."""

from __future__ import annotations

import contextlib
import sys
from typing import TextIO


def is_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` is an open terminal (a closed stream is None or raises)."""
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


def write_stderr(text: str) -> None:
    """Write to stderr if there is one to write to; a closed stderr swallows the text."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stderr.write(text)
