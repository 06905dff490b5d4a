"""The live run with a cache (docs/web-over-time.md#the-cache, docs/web-over-time.md#flaky-sources):
fresh verdicts load nothing, old ones are revalidated, what is matched is kept, and flaky failures
are deferred. The cache and the loader are test doubles."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tracecite.checks.kinds import MatchKind, SourceKind
from tracecite.checks.live.records import Fetched, Loaded
from tracecite.checks.live.run import LiveRun
from tracecite.checks.live.tally import Remembered
from tracecite.checks.quotes import LoadInfo, QuoteCheck
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.matching import digest


class Pages:
    """A loader of ``pages`` (Loaded or FetchError) recording each load's validators."""

    kind = SourceKind.WEB
    expects_html = False
    hosts = None

    def __init__(self, pages: dict[str, Loaded | FetchError]) -> None:
        self.pages = pages
        self.loads: list[tuple[str, Mapping[str, str] | None]] = []

    def key(self, target: str) -> str:
        return target

    def host(self, target: str) -> str | None:
        return None

    def cites_html(self, targets: Iterable[str]) -> bool:
        return True

    def load(self, target: str, *, claimed: bool = False,
             validators: Mapping[str, str] | None = None) -> Loaded:
        self.loads.append((target, validators))
        page = self.pages[target]
        if isinstance(page, FetchError):
            raise page
        return page


class Memory:
    """A cache in a dict, recording what it was told."""

    def __init__(self, known: dict[str, Remembered] | None = None, failures: int = 0) -> None:
        self.known = known or {}
        self.failures = failures
        self.kept: list[tuple[str, Fetched, list[str], list[bool]]] = []
        self.revalidations: list[tuple[str, Fetched]] = []
        self.failed_keys: list[str] = []

    def recall(self, key: str, quotes: Sequence[str]) -> Remembered | None:
        return self.known.get(key)

    def remember(self, key: str, fetched: Fetched, quotes: Sequence[str],
                 verdicts: Sequence[bool]) -> None:
        self.kept.append((key, fetched, list(quotes), list(verdicts)))

    def revalidated(self, key: str, fetched: Fetched) -> None:
        self.revalidations.append((key, fetched))

    def failed(self, key: str, error: FetchError) -> tuple[int, int] | None:
        self.failed_keys.append(key)
        return (self.failures + 1, 3) if error.code is Code.TIMEOUT else None


def checks(*pairs: tuple[str, str]) -> list[QuoteCheck]:
    return [QuoteCheck(q, t, "n.md", 1, record=i) for i, (t, q) in enumerate(pairs, 1)]



def test_fresh_verdicts_load_nothing_and_are_marked_cached() -> None:
    loader = Pages({})
    cache = Memory({"a": Remembered((True, False), LoadInfo("https://b/"), None)})
    result = LiveRun(loader, concurrency=2, parse_budget=5.0).check(
        checks(("a", "one"), ("a", "two")), cache)
    assert loader.loads == []
    (finding,) = result.findings
    assert (finding.code, finding.cached, finding.record, finding.final_url) == (
        Code.QUOTE_NOT_ON_PAGE, True, 2, "https://b/")
    counts = result.counts
    assert (counts.checked, counts.matched, counts.not_found, counts.cached) == (2, 1, 1, 2)


def test_old_verdicts_are_revalidated_and_a_304_keeps_them() -> None:
    loader = Pages({"a": Loaded(MatchKind.TEXT, "", status=304, etag='"v2"')})
    validators = {"If-None-Match": '"v1"'}
    cache = Memory({"a": Remembered((False,), LoadInfo(), validators)})
    result = LiveRun(loader, concurrency=2, parse_budget=5.0).check(checks(("a", "q")), cache)
    assert loader.loads == [("a", validators)]
    assert [(f.code, f.cached) for f in result.findings] == [(Code.QUOTE_NOT_ON_PAGE, True)]
    assert result.counts.cached == 1
    assert [(k, f.status, f.etag) for k, f in cache.revalidations] == [("a", 304, '"v2"')]
    assert cache.kept == []


def test_a_changed_page_is_matched_and_kept() -> None:
    loader = Pages({"a": Loaded(MatchKind.TEXT, "a  fresh\u00a0text", status=200, etag='"v2"',
                                last_modified="yesterday")})
    cache = Memory({"a": Remembered((False,), LoadInfo(), {"If-None-Match": '"v1"'})})
    result = LiveRun(loader, concurrency=2, parse_budget=5.0).check(
        checks(("a", "fresh text"), ("a", "gone")), cache)
    assert [(f.record, f.cached) for f in result.findings] == [(2, None)]
    assert result.counts.cached == 0
    ((key, fetched, quotes, verdicts),) = cache.kept
    assert (key, quotes, [v is True for v in verdicts]) == ("a", ["fresh text", "gone"],
                                                            [True, False])
    assert fetched == Fetched(200, None, '"v2"', "yesterday", digest("a fresh text"))


def test_flaky_failures_are_deferred_and_others_are_not() -> None:
    loader = Pages({"slow": FetchError(Code.TIMEOUT, "no answer"),
                    "gone": FetchError(Code.HTTP_STATUS, "HTTP status 404", status=404)})
    cache = Memory(failures=0)
    result = LiveRun(loader, concurrency=2, parse_budget=5.0).check(
        checks(("slow", "q"), ("gone", "q")), cache)
    by_uri = {f.uri: f for f in result.findings}
    slow, gone = by_uri["slow"], by_uri["gone"]
    assert (slow.warned, slow.failures, slow.fail_after, slow.exit) == (True, 1, 3, 0)
    assert (gone.warned, gone.failures, gone.exit) == (False, None, 2)
    assert sorted(cache.failed_keys) == ["gone", "slow"]
    assert result.counts.unavailable == 2
    again = LiveRun(loader, concurrency=2, parse_budget=5.0).check(checks(("slow", "q")),
                                                                   Memory(failures=2))
    (finding,) = again.findings
    assert (finding.warned, finding.failures, finding.exit) == (False, 3, 2)
