"""Hardening, round two (issue 27): what a careless or hostile user does to a suite's files.

Each test is named for its item of the issue (item N is test number 21 + N)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mock_tools.models import Provenance, Recording, Response
from mock_tools.overlay import OverlayStore
from sandbox.cli import main as sandbox_main
from tests.hostile.conftest import MINI


def _suite_with_overlay(tmp_path: Path) -> Path:
    """A copy of the mini suite whose overlay holds one answer the suite does not record."""
    suite = tmp_path / "suite"
    shutil.copytree(MINI, suite)
    overlay = OverlayStore(suite / "overlay.sqlite")
    rec = Recording(
        tool="shipping",
        api="track_parcel",
        args={"parcel_id": "PX-777"},
        response=Response(body={"status": "lost"}),
        provenance=Provenance(source="simulated"),
    )
    overlay.put(rec.tool, rec.api, '{"parcel_id":"PX-777"}', rec.response, rec.provenance)
    overlay.close()
    return suite


@pytest.mark.parametrize(
    "name",
    [
        "../../escape_freeze.jsonl",
        "../escape.jsonl",
        "a/b/c.jsonl",
        "/tmp/absolute.jsonl",
        ".hidden.jsonl",
        "..",
        "frozen.txt",
        "",
        "x" * 300 + ".jsonl",
    ],
)
def test_22_freeze_name_is_a_file_name_inside_the_recordings_folder(
    name: str, tmp_path: Path, capsys
) -> None:
    """`suite freeze --name` takes a plain `*.jsonl` file name: a path that climbs out of the
    suite, a subfolder the loader would ignore, a hidden or non-JSONL name is a one-line usage
    error (exit 2) and nothing is written anywhere."""
    suite = _suite_with_overlay(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code = sandbox_main(["suite", "freeze", str(suite), "--name", name])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "--name" in err and ".jsonl" in err
    # the overlay's -wal and -shm files may come and go; no other file may appear
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before and "overlay" not in p.name] == []


def test_22_a_plain_name_freezes_into_the_recordings_folder(tmp_path: Path, capsys) -> None:
    """The accepted form still works: the file lands in `recordings/` and a second freeze
    finds everything recorded already."""
    suite = _suite_with_overlay(tmp_path)
    assert sandbox_main(["suite", "freeze", str(suite), "--name", "batch-1.jsonl"]) == 0
    assert (suite / "recordings" / "batch-1.jsonl").is_file()
    capsys.readouterr()
    assert sandbox_main(["suite", "freeze", str(suite), "--name", "batch-2.jsonl"]) == 0
    assert '"written": 0' in capsys.readouterr().out
    assert not (suite / "recordings" / "batch-2.jsonl").exists()
