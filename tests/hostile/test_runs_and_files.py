"""Hostile use of runs and their folders: one regression test per defect of the hardening issue
(numbered as there)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mock_tools import create_app, load_suite
from mock_tools.overlay import OVERLAY_FILE, OverlayStore
from sandbox.cli import main
from sandbox.store import RunStore, read_trajectories
from tests.agents.models.openai_server import finish_reply
from tests.hostile.conftest import MINI, ROOT, lines, sandbox, serving, wait_for_lines

RUN = ["run", "--suite", str(MINI), "--agent", "react", "--no-plots"]


def _slow_run(server, tmp_path: Path, run_id: str, *extra: str) -> list[str]:
    return [
        *RUN,
        "--model",
        f"openai:scripted@{server.base_url}",
        "--trials",
        "4",
        "--concurrency",
        "1",
        "--out",
        str(tmp_path / "runs"),
        "--run-id",
        run_id,
        *extra,
    ]


def test_01_a_second_writer_of_a_run_is_refused_naming_the_first(slow_model, tmp_path, capsys):
    first = sandbox(*_slow_run(slow_model, tmp_path, "locked"))
    folder = tmp_path / "runs" / "locked"
    wait_for_lines(folder / "trajectories.jsonl", 1, first)
    # a resume while the original still writes
    assert main(["run", "--resume", str(folder)]) == 1
    assert f"is in use by process {first.pid}" in capsys.readouterr().err
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=30) == 143
    slow_model.default = lambda body: finish_reply("It is done.")
    assert main(["run", "--resume", str(folder), "--no-plots"]) == 0
    manifest = RunStore.open(folder).manifest
    assert len(lines(folder / "trajectories.jsonl")) == len(manifest.episodes)


def test_01_two_resumes_at_once_one_proceeds_and_nothing_is_doubled(slow_model, tmp_path):
    first = sandbox(*_slow_run(slow_model, tmp_path, "twice"))
    folder = tmp_path / "runs" / "twice"
    wait_for_lines(folder / "trajectories.jsonl", 1, first)
    first.send_signal(signal.SIGKILL)  # a crash: the kernel drops its lock
    first.wait(timeout=10)
    resumes = [sandbox("run", "--resume", str(folder), "--no-plots") for _ in range(2)]
    outcomes = sorted(p.wait(timeout=120) for p in resumes)
    assert outcomes == [0, 1]
    refused = next(p for p in resumes if p.returncode == 1)
    assert b"is in use by process" in refused.communicate()[1]
    keys = [
        (json.loads(x)["scenario_id"], json.loads(x)["trial"])
        for x in lines(folder / "trajectories.jsonl")
    ]
    assert len(keys) == len(set(keys)) == len(RunStore.open(folder).manifest.episodes)


@pytest.mark.parametrize("run_id", ["../../escape", "/tmp/absolute", ".", "..", "a" * 300, "a/b"])
def test_02_run_ids_never_reach_outside_the_output_folder(run_id: str, tmp_path, capsys):
    argv = [*RUN, "--model", "reference", "--out", str(tmp_path / "runs"), "--run-id", run_id]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is not a folder name" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists() and not (tmp_path.parent / "escape").exists()


def test_06_a_full_disk_stops_the_run_resumable_not_half_written(tmp_path: Path) -> None:
    """A file size limit stands in for a full disk: writes past it fail with EFBIG."""
    out = tmp_path / "runs"
    assert (
        main([*RUN, "--model", "reference", "--out", str(out), "--run-id", "full", "--trials", "3"])
        == 0
    )
    folder = out / "full"
    size = (folder / "trajectories.jsonl").stat().st_size
    first_line = lines(folder / "trajectories.jsonl")[0]
    # a second run whose trajectories file may hold about one episode
    limit = len(first_line) + 200
    code = (
        "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
        "from sandbox.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    argv = [*RUN, "--model", "reference", "--out", str(out), "--run-id", "tight", "--trials", "3"]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: cannot write") and "--resume" in last
    assert "Traceback" not in done.stderr
    tight = out / "tight"
    stored = lines(tight / "trajectories.jsonl")
    assert 1 <= len(stored) < 3 * 4  # whole lines only, the rest not started or not written
    for line in stored:
        json.loads(line)
    assert RunStore.open(tight).manifest.status == "failed"
    assert main(["run", "--resume", str(tight), "--no-plots"]) == 0  # room again: it finishes
    assert len(read_trajectories(tight)) == 12 and size > 0


def test_07_a_run_that_fails_before_its_first_episode_leaves_no_folder(tmp_path, capsys) -> None:
    out = tmp_path / "runs"
    argv = [*RUN, "--model", "reference", "--out", str(out), "--miss-policy", "simulate"]
    assert main(argv) == 2  # simulate without --simulator
    assert "needs --simulator" in capsys.readouterr().err
    assert not out.exists() or list(out.iterdir()) == []


def test_08_completed_means_scored_and_eval_completes_a_run_cut_off_while_scoring(tmp_path):
    out = tmp_path / "runs"
    assert main([*RUN, "--model", "reference", "--out", str(out), "--run-id", "s"]) == 0
    folder = out / "s"
    assert RunStore.open(folder).manifest.status == "completed"
    assert (folder / "scores.json").is_file()
    # the state a crash between the last episode and the scores leaves
    (folder / "scores.json").unlink()
    store = RunStore.open(folder)
    store.manifest.status = "running"
    store.write_manifest()
    assert main(["eval", str(folder), "--no-plots", "--json"]) == 0
    assert (folder / "scores.json").is_file()
    assert RunStore.open(folder).manifest.status == "completed"


def test_09_sigterm_marks_the_run_interrupted_and_it_resumes(slow_model, tmp_path) -> None:
    proc = sandbox(*_slow_run(slow_model, tmp_path, "term"))
    folder = tmp_path / "runs" / "term"
    wait_for_lines(folder / "trajectories.jsonl", 1, proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 143
    err = proc.communicate()[1].decode()
    assert "Traceback" not in err and "--resume" in err
    manifest = RunStore.open(folder).manifest
    assert manifest.status == "interrupted"
    kept = lines(folder / "trajectories.jsonl")
    assert 1 <= len(kept) < len(manifest.episodes)
    slow_model.default = lambda body: finish_reply("It is done.")
    assert main(["run", "--resume", str(folder), "--no-plots"]) == 0
    assert len(read_trajectories(folder)) == len(manifest.episodes)
    assert RunStore.open(folder).manifest.status == "completed"


def test_11_a_run_resumes_from_any_folder(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "runs"
    argv = [*RUN, "--model", "reference", "--out", str(out), "--run-id", "r", "--trials", "2"]
    assert main(argv) == 0
    folder = out / "r"
    kept = lines(folder / "trajectories.jsonl")
    # drop the second trial as a crash would, then resume from elsewhere
    (folder / "trajectories.jsonl").write_text("".join(x + "\n" for x in kept[: len(kept) // 2]))
    store = RunStore.open(folder)
    store.manifest.status = "interrupted"
    store.write_manifest()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["run", "--resume", str(folder), "--no-plots"]) == 0
    assert len(read_trajectories(folder)) == len(kept)
    assert Path(RunStore.open(folder).manifest.suite.path).is_absolute()


def test_13_an_upstream_run_records_into_the_overlay_and_resumes(tmp_path: Path) -> None:
    """A run with ``--miss-policy upstream`` keeps what the real API said in the overlay, never
    in the suite: the suite's fingerprint does not change, so the run resumes."""
    suite = tmp_path / "mini"
    shutil.copytree(MINI, suite)
    shutil.rmtree(suite / "recordings")  # every call misses and goes upstream
    before = load_suite(suite).fingerprint
    out = tmp_path / "runs"
    with serving(create_app(load_suite(MINI))) as upstream:
        argv = ["run", "--suite", str(suite), "--agent", "react", "--no-plots"]
        argv += ["--model", "reference", "--out", str(out), "--run-id", "up", "--trials", "2"]
        argv += ["--miss-policy", "upstream", "--upstream-url", f"{upstream}/tools"]
        assert main(argv) == 0
        folder = out / "up"
        kept = lines(folder / "trajectories.jsonl")
        (folder / "trajectories.jsonl").write_text("".join(x + "\n" for x in kept[:3]))
        store = RunStore.open(folder)
        store.manifest.status = "interrupted"
        store.write_manifest()
        assert main(["run", "--resume", str(folder), "--no-plots"]) == 0
    assert load_suite(suite).fingerprint == before
    assert not (suite / "recordings").exists()
    assert len(OverlayStore(suite / OVERLAY_FILE)) > 0
    trajectories = read_trajectories(folder)
    assert len(trajectories) == len(kept)
    provenances = {
        c.observation.provenance
        for t in trajectories
        for n in t.nodes
        for c in n.calls
        if c.observation is not None
    }
    assert "upstream" in provenances
