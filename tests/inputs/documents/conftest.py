"""Every documents test runs twice: pieces read by the scanner where it can (the default), and
every piece parsed by markdown-it-py alone."""

from __future__ import annotations

import pytest

from tracecite.inputs.documents.markdown import PARSER_VARIABLE


@pytest.fixture(autouse=True, params=["scanner", "markdown-it"])
def markdown_reader(request: pytest.FixtureRequest,
                    monkeypatch: pytest.MonkeyPatch) -> str:
    """How Markdown pieces are read in this run of the test."""
    if request.param == "markdown-it":
        monkeypatch.setenv(PARSER_VARIABLE, "markdown-it")
    else:
        monkeypatch.delenv(PARSER_VARIABLE, raising=False)
    return str(request.param)
