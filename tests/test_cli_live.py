"""The live commands end to end through ``main([...])``: verify-notes, verify-urls, verify-files.

Every server is on 127.0.0.1 and is reached only through ``--connect-to``, ``--allow-net`` and
``--ca-cert`` (see tests/live_fixtures.py); any name lookup fails the test. Each finding code
TC210-TC322 is produced here with its location checked in the ``--json`` report.
"""

from __future__ import annotations

import io
import os
import re
import socket
import stat
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    Cli,
    CliResult,
    answer,
    call,
    cite,
    claim,
    note,
    result,
    source,
    write_notes,
    write_trace,
)
from tests.fetch.servers import RawServer, Reply, Request, head, trickle
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    JSON,
    InFlight,
    Lookups,
    Site,
    closed_port,
    html,
    no_dns_fixture,
    redirect,
    run_guarded,
    site_fixture,
    text,
    unblock_fifo,
)
from tracecite.fetch.limits import DEFAULT_PER_HOST, MAX_BYTES

pytestmark = pytest.mark.network

PAGE = "The quick brown fox jumps over the lazy dog."
QUOTE = "quick brown fox"


def one(res: CliResult, code: str) -> dict[str, Any]:
    """The report's only finding, which must have ``code``; the run must exit 2."""
    report = res.json()
    assert [f["code"] for f in report["findings"]] == [code], report["findings"]
    assert res.exit == report["exit_code"] == 2
    finding: dict[str, Any] = report["findings"][0]
    assert finding["exit"] == 2
    return finding


def notes(tmp_path: Path, *records: tuple[str, str], name: str = "n.md") -> Path:
    """A notes file with one record per ``(quote, url)``; record k's url is on line 4k - 1."""
    return write_notes(tmp_path / name, "\n".join(note(quote=q, url=u) for q, u in records))


def url_line(record: int) -> int:
    """The line of record ``record``'s ``url:`` in a file made by `notes`."""
    return 4 * record - 1


def quote_line(record: int) -> int:
    """The line of record ``record``'s ``quote:`` in a file made by `notes`: where a quote not
    on its page is to be fixed (docs/reference/reports.md#locations)."""
    return 4 * record - 2


def trace(tmp_path: Path, sources: list[dict[str, Any]], citations: list[dict[str, Any]],
          name: str = "t.jsonl") -> Path:
    """A trace: one tool call with ``sources``, one claim with ``citations`` (answer: line 3)."""
    return write_trace(tmp_path / name, [call(), result(sources=sources),
                                         answer([claim(citations=citations)])])


ANSWER_LINE = 3


# =============================================================================================
# verify-notes


def test_verify_notes_passes(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    res = cli("verify-notes", notes(tmp_path, (QUOTE, url)), "--json", *site.flags)
    report = res.json()
    assert res.exit == 0, report
    assert report["findings"] == []
    assert report["summary"]["live"]["checked"] == report["summary"]["live"]["matched"] == 1
    assert site.paths == ["/a"]


def test_tc210_verify_notes(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    path = notes(tmp_path, (QUOTE, url), ("not on the page", url))
    finding = one(cli("verify-notes", path, "--json", *site.flags), "TC210")
    assert finding["file"] == str(path)
    assert finding["line"] == quote_line(2)  # the line to fix, not the url: line
    assert finding["record"] == 2
    assert finding["uri"] == url
    assert "status" not in finding


def test_each_url_is_fetched_once_and_every_record_checked(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/a", text(PAGE))
    other = site.route("/b", text("Something else entirely."))
    # The same request spelled four ways: host case and the default port do not matter.
    same = [url, "https://EXAMPLE.test/a", f"https://{HOST}:443/a", url]
    path = notes(tmp_path, (QUOTE, same[0]), ("absent one", same[1]), (QUOTE, same[2]),
                 ("absent two", same[3]), ("Something else", other), ("absent three", other))
    first = notes(tmp_path, ("lazy dog", url), name="m.md")
    res = cli("verify-notes", first, path, "--json", *site.flags)
    report = res.json()
    assert sorted(site.paths) == ["/a", "/b"]
    assert report["summary"]["live"]["checked"] == 7
    assert report["summary"]["live"]["matched"] == 4
    found = [(f["code"], f["file"], f["record"], f["line"], f["uri"]) for f in report["findings"]]
    assert found == [
        ("TC210", str(path), 2, quote_line(2), same[1]),
        ("TC210", str(path), 4, quote_line(4), same[3]),
        ("TC210", str(path), 6, quote_line(6), other),
    ]


def test_concurrency_is_bounded(cli: Cli, site: Site, tmp_path: Path) -> None:
    slow = InFlight(text(PAGE), 0.15)
    urls = [site.route(f"/p{i}", slow) for i in range(6)]
    path = notes(tmp_path, *[(QUOTE, u) for u in urls])
    res = cli("verify-notes", path, "--json", "--concurrency", "2", *site.flags)
    assert res.exit == 0, res.out
    assert sorted(site.paths) == [f"/p{i}" for i in range(6)]
    assert slow.peak == 2


def test_concurrency_one_is_sequential(cli: Cli, site: Site, tmp_path: Path) -> None:
    slow = InFlight(text(PAGE), 0.05)
    path = notes(tmp_path, *[(QUOTE, site.route(f"/p{i}", slow)) for i in range(3)])
    assert cli("verify-notes", path, "--json", "--concurrency", "1", *site.flags).exit == 0
    assert slow.peak == 1


class HostsInFlight:
    """A route that holds each request for ``delay`` seconds and records the most requests in
    flight at once per ``Host`` header (``peak``) and overall (``total_peak``)."""

    def __init__(self, reply: Reply, delay: float) -> None:
        self.reply = reply
        self.delay = delay
        self.lock = threading.Lock()
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.total_peak = 0

    def __call__(self, request: Request) -> Reply:
        host = request.headers["host"]
        with self.lock:
            self.now[host] += 1
            self.peak[host] = max(self.peak[host], self.now[host])
            self.total_peak = max(self.total_peak, sum(self.now.values()))
        try:
            time.sleep(self.delay)
        finally:
            with self.lock:
                self.now[host] -= 1
        return self.reply


def hosts_site(site: Site, hosts: list[str], pages: int, delay: float = 0.15,
               ) -> tuple[HostsInFlight, list[str], list[str]]:
    """``pages`` slow plain-http pages on each of ``hosts`` (every name mapped to the site's
    one http server): the route, the URLs (host by host) and the extra flags."""
    slow = HostsInFlight(text(PAGE), delay)
    for i in range(pages):
        site.route(f"/p{i}", slow)
    urls = [f"http://{host}/p{i}" for host in hosts for i in range(pages)]
    flags = [arg for host in hosts if host != HOST
             for arg in ("--connect-to", f"{host}:80:127.0.0.1:{site.http.port}")]
    return slow, urls, flags


def test_per_host_limit_counts_each_host_name(cli: Cli, site: Site, tmp_path: Path) -> None:
    slow, urls, flags = hosts_site(site, [HOST, "other.test"], 6)
    path = notes(tmp_path, *[(QUOTE, u) for u in urls])
    res = cli("verify-notes", path, "--json", "--per-host", "2", *flags, *site.flags)
    assert res.exit == 0, res.out
    assert sorted(site.paths) == sorted([f"/p{i}" for i in range(6)] * 2)  # each URL once
    assert slow.peak == {HOST: 2, "other.test": 2}
    # The sources are listed host by host: the second host's start while the first is busy.
    assert slow.total_peak == 4


def test_overall_limit_holds_across_hosts(cli: Cli, site: Site, tmp_path: Path) -> None:
    slow, urls, flags = hosts_site(site, [HOST, "b.test", "c.test"], 4)
    path = notes(tmp_path, *[(QUOTE, u) for u in urls])
    res = cli("verify-notes", path, "--json", "--concurrency", "3", "--per-host", "2", *flags,
              *site.flags)
    assert res.exit == 0, res.out
    assert slow.total_peak == 3
    assert max(slow.peak.values()) == 2


@pytest.mark.slow
def test_per_host_default(cli: Cli, site: Site, tmp_path: Path) -> None:
    # Held long enough that a connection the test server's short listen backlog made retry
    # (after 1 s) still overlaps the others.
    slow, urls, _ = hosts_site(site, [HOST], DEFAULT_PER_HOST + 1, delay=1.2)
    res = cli("verify-notes", notes(tmp_path, *[(QUOTE, u) for u in urls]), "--json",
              *site.flags)
    assert res.exit == 0, res.out
    assert slow.peak == {HOST: DEFAULT_PER_HOST}


def test_per_host_for_verify_urls(cli: Cli, site: Site, tmp_path: Path) -> None:
    slow, urls, flags = hosts_site(site, [HOST, "other.test"], 3)
    sources = [source(f"s{i}", url, PAGE) for i, url in enumerate(urls)]
    path = trace(tmp_path, sources, [cite(f"s{i}", QUOTE) for i in range(len(urls))])
    res = cli("verify-urls", path, "--json", "--per-host", "1", *flags, *site.flags)
    assert res.exit == 0, res.out
    assert slow.peak == {HOST: 1, "other.test": 1}


@pytest.mark.parametrize(("setting", "flag", "peak"), [(1, [], 1), (1, ["--per-host", "2"], 2)])
def test_per_host_from_the_configuration_and_the_flag_wins(
    cli: Cli, site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    setting: int, flag: list[str], peak: int,
) -> None:
    slow, urls, _ = hosts_site(site, [HOST], 4)
    monkeypatch.chdir(tmp_path)
    config = tmp_path / ".tracecite.toml"
    config.write_text(f"per_host = {setting}\n", encoding="utf-8")
    path = notes(tmp_path, *[(QUOTE, u) for u in urls], name="refs.notes.md")
    res = cli("hook", "--stage", "online", "--config", config, "--json", path, *flag,
              *site.flags)
    assert res.exit == 0, res.out
    assert slow.peak == {HOST: peak}


def test_html_is_matched_on_visible_text(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", html(
        "<html><head><title>title words</title></head><body>"
        "<p>The quick <b>brown</b> f<i>ox</i> jumps.</p>"
        "<script>var s = 'only in script';</script><p hidden>hidden words</p></body></html>"
    ))
    path = notes(tmp_path, (QUOTE, url), ("only in script", url), ("title words", url),
                 ("hidden words", url), ("quick <b>brown</b>", url))
    report = cli("verify-notes", path, "--json", *site.flags).json()
    assert [(f["code"], f["record"]) for f in report["findings"]] == [
        ("TC210", 2), ("TC210", 3), ("TC210", 4), ("TC210", 5),
    ]
    assert site.paths == ["/a"]


def test_json_body_matches_decoded_string_values(cli: Cli, site: Site, tmp_path: Path) -> None:
    body = '{"title": "caf\\u00e9 \\"au\\" lait", "parts": ["quick brown", "fox jumps"], "n": 1}'
    url = site.route("/j", text(body, headers=JSON))
    path = notes(tmp_path,
                 ('café "au" lait', url),      # only in the decoded values
                 ('"n": 1', url),              # only in the raw text
                 ("quick brown", url),
                 ("brown fox", url))           # spans two strings: no match
    report = cli("verify-notes", path, "--json", *site.flags).json()
    assert [(f["code"], f["record"]) for f in report["findings"]] == [("TC210", 4)]


def test_plus_json_type_is_json(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/j", text('{"a": "caf\\u00e9"}',
                                headers=(("Content-Type", "application/ld+json"),)))
    assert cli("verify-notes", notes(tmp_path, ("café", url)), "--json", *site.flags).exit == 0


def test_text_plain_is_matched_as_is(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/t", text("line one\n  <b>quick</b>\r\n\tbrown  fox\u00a0jumps"))
    path = notes(tmp_path, ("<b>quick</b> brown fox jumps", url), ("quick brown", url))
    report = cli("verify-notes", path, "--json", *site.flags).json()
    assert [(f["code"], f["record"]) for f in report["findings"]] == [("TC210", 2)]


def test_http_url(cli: Cli, site: Site, tmp_path: Path) -> None:
    site.route("/a", text(PAGE))
    path = notes(tmp_path, (QUOTE, f"http://{HOST}/a"))
    assert cli("verify-notes", path, "--json", *site.flags).exit == 0
    assert [r.path for r in site.http.requests] == ["/a"]


def test_input_errors_stop_before_any_request(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    good = notes(tmp_path, (QUOTE, url), name="good.md")
    bad = write_notes(tmp_path / "bad.md", f"claim: c\nquote: q\nurl: {url}\nnonsense\n")
    res = cli("verify-notes", good, bad, "--json", *site.flags)
    assert res.exit == 1
    assert [(f["code"], f["file"], f["line"]) for f in res.json()["findings"]] == [
        ("TC110", str(bad), 4),
    ]
    assert site.paths == [] and site.connections == 0


def test_missing_input_stops_before_any_request(cli: Cli, site: Site, tmp_path: Path) -> None:
    good = notes(tmp_path, (QUOTE, site.route("/a", text(PAGE))))
    res = cli("verify-notes", good, tmp_path / "missing.md", "--json", *site.flags)
    assert res.exit == 1
    assert res.codes() == ["TC101"]
    assert site.connections == 0


def test_console_report_does_not_echo_quotes_or_pages(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/a", text("\x1b[31m::error::page text"))
    res = cli("verify-notes", notes(tmp_path, ("secret quote", url)), *site.flags)
    assert res.exit == 2
    assert "TC210" in res.out
    assert "secret quote" not in res.out + res.err
    assert "page text" not in res.out + res.err


# ---- TC300-TC305: URL rules, before any network access --------------------------------------

BAD_URLS = [
    ("TC300", "https://0x7f.1/a"),
    ("TC301", f"ftp://{HOST}/a"),
    ("TC302", f"https://{HOST}:8443/a"),
    ("TC303", f"https://user:pw@{HOST}/a"),
    ("TC304", "https://[::1]/a"),
    ("TC305", "https://exämple.test/a"),
]


def test_tc300_to_tc305_in_notes(cli: Cli, site: Site, no_dns: Lookups, tmp_path: Path) -> None:
    path = notes(tmp_path, *[(QUOTE, url) for _, url in BAD_URLS])
    res = cli("verify-notes", path, "--json", *site.flags)
    report = res.json()
    assert res.exit == 2
    found = [(f["code"], f["file"], f["line"], f["record"], f["uri"], f["exit"])
             for f in report["findings"]]
    assert found == [(code, str(path), url_line(i), i, url, 2)
                     for i, (code, url) in enumerate(BAD_URLS, start=1)]
    assert report["summary"]["live"]["unavailable"] == len(BAD_URLS)
    assert site.connections == 0 and no_dns == []


@pytest.mark.parametrize(("code", "url"), [c for c in BAD_URLS if c[0] != "TC301"])
def test_tc300_to_tc305_as_trace_sources(
    cli: Cli, site: Site, no_dns: Lookups, tmp_path: Path, code: str, url: str,
) -> None:
    path = trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)])
    finding = one(cli("verify-urls", path, "--json", *site.flags), code)
    assert finding["file"] == str(path)
    assert finding["line"] == ANSWER_LINE
    assert (finding["claim"], finding["citation"]) == (1, 1)
    assert finding["source_id"] == "s1"
    assert finding["uri"] == url
    assert site.connections == 0 and no_dns == []


def test_tc301_from_a_trace_source_redirected_elsewhere(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/r", redirect(f"ftp://{HOST}/a"))
    path = trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)])
    finding = one(cli("verify-urls", path, "--json", *site.flags), "TC301")
    assert (finding["line"], finding["source_id"], finding["uri"]) == (ANSWER_LINE, "s1", url)


# ---- TC306-TC317: fetching ------------------------------------------------------------------


def notes_finding(cli: Cli, tmp_path: Path, url: str, flags: list[str], code: str,
                  *extra: str) -> dict[str, Any]:
    """Run verify-notes on one record citing ``url``; its one finding must be ``code``."""
    path = notes(tmp_path, (QUOTE, url))
    finding = one(cli("verify-notes", path, "--json", *flags, *extra), code)
    assert finding["file"] == str(path)
    assert finding["line"] == url_line(1)
    assert finding["record"] == 1
    assert finding["uri"] == url
    return finding


def test_tc306_loopback_refused_without_allow_net(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    flags = [*site.connect_to, "--ca-cert", site.ca_path]  # no --allow-net
    finding = notes_finding(cli, tmp_path, url, flags, "TC306")
    assert "127.0.0.1" in finding["message"]
    assert site.connections == 0 and site.paths == []


@pytest.mark.parametrize("url", ["http://127.0.0.1/a", "https://10.0.0.1/a",
                                 "https://169.254.169.254/latest"])
def test_tc306_ip_literals_refused(cli: Cli, no_dns: Lookups, tmp_path: Path, url: str) -> None:
    notes_finding(cli, tmp_path, url, [], "TC306")


def test_tc306_allow_net_must_cover_the_address(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    flags = [*site.connect_to, "--allow-net", "127.0.0.2/32", "--ca-cert", site.ca_path]
    notes_finding(cli, tmp_path, url, flags, "TC306")
    assert site.connections == 0


def test_tc307_name_does_not_resolve(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    asked: list[Any] = []

    def nxdomain(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)  # answered here: the machine's resolver is never asked
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", nxdomain)
    notes_finding(cli, tmp_path, "https://x.invalid/a", [], "TC307")
    assert asked == [b"x.invalid"]


def test_tc307_in_verify_urls(cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def nxdomain(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", nxdomain)
    path = trace(tmp_path, [source("s1", "https://x.invalid/a", PAGE)], [cite("s1", QUOTE)])
    finding = one(cli("verify-urls", path, "--json"), "TC307")
    assert (finding["source_id"], finding["uri"]) == ("s1", "https://x.invalid/a")


def test_tc308_redirect_limit(cli: Cli, site: Site, tmp_path: Path) -> None:
    for i in range(6):
        site.route(f"/r{i}", redirect(f"/r{i + 1}", 301 if i % 2 else 307))
    site.route("/r6", text(PAGE))
    notes_finding(cli, tmp_path, f"https://{HOST}/r0", site.flags, "TC308")
    assert site.paths == [f"/r{i}" for i in range(6)]


def test_five_redirects_are_followed(cli: Cli, site: Site, tmp_path: Path) -> None:
    for i in range(5):
        site.route(f"/r{i}", redirect(f"/r{i + 1}", (301, 302, 303, 307, 308)[i]))
    site.route("/r5", text(PAGE))
    path = notes(tmp_path, (QUOTE, f"https://{HOST}/r0"))
    assert cli("verify-notes", path, "--json", *site.flags).exit == 0


def test_tc309_https_to_http(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/r", redirect(f"http://{HOST}/a"))
    site.route("/a", text(PAGE))
    notes_finding(cli, tmp_path, url, site.flags, "TC309")
    assert site.http.connections == 0


def test_tc310_redirect_without_location(cli: Cli, site: Site, tmp_path: Path) -> None:
    notes_finding(cli, tmp_path, site.route("/r", redirect(None)), site.flags, "TC310")


def test_tc311_closed_port(cli: Cli, ca_path: str, no_dns: Lookups, tmp_path: Path) -> None:
    flags = ["--connect-to", f"{HOST}:443:127.0.0.1:{closed_port()}",
             "--allow-net", "127.0.0.1/32", "--ca-cert", ca_path, "--retries", "0"]
    notes_finding(cli, tmp_path, f"https://{HOST}/a", flags, "TC311")


def test_tc312_certificate_for_another_name(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    site.route("/a", text(PAGE))
    # other.test is sent to the example.test server, whose certificate does not name it.
    flags = [*site.flags, "--connect-to", f"other.test:443:127.0.0.1:{site.https.port}"]
    finding = notes_finding(cli, tmp_path, "https://other.test/a", flags, "TC312")
    assert "certificate" in finding["message"]
    assert site.paths == []


def test_tc312_unknown_ca(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    flags = [*site.connect_to, "--allow-net", "127.0.0.0/8"]  # no --ca-cert
    notes_finding(cli, tmp_path, url, flags, "TC312")
    assert site.paths == []


def test_tc313_trickling_server(cli: Cli, ca_path: str, no_dns: Lookups,
                                tmp_path: Path) -> None:
    first = head("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "1000")])
    with RawServer(trickle(b"x" * 1000, 0.2, first=first)) as server:
        flags = ["--connect-to", f"{HOST}:80:127.0.0.1:{server.port}",
                 "--allow-net", "127.0.0.1/32", "--timeout", "1", "--retries", "0"]
        notes_finding(cli, tmp_path, f"http://{HOST}/a", flags, "TC313")


def test_tc314_body_over_max_bytes(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/big", text("x" * 1000 + PAGE))
    notes_finding(cli, tmp_path, url, site.flags, "TC314", "--max-bytes", "100")


def test_tc314_body_over_the_default_cap(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/big", text(b"x" * (MAX_BYTES + 1)))
    notes_finding(cli, tmp_path, url, site.flags, "TC314")


def test_max_bytes_exactly_the_body(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    path = notes(tmp_path, (QUOTE, url))
    res = cli("verify-notes", path, "--json", "--max-bytes", str(len(PAGE)), *site.flags)
    assert res.exit == 0


@pytest.mark.parametrize("status", [404, 410, 500])
def test_tc315_http_status(cli: Cli, site: Site, tmp_path: Path, status: int) -> None:
    url = site.route("/gone", text("not here", status=status))
    finding = notes_finding(cli, tmp_path, url, [*site.flags, "--retries", "0"], "TC315")
    assert finding["status"] == status


def test_tc315_in_verify_urls(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/gone", text("not here", status=404))
    path = trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)])
    finding = one(cli("verify-urls", path, "--json", *site.flags), "TC315")
    assert (finding["status"], finding["source_id"], finding["uri"]) == (404, "s1", url)


def test_tc316_content_type(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/img", text(b"\x89PNG", headers=(("Content-Type", "image/png"),)))
    notes_finding(cli, tmp_path, url, site.flags, "TC316")


@pytest.mark.parametrize(("body", "content_type"), [
    (f"café {PAGE}".encode("latin-1"), "text/plain; charset=iso-8859-1"),
    (b"quick brown fox \xff\xfe", "text/plain"),
    (b"quick brown fox \xe9", "text/html"),
])
def test_tc317_not_utf8(cli: Cli, site: Site, tmp_path: Path, body: bytes,
                        content_type: str) -> None:
    url = site.route("/x", text(body, headers=(("Content-Type", content_type),)))
    notes_finding(cli, tmp_path, url, site.flags, "TC317")


# =============================================================================================
# verify-urls


def test_verify_urls_passes(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", html(f"<p>{PAGE}</p>"))
    path = trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE), cite("s1", "lazy dog")])
    res = cli("verify-urls", path, "--json", *site.flags)
    report = res.json()
    assert res.exit == 0, report
    assert report["summary"]["live"]["checked"] == report["summary"]["live"]["matched"] == 2
    assert site.paths == ["/a"]


def test_tc210_verify_urls_capture_has_it_page_does_not(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/a", text("The page has changed since."))
    path = trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)])
    finding = one(cli("verify-urls", path, "--json", *site.flags), "TC210")
    assert finding["file"] == str(path)
    assert finding["line"] == ANSWER_LINE
    assert (finding["claim"], finding["citation"]) == (1, 1)
    assert finding["source_id"] == "s1"
    assert finding["uri"] == url


def test_page_has_it_capture_does_not_is_only_tc202(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    path = trace(tmp_path, [source("s1", url, "A capture without the quote.")],
                 [cite("s1", QUOTE)])
    res = cli("verify-urls", path, "--json", *site.flags)
    finding = one(res, "TC202")
    assert (finding["line"], finding["source_id"], finding["uri"]) == (ANSWER_LINE, "s1", url)
    assert res.json()["summary"]["live"]["matched"] == 1  # the live verdict
    assert site.paths == ["/a"]


def test_evidence_findings_are_reported_with_live_ones(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/a", text("Nothing relevant here."))
    path = trace(tmp_path, [source("s1", url, "Nothing relevant either.")],
                 [cite("s1", QUOTE)])
    res = cli("verify-urls", path, "--json", *site.flags)
    assert res.exit == 2
    assert sorted(res.codes()) == ["TC202", "TC210"]


def test_evidence_structure_findings(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE))
    path = write_trace(tmp_path / "t.jsonl", [
        call(), result(sources=[source("s1", url, PAGE)]),
        answer([claim(citations=[cite("s1", QUOTE)]), claim(citations=[])]),
    ])
    res = cli("verify-urls", path, "--json", *site.flags)
    assert res.codes() == ["TC201"]
    assert res.json()["findings"][0]["claim"] == 2


def test_a_source_not_captured_is_checked_live(cli: Cli, site: Site, tmp_path: Path) -> None:
    """``"content": null``: the evidence step warns (TC203) and the live check fetches the
    page by its URI as usual, its verdict the page's; the cache keeps it like any other."""
    good = site.route("/a", html(f"<p>{PAGE}</p>"))
    changed = site.route("/b", text("The page has changed since."))
    path = trace(tmp_path, [source("s1", good, None), source("s2", changed, None)],
                 [cite("s1", QUOTE), cite("s2", QUOTE)])
    cache = tmp_path / "verdicts.sqlite"
    res = cli("verify-urls", path, "--json", "--cache", cache, *site.flags)
    report = res.json()
    assert res.exit == 2, report
    assert [(f["code"], f["severity"], f["citation"], f["uri"]) for f in report["findings"]] == [
        ("TC203", "warning", 1, good), ("TC203", "warning", 2, changed),
        ("TC210", "error", 2, changed)]
    assert report["summary"]["captured"]["skipped"] == 2
    assert report["summary"]["captured"]["checked"] == 0
    live = report["summary"]["live"]
    assert (live["checked"], live["matched"], live["not_found"]) == (2, 1, 1)
    assert sorted(site.paths) == ["/a", "/b"]
    again = cli("verify-urls", path, "--json", "--cache", cache, *site.flags).json()
    assert again["summary"]["live"]["cached"] == 2
    assert sorted(site.paths) == ["/a", "/b"]  # nothing fetched again
    assert [f["code"] for f in again["findings"]] == ["TC203", "TC203", "TC210"]


def test_verify_urls_skips_other_schemes_and_never_fetches_uncited(
    cli: Cli, site: Site, no_dns: Lookups, tmp_path: Path,
) -> None:
    cited = site.route("/cited", text(PAGE))
    uncited = site.route("/uncited", text(PAGE))
    path = trace(tmp_path, [
        source("s1", cited, PAGE), source("s2", uncited, PAGE),
        source("s3", "file:notes.txt", PAGE), source("s4", "urn:isbn:0451450523", PAGE),
        source("s5", "ftp://example.test/a", PAGE),
    ], [cite("s1", QUOTE), cite("s3", QUOTE), cite("s4", QUOTE), cite("s5", QUOTE)])
    res = cli("verify-urls", path, "--json", *site.flags)
    report = res.json()
    assert res.exit == 0, report
    assert report["summary"]["live"]["skipped"] == 3
    assert report["summary"]["live"]["checked"] == 1
    assert site.paths == ["/cited"]
    assert no_dns == []


def test_verify_urls_fetches_each_url_once_across_sources_and_traces(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/a", text(PAGE))
    same = "HTTPS://EXAMPLE.TEST:443/a"
    first = trace(tmp_path, [source("s1", url, PAGE), source("s2", same, PAGE)],
                  [cite("s1", QUOTE), cite("s2", "lazy dog"), cite("s1", "absent")])
    second = trace(tmp_path, [source("x", url, PAGE)], [cite("x", "jumps over")], name="u.jsonl")
    res = cli("verify-urls", first, second, "--json", *site.flags)
    report = res.json()
    assert site.paths == ["/a"]
    assert [(f["code"], f["file"], f["citation"], f["source_id"]) for f in report["findings"]] \
        == [("TC202", str(first), 3, "s1"), ("TC210", str(first), 3, "s1")]
    assert report["summary"]["live"]["checked"] == 4


def test_verify_urls_input_error_stops_before_any_request(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/a", text(PAGE))
    good = trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)])
    bad = write_trace(tmp_path / "bad.jsonl", [call(), "{not json"])
    res = cli("verify-urls", good, bad, "--json", *site.flags)
    assert res.exit == 1
    assert "TC120" in res.codes()
    assert site.connections == 0


# =============================================================================================
# verify-files


def files_trace(tmp_path: Path, *uris: str, quote: str = QUOTE, content: str = PAGE) -> Path:
    """A trace citing each ``file:`` URI once (citation k of claim 1), evidence passing."""
    sources = [source(f"s{i}", uri, content) for i, uri in enumerate(uris, start=1)]
    return trace(tmp_path, sources, [cite(f"s{i}", quote) for i in range(1, len(uris) + 1)])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project root holding ``doc.txt`` (the page text), next to the trace in tmp_path."""
    project = tmp_path / "root"
    project.mkdir()
    (project / "doc.txt").write_text(PAGE, encoding="utf-8")
    return project


def file_finding(cli: Cli, tmp_path: Path, root: Path, uri: str, code: str) -> dict[str, Any]:
    """verify-files on one citation of ``uri``: its one finding must be ``code``."""
    path = files_trace(tmp_path, uri)
    finding = one(cli("verify-files", path, "--root", root, "--json"), code)
    assert finding["file"] == str(path)
    assert finding["line"] == ANSWER_LINE
    assert (finding["claim"], finding["citation"]) == (1, 1)
    assert finding["source_id"] == "s1"
    assert finding["uri"] == uri
    return finding


def test_verify_files_passes(cli: Cli, tmp_path: Path, root: Path) -> None:
    (root / "sub dir").mkdir()
    (root / "sub dir" / "é.txt").write_text(PAGE, encoding="utf-8")
    path = files_trace(tmp_path, "file:doc.txt", f"file://{root}/doc.txt",
                       f"file://localhost{root}/doc.txt", "file:sub%20dir/%C3%A9.txt",
                       "file:./sub%20dir/../doc.txt")
    res = cli("verify-files", path, "--root", root, "--json")
    report = res.json()
    assert res.exit == 0, report
    assert report["summary"]["files"]["checked"] == report["summary"]["files"]["matched"] == 5


def test_verify_files_checks_a_source_not_captured(cli: Cli, tmp_path: Path,
                                                   root: Path) -> None:
    path = trace(tmp_path, [source("s1", "file:doc.txt", None)], [cite("s1", QUOTE)])
    res = cli("verify-files", path, "--root", root, "--json")
    report = res.json()
    assert res.exit == 0, report
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("TC203", "warning")]
    assert "verify-files" in report["findings"][0]["message"]
    files = report["summary"]["files"]
    assert (files["checked"], files["matched"]) == (1, 1)
    assert report["summary"]["captured"]["skipped"] == 1
    (root / "doc.txt").write_text("Something else.", encoding="utf-8")
    assert cli("verify-files", path, "--root", root, "--json").codes() == ["TC203", "TC211"]


def test_verify_files_default_root_is_the_current_directory(
    cli: Cli, tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = files_trace(tmp_path, "file:doc.txt")
    monkeypatch.chdir(root)
    assert cli("verify-files", path, "--json").exit == 0
    monkeypatch.chdir(tmp_path)
    assert cli("verify-files", path, "--json").codes() == ["TC320"]


def test_a_file_uri_with_a_lone_surrogate_is_an_input_error(cli: Cli, tmp_path: Path,
                                                            root: Path) -> None:
    # A lone surrogate is not text: the trace line holding it is TC123, and nothing is read.
    path = files_trace(tmp_path, "file:doc\ud801.txt")
    res = cli("verify-files", path, "--root", root, "--json")
    assert res.exit == 1
    assert [(f["code"], f["line"]) for f in res.json()["findings"]][:1] == [("TC123", 2)]


def test_tc211_verify_files(cli: Cli, tmp_path: Path, root: Path) -> None:
    (root / "doc.txt").write_text("The file has changed since.", encoding="utf-8")
    file_finding(cli, tmp_path, root, "file:doc.txt", "TC211")


def test_html_files_are_matched_on_visible_text(cli: Cli, tmp_path: Path, root: Path) -> None:
    page = "<p>The quick <b>brown</b> fox</p><script>only in script</script>"
    for name in ("a.html", "b.HTM", "c.xhtml"):
        (root / name).write_text(page, encoding="utf-8")
    (root / "d.txt").write_text(page, encoding="utf-8")
    uris = ["file:a.html", "file:b.HTM", "file:c.xhtml", "file:d.txt"]
    split = files_trace(tmp_path, *uris)
    report = cli("verify-files", split, "--root", root, "--json").json()
    assert [(f["code"], f["source_id"]) for f in report["findings"]] == [("TC211", "s4")]
    hidden = files_trace(tmp_path, *uris, quote="only in script", content="only in script")
    report = cli("verify-files", hidden, "--root", root, "--json").json()
    assert [(f["code"], f["source_id"]) for f in report["findings"]] == [
        ("TC211", "s1"), ("TC211", "s2"), ("TC211", "s3"),
    ]


def test_verify_files_skips_other_sources(
    cli: Cli, tmp_path: Path, root: Path, no_dns: Lookups,
) -> None:
    path = trace(tmp_path, [source("s1", "file:doc.txt", PAGE),
                            source("s2", f"https://{HOST}/a", PAGE),
                            source("s3", "http://127.0.0.1/", PAGE)],
                 [cite("s1", QUOTE), cite("s2", QUOTE), cite("s3", QUOTE)])
    report = cli("verify-files", path, "--root", root, "--json").json()
    assert report["exit_code"] == 0
    assert report["summary"]["files"]["skipped"] == 2
    assert report["summary"]["files"]["checked"] == 1
    assert no_dns == []


def test_tc320_file_missing(cli: Cli, tmp_path: Path, root: Path) -> None:
    file_finding(cli, tmp_path, root, "file:nowhere.txt", "TC320")


def test_tc320_dangling_symlink(cli: Cli, tmp_path: Path, root: Path) -> None:
    (root / "dangling.txt").symlink_to(root / "nowhere.txt")
    file_finding(cli, tmp_path, root, "file:dangling.txt", "TC320")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A FIFO outside the root: opening it to read would block, so reading it is noticed."""
    path = tmp_path / "outside.fifo"
    os.mkfifo(path)
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path ``os.open`` or ``open`` is called with while the test runs."""
    calls: list[str] = []
    real_os_open = os.open

    def record_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        calls.append(os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else "")
        return real_os_open(path, *args, **kwargs)

    real_open = io.open

    def record_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, bytes, os.PathLike)):
            calls.append(os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", record_os_open)
    monkeypatch.setattr("builtins.open", record_open)
    return calls


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink", "symlinked-dir"])
def test_tc321_outside_the_root_is_not_read(
    cli: Cli, tmp_path: Path, root: Path, outside: Path, opened: list[str], how: str,
) -> None:
    if how == "relative":
        uri = f"file:../{outside.name}"
    elif how == "absolute":
        uri = f"file://{outside}"
    elif how == "symlink":
        (root / "link.txt").symlink_to(outside)
        uri = "file:link.txt"
    else:
        (root / "up").symlink_to(tmp_path)
        uri = f"file:up/{outside.name}"
    path = files_trace(tmp_path, uri)
    code = run_guarded(lambda: cli("verify-files", path, "--root", root, "--json").exit,
                       seconds=10, unblock=unblock_fifo(outside))
    assert code == 2
    assert not [p for p in opened if os.path.realpath(p) == str(outside)]
    # The finding, located, once more (no FIFO needed now that nothing blocks).
    file_finding(cli, tmp_path, root, uri, "TC321")


def test_tc321_device_symlinked_into_the_root(
    cli: Cli, tmp_path: Path, root: Path, opened: list[str],
) -> None:
    (root / "null.txt").symlink_to("/dev/null")
    file_finding(cli, tmp_path, root, "file:null.txt", "TC321")
    assert "/dev/null" not in opened


def test_tc321_sibling_with_the_root_as_prefix(cli: Cli, tmp_path: Path, root: Path) -> None:
    sibling = tmp_path / "root2"
    sibling.mkdir()
    (sibling / "doc.txt").write_text(PAGE, encoding="utf-8")
    file_finding(cli, tmp_path, root, "file:../root2/doc.txt", "TC321")


def test_tc322_directory(cli: Cli, tmp_path: Path, root: Path) -> None:
    (root / "adir").mkdir()
    file_finding(cli, tmp_path, root, "file:adir", "TC322")


def test_tc322_fifo_inside_the_root_does_not_block(cli: Cli, tmp_path: Path, root: Path) -> None:
    fifo = root / "pipe.txt"
    os.mkfifo(fifo)
    path = files_trace(tmp_path, "file:pipe.txt")
    code = run_guarded(lambda: cli("verify-files", path, "--root", root, "--json").exit,
                       seconds=10, unblock=unblock_fifo(fifo))
    assert code == 2
    file_finding(cli, tmp_path, root, "file:pipe.txt", "TC322")


def test_tc322_device(cli: Cli, tmp_path: Path, root: Path) -> None:
    device = root / "null.txt"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("cannot create a device node here")
    file_finding(cli, tmp_path, root, "file:null.txt", "TC322")


def test_tc322_not_utf8(cli: Cli, tmp_path: Path, root: Path) -> None:
    (root / "latin1.txt").write_bytes(PAGE.encode() + b" caf\xe9")
    file_finding(cli, tmp_path, root, "file:latin1.txt", "TC322")


def test_tc322_over_the_cap(cli: Cli, tmp_path: Path, root: Path) -> None:
    (root / "big.txt").write_text(PAGE + "x" * 100, encoding="utf-8")
    path = files_trace(tmp_path, "file:big.txt")
    res = cli("verify-files", path, "--root", root, "--json", "--max-bytes", "100")
    assert one(res, "TC322")["source_id"] == "s1"
    res = cli("verify-files", path, "--root", root, "--json", "--max-bytes", "200")
    assert res.exit == 0


def test_tc322_symlink_loop(cli: Cli, tmp_path: Path, root: Path) -> None:
    (root / "loop").symlink_to(root / "loop")
    finding = file_finding(cli, tmp_path, root, "file:loop", "TC322")
    assert "loop" in finding["message"]


def test_file_uri_with_a_host_is_tc300(cli: Cli, tmp_path: Path, root: Path) -> None:
    file_finding(cli, tmp_path, root, "file://elsewhere/doc.txt", "TC300")


def test_verify_files_bad_root_is_usage(cli: Cli, tmp_path: Path, root: Path) -> None:
    path = files_trace(tmp_path, "file:doc.txt")
    res = cli("verify-files", path, "--root", tmp_path / "missing", "--json")
    assert (res.exit, res.codes()) == (1, ["TC100"])


# =============================================================================================
# Options (TC100) and the progress bar


@pytest.mark.parametrize("option", [
    ["--per-host", "0"], ["--per-host", "65"], ["--per-host", "two"], ["--per-host", "-1"],
])
@pytest.mark.parametrize("command", ["verify-notes", "verify-urls", "hook"])
def test_bad_per_host_is_tc100(
    cli: Cli, no_dns: Lookups, tmp_path: Path, option: list[str], command: str,
) -> None:
    url = f"https://{HOST}/a"
    path = (trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)])
            if command == "verify-urls" else notes(tmp_path, (QUOTE, url), name="n.notes"))
    extra = ["--stage", "online"] if command == "hook" else []
    res = cli(command, path, "--json", *extra, *option)
    assert (res.exit, res.codes()) == (1, ["TC100"])
    assert "--per-host" in res.json()["findings"][0]["message"]
    assert no_dns == []


def test_verify_files_takes_per_host_without_effect(cli: Cli, tmp_path: Path,
                                                   root: Path) -> None:
    res = cli("verify-files", files_trace(tmp_path, "file:doc.txt"), "--root", root, "--json",
              "--per-host", "2")
    assert (res.exit, res.codes()) == (0, [])
    assert res.json()["notices"] == ["--per-host has no effect on verify-files"]


@pytest.mark.parametrize("option", [
    ["--timeout", "20.5"], ["--timeout", "0"], ["--timeout", "nan"], ["--timeout", "soon"],
    ["--max-bytes", str(MAX_BYTES + 1)], ["--max-bytes", "0"],
    ["--concurrency", "0"], ["--concurrency", "65"],
    ["--connect-to", "example.test:443:localhost:8443"],
    ["--connect-to", "example.test:443:127.0.0.1"],
    ["--allow-net", "127.0.0.1/8"], ["--allow-net", "loopback"],
    ["--ca-cert", "/nonexistent/ca.pem"],
    ["--user-agent", "tracecite\r\nX-Injected: 1"],
    ["--user-agent", "caf\u00e9"], ["--user-agent", ""], ["--user-agent", "x" * 1001],
])
@pytest.mark.parametrize("command", ["verify-notes", "verify-urls", "verify-files"])
def test_bad_fetch_options_are_tc100(
    cli: Cli, no_dns: Lookups, tmp_path: Path, option: list[str], command: str,
) -> None:
    # Nothing can be reached: a fetch would look the name up, and no_dns would make that exit 3.
    url = f"https://{HOST}/a"
    path = (notes(tmp_path, (QUOTE, url)) if command == "verify-notes"
            else trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)]))
    res = cli(command, path, "--json", *option)
    assert (res.exit, res.codes()) == (1, ["TC100"])
    assert no_dns == []


@pytest.mark.parametrize("command", ["verify-notes", "verify-urls"])
def test_ca_cert_that_is_not_pem_is_tc100(
    cli: Cli, no_dns: Lookups, tmp_path: Path, command: str,
) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n", encoding="utf-8")
    url = f"https://{HOST}/a"
    path = (notes(tmp_path, (QUOTE, url)) if command == "verify-notes"
            else trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)]))
    res = cli(command, path, "--json", "--ca-cert", bundle)
    assert (res.exit, res.codes()) == (1, ["TC100"])
    assert no_dns == []


def test_limits_at_their_maximum_are_fine(cli: Cli, site: Site, tmp_path: Path) -> None:
    path = notes(tmp_path, (QUOTE, site.route("/a", text(PAGE))))
    res = cli("verify-notes", path, "--json", "--timeout", "20", "--max-bytes", str(MAX_BYTES),
              "--concurrency", "64", "--per-host", "64", "--user-agent",
              "probe/1.0 (+https://x.test)", *site.flags)
    assert res.exit == 0
    assert site.https.requests[0].headers["user-agent"] == "probe/1.0 (+https://x.test)"


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def terminal(monkeypatch: pytest.MonkeyPatch) -> FakeTerminal:
    """Replace ``sys.stderr`` by a `FakeTerminal`, in the test body: pytest's capture puts its
    own stream back at the start of each test phase."""
    stream = FakeTerminal()
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setattr("sys.stderr", stream)
    return stream


@pytest.mark.parametrize("command", ["verify-notes", "verify-urls", "verify-files"])
def test_progress_bar_on_a_terminal(
    cli: Cli, site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str,
) -> None:
    stderr = terminal(monkeypatch)
    url = site.route("/a", text(PAGE))
    (tmp_path / "doc.txt").write_text(PAGE, encoding="utf-8")
    path = {"verify-notes": lambda: notes(tmp_path, (QUOTE, url)),
            "verify-urls": lambda: trace(tmp_path, [source("s1", url, PAGE)], [cite("s1", QUOTE)]),
            "verify-files": lambda: files_trace(tmp_path, "file:doc.txt")}[command]()
    res = cli(command, path, "--json", "--root", tmp_path, *site.flags) \
        if command == "verify-files" else cli(command, path, "--json", *site.flags)
    assert res.exit == 0
    assert res.err == ""  # nothing reached the real stderr
    shown = ANSI.sub("", stderr.getvalue())
    assert command in shown
    assert "1/1" in shown
    res.json()  # stdout is still just the report


@pytest.mark.parametrize("flag", ["--no-progress", "--quiet"])
def test_no_progress_bar_when_asked(
    cli: Cli, site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str,
) -> None:
    stderr = terminal(monkeypatch)
    path = notes(tmp_path, (QUOTE, site.route("/a", text(PAGE))))
    assert cli("verify-notes", path, flag, *site.flags).exit == 0
    assert stderr.getvalue() == ""


def test_no_progress_bar_off_a_terminal(cli: Cli, site: Site, tmp_path: Path) -> None:
    path = notes(tmp_path, (QUOTE, site.route("/a", text(PAGE))))
    res = cli("verify-notes", path, *site.flags)
    assert res.exit == 0
    assert res.err == ""


def test_closed_stderr_means_no_progress_bar(
    cli: Cli, site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = notes(tmp_path, (QUOTE, site.route("/a", text(PAGE))))
    monkeypatch.setattr("sys.stderr", None)  # what Python has when started with 2>&-
    res = cli("verify-notes", path, "--json", *site.flags)
    assert res.exit == 0
    assert res.json()["summary"]["live"]["matched"] == 1


@pytest.mark.parametrize("uri", [" https://example.test/a", "\thttp://example.test/a",
                                 "HTTPS://example.test/a\n"])
def test_a_web_uri_with_junk_around_it_is_checked_not_skipped(
        cli: Cli, no_dns: Lookups, tmp_path: Path, uri: str) -> None:
    """Regression: a leading space made verify-urls skip the source and pass."""
    path = trace(tmp_path, [source("s1", uri, PAGE)], [cite("s1", QUOTE)])
    res = cli("verify-urls", path, "--json")
    assert res.exit == 2
    assert res.json()["summary"]["live"]["skipped"] == 0
    assert res.codes() == ["TC300"]
