"""The one exception the fetcher and the file reader raise: a failure with its registry code."""

from __future__ import annotations

from tracecite.codes import Code


class FetchError(Exception):
    """A source could not be fetched or read; ``code`` says why, ``detail`` says more.

    ``detail`` is written by TraceCite, never copied from the page or the server, so it is safe to
    show. ``status`` is the final HTTP status for ``TC315``; ``final_url`` where the source's
    redirects ended, when it was redirected; ``retry_after`` the seconds a 429 or 503 asked the
    client to wait (docs/web-over-time.md#retries); ``attempts`` how many requests were made for it.
    """

    def __init__(self, code: Code, detail: str, *, status: int | None = None,
                 final_url: str | None = None, retry_after: float | None = None,
                 attempts: int = 1) -> None:
        super().__init__(f"{code.code}: {detail}")
        self.code = code
        self.detail = detail
        self.status = status
        self.final_url = final_url
        self.retry_after = retry_after
        self.attempts = attempts

    def copy(self) -> FetchError:
        """A copy of this error, of the same class, that a caller may annotate as its own
        (e.g. with ``final_url``) without touching the one other callers share."""
        clone = self.__class__.__new__(self.__class__)
        clone.__dict__.update(self.__dict__)
        clone.args = self.args
        return clone


class TemporaryLookupError(FetchError):
    """TC307 when the resolver said the failure is temporary (``EAI_AGAIN``), not that the name
    does not exist: worth another attempt (docs/web-over-time.md#retries)."""

    def __init__(self, detail: str) -> None:
        super().__init__(Code.DNS_FAILURE, detail)
