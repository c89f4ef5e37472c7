"""The viewer and ``view --export`` read only regular files inside each run's folder: a plot, a
manifest, scores or trajectories linked out of the folder (to ``/etc/passwd``, to another user's
file) is neither served, copied nor parsed, and a FIFO in place of a plot is refused without a
read that blocks (issue 40 item 1)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ViewRuns, copy_run
from fastapi.testclient import TestClient

from sandbox.cli import main
from sandbox.view.app import create_app
from sandbox.view.run_files import read_run_file, run_file, stray_file

SECRET = b"root:x:0:0:secret outside the runs folder\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the runs folder that no request may reach."""
    secret = tmp_path / "outside" / "secret.png"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    return secret


def _client(root: Path) -> TestClient:
    return TestClient(create_app(root), raise_server_exceptions=False)


def test_a_plot_linked_out_of_the_folder_is_neither_served_listed_nor_exported(
    view_runs: ViewRuns, tmp_path: Path, outside: Path
) -> None:
    root = tmp_path / "runs"
    run = copy_run(view_runs, view_runs.dfsdt, root, "linked")
    (run / "pass_rate.png").unlink()
    (run / "pass_rate.png").symlink_to(outside)
    (run / "step_profile.png").unlink()
    (run / "step_profile.png").symlink_to("/etc/passwd")
    client = _client(root)
    for name in ("pass_rate.png", "step_profile.png"):
        resp = client.get(f"/api/runs/linked/plots/{name}")
        assert resp.status_code == 404, resp.content[:80]
        assert b"root:" not in resp.content
    page = client.get("/api/runs/linked").json()
    assert page["plots"] == ["cost_vs_pass.png"]  # the one plot still a file of the run
    ok = client.get("/api/runs/linked/plots/cost_vs_pass.png")
    assert ok.status_code == 200 and ok.content[:4] == b"\x89PNG"

    out = tmp_path / "site"
    assert main(["view", "--export", str(out), str(run)]) == 0
    copied = {p.name for p in (out / "runs").rglob("*.png")}
    assert copied == {"cost_vs_pass.png"}
    for path in out.rglob("*"):
        if path.is_file():
            assert (
                b"secret outside" not in path.read_bytes() and b"root:x:0" not in path.read_bytes()
            )


def test_a_link_to_a_file_of_the_same_run_is_served(view_runs: ViewRuns, tmp_path: Path) -> None:
    root = tmp_path / "runs"
    run = copy_run(view_runs, view_runs.dfsdt, root, "sibling")
    (run / "step_profile.png").unlink()
    (run / "step_profile.png").symlink_to("pass_rate.png")
    resp = _client(root).get("/api/runs/sibling/plots/step_profile.png")
    assert resp.status_code == 200 and resp.content == (run / "pass_rate.png").read_bytes()


def test_a_fifo_in_place_of_a_plot_is_refused_without_blocking(
    view_runs: ViewRuns, tmp_path: Path
) -> None:
    root = tmp_path / "runs"
    run = copy_run(view_runs, view_runs.dfsdt, root, "fifo")
    (run / "pass_rate.png").unlink()
    os.mkfifo(run / "pass_rate.png")
    client = _client(root)
    assert client.get("/api/runs/fifo/plots/pass_rate.png").status_code == 404
    assert "pass_rate.png" not in client.get("/api/runs/fifo").json()["plots"]


@pytest.mark.parametrize("name", ["manifest.json", "trajectories.jsonl"])
def test_a_run_whose_record_is_linked_out_is_unreadable_and_says_why(
    view_runs: ViewRuns, tmp_path: Path, name: str
) -> None:
    """Another run's files linked in from outside the folder: listed as unreadable with the
    reason, its pages 404, nothing of the outside file shown."""
    root = tmp_path / "runs"
    elsewhere = copy_run(view_runs, view_runs.react, tmp_path / "elsewhere", "theirs")
    run = copy_run(view_runs, view_runs.react, root, "mine")
    (run / name).unlink()
    (run / name).symlink_to(elsewhere / name)
    client = _client(root)
    entry = {r["key"]: r for r in client.get("/api/runs").json()}["mine"]
    assert entry["status"] == "unreadable"
    assert entry["error"] == f"{name} is not a regular file inside the run folder"
    resp = client.get("/api/runs/mine/episodes")
    assert resp.status_code == 404 and "theirs" not in resp.text
    assert client.get("/api/leaderboard").status_code == 200


def test_scores_linked_out_are_not_read(view_runs: ViewRuns, tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "runs"
    run = copy_run(view_runs, view_runs.react, root, "scored")
    theirs = outside.parent / "scores.json"
    shutil.copy(run / "scores.json", theirs)
    (run / "scores.json").unlink()
    (run / "scores.json").symlink_to(theirs)
    entry = {r["key"]: r for r in _client(root).get("/api/runs").json()}["scored"]
    assert entry["scored"] is False
    assert (
        entry["error"]
        == "scores.json unreadable: scores.json is not a regular file inside the run folder"
    )
    page = _client(root).get("/api/runs/scored").json()
    assert page["scores"] is None and page["label_source"] != "scores"


def test_run_file_takes_regular_files_inside_the_folder_only(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "a.json").write_text(json.dumps({"x": 1}))
    (run / "sub").mkdir()
    (run / "inside").symlink_to("a.json")
    (run / "out").symlink_to(tmp_path)
    (run / "dotdot").symlink_to("../run/a.json")  # leaves and comes back: still inside
    (run / "loop").symlink_to("loop")
    (run / "dangling").symlink_to("nowhere")
    os.mkfifo(run / "fifo")
    assert run_file(run, "a.json") == (run / "a.json").resolve()
    assert run_file(run, "inside") == (run / "a.json").resolve()
    assert run_file(run, "dotdot") == (run / "a.json").resolve()
    for refused in ("sub", "out", "loop", "dangling", "fifo", "missing", "."):
        assert run_file(run, refused) is None, refused
    assert read_run_file(run, "inside") == b'{"x": 1}' and read_run_file(run, "fifo") is None
    assert stray_file(run, "dangling") and stray_file(run, "fifo") and stray_file(run, "out")
    assert not stray_file(run, "a.json") and not stray_file(run, "missing")
    assert run_file(run, "../outside.txt") is None
