"""Tests of response bodies against local servers: types and charsets, UTF-8, the size caps,
content codings and bombs, and redirect bodies (loopback only, see conftest.py)."""

from __future__ import annotations

import gzip
import itertools
import time
import tracemalloc
import zlib
from collections.abc import Callable

import pytest

from tests.fetch.conftest import HTML, MakeFetcher, MiB, StartRaw, fetch_error
from tests.fetch.servers import (
    HTTPTestServer,
    Reply,
    chunked,
    head,
    send_bytes,
    stream,
    trickle,
    zeros_gzip,
)
from tracecite.codes import Code
from tracecite.fetch.errors import FetchError
from tracecite.fetch.limits import MAX_BYTES
from tracecite.fetch.options import ConnectTo

pytestmark = pytest.mark.network


# --------------------------------------------------------------------------------------------
# Content types and charsets


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/ld+json; charset=UTF-8",
        "application/xhtml+xml",
        "text/markdown",
        'text/plain; charset="utf-8"',
        "text/plain; format=flowed; charset=US-ASCII",
        "text/plain;charset=utf8",
    ],
)
def test_accepted_content_types(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), b'{"a": "b"}')
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert page.text == '{"a": "b"}'
    assert page.media_type == content_type.partition(";")[0].lower()


def test_missing_content_type_is_fine_when_utf8(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (), "plain ünïcode".encode())
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert (page.media_type, page.text) == ("", "plain ünïcode")


def test_missing_content_type_with_binary_body_is_not_utf8(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (), b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8


PDF = b"%PDF-1.7\n" + bytes(range(256)) * 8  # a PDF's start and binary bytes: never decoded


@pytest.mark.parametrize("content_type", ["application/pdf", "Application/PDF; qs=1"])
def test_pdf_bodies_are_kept_as_bytes(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), PDF)
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert (page.media_type, page.text) == ("application/pdf", PDF)


def test_untyped_body_starting_as_a_pdf_is_a_pdf(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (), PDF)
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert (page.media_type, page.text) == ("", PDF)


def _read_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The sizes the fetcher asks the response for, in order."""
    from urllib3.response import HTTPResponse

    asked: list[int | None] = []
    read = HTTPResponse.read

    def recorded(self: HTTPResponse, amt: int | None = None, *args: object, **kwargs: object
                 ) -> bytes:
        asked.append(amt)
        return read(self, amt, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HTTPResponse, "read", recorded)
    return asked


@pytest.mark.parametrize(("content_type", "body"), [
    (HTML, b"<p>" + b"x" * MiB),
    ((("Content-Type", "application/pdf"),), PDF * 100),
])
def test_a_body_of_known_length_is_asked_for_at_once(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, monkeypatch: pytest.MonkeyPatch,
    content_type: tuple[tuple[str, str], ...], body: bytes,
) -> None:
    http_server.routes["/"] = Reply(200, content_type, body)
    asked = _read_sizes(monkeypatch)
    page = make_fetcher(http=http_server.port, max_bytes=2 * MiB).fetch("http://example.test/")
    assert len(page.text) == len(body)
    assert asked[0] == len(body)  # one buffer, no pieces to join


def test_an_untyped_body_is_read_whole_once_it_shows_what_it_is(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its first piece decides the cap (and reserves a PDF's size) before the rest is read."""
    body = PDF * 100
    http_server.routes["/"] = Reply(200, (), body)
    asked = _read_sizes(monkeypatch)
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert page.text == body
    assert asked[:2] == [64 * 1024, len(body) - 64 * 1024]


def test_the_pdf_cap_is_only_for_pdfs(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    big_pdf, big_text = PDF + b"x" * 3000, b"text " * 800
    http_server.routes["/typed"] = Reply(200, (("Content-Type", "application/pdf"),), big_pdf)
    http_server.routes["/untyped"] = Reply(200, (), big_pdf)
    http_server.routes["/text"] = Reply(200, (), big_text)
    http_server.routes["/html"] = Reply(200, HTML, big_text)
    fetcher = make_fetcher(http=http_server.port, max_bytes=3000, max_pdf_bytes=10_000)
    assert fetcher.fetch("http://example.test/typed").text == big_pdf
    assert fetcher.fetch("http://example.test/untyped").text == big_pdf
    for path in ("/text", "/html"):  # over max_bytes, under the PDF cap: still too large
        assert fetch_error(fetcher, f"http://example.test{path}").code is Code.TOO_LARGE
    small = make_fetcher(http=http_server.port, max_bytes=3000, max_pdf_bytes=3000)
    assert fetch_error(small, "http://example.test/typed").code is Code.TOO_LARGE
    assert fetch_error(small, "http://example.test/untyped").code is Code.TOO_LARGE


def test_a_pdf_content_length_over_the_pdf_cap_is_refused_before_reading(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    first = head(headers=[("Content-Type", "application/pdf"), ("Content-Length", str(10**9))])
    server = raw_server(trickle(b"x" * 100, 1.0, first=first))
    started = time.monotonic()
    fetcher = make_fetcher(http=server.port, timeout=5, max_pdf_bytes=32 * MiB)
    assert fetch_error(fetcher, "http://example.test/").code is Code.TOO_LARGE
    assert time.monotonic() - started < 1


def test_a_gzipped_pdf_is_decoded_and_kept_as_bytes(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Encoding", "gzip"),), gzip.compress(PDF))
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == PDF


def test_bom_is_stripped(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/"] = Reply(200, HTML, b"\xef\xbb\xbfhello \xef\xbb\xbf")
    page = make_fetcher(http=http_server.port).fetch("http://example.test/")
    assert page.text == "hello \ufeff"


@pytest.mark.parametrize(
    "content_type",
    [
        "text/html; charset=latin-1",
        'text/html; charset="ISO-8859-1"',
        "application/json; charset=windows-1252",
        "text/plain; charset=shift_jis",
        "text/plain; charset=x-unknown-label",
        "text/html; charset=unicode-1-1-utf-8",
    ],
)
def test_other_declared_charsets_with_an_ascii_body(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    # A common server default: the bytes of pure ASCII mean the same in UTF-8.
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), b"ascii only")
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == "ascii only"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html; charset=latin-1", "café".encode("latin-1")),
        ('text/html; charset="ISO-8859-1"', "café".encode()),  # UTF-8 bytes, but not declared
        ("application/json; charset=windows-1252", b'{"a": "\x93b\x94"}'),
        ("text/plain; charset=utf-16", b"ascii only"),
        ("text/plain; charset=UTF-16LE", b"ascii only"),
        ("text/plain; charset=utf-32", b"ascii only"),
        ("text/plain; charset=utf-7", b"a+AGE-"),
        ("text/plain; charset=iso-2022-jp", b"ascii only"),
        ("text/plain; charset=csISO2022KR", b"ascii only"),
        ("text/plain; charset=hz-gb-2312", b"ascii only"),
        ("text/plain; charset=cp037", b"ascii only"),
        ("text/plain; charset=IBM500", b"ascii only"),
        ("text/plain; charset=unicodefffe", b"ascii only"),
    ],
)
def test_other_declared_charsets_are_not_utf8(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str, body: bytes,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8
    assert "declared charset" in error.detail


@pytest.mark.parametrize(
    "content_type",
    ["text/html; charset=ISO-8859-1", "text/plain; charset=utf-16", "text/html; charset=utf-8",
     "text/html"],
)
def test_utf8_bom_decides_over_the_header(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),),
                                    b"\xef\xbb\xbf" + "café".encode())
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == "café"


def test_utf8_bom_with_invalid_bytes_is_not_utf8(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", "text/html; charset=latin-1"),),
                                    b"\xef\xbb\xbfcaf\xe9")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert (error.code, error.detail) == (Code.NOT_UTF8, "the body is not valid UTF-8")


def test_charset_is_decided_on_the_decoded_body(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    headers = (("Content-Type", "text/html; charset=iso-8859-1"), ("Content-Encoding", "gzip"))
    http_server.routes["/ascii"] = Reply(200, headers, gzip.compress(b"plain ascii"))
    http_server.routes["/latin"] = Reply(200, headers, gzip.compress(b"caf\xe9"))
    fetcher = make_fetcher(http=http_server.port)
    assert fetcher.fetch("http://example.test/ascii").text == "plain ascii"
    assert fetch_error(fetcher, "http://example.test/latin").code is Code.NOT_UTF8


@pytest.mark.parametrize("body", [b"caf\xe9", b"\xc3", b"\xed\xa0\x80", b"ok \xff\xfe"])
def test_invalid_utf8_bytes(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, body: bytes,
) -> None:
    http_server.routes["/"] = Reply(200, HTML, body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8


@pytest.mark.parametrize(
    "content_type",
    ["image/png", "application/octet-stream", "application/xml", "html",
     "text/", "/html"],
)
def test_unsupported_content_types(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, content_type: str,
) -> None:
    http_server.routes["/"] = Reply(200, (("Content-Type", content_type),), b"data")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED
    if content_type == "image/png":
        assert "image/png" in error.detail


def test_header_text_is_not_echoed(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/type"] = Reply(200, (("Content-Type", "text/\x1b[31mred"),), b"")
    http_server.routes["/charset"] = Reply(
        200, (("Content-Type", "text/html; charset=\x1b]0;title\x07"),), b"caf\xe9")
    fetcher = make_fetcher(http=http_server.port)
    for path in ("/type", "/charset"):
        assert "\x1b" not in fetch_error(fetcher, f"http://example.test{path}").detail


def test_unsupported_type_is_refused_before_the_body(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    # The body never comes: reading it would run into the 5 s deadline.
    server = raw_server(trickle(
        b"x" * 100, 1.0,
        first=head(headers=[("Content-Type", "image/png"), ("Content-Length", "100000000")]),
    ))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED
    assert time.monotonic() - started < 1


# --------------------------------------------------------------------------------------------
# Size limits and framing


def test_content_length_over_the_cap_is_refused_before_reading(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Content-Length", str(10**12))])
    server = raw_server(trickle(b"x" * 100, 1.0, first=first))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.TOO_LARGE
    assert time.monotonic() - started < 1


def test_cap_is_exact(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/fits"] = Reply(200, HTML, b"x" * 1000)
    http_server.routes["/over"] = Reply(200, HTML, b"x" * 1001)
    fetcher = make_fetcher(http=http_server.port, max_bytes=1000)
    assert len(fetcher.fetch("http://example.test/fits").text) == 1000
    assert fetch_error(fetcher, "http://example.test/over").code is Code.TOO_LARGE


def test_chunked_body(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked([b"hello ", b"", b"chunked ", b"world"])))
    page = make_fetcher(http=server.port).fetch("http://example.test/")
    assert page.text == "hello chunked world"


def test_endless_chunked_body(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked(itertools.repeat(b"x" * 65536))))
    started = time.monotonic()
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.TOO_LARGE
    assert time.monotonic() - started < 2


def test_endless_body_without_length(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    first = head(headers=[("Content-Type", "text/plain"), ("Connection", "close")])
    server = raw_server(stream(first, itertools.repeat(b"y" * 65536, 1000)))
    error = fetch_error(make_fetcher(http=server.port, timeout=5), "http://example.test/")
    assert error.code is Code.TOO_LARGE


def test_body_longer_than_content_length_ends_at_the_length(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    reply = head(headers=[("Content-Type", "text/plain"), ("Content-Length", "5")])
    server = raw_server(send_bytes(reply + b"12345 and then some smuggled bytes"))
    assert make_fetcher(http=server.port).fetch("http://example.test/").text == "12345"


# --------------------------------------------------------------------------------------------
# Content codings


def compressed(data: bytes, coding: str) -> bytes:
    if coding in ("gzip", "x-gzip"):
        return gzip.compress(data)
    if coding == "deflate":
        return zlib.compress(data)
    if coding == "raw-deflate":
        compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(data) + compressor.flush()
    raise AssertionError(coding)


TEXT = ("Quoted words, word for word. " * 2000).encode()


@pytest.mark.parametrize(
    ("header", "codings"),
    [
        ("gzip", ["gzip"]),
        ("X-GZIP", ["x-gzip"]),
        ("deflate", ["deflate"]),
        ("deflate", ["raw-deflate"]),
        ("identity", []),
        ("gzip, deflate", ["gzip", "deflate"]),
        ("deflate, gzip", ["raw-deflate", "gzip"]),
        ("gzip,identity,gzip", ["gzip", "gzip"]),
    ],
)
def test_content_codings(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str, codings: list[str],
) -> None:
    body = TEXT
    for coding in codings:  # applied in the order the header lists them
        body = compressed(body, coding)
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), body)
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == TEXT.decode()


@pytest.mark.parametrize(
    ("header", "body", "text"),
    [
        ("gzip", gzip.compress(b"first ") + gzip.compress(b"second"), "first second"),
        ("gzip", gzip.compress(b"padded") + bytes(100), "padded"),
        ("gzip", gzip.compress(b"junk after") + b"junk" * 100, "junk after"),
        ("deflate", zlib.compress(b"deflate then junk") + b"junk", "deflate then junk"),
        ("gzip", b"", ""),
    ],
    # Named: a gzip header holds the time it was made, which a test's id must not.
    ids=["two-members", "padded", "junk-after", "deflate-then-junk", "empty"],
)
def test_gzip_members_and_trailing_bytes(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str, body: bytes, text: str,
) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), body)
    assert make_fetcher(http=http_server.port).fetch("http://example.test/").text == text


def test_content_coding_split_across_tiny_chunks(
    raw_server: StartRaw, make_fetcher: MakeFetcher,
) -> None:
    body = zlib.compress(TEXT)  # zlib or raw is told apart from the first two bytes
    first = head(headers=[*HTML, ("Content-Encoding", "deflate"),
                          ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked(body[i:i + 1] for i in range(len(body)))))
    assert make_fetcher(http=server.port).fetch("http://example.test/").text == TEXT.decode()


@pytest.mark.parametrize(
    ("header", "body"),
    [
        ("gzip", b"this is not gzip at all"),
        ("deflate", b"\xff\xff\xff\xff\xff"),
        ("gzip", gzip.compress(TEXT)[:-200]),  # ends inside the gzip header: nothing decoded
        ("deflate", b"x"),  # ends before anything decoded
    ],
)
def test_corrupt_compressed_body(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str, body: bytes,
) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.NOT_UTF8


@pytest.mark.parametrize(
    ("header", "body"),
    [
        ("gzip", gzip.compress(TEXT)[:-8]),  # no trailer
        ("deflate", zlib.compress(TEXT)[:50]),
    ],
)
def test_compressed_body_cut_short_is_a_connection_failure(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str, body: bytes,
) -> None:
    # The response is complete (Content-Length met): the coding inside it ends early, as a
    # body cut short does (docs/web-over-time.md#retries; tests/fetch/test_cut_codings.py).
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), body)
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.CONNECT_FAILED


@pytest.mark.parametrize("header", ["br", "zstd", "compress", "gzip, br", "x-unknown"])
def test_unsupported_content_codings(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, header: str,
) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", header)), b"\x00\x01")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED


def test_too_many_stacked_codings(http_server: HTTPTestServer, make_fetcher: MakeFetcher) -> None:
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", ", ".join(["gzip"] * 5))),
                                    b"")
    error = fetch_error(make_fetcher(http=http_server.port), "http://example.test/")
    assert error.code is Code.CONTENT_TYPE_UNSUPPORTED


def peak_memory(action: Callable[[], object]) -> int:
    """Peak bytes traced by tracemalloc (all threads) while ``action`` runs."""
    tracemalloc.start()
    try:
        action()
    except FetchError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


GZIP_BOMB = b"".join(zeros_gzip(50 * MiB))  # about 50 KiB on the wire


@pytest.mark.parametrize("nested", [False, True])
def test_gzip_bomb_stops_at_the_cap(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher, nested: bool,
) -> None:
    body = gzip.compress(GZIP_BOMB) if nested else GZIP_BOMB
    coding = "gzip, gzip" if nested else "gzip"
    http_server.routes["/"] = Reply(200, (*HTML, ("Content-Encoding", coding)), body)
    fetcher = make_fetcher(http=http_server.port)
    started = time.monotonic()
    errors: list[FetchError] = []

    def attempt() -> None:
        errors.append(fetch_error(fetcher, "http://example.test/"))

    peak = peak_memory(attempt)
    assert errors[0].code is Code.TOO_LARGE
    assert time.monotonic() - started < 3
    assert peak < MAX_BYTES + 2 * MiB, f"peak {peak / MiB:.1f} MiB"


def test_streamed_gzip_bomb_stops_early(raw_server: StartRaw, make_fetcher: MakeFetcher) -> None:
    # 10 GiB of zeros, compressed on the fly: the server only makes what the client reads.
    first = head(headers=[*HTML, ("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")])
    server = raw_server(stream(first, chunked(zeros_gzip(10 * 1024 * MiB))))
    fetcher = make_fetcher(http=server.port, timeout=10)
    errors: list[FetchError] = []
    started = time.monotonic()
    peak = peak_memory(lambda: errors.append(fetch_error(fetcher, "http://example.test/")))
    assert errors[0].code is Code.TOO_LARGE
    assert time.monotonic() - started < 3
    assert peak < MAX_BYTES + 2 * MiB, f"peak {peak / MiB:.1f} MiB"


def test_deflate_bomb_under_a_small_cap(
    http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/"] = Reply(
        200, (*HTML, ("Content-Encoding", "deflate")), zlib.compress(bytes(20 * MiB), 9),
    )
    fetcher = make_fetcher(http=http_server.port, max_bytes=100_000)
    assert fetch_error(fetcher, "http://example.test/").code is Code.TOO_LARGE


# --------------------------------------------------------------------------------------------
# Redirect bodies


def test_redirect_with_a_long_or_unframed_body(
    raw_server: StartRaw, http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    http_server.routes["/long"] = Reply(302, (("Location", "/end"),), b"x" * 200_000)
    http_server.routes["/end"] = Reply(200, HTML, b"end")
    endless = raw_server(stream(
        head("302 Found", [("Location", "http://example.test/end"),
                           ("Transfer-Encoding", "chunked")]),
        chunked(itertools.repeat(b"z" * 1000)),
    ))
    fetcher = make_fetcher(
        http=http_server.port, routes=[ConnectTo("endless.test", 80, "127.0.0.1", endless.port)],
    )
    assert fetcher.fetch("http://example.test/long").text == "end"
    assert fetcher.fetch("http://endless.test/").text == "end"


def test_redirect_whose_short_body_breaks_off(
    raw_server: StartRaw, http_server: HTTPTestServer, make_fetcher: MakeFetcher,
) -> None:
    server = raw_server(send_bytes(
        head("301 Moved", [("Location", "http://example.test/end"), ("Content-Length", "100")])
        + b"abc"))
    http_server.routes["/end"] = Reply(200, HTML, b"end")
    fetcher = make_fetcher(routes=[ConnectTo("start.test", 80, "127.0.0.1", server.port)],
                           http=http_server.port)
    assert fetcher.fetch("http://start.test/").text == "end"
