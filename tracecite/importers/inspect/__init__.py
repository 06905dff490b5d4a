"""Inspect AI eval logs (docs/guides/importers.md#inspect-ai): one run per sample and epoch.

A log is a ``.eval`` archive (a zip of ``header.json``, or ``_journal/start.json`` while the
eval runs, and one ``samples/{id}_epoch_{n}.json`` per sample) or a ``.json`` log (the whole
``EvalLog``, its ``samples`` included, read only when its size is within the bound). Archive
members are read one at a time. Members compressed with zstd, which current Inspect writes and
Python's ``zipfile`` reads only from 3.14, are decompressed with the ``zstandard`` package of
the ``tracecite[inspect]`` extra.

Samples are imported one by one (:data:`~tracecite.importers.model.RunOutcome`): a sample that
ended in an error is a :class:`SkippedRun` (TC108), one that cannot be imported a
:class:`RefusedRun` naming its id and epoch, while the others are runs.

What a sample becomes (:mod:`.sample`):

- Each of an assistant message's ``tool_calls`` is a tool call (``id``, ``function``); the tool
  message whose ``tool_call_id`` names it is its result, failed (``ok`` false, no sources)
  when the message has an ``error``. A call that no tool message answers captured nothing and
  is a failed result too. The provider's own tool uses (``tool_use`` content of an assistant
  message, such as Anthropic's web search and web fetch) are calls too, failed when they have
  an ``error``.
- The sources of a result. A tool message carries no URI of its own, so the URI is taken from
  what the tool itself recorded, in this order, and nothing else is tried:

  1. the URL citations inside the tool message's text blocks (Inspect's ``web_search`` marks
     each result so): one with a string ``cited_text`` is a source of that URL whose content
     is that text (the search result's own words); one without ``cited_text`` that is the only
     citation of its block is a source of that URL whose content is the block's text (the
     page, as the Google provider of ``web_search`` gives it);
  2. otherwise the address the call read (:func:`.pages.argument_url`): a non-empty ``url``
     (else ``uri``) argument, else the one argument, whatever its name, holding an absolute
     http(s) URL. The result is one source of it whose content is the tool message's text
     (its string content, or its text blocks joined by newlines, as ``ChatMessage.text``).

  A result with neither has no source: its output is kept out of every check rather than
  given an address it may not have. (A citation of the answer cannot say which result it
  read: it has no call id. Choosing the result that happens to contain its quote would make
  the evidence check pass by construction.) The results of a provider's web search
  (Anthropic's, whose JSON lists ``web_search_result`` blocks) are sources of their URLs
  with ``content: null``: the provider returns no page text. An Anthropic web fetch (its
  result the JSON of the ``web_fetch_tool_result`` block) is a source of the fetched URL whose
  content is the document's text.
- Documents, counted as Anthropic's ``document_index`` counts them (every ``document`` block
  and every fetched document, in message order): a ``ContentDocument`` whose ``document`` is a
  ``data:`` URL (or an attachment holding one) is a source ``document:N`` of a call named
  ``documents``; a fetched document is the fetch's source.
- The final assistant message's text blocks with citations are the claims. A citation whose
  ``cited_text`` is a string is a quote. A ``UrlCitation`` names its source by ``url``, by the
  same-page key (:func:`.pages.page_key`): the last capture with text, else the last search
  result without, else a source with ``content: null`` of a call named ``cited-urls`` — with
  the ``error`` of the last failed read when every read of that page failed (TC204 in
  evidence mode), else without (TC203, checked live). A ``DocumentCitation`` or
  ``ContentCitation`` names the document its ``internal.document_index`` counts; a document
  the log keeps no text of (a file path, an image, a PDF that cannot be read) makes the sample
  a refused run that says so; a readable PDF is its pages' text (docs/guides/pdf.md). A
  ``cited_text`` cut short by Anthropic's web search (a trailing ``...``) is imported without
  it. A citation whose ``cited_text`` is a span of the answer (OpenAI,
  Google) or absent quotes nothing: it is counted in ``not_importable``, never a quote; a
  block left with no quote is not a claim.

``attachment://`` references in the text read are resolved from the sample's
``attachments``. Any shape outside these is TC107 with the JSON path of the element (after the
member's name for an archive): of the sample's run when it is in a sample, of the whole file
when the archive is truncated or corrupt or the log's header is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from tracecite.codes import Code
from tracecite.errors import TraceCiteError
from tracecite.findings import Finding
from tracecite.importers.eval_archive import (
    READ_FAILURES,
    ZIP_MAGIC,
    Place,
    member_bytes,
    read_error,
)
from tracecite.importers.inspect.sample import (
    SampleReader,
    object_at,
    optional_string_at,
    string_at,
)
from tracecite.importers.model import RefusedRun, RunOutcome, SkippedRun, Unsupported
from tracecite.inputs.files import decode_utf8, open_input, unreadable
from tracecite.settings import MAX_MEMBER_BYTES

_HEADER = "header.json"
_START = "_journal/start.json"  # the header of a log still being written
_SAMPLES = "samples/"
_AS_WRITTEN = "give the log as Inspect wrote it"
_RUN_FIRST = "give the log of an eval that ran its samples"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}\Z")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MEMBER_NAME = re.compile(r"[A-Za-z0-9._/-]{1,200}")


def read_runs(path: Path, display: str, *,
              max_member_bytes: int = MAX_MEMBER_BYTES) -> Iterator[RunOutcome]:
    """What became of each sample and epoch of the Inspect log at ``path``, in the log's
    order; ``display`` names the file in findings. A ``.eval`` file is read as an archive, a
    ``.json`` file as a JSON log, anything else by its first bytes; an archive member that
    decompresses past ``max_member_bytes``, or a JSON log larger than that, is TC107 "too
    large" (docs/guides/importers.md#bounded). Raises :class:`Unsupported` (TC107) for a file
    that cannot be imported as a whole and :class:`TraceCiteError` for a file that cannot be
    read (TC101) or a JSON log that is not UTF-8 (TC102, as for every other input; a member of
    an archive that is not is its sample's TC107)."""
    opened = open_input(str(path))
    if isinstance(opened, Finding):
        raise TraceCiteError(dataclasses.replace(opened, file=display))
    with opened:
        try:
            archive = path.suffix == ".eval" or (
                path.suffix != ".json" and opened.read(len(ZIP_MAGIC)) == ZIP_MAGIC)
            opened.seek(0)
        except OSError as exc:
            raise TraceCiteError(unreadable(display, exc)) from None
        if archive:
            yield from _archive_runs(opened, display, max_member_bytes)
        else:
            # The log's bytes are held by _json_runs alone, which frees them once decoded.
            yield from _json_runs(_capped(opened, display, max_member_bytes), display)


def _capped(opened: BinaryIO, display: str, max_bytes: int) -> bytes:
    """A JSON log's bytes, never more than ``max_bytes`` and one read: a log past the bound is
    TC107 "too large", not read whole."""
    try:
        data = opened.read(max_bytes + 1)
    except OSError as exc:
        raise TraceCiteError(unreadable(display, exc)) from None
    if len(data) > max_bytes:
        raise Place(display).error("$", f"the log is too large: past the bound of {max_bytes} "
                                   "bytes (--max-member-bytes); save it as a .eval log "
                                   "(inspect log convert --to eval), whose samples are read "
                                   "one at a time")
    return data


def _json_runs(data: bytes, display: str) -> Iterator[RunOutcome]:
    place = Place(display)
    text = decode_utf8(data, display)
    del data
    if isinstance(text, Finding):
        raise TraceCiteError(text)
    log = object_at(_parse_text(text, place), place, "$")
    del text
    label = _label(log, place)
    samples = log.get("samples")
    if samples is None:
        raise place.error("$.samples", "the log was written without its samples; save it "
                          "with them (Inspect's default), or give the .eval log")
    if not isinstance(samples, list):
        raise place.error("$.samples", "expected a list of samples")
    if not samples:
        raise place.error("$.samples", f"the log holds no sample; {_RUN_FIRST}")
    stem = Path(display).stem
    for index in range(len(samples)):
        sample, samples[index] = samples[index], None  # each sample freed once it is a run
        yield _outcome(place, f"$.samples[{index}]", sample, label, stem)


def _archive_runs(opened: BinaryIO, display: str, max_bytes: int) -> Iterator[RunOutcome]:
    place = Place(display)
    try:
        archive = zipfile.ZipFile(opened)
        infos = archive.infolist()
    except READ_FAILURES as exc:
        raise read_error(exc, place, "not a readable .eval archive (zip): truncated or "
                         "corrupt; " + _AS_WRITTEN) from None
    with archive:
        # A sample logged again (requeued) is a second member of the same name; the last one
        # is the sample, as Inspect reads it.
        members = {info.filename: info for info in infos}
        header = members.get(_HEADER) or members.get(_START)
        if header is None:
            raise place.error("$", f"the archive has neither {_HEADER} nor {_START}: not an "
                              f"Inspect .eval log; {_AS_WRITTEN}")
        header_place = Place(display, header.filename)
        log = object_at(_parse(member_bytes(archive, opened, header, header_place, max_bytes),
                               header_place), header_place, "$")
        label = _label(log, header_place)
        samples = [info for name, info in members.items()
                   if name.startswith(_SAMPLES) and name.endswith(".json")]
        if not samples:
            raise place.error("$", f"the archive holds no sample ({_SAMPLES}…); {_RUN_FIRST}")
        stem = Path(display).stem
        for info in samples:
            member_place = Place(display, info.filename)
            data = member_bytes(archive, opened, info, member_place, max_bytes)
            try:
                sample = _parse(data, member_place)
            except Unsupported as exc:
                yield RefusedRun(_member_label(info.filename), exc.finding)
                continue
            # The member's bytes are freed once decoded (_parse), its JSON once the run is
            # made of it, before the run is written.
            yield _outcome(member_place, "$", sample, label, stem)
            del sample


def _outcome(place: Place, root: str, sample: object, label: str, stem: str) -> RunOutcome:
    """What one sample comes to: its run, a refused run naming it (TC107) or, for a sample
    that ended in an error, a skipped one (TC108)."""
    try:
        reader = SampleReader(place, root, sample)
        sample_id, epoch = reader.who()
    except Unsupported as exc:
        label = f"the sample at {root}" if place.member is None else _member_label(place.member)
        return RefusedRun(label, exc.finding)
    who = f"sample {_safe(str(sample_id))} epoch {epoch}"
    if reader.errored:
        return SkippedRun(who, Finding(
            Code.IMPORT_SKIPPED, f"{who} ended in an error and has no answer: it is no run, "
            "and is not written (run the sample again to import it)",
            file=place.display))
    try:
        return reader.run(f"{label}/{sample_id}/epoch-{epoch}",
                          _run_name(stem, str(sample_id), epoch))
    except Unsupported as exc:
        return RefusedRun(who, exc.finding)


def _member_label(name: str) -> str:
    """A refused run named by its archive member: the member's name when it is a plain path
    (it is input text, so anything else is not shown)."""
    if _MEMBER_NAME.fullmatch(name):
        return f"the sample of member {name}"
    return "a sample member of an unusual name"


def _parse(data: bytearray, place: Place) -> object:
    """A JSON document (UTF-8, a leading BOM allowed); Inspect writes ``NaN`` and
    ``Infinity`` for some scores, which Python's reader accepts. ``data`` is emptied once
    decoded: the bytes and their text are never both kept while the JSON is parsed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise place.error("$", "not valid UTF-8",
                          line=1 + data.count(b"\n", 0, exc.start)) from None
    data.clear()
    return _parse_text(text, place)


def _parse_text(text: str, place: Place) -> object:
    """A JSON document, decoded (a leading BOM allowed)."""
    try:
        return json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        # The reader's own words, without the position it appends ("... starting at").
        reason = re.sub(r"(?: starting)? at$", "", exc.msg)
        raise place.error("$", f"not valid JSON ({reason}, column {exc.colno})",
                          line=exc.lineno) from None
    except (ValueError, RecursionError):  # a number of too many digits, nesting too deep
        raise place.error("$", "not valid JSON (a number too long or nesting too deep)") from None


def _label(log: dict[str, object], place: Place) -> str:
    """What names the eval in run ids: its ``eval_id``, else its task."""
    spec = object_at(log.get("eval"), place, "$.eval")
    task = string_at(spec, "task", place, "$.eval")
    eval_id = optional_string_at(spec, "eval_id", place, "$.eval")
    if not (eval_id or task):
        raise place.error("$.eval.task", "the eval has neither an eval_id nor a task name")
    return eval_id or task


def _run_name(stem: str, sample_id: str, epoch: int) -> str:
    """The file stem of a sample's run: the log's, the sample's id and its epoch, each safe as
    a file name. Two samples may share it (ids 1 and "1"): the import makes each written
    name unique among all its runs, whatever the vendor (:mod:`tracecite.importers.command`)."""
    return f"{_safe(stem)}-{_safe(sample_id)}-epoch-{epoch}"


def _safe(text: str) -> str:
    if _SAFE_NAME.match(text):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    cleaned = _UNSAFE.sub("_", text).strip("._-")[:40]
    return f"{cleaned}-{digest}" if cleaned else digest


