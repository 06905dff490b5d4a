"""``tracecite import FORMAT FILE… [-o OUT]`` (docs/guides/importers.md): vendor transcripts in, one
trace per run out.

Runs are imported one by one, each trace whole or not at all. An importer yields an outcome
per run (:data:`~tracecite.importers.model.RunOutcome`): a run is written; a run that cannot be
imported is TC107 naming it (TC108, a warning, with ``skip_unsupported``) while the others are
written; a run that is no run (an errored sample or batch entry) is a TC108 warning; a run whose
answer cites nothing is counted (``uncited``) and not written. An input that cannot be read as a
whole (TC101, TC102, or a TC107 of the file itself) stops everything instead: each input's
problem is reported, nothing is written and the exit code is 1.

Each run's trace goes to a file of its own under OUT (a directory, created when needed),
written to a temporary file there as soon as the run is read (so memory holds one run at a time,
however many there are) and renamed only when every input is read and every trace written; or,
without OUT and when there is exactly one run, to the stream given (stdout on the command line).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, cast

from tracecite.codes import Code
from tracecite.errors import TraceCiteError, UsageError
from tracecite.findings import Finding, Report, Summary
from tracecite.importers.model import (
    UNWRITABLE,
    ImportedRun,
    RefusedRun,
    RunOutcome,
    SkippedRun,
    Unsupported,
    safe_name,
    trace_lines,
)
from tracecite.settings import MAX_MEMBER_BYTES
from tracecite.stops import signals_deferred

IMPORTERS: dict[str, str] = {
    "anthropic": "tracecite.importers.anthropic",
    "inspect": "tracecite.importers.inspect",
}
"""The module of each format's importer; each has ``read_runs(path, display)``, imported only
when its format is asked for."""

ARCHIVE_FORMATS = frozenset({"inspect"})
"""Formats whose inputs may be archives: their ``read_runs`` also takes ``max_member_bytes``."""

OUT_OF_SCOPE: dict[str, str] = {
    "openai": "OpenAI's url_citation annotations",
    "gemini": "Gemini's grounding supports",
    "perplexity": "Perplexity's [n] markers",
}
"""Formats whose citations point at spans of the answer and carry no quote of the source."""

_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}\Z")

Reader = Callable[[Path, str], Iterator[RunOutcome]]


@dataclass(frozen=True)
class Trace:
    """One run's trace: the file name it is written as (``NAME.trace.jsonl``) and its text."""

    name: str
    text: str


def reader(fmt: str) -> Reader:
    """The ``read_runs`` of the importer of ``fmt``; TC100 for a format without one."""
    if fmt in OUT_OF_SCOPE:
        raise UsageError(
            f"format '{fmt}' cannot be imported: {OUT_OF_SCOPE[fmt]} cite spans of the answer, "
            "not quotes of a source, so there is no quote to check (formats: "
            f"{', '.join(IMPORTERS)})")
    if fmt not in IMPORTERS:
        named = f"'{fmt}' " if re.fullmatch(r"[a-z][a-z0-9_-]{0,30}", fmt) else ""
        raise UsageError(f"unknown format {named}(formats: {', '.join(IMPORTERS)})")
    module = importlib.import_module(IMPORTERS[fmt])
    return cast(Reader, module.read_runs)


def run_import(fmt: str, paths: Sequence[str], out: str | None,
               stream: TextIO | None, *, max_member_bytes: int = MAX_MEMBER_BYTES,
               skip_unsupported: bool = False) -> Report:
    """Import ``paths`` as transcripts of ``fmt``; write the traces under ``out``, or to
    ``stream`` when ``out`` is None (then exactly one run is needed); an archive member that
    decompresses past ``max_member_bytes`` is TC107 "too large"; with ``skip_unsupported`` a
    run that cannot be imported is a TC108 warning. TC100 (:class:`UsageError`) for a format
    that cannot be imported, more or fewer than one run without ``out``, or an ``out`` that
    cannot be written; problems of the inputs and their runs are the report's findings
    (docs/guides/importers.md)."""
    read = reader(fmt)
    if fmt in ARCHIVE_FORMATS:
        read = functools.partial(cast(Callable[..., Iterator[RunOutcome]], read),
                                 max_member_bytes=max_member_bytes)
    if out is not None and "\0" in out:  # no command line passes one: a caller's string
        raise UsageError("-o: the directory's name holds a NUL character")
    if out is not None and os.path.lexists(out) and not os.path.isdir(out):
        raise UsageError("-o names a file, not a directory")
    tally = _Tally(skip_unsupported)
    names: set[str] = set()
    first: Trace | None = None  # without OUT: the one run's trace
    from tracecite.pdf.reader import shared_reader

    # One PDF worker for every PDF the transcripts cite, started only if one is.
    with shared_reader(), Staged(out) as staged:
        for path in paths:
            for run, text in _read(read, path, tally):
                trace = Trace(_unique(run.name, names), text)
                if out is None:
                    first = trace if tally.runs == 1 else None
                elif not tally.problems:  # once an input has failed, nothing will be written
                    staged.write(trace)
        if tally.problems:
            return Report("import", (*tally.problems, *tally.findings),
                          Summary(inputs=len(paths)))
        if out is None and (tally.runs or not tally.read):
            if first is None:
                raise UsageError(f"{_runs(tally.runs)} to write: give -o OUT, a directory to "
                                 "write one trace per run in (without -o, one run goes to "
                                 "stdout)")
            with contextlib.suppress(BrokenPipeError):  # the reader left: the import stands
                stream_of(stream).write(first.text)
        elif out is not None:
            staged.commit()
    return Report("import", tuple(tally.findings), tally.summary(len(paths)))


class _Tally:
    """What the runs of every input came to: the counts of the summary, the findings of the
    runs (TC107, TC108) and the problems of whole inputs (which stop everything)."""

    def __init__(self, skip_unsupported: bool) -> None:
        self.skip_unsupported = skip_unsupported
        self.problems: list[Finding] = []
        self.findings: list[Finding] = []
        self.runs = self.citations = self.not_importable = self.ignored_blocks = 0
        self.uncited = self.refused = self.skipped = 0

    def cited(self, run: ImportedRun) -> bool:
        """Whether ``run`` is to be written (it cites something); counted ``uncited`` if not."""
        self.ignored_blocks += run.ignored_blocks
        self.not_importable += run.not_importable
        if not run.cited:
            self.uncited += 1
        return run.cited

    def written(self, run: ImportedRun) -> None:
        self.runs += 1
        self.citations += sum(len(claim.citations) for claim in run.claims)

    def refuse(self, run: RefusedRun) -> None:
        """A run that cannot be imported: TC107 naming it, or TC108 when skipping those."""
        self.refused += 1
        finding = run.finding
        if self.skip_unsupported:
            message = f"{run.label} skipped (--skip-unsupported): {finding.message}"
            code = Code.IMPORT_SKIPPED
        else:
            message, code = f"{run.label}: {finding.message}", Code.IMPORT_UNSUPPORTED
        self.findings.append(dataclasses.replace(finding, code=code, message=message))

    def skip(self, run: SkippedRun) -> None:
        self.skipped += 1
        self.findings.append(run.finding)

    @property
    def read(self) -> int:
        """How many runs the inputs held, whatever became of them."""
        return self.runs + self.uncited + self.refused + self.skipped

    def summary(self, inputs: int) -> Summary:
        return Summary(inputs=inputs, citations=self.citations, runs=self.runs,
                       not_importable=self.not_importable, uncited=self.uncited,
                       ignored_blocks=self.ignored_blocks, refused=self.refused,
                       skipped=self.skipped)


def _read(read: Reader, path: str, tally: _Tally) -> Iterator[tuple[ImportedRun, str]]:
    """Each run of the input at ``path`` to be written, with its trace, one at a time; the
    other outcomes join ``tally``. A problem of the whole input (TC101, TC102, TC107) joins
    its problems and ends the input."""
    try:
        for outcome in read(Path(path), path):
            if isinstance(outcome, RefusedRun):
                tally.refuse(outcome)
            elif isinstance(outcome, SkippedRun):
                tally.skip(outcome)
            elif tally.cited(outcome):
                try:
                    text = _text(outcome, path)
                except Unsupported as exc:
                    tally.refuse(RefusedRun(f"run {outcome.name}", exc.finding))
                    continue
                tally.written(outcome)
                yield outcome, text
    except TraceCiteError as exc:
        tally.problems.append(exc.finding)


def stream_of(stream: TextIO | None) -> TextIO:
    """The stream a trace without ``-o`` goes to (TC100 when the caller gave none)."""
    if stream is None:
        raise UsageError("import: give out= (a directory) or stream= to write the trace to")
    return stream


UNNAMED_AT_ONCE = 256
"""Traces kept in unnamed files at most (one open file each); the rest go to hidden ones."""


class Staged:
    """Traces written under ``out`` (None: nowhere) as they come, each to a temporary file
    there, given its name by :meth:`commit`; leaving the ``with`` block without a commit (an
    input's problem, a failed write, a stop) removes them, and ``out`` too when it was made for
    them: nothing is left half-written.

    Where the platform has them (Linux's ``O_TMPFILE``), the temporary files have no name until
    the commit: a process killed meanwhile (``kill -9``) leaves nothing behind, no hidden file
    with a source's content. Elsewhere, or past :data:`UNNAMED_AT_ONCE`, they are hidden files
    (``.NAME.*.tmp``) removed on every other way out."""

    def __init__(self, out: str | None) -> None:
        self._out = out
        self._written: list[tuple[str | int, str]] = []  # (temporary: a path or an fd, final)
        self._renamed = 0
        self._made = False  # whether ``out`` was made for these traces
        self._unnamed = 0

    def __enter__(self) -> Staged:
        return self

    def __exit__(self, *exc: object) -> None:
        with signals_deferred():  # a stop now would leave the rest behind
            for temporary, _ in self._written[self._renamed:]:
                with contextlib.suppress(OSError):
                    if isinstance(temporary, int):
                        os.close(temporary)  # an unnamed file is gone with its last descriptor
                    else:
                        os.remove(temporary)
            if self._made and not self._renamed and self._out is not None:
                with contextlib.suppress(OSError):
                    os.rmdir(self._out)  # only when nothing else went there meanwhile

    def write(self, trace: Trace) -> None:
        """Write ``trace`` to a temporary file under ``out`` (made when missing)."""
        if self._out is None:
            return
        with _writing():
            if not self._made and not os.path.isdir(self._out):
                os.makedirs(self._out)
                self._made = True
            final = os.path.join(self._out, trace.name)
            with signals_deferred():  # never a temporary file made and not known
                fd = self._open_unnamed()
                temporary: str | int = fd
                if fd < 0:
                    fd, temporary = tempfile.mkstemp(dir=self._out, prefix=f".{trace.name}.",
                                                     suffix=".tmp")
                self._written.append((temporary, final))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n",
                           closefd=not isinstance(temporary, int)) as handle:
                handle.write(trace.text)

    def _open_unnamed(self) -> int:
        """An unnamed file under ``out``, open for writing; -1 where there is none to be had."""
        flag = getattr(os, "O_TMPFILE", 0)
        if not flag or self._unnamed >= UNNAMED_AT_ONCE or not os.path.isdir("/proc/self/fd"):
            return -1
        assert self._out is not None
        try:
            fd = os.open(self._out, flag | os.O_WRONLY, 0o666)
        except OSError:  # a file system without them, or no descriptor left
            return -1
        self._unnamed += 1
        return fd

    def commit(self) -> None:
        """Give every trace written its name: all of them, a stop waits (renames are quick)."""
        with _writing(), signals_deferred():
            for temporary, final in self._written[self._renamed:]:
                if isinstance(temporary, int):
                    # A name for it (over an older trace of that name, as a rename is), then
                    # its descriptor is closed.
                    hidden = os.path.join(os.path.dirname(final),
                                          f".{os.path.basename(final)}.{os.getpid()}.tmp")
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(hidden)
                    _link_unnamed(temporary, hidden)
                    try:
                        os.replace(hidden, final)
                    except BaseException:
                        with contextlib.suppress(OSError):
                            os.remove(hidden)
                        raise
                    os.close(temporary)
                else:
                    os.replace(temporary, final)
                self._renamed += 1


def _link_unnamed(fd: int, path: str) -> None:
    """Give the unnamed file open at ``fd`` the name ``path`` (linkat through /proc, following
    the descriptor's link: a plain link() would link the link itself)."""
    fds = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(str(fd), path, src_dir_fd=fds, follow_symlinks=True)
    finally:
        os.close(fds)


@contextlib.contextmanager
def _writing() -> Iterator[None]:
    """A failure to write under OUT is TC100."""
    try:
        yield
    except OSError as exc:
        raise UsageError(f"-o: the traces cannot be written ({exc.strerror or 'error'})"
                         ) from None


def _text(run: ImportedRun, path: str) -> str:
    """The run's trace, which must be writable as UTF-8 (TC107 if an importer let a lone
    surrogate through)."""
    text = "".join(line + "\n" for line in trace_lines(run))
    if UNWRITABLE.search(text):
        raise Unsupported(path, "$", "text that cannot be written as UTF-8")
    return text


TRACE_NAME = "{}.trace.jsonl"
"""How a run's trace is named under OUT: the default ``traces`` glob ``*.trace.jsonl`` selects
it wherever OUT is, so ``tracecite check OUT`` checks every run imported."""


def _unique(name: str, taken: set[str]) -> str:
    """``NAME.trace.jsonl``, made a safe file name and unique among ``taken`` (compared
    without case, for file systems that ignore it), which it joins."""
    if not _SAFE_NAME.match(name):
        name = safe_name(name, "run")[:100]
    candidate, n = name, 1
    while TRACE_NAME.format(candidate).casefold() in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(TRACE_NAME.format(candidate).casefold())
    return TRACE_NAME.format(candidate)


def _runs(n: int) -> str:
    return "1 run" if n == 1 else f"{n} runs"
