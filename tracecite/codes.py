"""The code registry: every finding TraceCite reports has one stable code from this table.

Codes and names are a public interface (SPEC §5): never renumber or rename; add new ones.
The README's table, the SARIF rules and the JSON ``name`` field are all generated from here.
"""

from __future__ import annotations

import enum


class Code(enum.Enum):
    """A stable finding code: ``code`` (``TC…``), ``label`` (its name), ``exit`` and ``when``."""

    USAGE = ("TC100", "usage", 1, "bad command line")
    INPUT_UNREADABLE = ("TC101", "input-unreadable", 1, "input missing, a directory, or unreadable")
    INPUT_NOT_UTF8 = ("TC102", "input-not-utf8", 1, "input is not UTF-8")
    GIT_FAILED = (
        "TC103", "git-failed", 1,
        "hook: git is missing, not a repository, or a ref or merge base is not available",
    )
    CONFIG_INVALID = (
        "TC104", "config-invalid", 1, "hook: configuration file unreadable, invalid or refused",
    )
    CACHE_UNUSABLE = (
        "TC105", "cache-unusable", 0,
        "warning: the cache file is corrupt, foreign or locked; the run goes on without it",
    )
    NOT_SELECTED = (
        "TC106", "not-selected", 0, "warning: a file given to `hook` that no glob selects",
    )
    IMPORT_UNSUPPORTED = (
        "TC107", "import-unsupported", 1,
        "import: an element of a vendor transcript that cannot be imported",
    )
    NOTES_BAD_LINE = (
        "TC110", "notes-bad-line", 1, "a line that is not a field, comment, blank or `---`",
    )
    NOTES_UNKNOWN_FIELD = ("TC111", "notes-unknown-field", 1, "key other than claim/quote/url")
    NOTES_DUPLICATE_FIELD = ("TC112", "notes-duplicate-field", 1, "a key twice in one record")
    NOTES_MISSING_FIELD = ("TC113", "notes-missing-field", 1, "a record lacks claim, quote or url")
    NOTES_EMPTY_VALUE = ("TC114", "notes-empty-value", 1, "a field with an empty value")
    TRACE_BAD_JSON = ("TC120", "trace-bad-json", 1, "line is not JSON")
    TRACE_NOT_OBJECT = ("TC121", "trace-not-object", 1, "line is JSON but not an object")
    TRACE_MISSING_FIELD = ("TC122", "trace-missing-field", 1, "required field absent (name it)")
    TRACE_WRONG_TYPE = (
        "TC123", "trace-wrong-type", 1,
        "field of the wrong JSON type or empty where non-empty is required",
    )
    TRACE_RUN_ID_MISMATCH = (
        "TC124", "trace-run-id-mismatch", 1, "run_id differs from the first event's",
    )
    TRACE_DUPLICATE_CALL_ID = (
        "TC125", "trace-duplicate-call-id", 1, "two tool_calls share a call_id",
    )
    TRACE_UNKNOWN_CALL_ID = (
        "TC126", "trace-unknown-call-id", 1, "tool_result for no earlier tool_call",
    )
    TRACE_DUPLICATE_RESULT = (
        "TC127", "trace-duplicate-result", 1, "second tool_result for one call",
    )
    TRACE_FAILED_RESULT_HAS_SOURCES = (
        "TC128", "trace-failed-result-has-sources", 1, "ok:false with sources",
    )
    TRACE_DUPLICATE_SOURCE_ID = (
        "TC129", "trace-duplicate-source-id", 1, "two sources share an id",
    )
    TRACE_ANSWER_COUNT = ("TC130", "trace-answer-count", 1, "zero or several answers")
    TRACE_UNKNOWN_SOURCE_ID = (
        "TC131", "trace-unknown-source-id", 1, "citation names no earlier source",
    )
    EVIDENCE_NO_CLAIMS = ("TC200", "evidence-no-claims", 2, "evidence mode, answer has no claims")
    EVIDENCE_UNCITED_CLAIM = (
        "TC201", "evidence-uncited-claim", 2, "evidence mode, a claim without citations",
    )
    QUOTE_NOT_IN_CAPTURE = ("TC202", "quote-not-in-capture", 2, "quote not in the captured content")
    SOURCE_NOT_CAPTURED = (
        "TC203", "source-not-captured", 0,
        "warning: a citation's source has `content: null`; verify it live",
    )
    QUOTE_NOT_ON_PAGE = (
        "TC210", "quote-not-on-page", 2, "quote not in the live page's visible text",
    )
    QUOTE_NOT_IN_FILE = ("TC211", "quote-not-in-file", 2, "quote not in the current local file")
    URL_INVALID = ("TC300", "url-invalid", 2, "unparseable URL or non-canonical IPv4 host")
    URL_SCHEME = ("TC301", "url-scheme", 2, "scheme not http/https")
    URL_PORT = ("TC302", "url-port", 2, "non-default port")
    URL_USERINFO = ("TC303", "url-userinfo", 2, "credentials in the URL")
    URL_IPV6_LITERAL = ("TC304", "url-ipv6-literal", 2, "IPv6 literal host")
    URL_NON_ASCII_HOST = ("TC305", "url-non-ascii-host", 2, "non-ASCII host name")
    ADDRESS_REFUSED = (
        "TC306", "address-refused", 2, "a literal or resolved address is not allowed",
    )
    DNS_FAILURE = ("TC307", "dns-failure", 2, "the name does not resolve")
    REDIRECT_LIMIT = ("TC308", "redirect-limit", 2, "more than five redirects")
    REDIRECT_DOWNGRADE = ("TC309", "redirect-downgrade", 2, "https → http")
    REDIRECT_INVALID = ("TC310", "redirect-invalid", 2, "missing or bad Location")
    CONNECT_FAILED = ("TC311", "connect-failed", 2, "refused, reset, unreachable")
    TLS_FAILED = ("TC312", "tls-failed", 2, "handshake or certificate failure")
    TIMEOUT = ("TC313", "timeout", 2, "20 s deadline passed")
    TOO_LARGE = ("TC314", "too-large", 2, "body over 2 MiB (after decoding)")
    HTTP_STATUS = ("TC315", "http-status", 2, "final status not 2xx (`status` set)")
    CONTENT_TYPE_UNSUPPORTED = (
        "TC316", "content-type-unsupported", 2, "type outside §4",
    )
    NOT_UTF8 = ("TC317", "not-utf8", 2, "body not UTF-8 or other charset declared")
    PARSE_LIMIT = (
        "TC318", "parse-limit", 2,
        "HTML over a parse limit: 20 s of parsing, too many formatting elements or nodes",
    )
    SOURCE_BLOCKED = (
        "TC319", "source-blocked", 2, "the site answered with a bot or challenge wall",
    )
    FILE_MISSING = ("TC320", "file-missing", 2, "`file:` source does not exist")
    FILE_OUTSIDE_ROOT = (
        "TC321", "file-outside-root", 2, "`file:` source resolves outside the root",
    )
    FILE_UNREADABLE = (
        "TC322", "file-unreadable", 2,
        "not a regular file (directory, FIFO, device), unreadable, not UTF-8, or over the cap",
    )
    SOURCE_ADDED = ("TC400", "source-added", 2, "compare: URI only in NEW")
    SOURCE_REMOVED = ("TC401", "source-removed", 2, "compare: URI only in OLD")
    SOURCE_CHANGED = ("TC402", "source-changed", 2, "compare: normalised content differs")
    INTERNAL_ERROR = ("TC900", "internal-error", 3, "a bug")

    def __init__(self, code: str, label: str, exit: int, when: str) -> None:
        self.code = code
        self.label = label
        self.exit = exit
        self.when = when

    def __str__(self) -> str:
        return f"{self.code} {self.label}"


BY_CODE: dict[str, Code] = {c.code: c for c in Code}
"""Look a registry entry up by its ``TC…`` code."""


def registry_markdown() -> str:
    """The registry as the Markdown table the README shows (kept identical by a test)."""
    rows = ["| code | name | exit | when |", "|---|---|---|---|"]
    rows += [f"| {c.code} | {c.label} | {c.exit} | {c.when} |" for c in Code]
    return "\n".join(rows) + "\n"
