"""A body cut short inside its content coding (docs/web-over-time.md#retries): a complete HTTP
response (``Content-Length`` met, or a chunked body with its last chunk) whose gzip or deflate
stream ends early, after some of it decoded, is a body cut short, TC311, and retried like one
without a coding; a coding corrupt from its first bytes (or ending before any of it decoded)
stays TC317. Raw-socket servers write the exact bytes."""

from __future__ import annotations

import gzip
import zlib

import pytest

from tests.fetch.conftest import HTML, MakeFetcher, StartRaw, fetch_error
from tests.fetch.servers import RawConnection, Script, chunked, head, send_bytes, stream
from tracecite.checks.web import WebLoader
from tracecite.codes import Code
from tracecite.fetch.retry import RetryPolicy, is_transient

pytestmark = pytest.mark.network

TEXT = ("The quick brown fox jumps over the lazy dog. " * 400).encode()
GZIP = gzip.compress(TEXT)
ZLIB = zlib.compress(TEXT)
RAW_DEFLATE = zlib.compress(TEXT)[2:-4]  # the deflate stream without its zlib wrapper
URL = "http://example.test/"


def framed(coding: str, body: bytes) -> bytes:
    """A complete response: ``body`` as ``coding``, framed by its ``Content-Length``."""
    return head(headers=[*HTML, ("Content-Encoding", coding),
                         ("Content-Length", str(len(body))), ("Connection", "close")]) + body


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", GZIP[: len(GZIP) // 2]),  # half the deflate data
        ("gzip", GZIP[:-8]),  # the whole deflate data, no trailer
        ("x-gzip", GZIP[:-1]),
        ("deflate", ZLIB[: len(ZLIB) // 2]),  # zlib-wrapped
        ("deflate", RAW_DEFLATE[: len(RAW_DEFLATE) // 2]),  # raw
        ("gzip, gzip", gzip.compress(GZIP)[:-20]),  # stacked: the outer stream ends early
        ("gzip", gzip.compress(b"first member ") + GZIP[:12]),  # a second member cut short
    ],
    ids=["gzip-half", "gzip-no-trailer", "x-gzip", "zlib-half", "raw-half", "stacked",
         "second-member-half"],
)
def test_a_coding_cut_short_with_its_framing_intact_is_tc311(
    raw_server: StartRaw, make_fetcher: MakeFetcher, coding: str, body: bytes,
) -> None:
    server = raw_server(send_bytes(framed(coding, body)))
    error = fetch_error(make_fetcher(http=server.port), URL)
    assert error.code is Code.CONNECT_FAILED, error
    assert is_transient(error)
    assert f"ended inside its {coding.split(',')[-1].strip()} content coding" in error.detail


def test_a_chunked_body_whose_gzip_ends_early_is_tc311(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    first = head(headers=[*HTML, ("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")])
    cut = GZIP[: len(GZIP) // 2]
    server = raw_server(stream(first, chunked(cut[i:i + 100] for i in range(0, len(cut), 100))))
    error = fetch_error(make_fetcher(http=server.port), URL)
    assert error.code is Code.CONNECT_FAILED


@pytest.mark.parametrize(
    ("coding", "body"),
    [
        ("gzip", TEXT),  # not gzip at all
        ("gzip", b"\x1f\x8b\x09" + GZIP[3:]),  # a gzip header with an unknown method
        ("deflate", b"\xff\xff\xff\xff\xff"),
        ("gzip", GZIP[:10] + b"\xff" * 200),  # a sound header, then no deflate data at all
        # Ended before a single byte decoded: nothing shows it was ever a sound stream.
        ("gzip", b"\x1f\x8b\x08\x00garbage"),
        ("gzip", GZIP[:5]),  # inside the gzip header
        ("deflate", ZLIB[:1]),  # one byte: zlib or raw cannot even be told apart
    ],
    ids=["not-gzip", "gzip-method", "deflate-junk", "gzip-header-then-junk", "gzip-garbage",
         "gzip-in-header", "deflate-one-byte"],
)
def test_a_coding_corrupt_from_its_first_bytes_stays_tc317(
    raw_server: StartRaw, make_fetcher: MakeFetcher, coding: str, body: bytes,
) -> None:
    server = raw_server(send_bytes(framed(coding, body)))
    error = fetch_error(make_fetcher(http=server.port), URL)
    assert error.code is Code.NOT_UTF8, error
    assert not is_transient(error)


def first_cut_then_whole(coding: str, whole: bytes) -> Script:
    """The first connection gets ``whole`` cut in half (framing intact), the next ones all of
    it."""

    def script(connection: RawConnection) -> None:
        body = whole[: len(whole) // 2] if connection.index == 0 else whole
        connection.send(framed(coding, body))

    return script


@pytest.mark.parametrize(("coding", "whole"), [("gzip", GZIP), ("deflate", ZLIB)])
def test_a_coding_cut_short_is_retried_and_passes(
    raw_server: StartRaw, make_fetcher: MakeFetcher, coding: str, whole: bytes,
) -> None:
    server = raw_server(first_cut_then_whole(coding, whole))
    loader = WebLoader(make_fetcher(http=server.port), RetryPolicy(1, draw=lambda: 0.0))
    loaded = loader.load(URL)
    assert loaded.text == TEXT.decode()
    assert loaded.info.attempts == 2
    assert len(server.requests) == 2  # two requests, the server saw both


def test_the_same_cut_without_a_coding_is_retried_the_same_way(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    def script(connection: RawConnection) -> None:
        length = head(headers=[*HTML, ("Content-Length", str(len(TEXT))),
                               ("Connection", "close")])
        connection.send(length + (TEXT[:1000] if connection.index == 0 else TEXT))

    server = raw_server(script)
    loaded = WebLoader(make_fetcher(http=server.port),
                       RetryPolicy(1, draw=lambda: 0.0)).load(URL)
    assert (loaded.text, loaded.info.attempts) == (TEXT.decode(), 2)
