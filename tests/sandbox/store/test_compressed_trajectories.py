"""Compressed trajectories (``--compress``): ``trajectories.jsonl.zst`` holds the same lines as
``trajectories.jsonl``, one independent zstd frame per group commit; a torn frame is cut at a
frame boundary as a torn line is; every reader reads both files to the same figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import zstandard
from fastapi.testclient import TestClient

from agents.trajectory import Trajectory
from sandbox.cli import main
from sandbox.errors import RunError
from sandbox.store import EpisodeIndex, Manifest, RunStore, SuiteInfo, read_trajectories
from sandbox.store.config import RunConfig
from sandbox.store.trajectory_file import COMPRESSED, PLAIN, blocks, iter_lines
from sandbox.view.app import create_app

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"


def _line(task: str, trial: int = 0, answer: str = "ok", infra: bool = False) -> bytes:
    """A finished episode's trajectory line (``infra``: one that ended on an infrastructure
    error, which runs again)."""
    record = {"scenario_id": task, "trial": trial, "final_answer": answer, "status": "answered"}
    record |= {"agent": {"name": "react"}, "model": {"name": "reference"}}
    if infra:
        record |= {"status": "error", "errors": [{"kind": "infra", "message": "endpoint down"}]}
    return Trajectory.model_validate(record).to_json_line().encode()


def _store(tmp_path: Path, compress: bool = True) -> RunStore:
    config = RunConfig().with_values({"output.compress": compress})
    manifest = Manifest(run_id="z", config=config, suite=SuiteInfo(name="s"))
    return RunStore.create(tmp_path / "runs", manifest)


def test_each_group_is_one_independent_frame_of_whole_lines(tmp_path: Path) -> None:
    """Two groups make two zstd frames; the file is an ordinary multi-frame zstd file whose
    content is the lines a plain run would hold."""
    store = _store(tmp_path)
    first, second = [_line("a"), _line("b")], [_line("c")]
    store.append_lines(first)
    store.append_lines(second)
    store.release()
    file = store.path / COMPRESSED
    assert store.trajectories_path == file and not (store.path / PLAIN).exists()
    assert [b.data for b in blocks(file)] == [b"".join(first), b"".join(second)]
    whole = zstandard.ZstdDecompressor().decompressobj()
    content, data = b"", file.read_bytes()
    while data:  # frame by frame, as zstd -d does
        content += whole.decompress(data)
        data, whole = whole.unused_data, zstandard.ZstdDecompressor().decompressobj()
    assert content == b"".join(first + second)
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "b", "c"]


@pytest.mark.parametrize("torn_at", [1, 3, 7, 20, -4, -1])
def test_a_torn_frame_is_ignored_by_readers_and_cut_at_its_start(
    tmp_path: Path, torn_at: int
) -> None:
    """A crash mid-write leaves part of a frame (its magic number cut, its header, its blocks,
    its checksum): readers see the whole frames before it, and appending again first cuts the
    file back exactly to the end of the last whole frame."""
    store = _store(tmp_path)
    store.append_lines([_line("a")])
    store.release()
    file = store.path / COMPRESSED
    before = file.read_bytes()
    whole = len(before)
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(_line("b") + _line("c"))
    with file.open("ab") as fh:
        fh.write(frame[:torn_at])
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a"]
    assert [d.scenario_id for d in EpisodeIndex.of(store.path).digests] == ["a"]
    again = RunStore.open(store.path)
    again.append_lines([_line("d")])
    again.close()
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "d"]
    assert file.read_bytes().startswith(before)
    assert [b.offset for b in blocks(file)] == [0, whole]


def test_bytes_that_are_no_frame_are_a_one_line_error(tmp_path: Path) -> None:
    """Garbage between frames is not a torn tail: reading and appending say where it is instead
    of cutting the frames after it."""
    store = _store(tmp_path)
    store.append_lines([_line("a")])
    store.release()
    file = store.path / COMPRESSED
    with file.open("ab") as fh:
        fh.write(b"not a frame at all\n")
    with pytest.raises(RunError, match=r"byte \d+: not a zstd frame"):
        read_trajectories(store.path)
    with pytest.raises(RunError, match="not a zstd frame"):
        RunStore.open(store.path).append_lines([_line("b")])


def test_resume_compaction_keeps_the_compressed_format(tmp_path: Path) -> None:
    """``compact`` rewrites a compressed file as frames of the kept lines (the latest of each
    episode, an infrastructure error dropped), so a resumed compressed run stays compressed."""
    store = _store(tmp_path)
    store.append_lines([_line("a", answer="old", infra=True), _line("b")])
    store.append_lines([_line("a", answer="new")])
    assert set(store.compact()) == {("a", 0), ("b", 0)}
    lines = list(iter_lines(store.path / COMPRESSED))
    assert [json.loads(x)["final_answer"] for x in lines] == ["ok", "new"]
    store.release()


def _run(out: Path, run_id: str, *extra: str) -> Path:
    argv = ["run", "--suite", str(MINI), "--agent", "dfsdt", "--model", "noisy-reference:0.5"]
    assert main([*argv, "--out", str(out), "--run-id", run_id, "--no-plots", *extra]) == 0
    return out / run_id


def _unnamed(figures: object) -> object:
    """``figures`` without the runs' names or paths."""
    if isinstance(figures, list):
        return [_unnamed(x) for x in figures]
    if isinstance(figures, dict):
        return {k: _unnamed(v) for k, v in figures.items() if k not in ("run", "runs", "keys")}
    return figures


def _last_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr().out.strip()
    return json.loads(out) if out.startswith("[") else json.loads(out.splitlines()[-1])


def test_every_reader_reads_a_compressed_run_as_the_plain_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same run stored plain and compressed (the file decompressed is the plain one but for
    the run id and wall times): eval, rescore, replay, export, the leaderboard, compare and the
    viewer give the same figures, and resume finds nothing to run again."""
    out = tmp_path / "runs"
    plain = _run(out, "plain")
    packed = out / "packed"
    shutil.copytree(plain, packed)
    manifest = json.loads((packed / "manifest.json").read_text())
    manifest["config"]["output"]["compress"] = True
    manifest["run_id"] = manifest["config"]["output"]["run_id"] = "packed"
    (packed / "manifest.json").write_text(json.dumps(manifest))
    data = (plain / PLAIN).read_bytes()
    (packed / PLAIN).unlink()
    (packed / COMPRESSED).write_bytes(zstandard.ZstdCompressor().compress(data))
    for run in (plain, packed):
        assert main(["eval", str(run), "--no-plots"]) == 0
    for name in ("scores.json", "report.md"):
        text = (packed / name).read_text().replace(str(packed), str(plain))
        text = text.replace('"packed"', '"plain"').replace("# Run packed", "# Run plain")
        assert (plain / name).read_text() == text, name
    for command in (["rescore"], ["replay"], ["leaderboard"]):
        figures = [
            _unnamed(_last_json(capsys, [*command, str(r), "--json"])) for r in (plain, packed)
        ]
        assert figures[0] == figures[1], command
    exports = []
    for run in (plain, packed):
        assert main(["export", "toolbench", str(run), str(tmp_path / run.name)]) == 0
        exports.append(sorted(p.read_text() for p in (tmp_path / run.name).glob("*.json")))
    assert exports[0] == exports[1] and exports[0]
    client = TestClient(create_app(out))
    rows = [client.get(f"/api/runs/{r}/episodes").json() for r in ("plain", "packed")]
    assert rows[0] == rows[1] and rows[0]
    key = read_trajectories(packed)[2]
    pages = [
        client.get(f"/api/runs/{r}/episodes/{key.scenario_id}/{key.trial}").json()
        for r in ("plain", "packed")
    ]
    assert pages[0]["trajectory"] == pages[1]["trajectory"]
    argv = ["compare", "--runs", str(plain), str(packed), "--out", str(tmp_path / "cmp")]
    compared = _last_json(capsys, [*argv, "--json", "--no-plots"])
    assert compared["pass_rate"]["plain"] == compared["pass_rate"]["packed"]
    assert compared["tie_rate"] == 1.0
    stored = len(list(iter_lines(packed / COMPRESSED)))
    line = _last_json(capsys, ["run", "--resume", str(packed), "--no-plots", "--json"])
    assert line["episodes"] == line["n"] == stored == len(list(iter_lines(packed / COMPRESSED)))
    assert not (packed / PLAIN).exists()


def test_a_config_file_makes_compressed_runs_the_default(tmp_path: Path) -> None:
    """``output: {compress: true}`` in a config file compresses the run without the flag, and
    the manifest records it, so a resume appends frames to the same file."""
    config = tmp_path / "run.yaml"
    config.write_text("output:\n  compress: true\n")
    run = _run(tmp_path / "runs", "from-file", "--config", str(config))
    assert (run / COMPRESSED).is_file() and not (run / PLAIN).exists()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"]["output"]["compress"] is True
    assert len(read_trajectories(run)) == len(manifest["episodes"])
