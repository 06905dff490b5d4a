"""URL forms from public SSRF bypass lists, with the verdict the URL rules must give.

Sources: PayloadsAllTheThings (Server Side Request Forgery), the OWASP SSRF prevention cheat sheet,
HackTricks' URL format bypasses, Orange Tsai's "A New Era of SSRF" (parser disagreements), and the
test suites of smokescreen, safeurl, advocate and ssrf_filter; plus forms aimed at this parser's
own decisions (ports, trailing dots, WHATWG IPv4 numbers).

- `REFUSED`: refused by ``parse_target`` itself, before any network access, with this code.
- `LITERAL_ADDRESSES`: pass the URL rules (the host is a canonical IPv4 literal, shown here) and are
  refused by the address policy.
- `NAMES`: host names that pass the URL rules; whether they are refused depends on what they
  resolve to (the address step).
"""

from __future__ import annotations

from tracecite.codes import Code

URL_INVALID = Code.URL_INVALID
URL_SCHEME = Code.URL_SCHEME
URL_PORT = Code.URL_PORT
URL_USERINFO = Code.URL_USERINFO
URL_IPV6_LITERAL = Code.URL_IPV6_LITERAL
URL_NON_ASCII_HOST = Code.URL_NON_ASCII_HOST

SCHEMES: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_SCHEME)
    for url in (
        "file:///etc/passwd",
        "file://localhost/etc/passwd",
        "file://127.0.0.1/etc/passwd",
        "file:/etc/passwd",
        "file:etc/passwd",
        "FILE:///etc/passwd",
        "file:///c:/windows/win.ini",
        "gopher://127.0.0.1:6379/_INFO",
        "gopher://localhost:25/_HELO%20localhost",
        "gopher://127.0.0.1:11211/_stats",
        "ftp://127.0.0.1/",
        "ftp://anonymous:anonymous@127.0.0.1/",
        "ftps://example.com/",
        "sftp://evil.example:11111/",
        "tftp://evil.example:12346/TESTUDPPACKET",
        "dict://127.0.0.1:6379/info",
        "dict://localhost:11211/stats",
        "ldap://127.0.0.1/",
        "ldap://localhost:11211/%0astats%0aquit",
        "ldaps://127.0.0.1/",
        "ldapi://%2Fvar%2Frun%2Fslapd%2Fldapi/",
        "jar:http://127.0.0.1!/",
        "jar:file:///tmp/a.jar!/a.txt",
        "jar:https://example.com/a.jar!/",
        "netdoc:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "data:text/plain;base64,SGVsbG8=",
        "data:,127.0.0.1",
        "javascript:alert(1)",
        "JavaScript:alert(document.domain)",
        "javascript://example.com/%0aalert(1)",
        "vbscript:msgbox(1)",
        "php://filter/convert.base64-encode/resource=index.php",
        "phar:///tmp/x.phar",
        "expect://id",
        "ws://127.0.0.1/",
        "wss://example.com/",
        "mailto:root@127.0.0.1",
        "telnet://127.0.0.1:23/",
        "ssh://127.0.0.1:22/",
        "smb://127.0.0.1/share",
        "redis://127.0.0.1:6379/",
        "mysql://127.0.0.1:3306/",
        "about:blank",
        "view-source:http://127.0.0.1/",
        "blob:https://example.com/0b6d1f20-0000-4000-8000-000000000000",
        "http+unix://%2Fvar%2Frun%2Fdocker.sock/info",
        "https+tls://example.com/",
        "httpx://127.0.0.1/",
        "htt://127.0.0.1/",
        "hxxp://example.com/",
        "urn:ietf:rfc:3986",
        "tel:+1-201-555-0123",
        # Scheme-relative and scheme-less forms.
        "//127.0.0.1/",
        "//example.com/",
        "///127.0.0.1/",
        "127.0.0.1",
        "127.0.0.1:80/",
        "localhost:8080",
        "example.com/path",
        "/etc/passwd",
        "../../etc/passwd",
        "?url=http://127.0.0.1/",
        ":http://example.com/",
        "1http://example.com/",
        "\uff48\uff54\uff54\uff50://example.com/",  # full-width "http"
    )
)

USERINFO: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_USERINFO)
    for url in (
        "http://user:pass@example.com/",
        "http://user@example.com/",
        "http://@example.com/",
        "http://:@example.com/",
        "https://user:@example.com/",
        "https://:pass@example.com/",
        "http://example.com@127.0.0.1/",
        "http://example.com:80@127.0.0.1/",
        "http://example.com:8080@127.0.0.1/",
        "http://127.0.0.1:80@example.com/",
        "http://evil.example@169.254.169.254/latest/meta-data/",
        "https://example.com@evil.example/",
        "http://foo@127.0.0.1:80@example.com/",
        "http://foo@evil.example:80@example.com/",
        "http://a:b@c:d@example.com/",
        "http://user%40example.com@127.0.0.1/",
        "http://example.com%2F@127.0.0.1/",
        "http://127.0.0.1%23@example.com/",
        "http://[::1]@example.com/",
        "http://localhost@example.com/",
        "http://0x7f.1@example.com/",
        "https://@@example.com/",
        "http://example.com@@127.0.0.1/",
        "http://%00@127.0.0.1/",
        "http://\uff11\uff12\uff17.0.0.1@example.com/",
        "http://@localhost/",
        "http://root:toor@localhost:22/",
        # FULLWIDTH NUMBER SIGN is not "#": the "@" is still in the authority.
        "http://127.0.0.1\uff03@example.com/",
    )
)

IPV6_LITERALS: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_IPV6_LITERAL)
    for url in (
        "http://[::1]/",
        "http://[::]/",
        "http://[::1]:80/",
        "http://[::1]:8080/",
        "http://[0:0:0:0:0:0:0:1]/",
        "http://[0000::1]:80/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[0:0:0:0:0:ffff:127.0.0.1]/",
        "http://[::127.0.0.1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://[fe80::1%25eth0]/",
        "http://[fe80::1%eth0]/",
        "http://[fe80::a00:27ff:fe4e:66a1%25en0]/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://[fc00::1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[2002:7f00:1::]/",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
        "https://[2606:4700:4700::1111]/",
        "http://[v1.fe80::a+en1]/",
        "http://[127.0.0.1]/",
        "http://[localhost]/",
        "http://[/",
        "http://[::1/",
        "http://[::1]]/",
        "http://[ff02::1]/",
        "HTTP://[::1]/",
    )
)

NON_ASCII_HOSTS: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_NON_ASCII_HOST)
    for url in (
        "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",  # full-width digits
        "http://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/",  # and full-width dots
        "http://127\u30020\u30020\u30021/",  # IDEOGRAPHIC FULL STOP
        "http://127\uff610\uff610\uff611/",  # HALFWIDTH IDEOGRAPHIC FULL STOP
        "http://127\uff0e0\uff0e0\uff0e1/",  # FULLWIDTH FULL STOP
        "http://127\ufe520\ufe520\ufe521/",  # SMALL FULL STOP
        "http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3/",  # circled "localhost"
        "http://\u2460\u2461\u2466.\u24ea.\u24ea.\u2460/",  # circled 127.0.0.1
        "http://\u246f\u2468\u3002\u2461\u2464\u2463\u3002\u246f\u2468\uff61\u2461\u2464\u2463/",
        "http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/",  # full-width localhost
        "http://\U0001d7cf\U0001d7d0\U0001d7d5.\U0001d7ce.\U0001d7ce.\U0001d7cf/",  # math digits
        "http://\U0001d425\U0001d428\U0001d41c\U0001d41a\U0001d425\U0001d421\U0001d428"
        "\U0001d42c\U0001d42d/",  # math bold "localhost"
        "http://loc\u24d0lhost/",
        "http://loca\u00adlhost/",  # SOFT HYPHEN: IDNA maps it to nothing
        "http://local\u200bhost/",  # ZERO WIDTH SPACE
        "http://localhost\u3002/",
        "http://127.0.0.1\u00a0/",  # NO-BREAK SPACE
        "http://127.0.0.1\u2028/",  # LINE SEPARATOR
        "http://\u212aubernetes.default.svc/",  # KELVIN SIGN lower-cases to ASCII "k"
        "http://ex\u0430mple.com/",  # CYRILLIC SMALL LETTER A
        "http://b\u00fccher.example/",
        "http://\u4f8b\u3048.\u30c6\u30b9\u30c8/",
        "http://\u00df.example/",
        "http://metadata.google.internal\uff0e/",
        "http://\uff4d\uff45\uff54\uff41\uff44\uff41\uff54\uff41.google.internal/",
        "http://169.254.169.254\uff0flatest/",  # FULLWIDTH SOLIDUS stays in the host
        "http://\u2170\u2174.example/",  # ROMAN NUMERALS
        "http://\u0131.example/",  # DOTLESS I
        "https://exampl\u0435.com:443/",
    )
)

NON_CANONICAL_IPV4: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_INVALID)
    for url in (
        "http://0/",
        "http://0.0/",
        "http://0.0.0/",
        "http://00/",
        "http://127.1/",
        "http://127.0.1/",
        "http://127.000.000.001/",
        "http://127.0.0.01/",
        "http://0127.0.0.1/",
        "http://0177.0.0.1/",
        "http://0177.1/",
        "http://0177.0000.0000.0001/",
        "http://00000177.0.0.1/",
        "http://2130706433/",
        "http://017700000001/",
        "http://0x7f000001/",
        "http://0X7F000001/",
        "http://0x7f.1/",
        "http://0x7f.0.0.1/",
        "http://0x7f.0x0.0x0.0x1/",
        "http://0x7F.0x00.0x00.0x01/",
        "http://0x0000007f.1/",
        "http://127.0.0.0x1/",
        "http://127.0.0.1./",
        "http://127.0.0.1../",
        "http://0.0.0.0./",
        "http://1.2.3.4.5/",
        "http://1.1.1.1.1/",
        "http://0.0.0.0.0/",
        "http://256.0.0.1/",
        "http://127.0.0.256/",
        "http://999.999.999.999/",
        "http://425.510.425.510/",
        "http://4294967295/",
        "http://4294967296/",
        "http://3232235521/",
        "http://192.11010049/",
        "http://0300.0250.0.1/",
        "http://0xc0.0xa8.0x00.0x01/",
        "http://0xc0a80001/",
        "http://167772161/",
        "http://012.0.0.1/",
        "http://1.0.0.09/",
        "http://0x64.0x40.0.1/",
        "http://1681915905/",
        "http://2852039166/",
        "http://0xa9fea9fe/",
        "http://0xA9.0xFE.0xA9.0xFE/",
        "http://0251.0376.0251.0376/",
        "http://0251.00376.000251.0000376/",
        "http://169.254.43518/",
        "http://169.16689662/",
        "http://0xa9.254.169.254/",
        "http://0x/",
        "http://0x.0x.0x.0x/",
        "http://example.123/",
        "http://example.0x1/",
        "http://localhost.0/",
        "https://8.8.8.8.8/",
    )
)

CONTROL_AND_BACKSLASH: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_INVALID)
    for url in (
        "http://127.0.0.1\t/",
        "http://exa\tmple.com/",
        "http://example.com\n.evil.example/",
        "http://127.0.0.1\r\nHost: evil.example/",
        "http://127.0.0.1\x00.example.com/",
        "http://example.com\x00/",
        "http://\x00/",
        "http://127.0.0.1\x00:80/",
        "http://example.com /",
        " http://example.com/",
        "http://example.com/ ",
        "http://ex ample.com/",
        "\thttp://example.com/",
        "http://example.com/\r\n\r\nGET / HTTP/1.1",
        "ht\ttp://example.com/",
        "java\nscript:alert(1)",
        "http://example.com\\@127.0.0.1/",
        "http:\\\\127.0.0.1\\",
        "http://127.0.0.1\\.example.com/",
        "http:/\\127.0.0.1/",
        "https://example.com\\\\evil.example/",
        "http://example.com/path\\..\\..\\etc",
        "http://example.com/\x7f",
        "http://example.com/\x1b[31m",
        "http://example.com\x0b/",
        "http://example.com\x0c/",
        "http://example.com\x08/",
        "http://127.1.1.1:80\\@127.2.2.2:80/",
        "http://127.1.1.1:80:\\@@127.2.2.2:80/",
        "http://1.1.1.1 &@2.2.2.2# @3.3.3.3/",
        "http://example.com#\n@127.0.0.1/",
    )
)

BAD_HOST_CHARACTERS: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_INVALID)
    for url in (
        "http://%31%32%37.0.0.1/",
        "http://%6c%6f%63%61%6c%68%6f%73%74/",
        "http://127%2E0%2E0%2E1/",
        "http://127.0.0.1%2f/",
        "http://%2f%2f127.0.0.1/",
        "http://example.com%00.evil.example/",
        "http://localhost%00/",
        "http://127.0.0.1%09/",
        "http://%E2%91%A0%E2%91%A1%E2%91%A6.0.0.1/",
        "http://%30/",
        "http://ex%61mple.com/",
        "http://127.0.0.1%2523/",
        "http://exa_mple.com/",
        "http://example.com!/",
        "http://exa$mple.com/",
        "http://example.com;/",
        "http://example.com,127.0.0.1/",
        "http://127.0.0.1,example.com/",
        "http://*.example.com/",
        "http://{127.0.0.1}/",
        "http://127.0.0.1|/",
        "http://example.com^/",
        "http://<127.0.0.1>/",
        'http://"example.com"/',
        "http://example.com'/",
        "http://example.com]/",
        "http://example.com[::1]/",
        "http://example.com~/",
        "http://example.com&127.0.0.1/",
        "http://example.com(/",
        "http://example.com+127.0.0.1/",
        "http://example.com=/",
    )
)

STRUCTURE: tuple[tuple[str, Code], ...] = tuple(
    (url, URL_INVALID)
    for url in (
        "",
        "http://",
        "https://",
        "http:///",
        "http:///example.com/",
        "https:////example.com/",
        "http:example.com",
        "http:/example.com",
        "http:",
        "https:",
        "http:?x",
        "http://./",
        "http://../",
        "http://.example.com/",
        "http://example..com/",
        "http://-example.com/",
        "http://example-.com/",
        "http://example.-com/",
        "http://example.com./",
        "http://localhost./",
        "http://metadata.google.internal./",
        "http://" + "a" * 64 + ".example/",
        "http://" + ("a" * 63 + ".") * 4 + "example/",
        "http://:80/",
        "http://?x",
        "http://#x",
        "http://example.com/\ud800",  # lone surrogate
        "http://\ud83d.example/",
        "http://fe80::1/",
        "http://::1/",
        "http://example.com/" + "a" * 40000,
        "https://example.com/" + "\u20ac" * 3000,  # fine, but over the length cap once encoded
    )
)

PORTS: tuple[tuple[str, Code], ...] = (
    ("http://example.com:8080/", URL_PORT),
    ("http://127.0.0.1:22/", URL_PORT),
    ("http://localhost:6379/", URL_PORT),
    ("http://127.0.0.1:11211/", URL_PORT),
    ("http://169.254.169.254:8080/", URL_PORT),
    ("http://metadata.google.internal:8080/", URL_PORT),
    ("http://example.com:443/", URL_PORT),
    ("https://example.com:80/", URL_PORT),
    ("https://example.com:8443/", URL_PORT),
    ("http://example.com:0/", URL_PORT),
    ("http://example.com:1/", URL_PORT),
    ("http://example.com:65535/", URL_PORT),
    ("http://example.com:/", URL_PORT),
    ("https://example.com:/", URL_PORT),
    ("http://example.com:080/", URL_PORT),
    ("https://example.com:0443/", URL_PORT),
    ("http://example.com:00080/", URL_PORT),
    ("http://example.com:0000000000080/", URL_PORT),
    ("http://example.com:65536/", URL_INVALID),
    ("http://example.com:99999/", URL_INVALID),
    ("http://example.com:-1/", URL_INVALID),
    ("http://example.com:+80/", URL_INVALID),
    ("http://example.com:80a/", URL_INVALID),
    ("http://example.com:0x50/", URL_INVALID),
    ("http://example.com:1e2/", URL_INVALID),
    ("http://example.com:80.0/", URL_INVALID),
    ("http://example.com:http/", URL_INVALID),
    ("http://example.com:99999999999999999999/", URL_INVALID),
    ("http://example.com:4294967376/", URL_INVALID),  # 80 + 2**32
    ("http://example.com:65616/", URL_INVALID),  # 80 + 2**16
    ("http://example.com:\uff18\uff10/", URL_INVALID),  # full-width digits: int() accepts them
    ("http://example.com:\u0668\u0660/", URL_INVALID),  # ARABIC-INDIC digits
    ("http://example.com:80:80/", URL_INVALID),
    ("http://127.0.0.1:11211:80/", URL_INVALID),
)

REFUSED: tuple[tuple[str, Code], ...] = (
    SCHEMES
    + USERINFO
    + IPV6_LITERALS
    + NON_ASCII_HOSTS
    + NON_CANONICAL_IPV4
    + CONTROL_AND_BACKSLASH
    + BAD_HOST_CHARACTERS
    + STRUCTURE
    + PORTS
)
"""Every URL form refused by the URL rules, with its code."""

LITERAL_ADDRESSES: tuple[tuple[str, str], ...] = (
    ("http://127.0.0.1/", "127.0.0.1"),
    ("http://127.0.0.1:80/", "127.0.0.1"),
    ("https://127.0.0.1:443/", "127.0.0.1"),
    ("HTTP://127.0.0.1/", "127.0.0.1"),
    ("http://127.0.0.2/", "127.0.0.2"),
    ("http://127.255.255.254/", "127.255.255.254"),
    ("http://0.0.0.0/", "0.0.0.0"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
    ("http://169.254.169.254/computeMetadata/v1/", "169.254.169.254"),
    ("http://169.254.170.2/v2/credentials", "169.254.170.2"),
    ("http://100.100.100.200/latest/meta-data/", "100.100.100.200"),
    ("http://192.0.0.192/latest/", "192.0.0.192"),
    ("http://10.0.0.1/", "10.0.0.1"),
    ("http://172.16.0.1/", "172.16.0.1"),
    ("http://192.168.0.1/", "192.168.0.1"),
    ("http://100.64.0.1/", "100.64.0.1"),
    ("http://198.18.0.1/", "198.18.0.1"),
    ("https://198.18.0.1/", "198.18.0.1"),
    ("http://192.0.2.1/", "192.0.2.1"),
    ("http://198.51.100.1/", "198.51.100.1"),
    ("http://203.0.113.1/", "203.0.113.1"),
    ("http://224.0.0.1/", "224.0.0.1"),
    ("http://240.0.0.1/", "240.0.0.1"),
    ("http://255.255.255.255/", "255.255.255.255"),
    # The "@" after "#" or "?" is not user info: the host really is 127.0.0.1.
    ("http://127.0.0.1#@example.com/", "127.0.0.1"),
    ("http://127.0.0.1?@example.com/", "127.0.0.1"),
    ("http://127.0.0.1/#@example.com", "127.0.0.1"),
    ("http://127.0.0.1/?url=http://example.com/", "127.0.0.1"),
)
"""URL forms that pass the URL rules with an IPv4 literal host the address policy refuses."""

NAMES: tuple[tuple[str, str], ...] = (
    ("http://localhost/", "localhost"),
    ("http://LOCALHOST/", "localhost"),
    ("http://localhost.localdomain/", "localhost.localdomain"),
    ("http://foo.localhost/", "foo.localhost"),
    ("http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal"),
    ("http://metadata/", "metadata"),
    ("http://instance-data/latest/meta-data/", "instance-data"),
    ("http://kubernetes.default.svc/", "kubernetes.default.svc"),
    ("http://localtest.me/", "localtest.me"),
    ("http://127.0.0.1.nip.io/", "127.0.0.1.nip.io"),
    ("http://169.254.169.254.nip.io/", "169.254.169.254.nip.io"),
    ("http://7f000001.c0a80001.rbndr.us/", "7f000001.c0a80001.rbndr.us"),
    ("http://spoofed.burpcollaborator.net/", "spoofed.burpcollaborator.net"),
    (
        "http://customer1.app.localhost.my.company.127.0.0.1.nip.io/",
        "customer1.app.localhost.my.company.127.0.0.1.nip.io",
    ),
    ("http://0x7f.example/", "0x7f.example"),
    ("http://1.2.3.4.example/", "1.2.3.4.example"),
    ("http://xn--ls8h.la/", "xn--ls8h.la"),
)
"""Host names that pass the URL rules; the address step decides on what they resolve to."""
