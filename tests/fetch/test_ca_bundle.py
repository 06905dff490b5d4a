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
from tracecite.fetch.ca_bundle import CaBundleError, check_ca_bundle, take_ca_bundle
from tracecite.fetch.fetcher import PinnedFetcher
from tracecite.fetch.options import FetchOptions

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


def test_the_fetcher_takes_the_checked_bundle(ca_path: str, bundle_loads: list[str]) -> None:
    check_ca_bundle(ca_path)
    PinnedFetcher(FetchOptions(ca_cert=ca_path)).close()
    assert len(bundle_loads) == 1
    # Taken once: a second fetcher, with no check before it, reads the file itself.
    PinnedFetcher(FetchOptions(ca_cert=ca_path)).close()
    assert len(bundle_loads) == 2


def test_a_bundle_changed_after_its_check_is_read_again(tmp_path: Path, ca_path: str) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(ca_path).read_bytes())
    check_ca_bundle(str(bundle))
    bundle.write_text("not a certificate any more\n", encoding="utf-8")
    with pytest.raises(CaBundleError) as caught:
        take_ca_bundle(str(bundle))
    assert caught.value.reason == "NO_CERTIFICATE_OR_CRL_FOUND"


def test_the_reasons_and_messages_of_a_bundle_that_cannot_be_loaded(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.pem")
    with pytest.raises(CaBundleError) as caught:
        check_ca_bundle(missing)
    assert caught.value.reason == "FileNotFoundError"
    assert str(caught.value) == (f"cannot load CA certificates from {missing}: "
                                 "[Errno 2] No such file or directory")
    with pytest.raises(CaBundleError) as caught:
        take_ca_bundle("")  # a library's empty path: no file, not the system store
    assert caught.value.reason == "FileNotFoundError"
    with pytest.raises(CaBundleError) as caught:
        take_ca_bundle(str(tmp_path))
    assert caught.value.reason == "IsADirectoryError"
