"""Archived copies (docs/web-over-time.md#archived-copies) against a stand-in archive on loopback:
what is looked up, how the API's answer is trusted, what a finding gains, the limit of two requests
in flight, and a stop during the lookups."""

from __future__ import annotations

import ipaddress
import json
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from tests.archive_server import (  # noqa: F401 - archive_fixture is a fixture
    API_HOST,
    JSON_TYPE,
    SNAPSHOT_HOST,
    StandInArchive,
    archive_fixture,
)
from tests.fetch.servers import Reply
from tracecite.checks.archive import (
    availability_url,
    closest_timestamp,
    eligible,
    snapshot_url,
    with_archive,
)
from tracecite.checks.kinds import SourceKind
from tracecite.checks.quotes import QuoteCheck
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.fetcher import Page, PinnedFetcher
from tracecite.fetch.options import ConnectTo, FetchOptions
from tracecite.findings import ArchiveCopy, Finding

pytestmark = pytest.mark.network

URL = "https://gone.example/story"
TS = "20230115093000"
PAGE = "<html><body><p>The quick brown <b>fox</b> jumps over the lazy dog.</p></body></html>"


def no_dns(host: str, port: int) -> list[str]:
    raise AssertionError(f"unexpected name lookup for {host}:{port}")


@pytest.fixture
def fetcher(archive: StandInArchive, ca_path: str) -> Iterator[PinnedFetcher]:
    """A fetcher that reaches the stand-in archive's two hosts, and nothing else."""
    rules = tuple(ConnectTo(host, 443, "127.0.0.1", archive.server.port)
                  for host in (API_HOST, SNAPSHOT_HOST))
    with PinnedFetcher(FetchOptions(connect_to=rules, ca_cert=ca_path, max_bytes=4096,
                                    allow_net=(ipaddress.ip_network("127.0.0.0/8"),)),
                       resolver=no_dns) as made:
        yield made


def check(quote: str = "quick brown fox", url: str = URL, *, record: int = 1,
          captured_at: str | None = None) -> QuoteCheck:
    return QuoteCheck(quote, url, "n.md", 4 * record - 1, record=record,
                      quote_line=4 * record - 2, captured_at=captured_at)


def not_on_page(c: QuoteCheck) -> Finding:
    return c.not_found(SourceKind.WEB)


def unavailable(c: QuoteCheck, code: Code, status: int | None = None) -> Finding:
    return c.unavailable(FetchError(code, "it failed", status=status))


def test_a_snapshot_that_has_the_quote_is_named(archive: StandInArchive,
                                                fetcher: PinnedFetcher) -> None:
    snapshot = archive.add(URL, TS, PAGE)
    c = check()
    [finding] = with_archive([not_on_page(c)], [c], fetcher).findings
    assert finding.archive == ArchiveCopy(snapshot, TS, True)
    assert finding.message == (f"quote is not in the page's visible text; the Internet "
                               f"Archive's snapshot {snapshot} has the quote")
    assert (finding.code, finding.line, finding.exit) == (Code.QUOTE_NOT_ON_PAGE, 2, 2)
    # The raw snapshot (id_) of the canonical URL, built here; the newest, with no timestamp.
    assert archive.snapshot_paths() == [f"/web/{TS}id_/{URL}"]
    assert archive.api_queries() == [{"url": [URL]}]


def test_a_snapshot_without_the_quote_says_so_and_the_message_stays(
        archive: StandInArchive, fetcher: PinnedFetcher) -> None:
    snapshot = archive.add(URL, TS, "<p>Nothing about foxes here.</p>")
    c = check()
    before = not_on_page(c)
    [finding] = with_archive([before], [c], fetcher).findings
    assert finding.archive == ArchiveCopy(snapshot, TS, False)
    assert finding.message == before.message


def test_the_quote_is_matched_on_visible_text_only(archive: StandInArchive,
                                                   fetcher: PinnedFetcher) -> None:
    archive.add(URL, TS, '<p title="quick brown fox">x</p><script>quick brown fox</script>')
    c = check()
    [finding] = with_archive([not_on_page(c)], [c], fetcher).findings
    assert finding.archive is not None and finding.archive.found is False


def test_no_snapshot_adds_nothing(archive: StandInArchive, fetcher: PinnedFetcher) -> None:
    c = check()
    before = not_on_page(c)
    assert with_archive([before], [c], fetcher).findings == (before,)
    assert len(archive.api_queries()) == 1
    assert archive.snapshot_paths() == []


GARBAGE = [
    Reply(500, JSON_TYPE, b"{}"),
    Reply(200, JSON_TYPE, b"not json at all"),
    Reply(200, JSON_TYPE, b"[1, 2, 3]"),
    Reply(200, JSON_TYPE, b'{"archived_snapshots": []}'),
    Reply(200, JSON_TYPE, b'{"archived_snapshots": {"closest": {"available": false, '
                          b'"timestamp": "20230115093000"}}}'),
    Reply(200, JSON_TYPE, b'{"archived_snapshots": {"closest": {"available": "true", '
                          b'"timestamp": "20230115093000"}}}'),
    Reply(200, JSON_TYPE, b'{"archived_snapshots": {"closest": {"available": true, '
                          b'"timestamp": "2023011509300"}}}'),
    Reply(200, JSON_TYPE, b'{"archived_snapshots": {"closest": {"available": true, '
                          b'"timestamp": 20230115093000}}}'),
    Reply(200, JSON_TYPE, b'{"archived_snapshots": {"closest": {"available": true, '
                          b'"timestamp": "2023011509300\\u0661"}}}'),
    Reply(200, JSON_TYPE, b'{"archived_snapshots": {"closest": {"available": true, '
                          b'"url": "https://web.archive.org/web/20230115093000id_/x"}}}'),
    Reply(200, JSON_TYPE, b"[" * 100_000),
    # Over the fetcher's cap (4096 bytes here): never read whole.
    Reply(200, JSON_TYPE, json.dumps({"archived_snapshots": {"closest": {
        "available": True, "timestamp": TS}}, "pad": "x" * 5000}).encode()),
    Reply(200, (("Content-Type", "image/png"),), b"\x89PNG"),
]


@pytest.mark.parametrize("reply", GARBAGE, ids=range(len(GARBAGE)))
def test_an_api_failure_or_an_answer_not_of_its_shape_adds_nothing(
        archive: StandInArchive, fetcher: PinnedFetcher, reply: Reply) -> None:
    archive.add(URL, TS, PAGE)
    archive.api = reply
    c = check()
    before = not_on_page(c)
    assert with_archive([before], [c], fetcher).findings == (before,)
    assert archive.snapshot_paths() == []


def test_the_apis_own_snapshot_url_is_never_fetched(archive: StandInArchive,
                                                     fetcher: PinnedFetcher) -> None:
    archive.add(URL, TS, PAGE)
    archive.api = Reply(200, JSON_TYPE, json.dumps({"archived_snapshots": {"closest": {
        "available": True, "timestamp": TS,
        "url": f"https://{SNAPSHOT_HOST}/elsewhere?steal=1"}}}).encode())
    c = check()
    [finding] = with_archive([not_on_page(c)], [c], fetcher).findings
    assert archive.snapshot_paths() == [f"/web/{TS}id_/{URL}"]
    assert finding.archive is not None and finding.archive.found


@pytest.mark.parametrize("reply", [Reply(404, JSON_TYPE, b"{}"), Reply(503, JSON_TYPE, b"{}"),
                                   Reply(200, (("Content-Type", "image/gif"),), b"GIF89a"),
                                   Reply(200, JSON_TYPE, b"x" * 5000)],
                         ids=["404", "503", "gif", "too-large"])
def test_a_snapshot_that_cannot_be_fetched_adds_nothing(
        archive: StandInArchive, fetcher: PinnedFetcher, reply: Reply) -> None:
    archive.add(URL, TS, reply)
    c = check()
    before = not_on_page(c)
    assert with_archive([before], [c], fetcher).findings == (before,)
    assert archive.snapshot_paths() == [f"/web/{TS}id_/{URL}"]


def test_a_snapshot_redirected_to_the_nearest_capture_is_named_by_it(
        archive: StandInArchive, fetcher: PinnedFetcher) -> None:
    nearest = archive.add("https://gone.example/story?v=2", "20220101000000", PAGE)
    archive.add(URL, TS, Reply(302, (("Location", nearest),), b""))
    c = check()
    [finding] = with_archive([not_on_page(c)], [c], fetcher).findings
    assert finding.archive == ArchiveCopy(nearest, "20220101000000", True)


def test_the_capture_time_is_the_timestamp_asked_for(archive: StandInArchive,
                                                     fetcher: PinnedFetcher) -> None:
    archive.add(URL, TS, PAGE)
    c = check(captured_at="20240501120000")
    with_archive([not_on_page(c)], [c], fetcher)
    assert archive.api_queries() == [{"url": [URL], "timestamp": ["20240501120000"]}]


def test_one_lookup_per_page_and_capture_time(archive: StandInArchive,
                                              fetcher: PinnedFetcher) -> None:
    archive.add(URL, TS, PAGE)
    checks = [check("quick brown fox", record=1), check("lazy cat", record=2),
              check("quick brown fox", record=3),
              check("lazy dog", record=4, captured_at="20200101000000")]
    findings = with_archive([not_on_page(c) for c in checks], checks, fetcher).findings
    assert [f.archive.found if f.archive else None for f in findings] == [True, False, True,
                                                                          True]
    assert len(archive.api_queries()) == 2
    assert len(archive.snapshot_paths()) == 2


@pytest.mark.parametrize(("code", "status", "looked_up"), [
    (Code.QUOTE_NOT_ON_PAGE, None, True),
    (Code.HTTP_STATUS, 404, True), (Code.HTTP_STATUS, 410, True),
    (Code.DNS_FAILURE, None, True), (Code.CONNECT_FAILED, None, True),
    (Code.TIMEOUT, None, True),
    (Code.HTTP_STATUS, 500, False), (Code.HTTP_STATUS, 403, False),
    (Code.SOURCE_BLOCKED, 403, False), (Code.TLS_FAILED, None, False),
    (Code.TOO_LARGE, None, False), (Code.ADDRESS_REFUSED, None, False),
    (Code.QUOTE_NOT_IN_FILE, None, False), (Code.PARSE_LIMIT, None, False),
])
def test_only_pages_changed_or_gone_are_looked_up(
        archive: StandInArchive, fetcher: PinnedFetcher, code: Code, status: int | None,
        looked_up: bool) -> None:
    archive.add(URL, TS, PAGE)
    c = check()
    finding = not_on_page(c) if code is Code.QUOTE_NOT_ON_PAGE else unavailable(c, code, status)
    assert eligible(finding) is looked_up
    [out] = with_archive([finding], [c], fetcher).findings
    assert (out.archive is not None) is looked_up
    assert len(archive.requests) == (2 if looked_up else 0)
    assert (out.code, out.status, out.exit) == (finding.code, finding.status, finding.exit)


def test_a_finding_of_no_check_is_left_alone(archive: StandInArchive,
                                             fetcher: PinnedFetcher) -> None:
    archive.add(URL, TS, PAGE)
    stray = not_on_page(check(record=9))
    assert with_archive([stray], [check()], fetcher).findings == (stray,)
    assert archive.requests == []


def test_at_most_two_requests_are_in_flight_to_the_archive(archive: StandInArchive,
                                                           fetcher: PinnedFetcher) -> None:
    checks = [check(url=f"https://gone.example/{n}", record=n) for n in range(1, 7)]
    for c in checks:
        archive.add(c.target, TS, PAGE)
    archive.delay = 0.15
    started = time.monotonic()
    findings = with_archive([not_on_page(c) for c in checks], checks, fetcher).findings
    assert all(f.archive is not None and f.archive.found for f in findings)
    assert len(archive.requests) == 12
    assert archive.peak == 2
    assert time.monotonic() - started < 12 * 0.15  # two at a time, not one


class Blocking:
    """A fetcher whose every fetch waits until released (or 30 s)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def fetch(self, url: str) -> Page:
        self.calls += 1
        self.release.wait(30)
        raise FetchError(Code.TIMEOUT, "never")


def test_a_stop_during_the_lookups_keeps_the_findings_and_waits_for_none() -> None:
    checks = [check(url=f"https://gone.example/{n}", record=n) for n in range(1, 5)]
    before = [not_on_page(c) for c in checks]
    blocking = Blocking()
    threading.Timer(0.3, signal.pthread_kill,
                    (threading.main_thread().ident, signal.SIGINT)).start()
    started = time.monotonic()
    try:
        result = with_archive(before, checks, blocking)
    finally:
        blocking.release.set()
    assert time.monotonic() - started < 2
    assert result.stopped_by == signal.SIGINT
    assert result.findings == tuple(before)
    assert blocking.calls == 2  # two lookups were under way; the others never started


def test_a_bug_in_a_lookup_is_raised() -> None:
    class Broken:
        def fetch(self, url: str) -> Page:
            raise ZeroDivisionError

    c = check()
    with pytest.raises(ZeroDivisionError):
        with_archive([not_on_page(c)], [c], Broken())


def test_urls_of_the_api_and_of_snapshots() -> None:
    assert availability_url("https://a.example/p?q=1&r=2#x", None) == (
        "https://archive.org/wayback/available?url=https%3A%2F%2Fa.example%2Fp%3Fq%3D1%26r%3D2"
        "%23x")
    assert availability_url("https://a.example/", TS).endswith(f"&timestamp={TS}")
    assert snapshot_url(TS, "https://a.example/p?q=1") == (
        f"https://web.archive.org/web/{TS}id_/https://a.example/p?q=1")


def test_closest_timestamp() -> None:
    assert closest_timestamp(json.dumps({"archived_snapshots": {"closest": {
        "available": True, "timestamp": TS}}})) == TS
    assert closest_timestamp('{"archived_snapshots": {}}') is None
    assert closest_timestamp("null") is None
