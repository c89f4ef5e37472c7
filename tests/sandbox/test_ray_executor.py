"""``--executor ray`` on a local 2-CPU Ray: the same run as local, and no loss when a worker dies.

What it protects: the default suite run on Ray actors gives the same per-episode trajectories and
the same scores as the local executor (``scores.json`` byte for byte once the wall-clock
measurements and the run id are left out: those differ between any two runs); a worker process
killed mid-run is restarted by Ray, its episodes run again, and the driver writes every episode
exactly once. Skipped, saying why, without the ``ray`` extra (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip(
    "ray", reason="the ray extra is not installed (pip install -e '.[ray]'; .ci/run installs it)"
)

from harness_suite import comparable_scores  # noqa: E402

from sandbox.replay import compare_trajectories  # noqa: E402
from sandbox.run import run_suite  # noqa: E402
from sandbox.run.ray_executor import NAMESPACE, worker_name  # noqa: E402
from sandbox.store import RunConfig, read_trajectories  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUITE = ROOT / "scenarios" / "default"
BASE = dict(suite=str(DEFAULT_SUITE), agent="dfsdt", model="noisy-reference", seed=0)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A private local Ray with 2 CPUs for this module; its address for other drivers."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=100 * 1024 * 1024,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def test_ray_gives_the_local_run_episode_for_episode(cluster, tmp_path: Path) -> None:
    out = str(tmp_path / "runs")
    local = run_suite(RunConfig(**BASE, out=out, run_id="local"), show_progress=False)
    remote = run_suite(
        RunConfig(**BASE, out=out, run_id="ray", executor="ray"), show_progress=False
    )
    assert remote.status == "completed" and remote.episodes == local.episodes == 58
    assert comparable_scores(remote.path) == comparable_scores(local.path)
    here = {(t.scenario_id, t.trial): t for t in read_trajectories(local.path)}
    there = {(t.scenario_id, t.trial): t for t in read_trajectories(remote.path)}
    assert set(here) == set(there)
    diverged = [k for k in here if compare_trajectories(here[k], there[k]).first_diff is not None]
    assert diverged == []


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def _run_and_lose_a_worker(
    cluster: str, out: Path, run_id: str, lose: Callable[[Any], None], trials: int = 6
) -> tuple[dict[str, Any], list[str]]:
    """A ``--trials`` run of the default suite on Ray in a subprocess; once 40 episodes are
    written, ``lose`` is applied to its first worker. Its ``--json`` summary and its lines."""
    cmd = [sys.executable, "-m", "sandbox", "run", "--executor", "ray", "--ray-address", cluster]
    cmd += ["--agent", "dfsdt", "--model", "noisy-reference", "--trials", str(trials)]
    cmd += ["--out", str(out), "--run-id", run_id, "--json", "--no-plots"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    file = out / run_id / "trajectories.jsonl"
    total = 58 * trials
    try:
        deadline = time.monotonic() + 240
        while len(_lines(file)) < 40:
            assert proc.poll() is None, "the run ended before a worker could be lost"
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.05)
        lose(ray.get_actor(worker_name(run_id, 0), namespace=NAMESPACE))
        lost_at = len(_lines(file))
        stdout, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert lost_at < total, "the worker was lost after the run had finished"
    lines = _lines(file)
    keys = [(json.loads(line)["scenario_id"], json.loads(line)["trial"]) for line in lines]
    assert len(keys) == total and len(set(keys)) == total  # nothing lost, nothing twice
    return json.loads(stdout.decode().splitlines()[-1]), lines


def _kill_its_process(worker: Any) -> None:
    os.kill(ray.get(worker.pid.remote(), timeout=60), signal.SIGKILL)


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(cluster, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    summary, lines = _run_and_lose_a_worker(cluster, out, "killed", _kill_its_process)
    errors = [line[:400] for line in lines if '"status": "error"' in line]
    # the killed worker's episodes ran again (the first few error records say why when not)
    assert "error" not in summary["by_status"], errors[:3]
    local = run_suite(
        RunConfig(**BASE, out=str(out), run_id="local", trials=6), show_progress=False
    )
    assert comparable_scores(out / "killed") == comparable_scores(local.path)


def test_the_episodes_of_a_worker_lost_for_good_run_on_the_others(cluster, tmp_path: Path) -> None:
    def remove_for_good(worker: Any) -> None:
        ray.kill(worker, no_restart=True)  # Ray will not bring this one back

    summary, _ = _run_and_lose_a_worker(cluster, tmp_path / "runs", "lost", remove_for_good)
    assert summary["by_status"].get("error", 0) == 0
