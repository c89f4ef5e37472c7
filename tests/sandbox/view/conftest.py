"""Runs made once per session for the viewer and leaderboard tests.

Four tasks of the default suite: a G1 task on which DFSDT with ``noisy-reference:0.5`` grows a
17-node tree (give-ups, depth cuts, an answer path), two more ordinary ones and an unsolvable
one. Three runs: DFSDT and ReAct with the noisy model, ReAct with the reference model.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox.run import run_suite
from sandbox.store import RunConfig

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "scenarios" / "default"
TREE_TASK = "g1_business_flights_date_format"
TASKS = [TREE_TASK, "g1_flight_baggage", "g2_round_trip", "u_translate"]


@dataclass(frozen=True)
class ViewRuns:
    root: Path
    dfsdt: str = "dfsdt-noisy"
    react: str = "react-noisy"
    reference: str = "react-ref"

    def path(self, key: str) -> Path:
        return self.root / key

    def trajectories(self, key: str) -> list[dict]:
        lines = self.path(key).joinpath("trajectories.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def scores(self, key: str) -> dict:
        return json.loads(self.path(key).joinpath("scores.json").read_text())


def make_run(root: Path, run_id: str, agent: str, model: str, *, plots: bool = False, **kw) -> Path:
    config = RunConfig(
        suite=str(SUITE), agent=agent, model=model, tasks=TASKS, out=str(root), run_id=run_id, **kw
    )
    return Path(run_suite(config, show_progress=False, plots=plots).path)


@pytest.fixture(scope="session")
def view_runs(tmp_path_factory: pytest.TempPathFactory) -> ViewRuns:
    root = tmp_path_factory.mktemp("view") / "runs"
    runs = ViewRuns(root)
    make_run(root, runs.dfsdt, "dfsdt", "noisy-reference:0.5", plots=True)
    make_run(root, runs.react, "react", "noisy-reference:0.5")
    make_run(root, runs.reference, "react", "reference")
    return runs


def copy_run(runs: ViewRuns, key: str, dest_root: Path, name: str) -> Path:
    """A copy of a session run, to change without touching the others."""
    dest = dest_root / name
    shutil.copytree(runs.path(key), dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["run_id"] = name
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def running_copy(runs: ViewRuns, key: str, dest_root: Path, name: str) -> tuple[Path, list[str]]:
    """A copy of a session run as if it were still going: status running, no scores yet, no
    trajectory yet; returns the folder and the lines the runner will append."""
    run = copy_run(runs, key, dest_root, name)
    (run / "scores.json").unlink()
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"] = "running"
    (run / "manifest.json").write_text(json.dumps(manifest))
    lines = (run / "trajectories.jsonl").read_text().splitlines(keepends=True)
    (run / "trajectories.jsonl").write_text("")
    return run, lines
