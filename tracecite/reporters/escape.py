"""Making names from inputs (file names, source ids, URIs) safe to show.

These are the only input-derived strings a report contains. Control characters, including the
terminal's escape character and line breaks, are shown as ``\\xNN``/``\\uNNNN`` escapes so a
hostile name cannot move the cursor, recolour the terminal or start a new line. Nor can it become
a GitHub Actions workflow command when a report is printed in a job's log: the runner reads
``::command`` at the start of a line (after leading whitespace) and the legacy ``##[command]``
anywhere in a line, so a leading ``::`` and every ``##[`` have one character escaped.
"""

from __future__ import annotations

import unicodedata

from tracecite.findings import Finding

_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """``text`` with every control, format, separator (other than space) or lone surrogate
    character escaped, and backslashes doubled so escapes stay unambiguous; a leading ``::``
    and every ``##[`` have a character escaped so no workflow command can start."""
    if (text.isprintable() and "\\" not in text and "##[" not in text
            and not text.lstrip(" ").startswith("::")):
        return text
    out = []
    for char in text:
        if char in _NAMED:
            out.append(_NAMED[char])
        elif char == " " or (char.isprintable() and unicodedata.category(char) != "Cs"):
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    shown = "".join(out).replace("##[", "#\\x23[")
    rest = shown.lstrip(" ")
    if rest.startswith("::"):
        shown = shown[: len(shown) - len(rest)] + "\\x3a" + rest[1:]
    return shown


def location(finding: Finding) -> str:
    """``path:line:col`` (``notes.md:12:7``; ``notes.md:12`` without a column; the path alone
    without a line; empty without a file), the path escaped: the form terminals and editors
    link to the line."""
    if finding.file is None:
        return ""
    where = printable(finding.file)
    if finding.line is not None:
        where += f":{finding.line}"
        if finding.column is not None:
            where += f":{finding.column}"
    return where


def position(finding: Finding) -> list[str]:
    """Where in its file a finding is beyond the line: record, claim and citation indexes."""
    return [f"{label} {value}" for label, value in (
        ("record", finding.record), ("claim", finding.claim), ("citation", finding.citation),
    ) if value is not None]


def subject(finding: Finding) -> list[str]:
    """What a finding is about: source id and URI — raw; callers escape them. The HTTP status
    is not among them: the message of every finding that has one says it (TC315, TC319)."""
    parts = []
    if finding.source_id is not None:
        parts.append(f"source {finding.source_id}")
    if finding.uri is not None:
        parts.append(f"uri {finding.uri}")
    return parts


def marks(finding: Finding) -> list[str]:
    """How a finding's verdict came, in every format alike: ``cached`` when it came from the
    cache without a request (docs/web-over-time.md#the-cache), ``failure k of N`` for an
    unavailable source held to ``--fail-after N`` (docs/web-over-time.md#flaky-sources)."""
    parts = []
    if finding.cached:
        parts.append("cached")
    if finding.failures is not None and finding.fail_after is not None:
        parts.append(f"failure {finding.failures} of {finding.fail_after}")
    return parts
