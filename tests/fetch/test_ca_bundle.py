"""The ``--ca-cert`` bundle has one owner: a run reads it once, where its value is checked, and
the fetcher trusts what that read loaded (docs/reference/fetching.md)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli
from tests.live_fixtures import (  # noqa: F401 - the *_fixture names are fixtures
    HOST,
    Lookups,
    Site,
    no_dns_fixture,
    site_fixture,
    text,
)
from tracecite.fetch.ca_bundle import CaBundleError, load_ca_bundle
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.options import FetchOptions
from tracecite.settings import resolve

pytestmark = pytest.mark.network

PAGE = "The quick brown fox jumps over the lazy dog."


@pytest.fixture
def bundle_loads(monkeypatch: pytest.MonkeyPatch, ca_path: str) -> Iterator[list[str]]:
    """Every time a context loads the file ``ca_path`` (``load_verify_locations(cafile=)``)."""
    loads: list[str] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, cafile: Any = None, *args: Any, **kwargs: Any) -> None:
        if cafile is not None and str(cafile) == ca_path:
            loads.append(str(cafile))
        real(self, cafile, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    yield loads


def test_a_run_reads_the_bundle_once(cli: Cli, site: Site, tmp_path: Path,
                                     bundle_loads: list[str]) -> None:
    url = site.route("/a", text(PAGE))
    notes = tmp_path / "n.notes"
    notes.write_text(f"claim: c\nquote: quick brown fox\nurl: {url}\n", encoding="utf-8")
    res = cli("verify-notes", notes, "--json", *site.flags)
    assert res.exit == 0, res.out + res.err
    assert site.https.requests, "the page was fetched over https"
    assert len(bundle_loads) == 1


def test_a_bad_bundle_is_still_tc100_before_any_fetch(cli: Cli, no_dns: Lookups, tmp_path: Path,
                                                      bundle_loads: list[str]) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n", encoding="utf-8")
    notes = tmp_path / "n.notes"
    notes.write_text(f"claim: c\nquote: q\nurl: https://{HOST}/a\n", encoding="utf-8")
    res = cli("verify-notes", notes, "--json", "--ca-cert", bundle)
    assert res.exit == 1
    finding, = res.json()["findings"]
    assert (finding["code"], finding["message"]) == (
        "TC100", "--ca-cert: cannot load CA certificates (NO_CERTIFICATE_OR_CRL_FOUND)")
    assert no_dns == []


def test_the_fetcher_trusts_what_the_settings_loaded(ca_path: str,
                                                      bundle_loads: list[str]) -> None:
    settings = resolve("verify-notes", {"ca_cert": ca_path})
    assert settings.ca_bundle is not None and len(bundle_loads) == 1
    PinnedFetcher(settings.fetch_options()).close()
    assert len(bundle_loads) == 1
    # Options made by hand, with nothing loaded: the fetcher reads the file itself.
    PinnedFetcher(FetchOptions(ca_cert=ca_path)).close()
    assert len(bundle_loads) == 2


def test_a_command_that_fetches_nothing_loads_no_bundle(ca_path: str,
                                                       bundle_loads: list[str]) -> None:
    assert resolve("verify-files", {"ca_cert": ca_path}).ca_bundle is None
    assert bundle_loads == []


def test_the_loaded_bundle_plays_no_part_in_comparing_settings(ca_path: str) -> None:
    loaded = resolve("verify-notes", {"ca_cert": ca_path})
    assert loaded == resolve("verify-notes", {"ca_cert": ca_path})
    assert "SSLContext" not in repr(loaded.fetch_options())


def test_the_reasons_and_messages_of_a_bundle_that_cannot_be_loaded(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.pem")
    with pytest.raises(CaBundleError) as caught:
        load_ca_bundle(missing)
    assert caught.value.reason == "FileNotFoundError"
    assert str(caught.value) == (f"cannot load CA certificates from {missing}: "
                                 "[Errno 2] No such file or directory")
    with pytest.raises(CaBundleError) as caught:
        load_ca_bundle("")  # a library's empty path: no file, not the system store
    assert caught.value.reason == "FileNotFoundError"
    with pytest.raises(CaBundleError) as caught:
        load_ca_bundle(str(tmp_path))
    assert caught.value.reason == "IsADirectoryError"
