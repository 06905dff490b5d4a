"""Reading Markdown without HTML in it never imports html5lib (slow to import)."""

from __future__ import annotations

import os
import subprocess
import sys

from tracecite.inputs.documents.markdown import PARSER_VARIABLE


def test_markdown_without_html_does_not_import_html5lib() -> None:
    code = ("import sys\nfrom tracecite.inputs.documents import parse_document\n"
            "d = parse_document('> Quote.\\n>\\n> — [S](https://e.org)\\n', 'x.md')\n"
            "assert len(d.citations) == 1\nprint('html5lib' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_scanned_markdown_does_not_import_the_parser() -> None:
    code = ("import sys\nfrom tracecite.inputs.documents import parse_document\n"
            "d = parse_document('“one two three four” ([S](https://e.org)).\\n\\n"
            "> Quote.\\n>\\n> — [S](https://e.org/q)\\n', 'x.md')\n"
            "assert len(d.citations) == 2\nprint('markdown_it' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60, env={**os.environ, PARSER_VARIABLE: ""})
    assert out.stdout.strip() == "False"
