"""The run's settings: one table of options, and one :func:`resolve` that turns the command
line, the configuration file and the Action's inputs into a frozen :class:`Settings`.

Each option is one row of :data:`OPTIONS`: its default, how its value is checked, and where it
may come from (a flag, a configuration key, an Action input). argparse, the TOML reader and the
Action all check values with the row's own check, so a bound is written once. Flags win over the
configuration, which wins over the defaults; the Action's inputs stand where flags do.

Options that widen what the fetcher may reach (``allow_net``, ``connect_to``, ``ca_cert``) have no
configuration key on purpose: a repository's own files must never be able to point the checker
at a private network (docs/hook.md).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from tracecite import values
from tracecite.command_table import COMMANDS, COMMON_GROUPS, HOOK, VERIFY_DOCS
from tracecite.errors import UsageError
from tracecite.fetch.limits import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_PER_HOST,
    DEFAULT_RETRIES,
    DEFAULT_USER_AGENT,
    MAX_BYTES,
    MAX_CONCURRENCY,
    MAX_PDF_BYTES,
    MAX_RETRIES,
    MAX_RETRY_WAIT,
    MAX_TIMEOUT,
)
from tracecite.inputs.files import file_digest as file_digest  # where merge finds it
from tracecite.model import DOCUMENT_FORMS
from tracecite.reporters import REPORTERS

if TYPE_CHECKING:  # the fetcher's types: a command that fetches nothing never imports them
    import ssl
    from ipaddress import IPv4Network, IPv6Network

    from tracecite.fetch.options import ConnectTo, FetchOptions

STAGES = HOOK.stage_names
"""What ``tracecite hook`` runs: offline checks, online checks, or both."""

DEFAULT_NOTES = ("*.notes", "*.notes.md", "*.notes.txt")
"""Notes files: names ending in ``.notes``, ``.notes.md`` or ``.notes.txt``, at any depth.
Deliberately narrow, so a documentation repository's other Markdown is never read as notes."""

DEFAULT_TRACES = ("*.trace.jsonl", "**/traces/**/*.jsonl", "**/runs/**/*.jsonl")
"""Traces: ``*.trace.jsonl`` anywhere, and every ``.jsonl`` file under a ``traces/`` or
``runs/`` folder (such as ``runs/agent-run.jsonl``)."""

DEFAULT_DOCUMENTS = ("**/*.md", "**/*.markdown", "docs/**/*.html")
"""Documents: every Markdown file, and the HTML pages under ``docs/``; a file that a notes or
traces glob selects is read as that kind instead (docs/guides/documents.md)."""

MAX_JOBS = 256
"""The most processes ``--jobs`` may ask for."""

MAX_MEMBER_BYTES = 256 << 20
"""The default bound of an archive member's size decompressed (``import --max-member-bytes``):
past it a member is TC107 "too large", so a zip bomb costs at most this much."""



# ---- the table --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Option:
    """One setting: where it may be given, its default, and the one check of its value.

    ``group`` says which commands take its flag (see :func:`add_flags`); ``many``: a repeatable
    flag (a tuple of values); ``switch``: a flag without a value (``store_true``).
    """

    name: str
    default: Any
    check: values.Check
    group: str
    help: str
    flag: str | None = None
    config: bool = False
    action: str | None = None
    parse: Callable[[str], object] = values.as_is
    many: bool = False
    switch: bool = False
    metavar: str | None = None
    short: str | None = None

    def from_text(self, text: str) -> Any:
        """The checked value of one flag or Action input (ValueError "must …" when bad)."""
        return self.check(self.parse(text))

    def from_config(self, value: object) -> Any:
        """The checked value of a configuration key (a list, or one item, for a repeatable
        option)."""
        if not self.many:
            return self.check(value)
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise ValueError("must be a list")
        return tuple(self.check(item) for item in items)


OPTIONS: tuple[Option, ...] = (
    # output: every command
    Option("format", None, values.choice(sorted(REPORTERS)), "output", flag="--format",
           action="format", metavar="FORMAT",
           help="report format: console, json, github or sarif (default: github when "
                "GITHUB_ACTIONS=true, else console)"),
    Option("report_files", (), values.report_file, "output", flag="--report-file", many=True,
           metavar="FORMAT:PATH", help="also write the report in FORMAT to PATH (repeatable)"),
    Option("quiet", False, values.boolean, "output", flag="--quiet", short="-q", switch=True,
           help="console: print nothing when every check passes; no progress bar"),
    Option("debug", False, values.boolean, "output", flag="--debug", switch=True,
           help="show a traceback for internal errors"),
    # Every command takes it, so one command line serves all; only the live ones show a bar.
    Option("no_progress", False, values.boolean, "output", flag="--no-progress", switch=True,
           help="no progress bar (there is none unless stderr is a terminal)"),
    Option("sarif_category", None, values.sarif_category, "output", flag="--sarif-category",
           action="sarif-category", metavar="NAME",
           help="SARIF: the run's category (automationDetails.id), so two workflows keep their "
                "code scanning alerts apart (default: tracecite/COMMAND)"),
    Option("warn", (), values.warnable, "output", flag="--warn", config=True, action="warn",
           many=True, metavar="CODE",
           help="report findings with this code as warnings, which never fail a run "
                "(repeatable; exit-2 codes only, e.g. TC319)"),
    # loading sources: the live commands
    Option("timeout", MAX_TIMEOUT, values.seconds, "load", flag="--timeout", config=True,
           action="timeout", parse=values.number, metavar="SECONDS",
           help=f"deadline per source, at most {MAX_TIMEOUT:g} (default)"),
    Option("max_bytes", MAX_BYTES, values.whole(1, MAX_BYTES), "load", flag="--max-bytes",
           config=True, parse=values.integer, metavar="N",
           help=f"body cap after decoding, at most {MAX_BYTES} (default)"),
    Option("max_pdf_bytes", MAX_BYTES, values.whole(1, MAX_PDF_BYTES), "load",
           flag="--max-pdf-bytes", config=True, parse=values.integer, metavar="N",
           help=f"cap of a PDF source, raised up to {MAX_PDF_BYTES} (default {MAX_BYTES}, "
                f"like every source)"),
    Option("concurrency", DEFAULT_CONCURRENCY, values.whole(1, MAX_CONCURRENCY), "load",
           flag="--concurrency", config=True, action="concurrency", parse=values.integer,
           metavar="N", help=f"sources loaded at once (default {DEFAULT_CONCURRENCY}, at most "
                             f"{MAX_CONCURRENCY})"),
    Option("user_agent", DEFAULT_USER_AGENT, values.user_agent, "load", flag="--user-agent",
           config=True, metavar="STR", help="User-Agent header (default: tracecite/VERSION)"),
    Option("connect_to", (), values.connect_to, "load", flag="--connect-to", action="connect-to",
           many=True, metavar="HOST:PORT:ADDR:PORT2",
           help="connect to ADDR:PORT2 for HOST:PORT, keeping the URL, Host, SNI and "
                "certificate check of HOST (repeatable; curl's meaning)"),
    Option("allow_net", (), values.allow_net, "load", flag="--allow-net", action="allow-net",
           many=True, metavar="CIDR",
           help="let addresses in CIDR pass the address policy (repeatable)"),
    Option("ca_cert", None, values.readable_file, "load", flag="--ca-cert", action="ca-cert",
           metavar="FILE", help="trust this PEM CA bundle in addition to the system store"),
    Option("shard", None, values.shard, "load", flag="--shard", action="shard", metavar="K/N",
           help="check only the sources in shard K of N (by a hash of each stable URI); offline "
                "findings are shard 1's; 'tracecite merge' combines the shards' JSON reports"),
    # the web: commands that fetch pages
    Option("per_host", DEFAULT_PER_HOST, values.whole(1, MAX_CONCURRENCY), "web", flag="--per-host",
           config=True, action="per-host", parse=values.integer, metavar="N",
           help=f"requests in flight to one host at once, redirects included (default "
                f"{DEFAULT_PER_HOST}, at most {MAX_CONCURRENCY})"),
    Option("retries", DEFAULT_RETRIES, values.whole(0, MAX_RETRIES), "web", flag="--retries",
           config=True, action="retries", parse=values.integer, metavar="N",
           help=f"extra attempts per source after a transient failure (default "
                f"{DEFAULT_RETRIES}, at most {MAX_RETRIES})"),
    Option("max_retry_wait", DEFAULT_MAX_RETRY_WAIT, values.wait, "web", flag="--max-retry-wait",
           config=True, parse=values.number, metavar="SECONDS",
           help=f"seconds a source may wait for rate limits in all; a longer Retry-After is "
                f"not waited for (default {DEFAULT_MAX_RETRY_WAIT:g}, at most "
                f"{MAX_RETRY_WAIT:g})"),
    Option("skip_urls", (), values.url_glob, "web", flag="--skip-url", config=True,
           action="skip-urls", many=True, metavar="GLOB",
           help="never fetch URLs matching GLOB; their quotes are counted as skipped "
                "(repeatable; * within one host label or path segment, ** across them)"),
    Option("cache", None, values.non_empty_path, "web", flag="--cache", config=True,
           action="cache",
           metavar="FILE", help="SQLite file of verdicts kept between runs, created when "
                                "missing (never page text, quotes or claims)"),
    Option("cache_max_age", values.DEFAULT_CACHE_MAX_AGE, values.duration, "web",
           flag="--cache-max-age",
           config=True, metavar="DURATION",
           help="use a cached verdict without a request while younger than this (30m, 12h, "
                "7d; default 1d), then revalidate it"),
    Option("fail_after", 1, values.whole(1, 1000), "web", flag="--fail-after", config=True,
           action="fail-after", parse=values.integer, metavar="N",
           help="an unavailable source is a warning until it has failed in N consecutive runs "
                "(default 1; needs --cache, which keeps the history)"),
    Option("archive", False, values.boolean, "web", flag="--archive", switch=True, config=True,
           action="archive", parse=values.truth,
           help="look up a page that lost its quote or went missing in the Internet Archive, "
                "and say whether its snapshot still has the quote (never changes a verdict)"),
    # reading inputs: every command that reads notes or traces
    Option("jobs", None, values.whole(1, MAX_JOBS), "read", flag="--jobs", config=True,
           action="jobs", parse=values.integer, metavar="N",
           help=f"processes that read many inputs at once, the main one and N - 1 workers "
                f"(default: one per core, at most {MAX_JOBS}; 1: no workers)"),
    # import: reading transcripts
    Option("max_member_bytes", MAX_MEMBER_BYTES, values.whole(1, 1 << 40), "transcripts",
           flag="--max-member-bytes", parse=values.integer, metavar="N",
           help=f"an archive member (.eval) that decompresses past N bytes is TC107 too large "
                f"(default {MAX_MEMBER_BYTES}, 256 MiB)"),
    Option("skip_unsupported", False, values.boolean, "transcripts", flag="--skip-unsupported",
           switch=True,
           help="a run that cannot be imported is a TC108 warning, not a TC107 error: the "
                "others are written and the exit code is 0"),
    # check
    Option("evidence", False, values.boolean, "check", flag="--evidence", switch=True,
           help="every quote must be in its source's captured content"),
    Option("docs", False, values.boolean, "check", flag="--docs", switch=True,
           help="read the named files that are not .jsonl as Markdown or HTML documents: "
                "list their citations and report broken ones (TC140)"),
    # documents: which citation forms a document's quotes are read in
    Option("document_forms", DOCUMENT_FORMS, values.forms, "documents", config=True,
           help="the citation forms read in documents (default: all five)"),
    # file: sources (verify-files, and hook when verify_files is on)
    Option("root", ".", values.non_empty_path, "files", flag="--root", config=True,
           metavar="DIR",
           help="directory that file: paths resolve against and must stay in (config: "
                "files_root, relative to the configuration file; default: the current "
                "directory)"),
    # hook
    Option("stage", "offline", values.choice(STAGES), "hook", flag="--stage", action="stage",
           metavar="STAGE", help="offline: format, structure and evidence (default); online: "
                                 "live pages (and files); all: both"),
    Option("all_files", False, values.boolean, "hook", flag="--all", switch=True, action="all",
           parse=values.truth, help="every tracked file the globs select (for scheduled runs)"),
    Option("since", None, values.non_empty_path, "hook", flag="--since", action="since",
           metavar="REF",
           help="files changed since the merge base of REF and HEAD, plus untracked files"),
    Option("all_records", False, values.boolean, "hook", flag="--all-records", switch=True,
           action="all-records", parse=values.truth,
           help="online, on the changes since a ref or a pull request's base: check every "
                "record of the changed notes files, not only the records the diff touches"),
    Option("config", None, values.non_empty_path, "hook", flag="--config", action="config",
           metavar="FILE",
           help="configuration file (default: .tracecite.toml or pyproject.toml "
                "[tool.tracecite] here or at the git top level)"),
    Option("verify_files", False, values.boolean, "hook", flag="--verify-files", switch=True,
           config=True, help="online: also re-read cited file: sources (config: verify_files)"),
    Option("notes", DEFAULT_NOTES, values.globs("notes"), "select", config=True,
           help="globs of notes files"),
    Option("traces", DEFAULT_TRACES, values.globs("traces"), "select", config=True,
           help="globs of traces"),
    Option("documents", DEFAULT_DOCUMENTS, values.globs("documents"), "select", config=True,
           help="globs of Markdown and HTML documents (notes and traces globs win)"),
    Option("exclude", (), values.globs("exclude"), "select", config=True,
           help="globs of files and folders to leave out"),
    # the Action's own
    Option("fail_on_findings", True, values.boolean, "action", action="fail-on-findings",
           parse=values.truth, help="exit 2 fails the step (the Action's input)"),
)
"""Every setting, in the order ``--help`` lists them."""

BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}

CONFIG_KEYS: dict[str, Option] = {
    ("files_root" if o.name == "root" else o.name): o for o in OPTIONS if o.config}
"""The configuration file's keys (``files_root`` is the key of ``root``)."""

REFUSED_KEYS: frozenset[str] = frozenset({"allow_net", "connect_to", "ca_cert"})
"""Keys that are command-line/Action-input only, whatever a repository file says."""

COMMAND_GROUPS: dict[str, tuple[str, ...]] = {
    name: command.groups for name, command in COMMANDS.items()}
"""The option groups whose options act on each command."""


def acts_on(command: str, option: Option) -> bool:
    """Whether ``option`` has an effect on ``command``: it is of one of the command's groups
    and not one the command lists as inert."""
    found = COMMANDS.get(command)
    if found is None:
        return False
    return option.group in found.groups and option.name not in found.inert


def takes(command: str, option: Option) -> bool:
    """Whether ``command`` accepts ``option``: it acts on it, or it is a common option
    (:data:`~tracecite.command_table.COMMON_GROUPS`), which every command accepts."""
    return acts_on(command, option) or (command in COMMANDS and option.group in COMMON_GROUPS)


def inert_options(command: str) -> tuple[Option, ...]:
    """The options ``command`` accepts that have no effect on it, in ``--help`` order."""
    return tuple(o for o in OPTIONS if takes(command, o) and not acts_on(command, o))


def inert_notices(command: str, settings: Settings) -> tuple[str, ...]:
    """One notice for each option given to ``command`` (as a flag, an Action input or a
    keyword option) that has no effect on it; a configuration file's values say nothing (a
    shared configuration is normal)."""
    given = settings.origins.flags | settings.origins.inputs
    return tuple(f"{settings.origins.name(o.name)} has no effect on {command}"
                 for o in inert_options(command) if o.name in given)


@dataclass(frozen=True)
class Origins:
    """Where a run's options were set, so a message names each the way the person running it
    set it: a flag (``--cache``), an Action input (``input cache``) or a configuration key
    (``config key cache``). An option that was not set is named as the run is driven: by the
    Action's inputs (``action``) or by flags."""

    flags: frozenset[str] = frozenset()
    inputs: frozenset[str] = frozenset()
    config: frozenset[str] = frozenset()
    action: bool = False
    """Whether the run is the GitHub Action's."""
    library: bool = False
    """Whether the run is a call of :mod:`tracecite.api`, whose options are keyword arguments
    (``timeout=``)."""

    def name(self, option: str, *, like: str | None = None) -> str:
        """How to call ``option`` (an option's name, or ``files`` for the FILE arguments) in a
        message; ``like``: name it as that other option was set (an option it needs)."""
        if self.library and option not in self.config:
            return "the paths" if option == "files" else f"{option}="
        where = self._where(like if like is not None else option)
        if option == "files":
            return "input paths" if where == "input" else "FILE arguments"
        row = BY_NAME[option]
        if where == "input" and row.action is not None:
            return f"input {row.action}"
        if where == "config" and row.config:
            return f"config key {'files_root' if option == 'root' else option}"
        return row.flag or option

    def report_file(self, file_format: str) -> str:
        """How to call a report file of ``file_format`` in a message: the Action writes its
        JSON and SARIF reports where its ``json-file`` and ``sarif-file`` inputs say."""
        if self.action:
            return f"input {'sarif-file' if file_format == 'sarif' else 'json-file'}"
        return "--report-file"

    def _where(self, option: str) -> str:
        if option in self.config and not (option in self.flags or option in self.inputs):
            return "config"
        # The Action's flags are its own translation of its inputs: they are inputs too.
        return "input" if self.action or option in self.inputs else "flag"


@dataclass(frozen=True)
class Settings:
    """Everything a run is set to do, resolved once (see :func:`resolve`); never a Namespace.

    ``config_path``: the configuration file the values came from (None: none was read).
    """

    format: str | None = None
    report_files: tuple[str, ...] = ()
    quiet: bool = False
    debug: bool = False
    sarif_category: str | None = None
    warn: tuple[str, ...] = ()
    no_progress: bool = False
    timeout: float = MAX_TIMEOUT
    max_bytes: int = MAX_BYTES
    max_pdf_bytes: int = MAX_BYTES
    concurrency: int = DEFAULT_CONCURRENCY
    user_agent: str = DEFAULT_USER_AGENT
    connect_to: tuple[ConnectTo, ...] = ()
    allow_net: tuple[IPv4Network | IPv6Network, ...] = ()
    ca_cert: str | None = None
    shard: tuple[int, int] | None = None
    per_host: int = DEFAULT_PER_HOST
    retries: int = DEFAULT_RETRIES
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    skip_urls: tuple[str, ...] = ()
    cache: str | None = None
    cache_max_age: float = values.DEFAULT_CACHE_MAX_AGE
    fail_after: int = 1
    archive: bool = False
    jobs: int | None = None
    """Worker processes reading inputs (None: one per core)."""
    evidence: bool = False
    docs: bool = False
    """``check``: the named files that are not ``.jsonl`` are documents, not notes."""
    document_forms: tuple[str, ...] = DOCUMENT_FORMS
    max_member_bytes: int = MAX_MEMBER_BYTES
    skip_unsupported: bool = False
    root: str = "."
    stage: str = "offline"
    all_files: bool = False
    since: str | None = None
    all_records: bool = False
    config: str | None = None
    verify_files: bool = False
    notes: tuple[str, ...] = DEFAULT_NOTES
    traces: tuple[str, ...] = DEFAULT_TRACES
    documents: tuple[str, ...] = DEFAULT_DOCUMENTS
    exclude: tuple[str, ...] = ()
    fail_on_findings: bool = True
    """Whether exit 2 fails the Action's step (its ``fail-on-findings`` input)."""
    config_path: str | None = None
    origins: Origins = Origins()
    """Where each option was set, for messages that name one (:meth:`Origins.name`)."""
    ca_bundle: ssl.SSLContext | None = field(default=None, compare=False, repr=False)
    """``ca_cert`` as :func:`resolve` loaded it (the run's one read of it), for the fetcher."""

    @property
    def config_base(self) -> str:
        """The directory globs are relative to: the configuration file's own, else here."""
        return (os.path.dirname(os.path.abspath(self.config_path)) if self.config_path
                else os.getcwd())

    @property
    def progress(self) -> bool:
        """Whether a progress bar may be shown (on a terminal)."""
        return not (self.no_progress or self.quiet)

    def fetch_options(self) -> FetchOptions:
        """The fetcher's options."""
        from tracecite.fetch.options import FetchOptions

        return FetchOptions(timeout=self.timeout, max_bytes=self.max_bytes,
                            max_pdf_bytes=self.max_pdf_bytes,
                            per_host=self.per_host, user_agent=self.user_agent,
                            connect_to=self.connect_to, allow_net=self.allow_net,
                            ca_cert=self.ca_cert, max_retry_wait=self.max_retry_wait,
                            ca_bundle=self.ca_bundle)


# ---- the three sources ----------------------------------------------------------------------

def add_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the flags ``command`` takes (:func:`takes`); unset flags parse as None (or ``[]``).
    Those that have no effect on it are parsed and checked as the others are, but left out
    of ``--help``, whose epilog says so (see :func:`inert_epilog`)."""
    titles = {"output": "output", "load": "loading sources", "web": "loading sources",
              "files": "file: sources", "hook": "hook", "check": "check",
              "read": "reading inputs", "transcripts": "importing transcripts"}
    # Each help section's add_argument, the section made on its first flag.
    adders: dict[str, Callable[..., argparse.Action]] = {}
    own = COMMAND_GROUPS[command]
    for option in sorted(OPTIONS, key=lambda o: _help_order(own, o.group)):
        if option.flag is None or not takes(command, option):
            continue
        if acts_on(command, option):
            title = titles[option.group]
            add = adders.get(title) or adders.setdefault(
                title, parser.add_argument_group(title).add_argument)
            shown = option.help
        else:
            add, shown = parser.add_argument, argparse.SUPPRESS
        names = [option.flag] + ([option.short] if option.short else [])
        if option.switch:
            add(*names, dest=option.name, action="store_true", default=None, help=shown)
        else:
            add(*names, dest=option.name, type=_argument_type(option),
                action="append" if option.many else "store", default=None,
                metavar=option.metavar, help=shown)
    adders["output"]("--json", action="store_const", const="json", dest="format",
                     help="same as --format json")
    parser.epilog = inert_epilog(command)


def _help_order(own: tuple[str, ...], group: str) -> int:
    """Where ``group``'s flags come in ``--help``: the command's own groups in their order,
    then the rest (stable: the table's order within a group)."""
    return own.index(group) if group in own else len(own)


def inert_epilog(command: str) -> str | None:
    """The ``--help`` epilog of a command that takes common options without effect on it
    (None: it has none)."""
    inert = [o.flag for o in inert_options(command) if o.flag is not None]
    if not inert:
        return None
    shown = ", ".join(inert[:3]) + (", …" if len(inert) > 3 else "")
    return (f"It also accepts the common options that have no effect on it ({shown}: see "
            f"docs/reference/commands.md#common-options), so one set of options serves every "
            f"command; each one given is checked as usual and named in a notice.")


def _argument_type(option: Option) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return option.from_text(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = option.name  # argparse names the type in some messages
    return convert


def flag_values(namespace: argparse.Namespace) -> dict[str, Any]:
    """The options given on the command line (those left unset are absent)."""
    given: dict[str, Any] = {}
    for option in OPTIONS:
        value = getattr(namespace, option.name, None)
        if value is not None:
            given[option.name] = tuple(value) if option.many else value
    return given


def action_values(inputs: Mapping[str, str]) -> dict[str, Any]:
    """The options the Action's inputs give (empty inputs are absent); TC100 naming the input
    for a bad value."""
    given: dict[str, Any] = {}
    for option in OPTIONS:
        if option.action is None:
            continue
        text = inputs.get(option.action, "").strip()
        if not text:
            continue
        try:
            if option.many:
                given[option.name] = tuple(option.from_text(item)
                                           for item in re.split(r"[\s,]+", text) if item)
            else:
                given[option.name] = option.from_text(text)
        except ValueError as exc:
            raise UsageError(f"{Origins(action=True).name(option.name)} {exc}") from None
    return given


def resolve(command: str, flags: Mapping[str, Any], *, action: Mapping[str, Any] | None = None,
            config: Mapping[str, Any] | None = None, config_path: str | None = None,
            library: bool = False) -> Settings:
    """The settings of one run: ``flags`` over ``action`` (the Action's inputs; None: the run
    is not the Action's) over ``config`` (checked configuration values by option name) over
    the defaults. A message names each option as it was set (:class:`Origins`; ``library``:
    ``flags`` are the keyword arguments of a :mod:`tracecite.api` call).

    Everything that can be known before an input is read is checked here (TC100): the CA
    bundle is loaded, and a ``root`` that must exist is looked at.
    """
    values: dict[str, Any] = {}
    for layer in (config or {}), (action or {}), flags:
        values.update(layer)
    for name in ("root", "cache"):
        if name in (config or {}) and name not in flags and name not in (action or {}):
            # files_root and cache are relative to the configuration file, as the globs are.
            base = os.path.dirname(os.path.abspath(config_path)) if config_path else os.getcwd()
            values[name] = os.path.relpath(
                os.path.join(base, config[name]))  # type: ignore[index]
    origins = Origins(flags=frozenset(flags), inputs=frozenset(action or ()),
                      config=frozenset(config or ()), action=action is not None,
                      library=library)
    settings = replace(Settings(config_path=config_path, origins=origins), **values)
    if "fail_after" in values and settings.cache is None:
        raise UsageError(f"{origins.name('fail_after')} needs "
                         f"{origins.name('cache', like='fail_after')}, which keeps each "
                         "source's failures")
    return _checked(command, settings)


def _checked(command: str, settings: Settings) -> Settings:
    """``settings`` checked for ``command`` (TC100), with the CA bundle loaded."""
    name = settings.origins.name
    for spec in settings.report_files:
        problem = values.report_file_problem(spec)
        if problem is not None:
            named = settings.origins.report_file(spec.partition(":")[0])
            raise UsageError(f"{named} {problem}")
    if settings.cache is not None:
        if os.path.isdir(settings.cache):
            raise UsageError(f"{name('cache')} {settings.cache!r} names a directory, not a file")
        if not os.path.isdir(os.path.dirname(os.path.abspath(settings.cache))):
            raise UsageError(f"{name('cache')} {settings.cache!r} is in a directory "
                             f"that does not exist")
    if settings.ca_cert is not None and acts_on(command, BY_NAME["ca_cert"]):
        settings = replace(settings, ca_bundle=_ca_bundle(settings.ca_cert, name("ca_cert")))
    needs_root = command in ("verify-files", VERIFY_DOCS.name) or (
        command == "hook" and settings.stage != "offline" and settings.verify_files)
    if needs_root and not os.path.isdir(settings.root):
        raise UsageError(f"the file: sources' root ({name('root')}) names no directory")
    # Checked as for any command, then dropped: an option without effect changes nothing.
    return replace(settings, **{o.name: o.default for o in inert_options(command)})


def _ca_bundle(path: str, named: str) -> ssl.SSLContext:
    """The PEM CA bundle at ``path``, loaded for the fetcher (TC100 if it holds no usable
    certificate); ``named``: how the message calls the option."""
    from tracecite.fetch.ca_bundle import CaBundleError, load_ca_bundle

    try:
        return load_ca_bundle(path)
    except CaBundleError as exc:
        raise UsageError(f"{named}: cannot load CA certificates ({exc.reason})") from None


# ---- the options that decide verdicts ------------------------------------------------------

RULES_VERSION: Final = 1
"""The version of the rules a verdict follows: matching, normalisation and visible text
(docs/reference/matching.md). Bump it with any change of them: verdicts cached under another
version are then misses, never verdicts (docs/web-over-time.md#the-cache)."""

VERDICT_OPTIONS: Final = ("max_bytes", "max_pdf_bytes", "timeout", "user_agent", "allow_net",
                          "connect_to", "ca_cert")
"""The settings that can change a verdict of a page that loaded (docs/web-over-time.md#the-cache):
a body cap (a PDF's too) or deadline (which also bounds the parse) a page may pass with one
value and not another, what the site is asked as, and where the request goes and whom it
trusts."""


def options_digest(settings: Settings) -> str:
    """SHA-256 (hex) of what decides a run's verdicts (docs/web-over-time.md#the-cache): the
    :data:`VERDICT_OPTIONS`, the HTML parser and the PDF engine in use (its version: another
    may read a PDF's text differently) and :data:`RULES_VERSION`. The report's
    ``run.options_digest``, and the key of every cached verdict."""
    import hashlib
    import json

    decided: dict[str, Any] = {
        "rules": RULES_VERSION,
        "html_parser": html_parser(),
        "pdf_engine": pdf_engine(),
        "max_bytes": settings.max_bytes,
        "max_pdf_bytes": settings.max_pdf_bytes,
        "timeout": settings.timeout,
        "user_agent": settings.user_agent,
        "allow_net": sorted(str(net) for net in settings.allow_net),
        "connect_to": [[c.host, c.port, c.address, c.address_port] for c in settings.connect_to],
        # The bundle's contents, not its path: shards on other machines trust the same CAs.
        "ca_cert": file_digest(settings.ca_cert) if settings.ca_cert is not None else None,
    }
    text = json.dumps(decided, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def html_parser() -> str:
    """The HTML parser a run uses, as :func:`tracecite.visible.lexbor.chosen` picks it without
    a parser named, found without importing one (``check`` never loads a parser)."""
    from importlib.util import find_spec

    # lexbor's PARSER_VARIABLE: importing that module would import the html5lib package.
    if os.environ.get("TRACECITE_HTML_PARSER", "") == "html5lib" or find_spec("selectolax") is None:
        return "html5lib"
    return "lexbor"


def pdf_engine() -> str | None:
    """The PDF engine a run uses and its version, found without loading it; None without the
    ``pdf`` extra (docs/guides/pdf.md)."""
    from tracecite.pdf import engine_version

    return engine_version()

