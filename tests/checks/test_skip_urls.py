"""``skip_urls`` globs (docs/web-over-time.md#warnings-and-skips): ``*`` within a host label or path
segment, ``**`` across."""

from __future__ import annotations

import pytest

from tracecite.checks.skip_urls import skips, url_glob


@pytest.mark.parametrize(("glob", "url", "skipped"), [
    # ** crosses segments and the query; the stable form is what is matched
    ("https://twitter.com/**", "https://twitter.com/x/status/1?s=20", True),
    ("https://twitter.com/**", "https://TWITTER.com", True),
    ("https://twitter.com/**", "https://twitter.com:443/a", True),
    ("https://twitter.com/**", "https://api.twitter.com/a", False),
    ("https://twitter.com/**", "https://twitter.com.evil.example/a", False),
    # * stays within one host label
    ("https://*.example.org/private/**", "https://a.example.org/private/x/y", True),
    ("https://*.example.org/private/**", "https://a.b.example.org/private/x", False),
    ("https://*.example.org/private/**", "https://example.org/private/x", False),
    ("https://*.example.org/private/**", "https://a.example.org/public/x", False),
    ("https://**.example.org/**", "https://a.b.example.org/x", True),
    ("https://*/**", "https://example.org/x", False),  # one label, not two
    # * stays within one path segment, and out of the query
    ("https://example.org/*", "https://example.org/a", True),
    ("https://example.org/*", "https://example.org/a/b", False),
    ("https://example.org/*", "https://example.org/a?x=1", False),
    ("https://example.org/*/b", "https://example.org/a/b", True),
    ("https://example.org/a?*", "https://example.org/a?x=1&y=2", True),
    # everything else is literal
    ("https://example.org/a", "https://example.org/a", True),
    ("https://example.org/a", "https://example.org/a#part", True),  # fragments are dropped
    ("https://example.org/a", "https://example.org/a?x=1", False),
    ("https://example.org/a", "https://example.org/a/b", False),
    ("https://example.org/a.b", "https://example.org/aXb", False),
    ("https://example.org/%7ea", "https://example.org/~a", True),
    # the scheme is literal unless the glob says otherwise
    ("https://example.org/**", "http://example.org/a", False),
    ("http*://example.org/**", "http://example.org/a", True),
    ("http*://example.org/**", "https://example.org/a", True),
    ("*://example.org/**", "https://example.org/a", True),
])
def test_globs(glob: str, url: str, skipped: bool) -> None:
    assert skips(url, [url_glob(glob)]) is skipped


def test_no_globs_skip_nothing() -> None:
    assert not skips("https://example.org/", [])
