"""The code registry: every finding TraceCite reports has one stable code from this table.

Codes and names are a public interface (docs/reference/reports.md): never renumber or rename; add
new ones. The page docs/codes.md, the SARIF rules (with their help), the step summary's "how to
fix" lines and the JSON ``name`` field are all generated from here. ``python -m tracecite.codes``
prints docs/codes.md (``python -m tracecite.codes > docs/codes.md`` regenerates it).
"""

from __future__ import annotations

import enum


class Code(enum.Enum):
    """A stable finding code: ``code`` (``TC…``), ``label`` (its name), ``exit``, ``when`` (what
    it means) and ``fix`` (what to do about it, one sentence in TraceCite's words)."""

    USAGE = (
        "TC100", "usage", 1, "bad command line",
        "Correct the command line as the message says; `tracecite COMMAND --help` lists every "
        "option.",
    )
    INPUT_UNREADABLE = (
        "TC101", "input-unreadable", 1, "input missing, a directory, or unreadable",
        "Check that the path names a file (not a directory) that exists and that the run may "
        "read.",
    )
    INPUT_NOT_UTF8 = (
        "TC102", "input-not-utf8", 1, "input is not UTF-8",
        "Save the file as UTF-8 (a leading byte-order mark is fine); TraceCite reads no other "
        "encoding.",
    )
    GIT_FAILED = (
        "TC103", "git-failed", 1,
        "hook: git is missing, not a repository, or a ref or merge base is not available",
        "Run inside a git clone that has the history the hook needs (in Actions: "
        "actions/checkout with `fetch-depth: 0`), or give the files to check.",
    )
    CONFIG_INVALID = (
        "TC104", "config-invalid", 1, "hook: configuration file unreadable, invalid or refused",
        "Correct the configuration file as the message says; `allow_net`, `connect_to` and "
        "`ca_cert` are refused there (command line or Action inputs only).",
    )
    CACHE_UNUSABLE = (
        "TC105", "cache-unusable", 0,
        "warning: the cache file is corrupt, foreign or locked; the run goes on without it",
        "Delete the cache file or give `--cache` a new path; this run went on without the cache "
        "and lost no result.",
    )
    NOT_SELECTED = (
        "TC106", "not-selected", 0, "warning: a file given to `hook` that no glob selects",
        "Rename the file to match the notes or traces globs (e.g. `*.notes.md`, "
        "`*.trace.jsonl`), or add a glob that selects it to the configuration.",
    )
    IMPORT_UNSUPPORTED = (
        "TC107", "import-unsupported", 1,
        "import: an element of a vendor transcript that cannot be imported",
        "Check that the transcript is of the format named; the message gives the JSON path of "
        "the element TraceCite cannot import.",
    )
    NOTES_BAD_LINE = (
        "TC110", "notes-bad-line", 1, "a line that is not a field, comment, blank or `---`",
        "Make the line a `claim:`, `quote:` or `url:` field, a `#` comment, a blank line or "
        "`---`.",
    )
    NOTES_UNKNOWN_FIELD = (
        "TC111", "notes-unknown-field", 1, "key other than claim/quote/url",
        "Use only the keys `claim`, `quote` and `url` (lower case); put anything else in a `#` "
        "comment.",
    )
    NOTES_DUPLICATE_FIELD = (
        "TC112", "notes-duplicate-field", 1, "a key twice in one record",
        "Keep one `claim:`, one `quote:` and one `url:` per record, and separate records with a "
        "blank line or `---`.",
    )
    NOTES_MISSING_FIELD = (
        "TC113", "notes-missing-field", 1, "a record lacks claim, quote or url",
        "Add the missing field, so that the record has exactly one `claim:`, one `quote:` and "
        "one `url:` line.",
    )
    NOTES_EMPTY_VALUE = (
        "TC114", "notes-empty-value", 1, "a field with an empty value",
        "Give the field a value after its colon, on the same line.",
    )
    TRACE_BAD_JSON = (
        "TC120", "trace-bad-json", 1, "line is not JSON",
        "Make each line of the trace one complete JSON object (a JSON value may not span "
        "lines).",
    )
    TRACE_NOT_OBJECT = (
        "TC121", "trace-not-object", 1, "line is JSON but not an object",
        "Make each line a JSON object (`{…}`), not an array, a string or a number.",
    )
    TRACE_MISSING_FIELD = (
        "TC122", "trace-missing-field", 1, "required field absent (name it)",
        "Add the field that the message names to the event.",
    )
    TRACE_WRONG_TYPE = (
        "TC123", "trace-wrong-type", 1,
        "field of the wrong JSON type or empty where non-empty is required",
        "Give the field the JSON type the message names (`\"ok\": true`, not `\"ok\": "
        "\"true\"`), and a non-empty value where one is required.",
    )
    TRACE_RUN_ID_MISMATCH = (
        "TC124", "trace-run-id-mismatch", 1, "run_id differs from the first event's",
        "Use one `run_id` on every line of a trace, and put the events of other runs in files "
        "of their own.",
    )
    TRACE_DUPLICATE_CALL_ID = (
        "TC125", "trace-duplicate-call-id", 1, "two tool_calls share a call_id",
        "Give each `tool_call` a `call_id` of its own.",
    )
    TRACE_UNKNOWN_CALL_ID = (
        "TC126", "trace-unknown-call-id", 1, "tool_result for no earlier tool_call",
        "Put the `tool_call` before its `tool_result`, with the same `call_id`.",
    )
    TRACE_DUPLICATE_RESULT = (
        "TC127", "trace-duplicate-result", 1, "second tool_result for one call",
        "Keep at most one `tool_result` for each `call_id`.",
    )
    TRACE_FAILED_RESULT_HAS_SOURCES = (
        "TC128", "trace-failed-result-has-sources", 1, "ok:false with sources",
        "Drop the sources of a failed result (`\"ok\": false`), or mark the result `\"ok\": "
        "true` if it did capture them.",
    )
    TRACE_DUPLICATE_SOURCE_ID = (
        "TC129", "trace-duplicate-source-id", 1, "two sources share an id",
        "Give every source of the run an `id` of its own.",
    )
    TRACE_ANSWER_COUNT = (
        "TC130", "trace-answer-count", 1, "zero or several answers",
        "Keep exactly one `answer` event in a trace, after the results it cites.",
    )
    TRACE_UNKNOWN_SOURCE_ID = (
        "TC131", "trace-unknown-source-id", 1, "citation names no earlier source",
        "Cite the `id` of a source that an earlier `tool_result` captured, or add that source.",
    )
    DOC_CITATION_INVALID = (
        "TC140", "doc-citation-invalid", 1,
        "documents: a citation form that is broken (a `cite` that is not a URL, a text fragment "
        "that does not decode)",
        "Give the `cite` attribute a URL (or a path to a file of the repository), repair the "
        "link's `#:~:text=` directive (percent-encode `-`, `,` and `&` inside its terms), or "
        "split a document nested too deep; see docs/guides/documents.md.",
    )
    EVIDENCE_NO_CLAIMS = (
        "TC200", "evidence-no-claims", 2, "evidence mode, answer has no claims",
        "Give the answer its claims, each with citations, or check the trace without "
        "`--evidence`.",
    )
    EVIDENCE_UNCITED_CLAIM = (
        "TC201", "evidence-uncited-claim", 2, "evidence mode, a claim without citations",
        "Give the claim at least one citation, with a quote from its source.",
    )
    QUOTE_NOT_IN_CAPTURE = (
        "TC202", "quote-not-in-capture", 2, "quote not in the captured content",
        "Copy the quote again, word for word, from the content the trace captured for that "
        "source; the diagnosis says what differs.",
    )
    SOURCE_NOT_CAPTURED = (
        "TC203", "source-not-captured", 0,
        "warning: a citation's source has `content: null`; verify it live",
        "Verify the citation live (`tracecite verify-urls`, or the hook's online stage): the "
        "trace captured no text for its source.",
    )
    QUOTE_NOT_ON_PAGE = (
        "TC210", "quote-not-on-page", 2, "quote not in the live page's visible text",
        "Copy the quote word for word from the page as a browser shows it, or cite the page "
        "that has it; the diagnosis says what differs.",
    )
    QUOTE_NOT_IN_FILE = (
        "TC211", "quote-not-in-file", 2, "quote not in the current local file",
        "Copy the quote again from the file as it is now, or cite the file that has it.",
    )
    URL_INVALID = (
        "TC300", "url-invalid", 2, "unparseable URL or non-canonical IPv4 host",
        "Correct the URL so that it parses, with an IPv4 host in its dotted form (`192.0.2.1`).",
    )
    URL_SCHEME = (
        "TC301", "url-scheme", 2, "scheme not http/https",
        "Cite an `http` or `https` URL.",
    )
    URL_PORT = (
        "TC302", "url-port", 2, "non-default port",
        "Drop the port from the URL (or use the scheme's default: 443 for https, 80 for http).",
    )
    URL_USERINFO = (
        "TC303", "url-userinfo", 2, "credentials in the URL",
        "Remove the user name and password from the URL; TraceCite never sends credentials.",
    )
    URL_IPV6_LITERAL = (
        "TC304", "url-ipv6-literal", 2, "IPv6 literal host",
        "Cite the site by its host name, not an IPv6 address.",
    )
    URL_NON_ASCII_HOST = (
        "TC305", "url-non-ascii-host", 2, "non-ASCII host name",
        "Write the host name in its ASCII form (IDNA, `xn--` labels).",
    )
    ADDRESS_REFUSED = (
        "TC306", "address-refused", 2, "a literal or resolved address is not allowed",
        "Cite a public address: private, loopback and other special-purpose addresses are "
        "refused (private deployments and tests: `--allow-net`).",
    )
    DNS_FAILURE = (
        "TC307", "dns-failure", 2, "the name does not resolve",
        "Check the host name's spelling; if the site is gone, cite another source or an "
        "archived copy (`--archive`).",
    )
    REDIRECT_LIMIT = (
        "TC308", "redirect-limit", 2, "more than five redirects",
        "Cite the address the redirects end at.",
    )
    REDIRECT_DOWNGRADE = (
        "TC309", "redirect-downgrade", 2, "https → http",
        "Cite the page by its final https address; a redirect from https to http is refused.",
    )
    REDIRECT_INVALID = (
        "TC310", "redirect-invalid", 2, "missing or bad Location",
        "Cite the page's final address: the server sent a redirect without a usable `Location`.",
    )
    CONNECT_FAILED = (
        "TC311", "connect-failed", 2, "refused, reset, unreachable",
        "Check that the site is up; a site that is down now and then can be made a warning with "
        "`--fail-after` and `--cache`, or `warn`.",
    )
    TLS_FAILED = (
        "TC312", "tls-failed", 2, "handshake or certificate failure",
        "Check the site's certificate (expired, wrong name, unknown issuer); for a private CA "
        "use `--ca-cert`.",
    )
    TIMEOUT = (
        "TC313", "timeout", 2, "20 s deadline passed",
        "Run again later or raise `--timeout` (at most 20 s); a slow site can be made a warning "
        "with `warn`.",
    )
    TOO_LARGE = (
        "TC314", "too-large", 2, "body over 2 MiB (after decoding)",
        "Cite a smaller page (at most 2 MiB after decoding), such as the page of the one "
        "section quoted.",
    )
    HTTP_STATUS = (
        "TC315", "http-status", 2, "final status not 2xx (`status` set)",
        "For 404 or 410 cite where the page is now, or an archived copy (`--archive`); for 429 "
        "or 5xx run again later.",
    )
    CONTENT_TYPE_UNSUPPORTED = (
        "TC316", "content-type-unsupported", 2,
        "content type not text, XHTML or JSON, or a content coding other than gzip or deflate",
        "Cite an HTML, text or JSON version of the source; TraceCite reads no other content "
        "type.",
    )
    NOT_UTF8 = (
        "TC317", "not-utf8", 2, "body not UTF-8 or other charset declared",
        "Cite a UTF-8 version of the source; TraceCite reads no other character set.",
    )
    PARSE_LIMIT = (
        "TC318", "parse-limit", 2,
        "HTML over a parse limit: 20 s of parsing, too many formatting elements or nodes",
        "Cite a smaller or simpler page: this one is over TraceCite's limits for parsing HTML.",
    )
    SOURCE_BLOCKED = (
        "TC319", "source-blocked", 2, "the site answered with a bot or challenge wall",
        "The site refused an automated client: try `--user-agent`, leave it out with "
        "`skip_urls`, or make TC319 a warning with `warn`.",
    )
    FILE_MISSING = (
        "TC320", "file-missing", 2, "`file:` source does not exist",
        "Correct the `file:` path (relative paths start at `--root`), or add the file.",
    )
    FILE_OUTSIDE_ROOT = (
        "TC321", "file-outside-root", 2, "`file:` source resolves outside the root",
        "Cite a file inside the root (`--root`, config `files_root`): a path that resolves "
        "outside it is never read.",
    )
    FILE_UNREADABLE = (
        "TC322", "file-unreadable", 2,
        "not a regular file (directory, FIFO, device), unreadable, not UTF-8, or over the cap",
        "Cite a regular UTF-8 file of at most 2 MiB that the run may read.",
    )
    SOURCE_ADDED = (
        "TC400", "source-added", 2, "compare: URI only in NEW",
        "Check that the new trace was meant to cite this source; if so, there is nothing to "
        "fix.",
    )
    SOURCE_REMOVED = (
        "TC401", "source-removed", 2, "compare: URI only in OLD",
        "Check why the new trace no longer cites this source; if that was meant, there is "
        "nothing to fix.",
    )
    SOURCE_CHANGED = (
        "TC402", "source-changed", 2, "compare: normalised content differs",
        "Check the new capture of this source: quotes taken from the old one may no longer "
        "hold.",
    )
    INTERNAL_ERROR = (
        "TC900", "internal-error", 3, "a bug",
        "Report the bug at the address printed, with the command line and `tracecite --version` "
        "(`--debug` shows the traceback).",
    )

    def __init__(self, code: str, label: str, exit: int, when: str, fix: str = "") -> None:
        self.code = code
        self.label = label
        self.exit = exit
        self.when = when
        self.fix = fix  # empty only by mistake: tests/test_codes.py requires one for every code

    @property
    def anchor(self) -> str:
        """The fragment of this code's row in docs/codes.md (``tc210``)."""
        return self.code.lower()

    def __str__(self) -> str:
        return f"{self.code} {self.label}"


BY_CODE: dict[str, Code] = {c.code: c for c in Code}
"""Look a registry entry up by its ``TC…`` code."""


def registry_markdown() -> str:
    """The registry as a Markdown table, the one docs/codes.md shows; each row starts with an
    anchor (``#tc210``) that the SARIF rules' ``helpUri`` points at."""
    rows = ["| code | name | exit | when | how to fix |", "|---|---|---|---|---|"]
    rows += [f'| <a id="{c.anchor}"></a>{c.code} | {c.label} | {c.exit} | {c.when} | {c.fix} |'
             for c in Code]
    return "\n".join(rows) + "\n"


REGISTRY_INTRO = """\
# Code registry

<!-- Generated from tracecite/codes.py: python -m tracecite.codes > docs/codes.md -->

Every finding TraceCite reports has one of these codes. Codes and names are stable: they are
never renumbered, renamed or reused, so scripts, SARIF alerts and `--warn` lists can rely on
them. The hundreds say what kind of problem a code is, and so its exit code: `TC1xx` errors
of usage, input or setup (exit 1), `TC2xx` quotes not found, `TC3xx` sources unavailable,
`TC4xx` changes between traces (exit 2), `TC900` a bug (exit 3). A code of exit 0 is a
warning: it is reported and never fails a run. Any exit-2 code can be made a warning with
`--warn CODE` ([reports](reference/reports.md), [exit codes](reference/commands.md#exit-codes)).

Each code has an anchor of its own (`docs/codes.md#tc210`), which the SARIF rules' `helpUri`
points at. This page is generated from `tracecite/codes.py`; after changing the registry,
regenerate it with `python -m tracecite.codes > docs/codes.md` (a test compares the two).

"""
"""The heading and introduction of docs/codes.md, before the table."""


def registry_page() -> str:
    """The whole of docs/codes.md: the introduction and the registry's table."""
    return REGISTRY_INTRO + registry_markdown()


if __name__ == "__main__":  # python -m tracecite.codes > docs/codes.md
    print(registry_page(), end="")
