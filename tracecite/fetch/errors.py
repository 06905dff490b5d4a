"""The one exception the fetcher and the file reader raise: a failure with its registry code."""

from __future__ import annotations

from tracecite.codes import Code


class FetchError(Exception):
    """A source could not be fetched or read; ``code`` says why, ``detail`` says more.

    ``detail`` is written by TraceCite, never copied from the page or the server, so it is safe
    to show. ``status`` is the final HTTP status for ``TC315``.
    """

    def __init__(self, code: Code, detail: str, *, status: int | None = None) -> None:
        super().__init__(f"{code.code}: {detail}")
        self.code = code
        self.detail = detail
        self.status = status
