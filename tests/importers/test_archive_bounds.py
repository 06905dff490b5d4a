"""An ``.eval`` archive's members are bounded (docs/guides/importers.md, "Bounded"): a member
that decompresses past ``--max-member-bytes`` is TC107 "too large", and a zip bomb costs at most
that bound, never the size it decompresses to."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.importers.test_inspect import load, members_of, zip_archive, zstd_archive
from tests.memory import peak_run
from tracecite import api
from tracecite.codes import Code
from tracecite.importers.inspect import read_runs
from tracecite.importers.model import Unsupported
from tracecite.settings import MAX_MEMBER_BYTES

SAMPLE = "samples/1_epoch_1.json"
MIB = 1 << 20


def padded(members: list[tuple[str, bytes]], name: str, pad: int) -> list[tuple[str, bytes]]:
    """``members`` with ``pad`` spaces after the JSON of member ``name``: still valid JSON, and
    a member that deflates a thousandfold, as a zip bomb's does."""
    return [(n, data + b" " * pad if n == name else data) for n, data in members]


def too_large(path: Path, max_member_bytes: int) -> Unsupported:
    with pytest.raises(Unsupported) as caught:
        list(read_runs(path, path.name, max_member_bytes=max_member_bytes))
    assert caught.value.finding.code is Code.IMPORT_UNSUPPORTED
    assert "too large" in caught.value.finding.message
    return caught.value


def test_the_default_bound_is_256_mib() -> None:
    assert MAX_MEMBER_BYTES == 256 * MIB


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_member_past_the_bound_is_tc107_too_large(tmp_path: Path, compression: int) -> None:
    path = zip_archive(tmp_path / "bomb.eval", padded(members_of(load()), SAMPLE, 2 * MIB),
                       compression)
    error = too_large(path, MIB)
    assert error.json_path == f"{SAMPLE}: $"
    assert "--max-member-bytes" in error.finding.message
    assert str(MIB) in error.finding.message


def test_a_zstd_member_past_the_bound_is_tc107_too_large(tmp_path: Path) -> None:
    path = zstd_archive(tmp_path / "bomb.eval", padded(members_of(load()), SAMPLE, 2 * MIB))
    assert too_large(path, MIB).json_path == f"{SAMPLE}: $"


def test_the_header_is_bounded_too(tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "bomb.eval", padded(members_of(load()), "header.json", MIB))
    assert too_large(path, MIB).json_path == "header.json: $"


@pytest.mark.parametrize("zstd", [False, True])
def test_a_member_of_exactly_the_bound_is_read(tmp_path: Path, zstd: bool) -> None:
    members = padded(members_of(load()), SAMPLE, 1000)
    size = max(len(data) for _, data in members)
    path = (zstd_archive if zstd else zip_archive)(tmp_path / "run.eval", members)
    runs = list(read_runs(path, path.name, max_member_bytes=size))
    assert [run.run_id for run in runs] == [run.run_id for run in read_runs(
        zip_archive(tmp_path / "plain.eval", members_of(load())), "plain.eval")]


def test_the_command_line_takes_max_member_bytes(cli: Cli, tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "bomb.eval", padded(members_of(load()), SAMPLE, 2 * MIB))
    res = cli("import", "inspect", path, "-o", tmp_path / "out", "--max-member-bytes",
              str(MIB), "--json")
    assert res.exit == 1
    [finding] = res.json()["findings"]
    assert finding["code"] == "TC107"
    assert "too large" in finding["message"]
    assert not (tmp_path / "out").exists()
    # Under the default bound the same archive imports.
    assert cli("import", "inspect", path, "-o", tmp_path / "out", "--json").exit == 0


def test_max_member_bytes_is_checked(cli: Cli, tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "run.eval", members_of(load()))
    res = cli("import", "inspect", path, "--max-member-bytes", "0")
    assert res.exit == 1
    assert "--max-member-bytes" in res.err


def test_the_library_takes_max_member_bytes(tmp_path: Path) -> None:
    path = zip_archive(tmp_path / "bomb.eval", padded(members_of(load()), SAMPLE, 2 * MIB))
    report = api.import_transcripts("inspect", [str(path)], str(tmp_path / "out"),
                                    max_member_bytes=MIB)
    assert [f.code for f in report.findings] == [Code.IMPORT_UNSUPPORTED]


def bomb(path: Path, size: int) -> Path:
    """A real zip bomb: an ``.eval`` whose sample member is ``size`` bytes of spaces after its
    JSON, deflated (about a thousandth of that on disk), written a chunk at a time."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members_of(load()):
            if name != SAMPLE:
                archive.writestr(name, data)
                continue
            with archive.open(name, "w", force_zip64=True) as member:
                member.write(data)
                chunk = b" " * (4 * MIB)
                for _ in range(size // len(chunk)):
                    member.write(chunk)
    return path


@pytest.mark.slow
def test_a_zip_bomb_costs_the_bound_not_what_it_decompresses_to(tmp_path: Path) -> None:
    """A 300 MiB member (past the default bound) in a 300 KB archive: refused without being
    decompressed, so the process's peak stays far below the member's size."""
    path = bomb(tmp_path / "bomb.eval", 300 * MIB)
    assert path.stat().st_size < 2 * MIB
    run = peak_run("import", "inspect", path, "-o", tmp_path / "out", "--json")
    assert run.exit == 1, run.err[-500:]
    assert [f["code"] for f in json.loads(run.out)["findings"]] == ["TC107"]
    assert run.peak_bytes < 120 * MIB, run.peak_bytes
