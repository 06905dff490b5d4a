"""The Markdown step summary of a run in GitHub Actions (docs/action.md#the-step-summary): which
command or stage ran and what it covered, the verdict in plain words, the findings grouped by file
with links to their lines at the commit, one "how to fix" line per code that occurs (the registry's
own text), what was not checked and why, and the run's notices.

Everything taken from inputs (file names, source ids, URIs, and the messages that name them) is
escaped by :func:`markdown_text`, so it shows as text and can neither format, link nor break
the table it is in. The reporter returns text; whoever writes ``$GITHUB_STEP_SUMMARY`` appends
it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import quote

from tracecite.findings import CHECK_KINDS, Finding, Report
from tracecite.reporters.escape import marks, position, printable, subject
from tracecite.reporters.sarif import help_uri
from tracecite.reporters.verdict import codes_that_occur, command_line, count, exit_words, verdict

# Every character that Markdown (GitHub's, with its extensions) reads as markup inline, as an
# HTML character reference, which shows as the character itself: "|" cannot end a table cell,
# "[", "<" and "`" start no link, tag or code span, and the escaped ":" and "." keep a URI or
# a host name from becoming a link ("$" would start math). An address with "@" and a dot
# after it still becomes a mailto: link (the extension joins the text first); nothing
# escapes that without changing the text.
_MARKDOWN = {char: f"&#{ord(char)};" for char in "\\&<>|`[]()*_~#!:.$"}


def markdown_text(text: str) -> str:
    """``text`` shown as itself in Markdown, on one line: control characters and line breaks
    escaped (:func:`printable`), every character Markdown reads as markup replaced by its
    HTML character reference."""
    return "".join(_MARKDOWN.get(char, char) for char in printable(text))


_KIND_WORDS = {"captured": "against captured content", "live": "on live pages",
               "files": "in local files"}
_COUNT_COLUMNS = ("checked", "matched", "not_found", "unavailable", "skipped", "unchanged",
                  "cached", "retried", "interrupted")
_WHY_NOT_CHECKED = {
    "skipped": "their source is not of the kind this check reads (http(s) for live pages, "
               "`file:` for local files), `skip_urls` matches it, an ignore comment stands "
               "before a document's citation, or, against captured content, the trace "
               "captured none for it (`content: null`)",
    "unchanged": "notes records and document citations that this change does not touch "
                 "(`--all-records` checks every record)",
    "interrupted": "the run was stopped before they were checked",
}


def _line_url(finding: Finding, environ: Mapping[str, str]) -> str | None:
    """``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/blob/$GITHUB_SHA/PATH#LN`` for a finding in a
    file of the repository (None without those variables, or for a file outside the
    workspace)."""
    server = environ.get("GITHUB_SERVER_URL", "").rstrip("/")
    repository = environ.get("GITHUB_REPOSITORY", "")
    sha = environ.get("GITHUB_SHA", "")
    if finding.file is None or not (server and repository and sha):
        return None
    if not server.startswith(("https://", "http://")) or not server.isprintable():
        return None
    root = environ.get("GITHUB_WORKSPACE") or os.getcwd()
    try:
        path = os.path.relpath(os.path.abspath(finding.file), os.path.abspath(root))
    except ValueError:  # another drive (Windows)
        return None
    if path == os.curdir or path.split(os.sep)[0] == os.pardir:
        return None
    # The file system's bytes, so a name that is not UTF-8 is escaped like any other byte.
    escaped = quote(os.fsencode(path.replace(os.sep, "/")), safe="/")
    url = (f"{quote(server, safe=':/')}/{quote(repository, safe='/')}/blob/"
           f"{quote(sha, safe='')}/{escaped}")
    return url + (f"#L{finding.line}" if finding.line is not None else "")


def _where(finding: Finding, environ: Mapping[str, str]) -> str:
    """The line (and column), linked to the line at the commit when it can be."""
    if finding.line is None:
        shown = "-"
    else:
        shown = f"{finding.line}:{finding.column}" if finding.column else f"{finding.line}"
    url = _line_url(finding, environ)
    return f"[{shown}]({url})" if url else shown


def _details(finding: Finding) -> str:
    """Everything about a finding besides its message: where in the file, what source, the
    near-miss kinds, the archived copy, how the verdict came."""
    parts = [*position(finding), *subject(finding)]
    if finding.diagnosis is not None and finding.diagnosis.kinds:
        parts.append("near miss: " + ", ".join(finding.diagnosis.kinds))
    if finding.archive is not None:
        has = "has the quote" if finding.archive.found else "lacks the quote"
        parts.append(f"archived copy {finding.archive.timestamp} {has}: {finding.archive.url}")
    if finding.attempts is not None and finding.attempts > 1:
        parts.append(f"{finding.attempts} attempts")
    parts += marks(finding)
    return "; ".join(markdown_text(part) for part in parts)


def _covered(report: Report) -> list[str]:
    """What the run read, and the counts of each kind of check that ran."""
    s = report.summary
    ran = f"Stage `{report.stage}`" if report.stage else f"`{command_line(report)}`"
    documents = (f", {count(s.document_citations, ('document citation', 'document citations'))}"
                 if s.document_citations else "")
    read = (f"{ran} read {count(s.inputs, ('file', 'files'))}: "
            f"{count(s.records, ('notes record', 'notes records'))}, "
            f"{count(s.citations, ('trace citation', 'trace citations'))}{documents}.")
    out = [read]
    kinds = [kind for kind in CHECK_KINDS if s.kinds()[kind]]
    if not kinds:
        return [*out, "", "No quote was checked."]
    heads = [name.replace("_", " ") for name in _COUNT_COLUMNS]
    out += ["", "| quotes | " + " | ".join(heads) + " |",
            "|---|" + "---:|" * len(heads)]
    for kind in kinds:
        counts = s.kinds()[kind]
        cells = " | ".join(str(getattr(counts, name)) for name in _COUNT_COLUMNS)
        out.append(f"| {_KIND_WORDS[kind]} | {cells} |")
    cached = sum(s.kinds()[kind].cached for kind in kinds)
    if cached:
        # Counted among the checked: their verdicts were kept, not left unchecked.
        out += ["", f"{count(cached, ('checked quote has its', 'checked quotes have their'))} "
                    "verdict from the cache (`--cache`): not fetched again while younger than "
                    "`--cache-max-age`."]
    return out


def _not_checked(report: Report) -> list[str]:
    """One line per reason a quote was not checked, with how many."""
    totals = {name: sum(getattr(c, name) for c in report.summary.kinds().values())
              for name in _WHY_NOT_CHECKED}
    return [f"- {totals[name]} {name}: {why}" for name, why in _WHY_NOT_CHECKED.items()
            if totals[name]]


def _findings(report: Report, environ: Mapping[str, str]) -> list[str]:
    """The findings, one table per file, in the reporters' order."""
    groups: dict[str | None, list[Finding]] = {}
    for finding in report.sorted_findings():
        groups.setdefault(finding.file, []).append(finding)
    out: list[str] = []
    for file, group in groups.items():
        name = markdown_text(file) if file is not None else "Not in a file"
        count = f"{len(group)} finding{'' if len(group) == 1 else 's'}"
        out += ["", f"#### {name} ({count})", "",
                "| line | code | message | details |", "|---|---|---|---|"]
        for f in group:
            tag = " (warning)" if f.severity == "warning" else ""
            out.append(f"| {_where(f, environ)} | {f.code.code} {f.code.label}{tag} | "
                       f"{markdown_text(f.message)} | {_details(f)} |")
    return out


def _how_to_fix(report: Report) -> list[str]:
    """One line per code that occurs: the registry's fix text, and a link to its entry."""
    return [f"- [**{code.code} {code.label}**]({help_uri(code)}) ({n}×): {code.fix}"
            for code, n in codes_that_occur(report.findings)]


def format_step_summary(report: Report, environ: Mapping[str, str]) -> str:
    """The whole step summary as Markdown (``environ``: the Actions variables for links)."""
    said = verdict(report)
    detail = f": {markdown_text(said.detail)}" if said.detail else ""
    out = [f"### TraceCite: `{command_line(report)}`", "",
           f"**{said.head}**{detail} ({exit_words(report.exit_code)})", "",
           *_covered(report)]
    if report.notices:
        out += ["", "**Notices**", "", *(f"- {markdown_text(n)}" for n in report.notices)]
    if report.findings:
        out += _findings(report, environ)
        out += ["", "#### How to fix", "", *_how_to_fix(report)]
    not_checked = _not_checked(report)
    if not_checked:
        out += ["", "#### Not checked", "", *not_checked]
    return "\n".join(out) + "\n"
