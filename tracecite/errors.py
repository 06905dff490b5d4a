"""The error boundary's exceptions: user-caused problems that stop a run before its checks.

Each carries the finding that says what went wrong and where; the CLI (the one place they are
caught) turns it into the run's report, with exit code 1. Problems found by the checks are
never exceptions: they are findings in the report.
"""

from __future__ import annotations

from tracecite.codes import Code
from tracecite.findings import Finding


class TraceCiteError(Exception):
    """A user-caused problem that stops the run; ``finding`` says what and where."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt from its finding, whatever the subclass's constructor takes: an error raised
        # in a worker process reaches its caller whole.
        return (_rebuilt, (type(self), self.finding))


def _rebuilt(kind: type[TraceCiteError], finding: Finding) -> TraceCiteError:
    error = Exception.__new__(kind)
    TraceCiteError.__init__(error, finding)
    return error


class UsageError(TraceCiteError):
    """A bad command line, option value or Action input (TC100)."""

    def __init__(self, message: str) -> None:
        super().__init__(Finding(Code.USAGE, message))


class ConfigError(TraceCiteError):
    """A configuration file that cannot be used (TC104, with its file and line)."""


class GitError(TraceCiteError):
    """git could not tell which files to check (TC103)."""

    def __init__(self, message: str) -> None:
        super().__init__(Finding(Code.GIT_FAILED, message))
