"""``--max-pdf-bytes`` and the configuration's ``max_pdf_bytes`` (docs/reference/commands.md):
bounds, and the configuration read like every option's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracecite.config import load_config
from tracecite.errors import TraceCiteError
from tracecite.fetch.limits import MAX_BYTES, MAX_PDF_BYTES
from tracecite.fetch.options import FetchOptions
from tracecite.settings import resolve


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".tracecite.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_default_is_every_source_s_cap() -> None:
    settings = resolve("verify-files", {})
    assert settings.max_pdf_bytes == MAX_BYTES
    assert settings.fetch_options().max_pdf_bytes == MAX_BYTES


@pytest.mark.parametrize("key", ["max_pdf_bytes", "max-pdf-bytes"])
def test_the_configuration_sets_it_and_a_flag_wins(tmp_path: Path, key: str) -> None:
    config = load_config(_config(tmp_path, f"{key} = 4194304\n"))
    settings = resolve("verify-notes", {}, config=config.values, config_path=config.path)
    assert settings.max_pdf_bytes == 4194304
    assert settings.fetch_options().max_pdf_bytes == 4194304
    flagged = resolve("verify-notes", {"max_pdf_bytes": 3000000}, config=config.values,
                      config_path=config.path)
    assert flagged.max_pdf_bytes == 3000000


@pytest.mark.parametrize("value", ["0", str(MAX_PDF_BYTES + 1), "'big'", "2.5"])
def test_bad_values_are_refused_with_the_key(tmp_path: Path, value: str) -> None:
    with pytest.raises(TraceCiteError) as caught:
        config = load_config(_config(tmp_path, f"max_pdf_bytes = {value}\n"))
        resolve("verify-notes", {}, config=config.values, config_path=config.path)
    assert "max_pdf_bytes" in caught.value.finding.message
    assert caught.value.finding.line == 1


def test_the_fetcher_options_check_the_bound() -> None:
    assert FetchOptions(max_pdf_bytes=MAX_PDF_BYTES).max_pdf_bytes == MAX_PDF_BYTES
    with pytest.raises(ValueError, match="max_pdf_bytes"):
        FetchOptions(max_pdf_bytes=MAX_PDF_BYTES + 1)
