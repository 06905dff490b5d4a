"""Charsets, statuses without a page, refreshes, ``final_url`` and bot walls end to end through
``main([...])`` and ``--json`` (docs/reference/fetching.md, docs/web-over-time.md#bot-walls).

Every server is on 127.0.0.1 and is reached only through ``--connect-to``, ``--allow-net`` and
``--ca-cert`` (see tests/live_fixtures.py); any name lookup fails the test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli, note, write_notes
from tests.fetch.servers import Reply
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    HTML,
    Site,
    html,
    no_dns_fixture,
    redirect,
    site_fixture,
    text,
)

pytestmark = pytest.mark.network

PAGE = "The quick brown fox jumps over the lazy dog."
QUOTE = "quick brown fox"


def verify(cli: Cli, site: Site, tmp_path: Path, url: str, *extra: str,
           ) -> tuple[int, list[dict[str, Any]]]:
    """Run verify-notes on one record citing ``url``: the exit code and the findings."""
    path = write_notes(tmp_path / "n.md", note(quote=QUOTE, url=url))
    res = cli("verify-notes", path, "--json", *site.flags, *extra)
    report = res.json()
    assert res.exit == report["exit_code"]
    findings: list[dict[str, Any]] = report["findings"]
    return res.exit, findings


def test_ascii_page_declared_latin1_is_checked(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text(PAGE, headers=(("Content-Type", "text/html; charset=ISO-8859-1"),)))
    assert verify(cli, site, tmp_path, url) == (0, [])


def test_latin1_page_is_tc317(cli: Cli, site: Site, tmp_path: Path) -> None:
    body = f"{PAGE} café".encode("latin-1")
    url = site.route("/a", text(body, headers=(("Content-Type", "text/plain; charset=latin-1"),)))
    code, findings = verify(cli, site, tmp_path, url)
    assert (code, [f["code"] for f in findings]) == (2, ["TC317"])


def test_utf8_bom_decides_over_the_header(cli: Cli, site: Site, tmp_path: Path) -> None:
    body = b"\xef\xbb\xbf" + f"{PAGE} café".encode()
    url = site.route("/a", text(body, headers=(("Content-Type", "text/plain; charset=latin-1"),)))
    assert verify(cli, site, tmp_path, url) == (0, [])


@pytest.mark.parametrize("status", [204, 206])
def test_2xx_without_a_page_is_tc315(cli: Cli, site: Site, tmp_path: Path, status: int) -> None:
    url = site.route("/a", Reply(status, HTML, b"" if status == 204 else PAGE.encode()))
    code, findings = verify(cli, site, tmp_path, url)
    assert code == 2
    assert [(f["code"], f["status"]) for f in findings] == [("TC315", status)]


def test_meta_refresh_is_followed(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/old", html('<meta http-equiv="refresh" content="0; url=/new">moved'))
    site.route("/new", html(f"<p>{PAGE}</p>"))
    assert verify(cli, site, tmp_path, url) == (0, [])
    assert site.paths == ["/old", "/new"]


def test_refreshed_to_a_page_without_the_quote_names_where(
    cli: Cli, site: Site, tmp_path: Path,
) -> None:
    url = site.route("/old", Reply(200, (*HTML, ("Refresh", "1; url=/consent")), b""))
    site.route("/consent", html("<p>Accept our cookies</p>"))
    code, findings = verify(cli, site, tmp_path, url)
    assert code == 2
    (finding,) = findings
    assert finding["code"] == "TC210"
    assert finding["uri"] == url
    assert finding["final_url"] == f"https://{HOST}/consent"
    assert f"https://{HOST}/consent" in finding["message"]


def test_slow_refresh_is_not_followed(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", html(f'<meta http-equiv="refresh" content="30; url=/b"><p>{PAGE}</p>'))
    assert verify(cli, site, tmp_path, url) == (0, [])
    assert site.paths == ["/a"]


def test_error_after_a_redirect_names_where(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/old", redirect("/gone", 301))
    site.route("/gone", text("no", status=404))
    code, findings = verify(cli, site, tmp_path, url)
    (finding,) = findings
    assert (code, finding["code"], finding["status"]) == (2, "TC315", 404)
    assert finding["final_url"] == f"https://{HOST}/gone"
    assert f"https://{HOST}/gone" in finding["message"]


def test_unredirected_finding_has_no_final_url(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", text("no", status=404))
    _, (finding,) = verify(cli, site, tmp_path, url)
    assert finding.get("final_url") is None
    assert "redirected" not in finding["message"]


def test_bot_wall_is_tc319(cli: Cli, site: Site, tmp_path: Path) -> None:
    headers = (*HTML, ("Server", "cloudflare"), ("cf-mitigated", "challenge"))
    url = site.route("/a", Reply(403, headers, b"<title>Just a moment...</title>"))
    code, findings = verify(cli, site, tmp_path, url)
    (finding,) = findings
    assert (code, finding["code"], finding["name"], finding["exit"]) == (
        2, "TC319", "source-blocked", 2)
    assert finding["status"] == 403
    for remedy in ("automated client", "--user-agent", "skip_urls", "--warn TC319"):
        assert remedy in finding["message"]


def test_bot_wall_as_a_warning(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", Reply(403, (*HTML, ("x-datadome", "protected")), b""))
    code, findings = verify(cli, site, tmp_path, url, "--warn", "TC319")
    (finding,) = findings
    assert (code, finding["code"], finding["severity"], finding["exit"]) == (
        0, "TC319", "warning", 0)


def test_ordinary_403_stays_tc315(cli: Cli, site: Site, tmp_path: Path) -> None:
    url = site.route("/a", Reply(403, (*HTML, ("Server", "cloudflare")), b"<h1>Forbidden</h1>"))
    _, (finding,) = verify(cli, site, tmp_path, url)
    assert (finding["code"], finding["status"]) == ("TC315", 403)
