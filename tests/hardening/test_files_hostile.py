"""``verify-files`` against hostile ``file:`` sources (issue 6, item 4).

One tree, one trace citing every hostile path, one ``verify-files --json`` run (in a thread, with
a deadline: a FIFO must never block it). Every citation must end with its code, and an
audit-hook guard records every path opened during the run: nothing outside the root is opened,
nor the FIFO and device inside it. The files outside the root hold the quote, so a refusal that
read them anyway would show up as a pass.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hardening.guards import open_guard
from tracecite.cli import main

QUOTE = "the quoted words are here"
CAP = 4096


@dataclass(frozen=True)
class Row:
    uri: str  # "{outside}" is replaced by the outside directory's absolute path
    code: str | None  # None: the quote is found
    why: str


ROWS: tuple[Row, ...] = (
    Row("file:ok.txt", None, "a plain file inside the root"),
    Row("FILE:ok.txt", None, "the scheme is case-insensitive"),
    Row("file:inside-link.txt", None, "a symlink that stays inside"),
    Row("file:page.html", None, "HTML is matched on its visible text"),
    Row("file:../outside/secret.txt", "TC321", "../ traversal"),
    Row("file:" + "../" * 40 + "etc/passwd", "TC321", "deep ../ traversal"),
    Row("file:%2e%2e/outside/secret.txt", "TC321", "percent-encoded ../"),
    Row("file:%2E%2E%2Foutside%2Fsecret.txt", "TC321", "percent-encoded ../ and slashes"),
    Row("file:dir/../../outside/secret.txt", "TC321", "traversal through a real directory"),
    Row("file:///etc/passwd", "TC321", "absolute path outside"),
    Row("file:/etc/passwd", "TC321", "absolute path, one slash"),
    Row("file://localhost/etc/passwd", "TC321", "absolute path, localhost"),
    Row("file://{outside}/secret.txt", "TC321", "absolute path to the outside file"),
    Row("file:///proc/self/environ", "TC321", "process environment"),
    Row("file:///dev/zero", "TC321", "a device outside the root"),
    Row("file:link-out.txt", "TC321", "symlink to a file outside"),
    Row("file:linkdir/secret.txt", "TC321", "symlinked directory outside"),
    Row("file:linkdir/fifo", "TC321", "FIFO outside, through a symlinked directory"),
    Row("file:fifo-out", "TC321", "symlink to a FIFO outside"),
    Row("file:../outside/fifo", "TC321", "FIFO outside, by traversal"),
    Row("file:dev-link", "TC321", "symlink to /dev/zero"),
    Row("file:loop-a", "TC322", "symlink loop"),
    Row("file:self-loop", "TC322", "symlink to itself"),
    Row("file:dir", "TC322", "a directory"),
    Row("file:dir/", "TC322", "a directory, trailing slash"),
    Row("file:.", "TC322", "the root itself"),
    Row("file:ok.txt/..", "TC322", "dot-dot after a file name: the root"),
    Row("file:fifo", "TC322", "a FIFO inside the root (must not block)"),
    Row("file:chardev", "TC322", "a character device inside the root"),
    Row("file:big.txt", "TC322", "one byte over the cap"),
    Row("file:sparse.txt", "TC322", "a 64 GiB sparse file"),
    Row("file:latin1.txt", "TC322", "not UTF-8"),
    Row("file:unreadable.txt", "TC322", "no read permission (skipped as root)"),
    Row("file:" + "a" * 5000, "TC322", "a name too long for the OS"),
    Row("file:missing.txt", "TC320", "does not exist"),
    Row("file:dangling", "TC320", "dangling symlink"),
    Row("file://evil.example/share/secret.txt", "TC300", "a remote host"),
    Row("file:", "TC300", "no path"),
    Row("file:ok.txt%00.png", "TC300", "NUL byte"),
    Row("file:%ff%fe", "TC300", "not UTF-8 after decoding"),
)


@dataclass(frozen=True)
class Tree:
    base: Path
    root: Path
    outside: Path
    trace: Path
    uris: tuple[str, ...]
    has_device: bool


def _build(base: Path) -> Tree:
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(f"secret: {QUOTE}", encoding="utf-8")
    os.mkfifo(outside / "fifo")
    (root / "ok.txt").write_text(f"ok: {QUOTE}", encoding="utf-8")
    (root / "page.html").write_text(f"<title>t</title><p>{QUOTE}</p>", encoding="utf-8")
    (root / "inside-link.txt").symlink_to("ok.txt")
    (root / "link-out.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to("../outside")
    (root / "fifo-out").symlink_to(outside / "fifo")
    (root / "dev-link").symlink_to("/dev/zero")
    (root / "loop-a").symlink_to("loop-b")
    (root / "loop-b").symlink_to("loop-a")
    (root / "self-loop").symlink_to("self-loop")
    (root / "dangling").symlink_to("nowhere")
    (root / "dir").mkdir()
    os.mkfifo(root / "fifo")
    has_device = True
    try:
        os.mknod(root / "chardev", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
    except OSError:
        has_device = False
    (root / "big.txt").write_bytes(QUOTE.encode() + b"x" * (CAP + 1 - len(QUOTE)))
    with open(root / "sparse.txt", "wb") as sparse:
        sparse.write(QUOTE.encode())
        sparse.truncate(64 * 1024**3)
    (root / "latin1.txt").write_bytes(QUOTE.encode() + b" caf\xe9")
    unreadable = root / "unreadable.txt"
    unreadable.write_text(QUOTE, encoding="utf-8")
    unreadable.chmod(0)

    uris = tuple(row.uri.replace("{outside}", str(outside)) for row in ROWS)
    sources = [{"id": f"s{i}", "uri": uri, "content": QUOTE} for i, uri in enumerate(uris)]
    events = [
        {"type": "tool_call", "run_id": "r", "call_id": "c", "tool": "read"},
        {"type": "tool_result", "run_id": "r", "call_id": "c", "ok": True, "sources": sources},
        {"type": "answer", "run_id": "r", "claims": [{"text": "t", "citations": [
            {"source_id": f"s{i}", "quote": QUOTE} for i in range(len(uris))]}]},
    ]
    trace = base / "trace.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return Tree(base, root, outside, trace, uris, has_device)


def _release(fifo: Path) -> None:
    """Unblock anyone stuck opening ``fifo`` for reading (no-op when nobody is)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@dataclass(frozen=True)
class Outcome:
    exit: int
    report: dict[str, object]
    opened: tuple[str, ...]


def run_verify_files(tree: Tree, *extra: str, deadline: float = 20.0) -> Outcome:
    """Run ``verify-files`` in a thread; fail (after unblocking the FIFOs) if it hangs."""
    out = io.StringIO()
    result: list[int] = []

    def target() -> None:
        result.append(main(["verify-files", str(tree.trace), "--root", str(tree.root),
                            "--max-bytes", str(CAP), "--json", *extra]))

    with open_guard() as opens, contextlib.redirect_stdout(out):
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(deadline)
        hung = thread.is_alive()
        if hung:
            _release(tree.root / "fifo")
            _release(tree.outside / "fifo")
            thread.join(5)
    assert not hung, "verify-files blocked (a FIFO was opened?)"
    return Outcome(result[0], json.loads(out.getvalue()), tuple(opens.paths))


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return _build(tmp_path_factory.mktemp("files"))


@pytest.fixture(scope="module")
def outcome(tree: Tree) -> Outcome:
    return run_verify_files(tree)


def test_exit_code(outcome: Outcome) -> None:
    assert outcome.exit == 2


@pytest.mark.parametrize("index", range(len(ROWS)), ids=[r.why for r in ROWS])
def test_row(tree: Tree, outcome: Outcome, index: int) -> None:
    row = ROWS[index]
    if row.uri == "file:chardev" and not tree.has_device:
        pytest.skip("cannot create a device node here")
    if row.uri == "file:unreadable.txt" and os.geteuid() == 0:
        pytest.skip("root reads files without read permission")
    all_findings = outcome.report["findings"]
    assert isinstance(all_findings, list)
    findings = [f for f in all_findings if f["source_id"] == f"s{index}"]
    codes = [f["code"] for f in findings]
    assert codes == ([] if row.code is None else [row.code]), findings


def _is_within(path: str, directory: Path) -> bool:
    real = os.path.realpath(path)
    return os.path.commonpath([real, str(directory)]) == str(directory)


def _outside_opens(tree: Tree, outcome: Outcome) -> list[str]:
    return [p for p in outcome.opened if os.path.isabs(p) and (
        _is_within(p, tree.outside.resolve())
        or any(p.startswith(prefix) for prefix in ("/etc/", "/dev/", "/proc/")))]


def test_nothing_outside_the_root_was_opened(tree: Tree, outcome: Outcome) -> None:
    assert _outside_opens(tree, outcome) == []
    # Inside the root, only regular files are opened: never the FIFO or the device.
    special = {str(tree.root / "fifo"), str(tree.root / "chardev")}
    assert special.isdisjoint(os.path.realpath(p) for p in outcome.opened)
    # The guard is not vacuous: the files that pass were opened.
    assert str((tree.root / "ok.txt").resolve()) in outcome.opened


def test_open_guard_sees_a_naive_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the root check the same run opens files outside, and the guard sees it."""
    from tracecite.checks import files

    def naive(self: files.FileLoader, uri: str) -> str:
        return os.path.realpath(os.path.join(self.root, files.file_uri_path(uri)))

    monkeypatch.setattr(files.FileLoader, "resolve", naive)
    tree = _build(tmp_path)
    outcome = run_verify_files(tree)
    assert str((tree.outside / "secret.txt").resolve()) in _outside_opens(tree, outcome)


def test_summary_counts(outcome: Outcome) -> None:
    summary = outcome.report["summary"]["files"]
    assert isinstance(summary, dict)
    readable_anyway = os.geteuid() == 0  # root reads unreadable.txt
    assert summary["matched"] == sum(row.code is None for row in ROWS) + readable_anyway
    assert summary["checked"] == len(ROWS)


def test_fifo_would_block_a_naive_reader(tree: Tree) -> None:
    """The FIFOs really would hang a plain open(): without a writer, O_RDONLY blocks."""
    fd = None
    try:
        fd = os.open(tree.outside / "fifo", os.O_RDONLY | os.O_NONBLOCK)
        # Non-blocking open succeeds at once; a read finds no writer (EOF), and a blocking
        # open would have waited for one.
        assert stat.S_ISFIFO(os.fstat(fd).st_mode)
    finally:
        if fd is not None:
            os.close(fd)
    with pytest.raises(OSError) as caught:
        os.open(tree.outside / "fifo", os.O_WRONLY | os.O_NONBLOCK)
    assert caught.value.errno == errno.ENXIO  # no reader: nobody is stuck on it now


def test_root_given_as_a_symlink(tmp_path: Path) -> None:
    """A root reached through a symlink still contains its own files (and nothing else)."""
    tree = _build(tmp_path)
    link = tmp_path / "root-link"
    link.symlink_to(tree.root)
    linked = Tree(tree.base, link, tree.outside, tree.trace, tree.uris, tree.has_device)
    outcome = run_verify_files(linked)
    findings = outcome.report["findings"]
    assert isinstance(findings, list)
    by_id = {f["source_id"]: f["code"] for f in findings}
    for index, row in enumerate(ROWS):
        if row.code in (None, "TC321"):
            assert by_id.get(f"s{index}") == row.code, row
