"""The executor seam: the runner hands episodes to the executor its config names.

What it protects: an executor registered from outside runs a whole run (the recipe in
docs/architecture.md); whatever order episodes finish in, the run folder and the scores are those
of the local executor; an unknown executor, or ``ray`` without its extra, is a one-line error
before any run folder is written.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness_suite import comparable_scores, suite_path

from agents.trajectory import Trajectory
from mock_tools import load_suite
from sandbox.cli import main
from sandbox.run import run_suite
from sandbox.run.batch import EpisodeBatch, OnResult
from sandbox.run.episode import run_episode
from sandbox.run.executor import EXECUTORS, ExecutorKind
from sandbox.store import RunConfig
from sandbox.tool_envs import open_tool_envs


class BackwardsExecutor:
    """Runs the episodes one by one, last first, and reports them in that order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    async def run(self, batch: EpisodeBatch, done: OnResult) -> None:
        async with open_tool_envs(batch.config, batch.suite) as tools:
            for task, trial in reversed(batch.todo):
                traj: Trajectory = await run_episode(batch.plan, tools, task, trial)
                self.seen.append((task.id, trial))
                done(task, trial, traj)


def test_a_registered_executor_runs_the_run_and_order_does_not_matter(tmp_path: Path) -> None:
    backwards = BackwardsExecutor()
    config = RunConfig(
        suite=str(suite_path(tmp_path)),
        agent="dfsdt",
        model="noisy-reference:0.4",
        trials=2,
        out=str(tmp_path / "runs"),
    )
    with EXECUTORS.registered("backwards", ExecutorKind("backwards", lambda c, o: backwards)):
        other = run_suite(config.with_values({"executor.name": "backwards"}), show_progress=False)
    local = run_suite(config, show_progress=False)
    order = [(t.id, k) for k in range(2) for t in load_suite(config.suite).tasks]
    assert backwards.seen == order[::-1]  # finished in the reverse of the run's order
    assert local.episodes == other.episodes == len(order)
    assert comparable_scores(other.path) == comparable_scores(local.path)
    assert "backwards" not in EXECUTORS  # the registry is left as it was


def test_unknown_executor_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    assert main(["run", "--executor", "nope", "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown executor 'nope'; known: local, ray" in err
    code = main(["run", "--ray-address", "1.2.3.4:6379", "--out", str(tmp_path / "runs")])
    assert code == 2 and "needs --executor ray" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_ray_without_its_extra_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['ray'] = None\n"  # as if the extra were not installed
        "from sandbox.cli import main\n"
        f"sys.exit(main(['run', '--executor', 'ray', '--out', {str(tmp_path / 'runs')!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert "pip install 'agent-sandbox[ray]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists()
