"""The options rule of the cache (docs/web-over-time.md#the-cache): a verdict is used only by a
run with the options that decided it. For each verdict-deciding option, a pass cached under the
defaults becomes the finding that option gives once it changes: the page is loaded again, never
answered from the cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trustme

import tracecite.settings as settings_module
from tests.conftest import Cli, note, write_notes
from tests.fetch.servers import Reply, Request
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    HTML,
    Site,
    closed_port,
    html,
    no_dns_fixture,
    site_fixture,
)
from tracecite.settings import Settings, options_digest

QUOTE = "Quotes must appear word for word"
PAGE = ("<html><body><p>Quotes must appear <b>word for word</b> in the source.</p>"
        f"<!-- {'padding ' * 60} --></body></html>")  # over 300 bytes
BLOCKED_AGENT = "blocked-agent/1"


class Page:
    """The page, answered after ``delay`` seconds, and a 404 to the blocked User-Agent."""

    def __init__(self) -> None:
        self.delay = 0.0
        self.requests = 0

    def __call__(self, request: Request) -> Reply:
        import time

        self.requests += 1
        time.sleep(self.delay)
        if request.headers.get("user-agent") == BLOCKED_AGENT:
            return Reply(404, HTML, b"<p>no</p>")
        return html(PAGE)


def _flags(site: Site, *, connect_to: list[str] | None = None, allow_net: bool = True,
           ca_cert: str | None = None) -> list[str]:
    return [*(site.connect_to if connect_to is None else connect_to),
            *(["--allow-net", "127.0.0.0/8"] if allow_net else []),
            "--ca-cert", ca_cert or site.ca_path, "--no-progress"]


def _other_ca(tmp_path: Path) -> str:
    path = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(path))
    return str(path)


Change = Callable[[Site, Page, Path], list[str]]

CHANGES: dict[str, tuple[Change, str]] = {
    "max_bytes": (lambda s, p, t: [*_flags(s), "--max-bytes", "300"], "TC314"),
    "timeout": (lambda s, p, t: (setattr(p, "delay", 1.0), [*_flags(s), "--timeout", "0.3"])[1],
                "TC313"),
    "user_agent": (lambda s, p, t: [*_flags(s), "--user-agent", BLOCKED_AGENT], "TC315"),
    "allow_net": (lambda s, p, t: _flags(s, allow_net=False), "TC306"),
    "connect_to": (lambda s, p, t: _flags(s, connect_to=[
        "--connect-to", f"{HOST}:443:127.0.0.1:{closed_port()}"]), "TC311"),
    "ca_cert": (lambda s, p, t: _flags(s, ca_cert=_other_ca(t)), "TC312"),
}


PDF_ONLY = {"max_pdf_bytes"}
"""Options that decide verdicts of PDFs only: tests/pdf/test_commands.py tests them."""


def test_every_verdict_deciding_option_is_tested() -> None:
    assert set(CHANGES) | PDF_ONLY == set(settings_module.VERDICT_OPTIONS)


@pytest.mark.parametrize("option", sorted(CHANGES))
def test_a_cached_pass_is_not_a_verdict_under_another_option(
        cli: Cli, site: Site, tmp_path: Path, option: str) -> None:
    page = Page()
    notes = write_notes(tmp_path / "cite.notes",
                        note(quote=QUOTE, url=site.route("/page", page)))
    cache = tmp_path / "verdicts.sqlite"
    first = cli("verify-notes", "--json", "--cache", cache, *_flags(site), notes)
    assert first.exit == 0, first.out
    again = cli("verify-notes", "--json", "--cache", cache, *_flags(site), notes)
    assert again.exit == 0 and again.json()["summary"]["live"]["cached"] == 1
    assert page.requests == 1
    change, code = CHANGES[option]
    changed = cli("verify-notes", "--json", "--cache", cache, *change(site, page, tmp_path),
                  notes)
    assert changed.codes() == [code]
    assert changed.json()["summary"]["live"]["cached"] == 0
    assert changed.json()["run"]["options_digest"] != first.json()["run"]["options_digest"]


def test_another_rules_version_is_a_miss(cli: Cli, site: Site, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    page = Page()
    notes = write_notes(tmp_path / "cite.notes",
                        note(quote=QUOTE, url=site.route("/page", page)))
    cache = tmp_path / "verdicts.sqlite"
    assert cli("verify-notes", "--json", "--cache", cache, *_flags(site), notes).exit == 0
    monkeypatch.setattr(settings_module, "RULES_VERSION", settings_module.RULES_VERSION + 1)
    bumped = cli("verify-notes", "--json", "--cache", cache, *_flags(site), notes)
    assert page.requests == 2 and bumped.json()["summary"]["live"]["cached"] == 0
    # Its verdicts replaced the old ones: the next run of the new rules uses them.
    assert cli("verify-notes", "--json", "--cache", cache, *_flags(site),
               notes).json()["summary"]["live"]["cached"] == 1
    assert page.requests == 2


def test_the_html_parser_is_in_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("selectolax")
    from tracecite.visible.lexbor import chosen

    monkeypatch.delenv("TRACECITE_HTML_PARSER", raising=False)
    assert settings_module.html_parser() == chosen() == "lexbor"
    fast = options_digest(Settings())
    monkeypatch.setenv("TRACECITE_HTML_PARSER", "html5lib")
    assert settings_module.html_parser() == chosen() == "html5lib"
    assert options_digest(Settings()) != fast


def test_options_that_decide_no_verdict_are_not_in_the_digest() -> None:
    base = options_digest(Settings())
    assert base == options_digest(Settings(concurrency=3, per_host=1, retries=0, archive=True,
                                           warn=("TC319",), fail_after=3, quiet=True))
    assert base != options_digest(Settings(max_bytes=300))
    assert len(base) == 64 and int(base, 16) >= 0


def test_file_digest_never_reads_a_device_or_waits_for_a_fifo(tmp_path: Path) -> None:
    import hashlib
    import os

    unreadable = hashlib.sha256(b"unreadable").hexdigest()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert settings_module.file_digest(str(fifo)) == unreadable
    assert settings_module.file_digest("/dev/zero") == unreadable
    assert settings_module.file_digest(str(tmp_path / "missing")) == unreadable
    (tmp_path / "a").write_bytes(b"x" * 3_000_000)
    assert (settings_module.file_digest(str(tmp_path / "a"))
            == hashlib.sha256(b"x" * 3_000_000).hexdigest())
