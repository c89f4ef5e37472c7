"""``examples/plugin`` is used through the real command line, installed like any package.

What it protects: a package outside the project, installed with ``pip install --target DIR``
and found through ``PYTHONPATH=DIR`` (never installed in the test's own environment, and no
project file changed), gives ``sandbox run`` its strategy by entry-point name (``first-hit``) and
by path (``sandbox_example_plugin:FirstHit``), its miss policy with an option (``--miss-policy
constant --miss-option body=...``), and ``sandbox eval`` its protocol (``--protocol strict``);
on Ray, the workers load the same plugins and the run is the local run. The suite is the mini
fixture without recordings, so every call is a miss the ``constant`` policy answers, and with one
task's checks removed, so that the default protocol leaves it unsure (``strict`` counts it 0).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sandbox.cli import main
from sandbox.store import read_trajectories

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
BODY = '{"ok": 1}'
UNSURE_TASK = "mini_g1_track"


def project_files() -> str:
    """What ``git status`` says of the checkout (its changed and untracked files)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    return done.stdout if done.returncode == 0 else "not a git checkout"


@pytest.fixture(scope="module")
def before() -> str:
    return project_files()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, before: str) -> Path:
    """The plugin installed with pip into a folder of its own (a copy is built: a build writes
    into the source folder)."""
    source = tmp_path_factory.mktemp("plugin-source") / "plugin"
    shutil.copytree(ROOT / "examples" / "plugin", source)
    target = tmp_path_factory.mktemp("plugin-site")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(target), str(source)],
        check=True,
        capture_output=True,
    )
    return target


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = tmp_path_factory.mktemp("plugin-suite") / "suite"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache", "*.jsonl"))
    tasks_file = suite / "tasks" / "tasks.yaml"
    tasks = yaml.safe_load(tasks_file.read_text(encoding="utf-8"))
    for task in tasks:
        if task["id"] == UNSURE_TASK:
            del task["checks"]
    tasks_file.write_text(yaml.safe_dump(tasks, sort_keys=False), encoding="utf-8")
    return suite


def sandbox(site: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-m", "sandbox", *argv],
        env=env,
        cwd=site.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run(site: Path, suite: Path, run_id: str, *flags: str) -> Path:
    out = suite.parent / "runs"
    done = sandbox(
        site,
        "run",
        *("--suite", str(suite), "--model", "reference", "--miss-policy", "constant"),
        *("--miss-option", f"body={BODY}", "--out", str(out), "--run-id", run_id),
        *("--no-plots", "--json", *flags),
    )
    assert done.returncode == 0, done.stderr
    return out / run_id


@pytest.fixture(scope="module")
def local_run(site: Path, suite: Path) -> Path:
    return run(site, suite, "local", "--agent", "first-hit")


def test_the_plugin_is_found_only_through_pythonpath(site: Path) -> None:
    assert importlib.util.find_spec("sandbox_example_plugin") is None
    assert (site / "sandbox_example_plugin" / "__init__.py").is_file()


def test_first_hit_answers_with_the_constant_body_of_every_miss(local_run: Path) -> None:
    trajectories = read_trajectories(local_run)
    assert len(trajectories) == 4
    hits = 0
    for traj in trajectories:
        assert traj.agent.name == "first-hit" and traj.status.value == "answered"
        calls = [c for n in traj.nodes for c in n.calls]
        assert traj.end_reason == "answered"
        if not calls:  # the unsolvable task's reference answers without a call
            continue
        observation = calls[0].observation
        assert observation is not None and observation.provenance == "constant"
        assert json.loads(observation.content)["response"] == {"ok": 1}
        assert traj.final_answer == observation.content
        assert len(traj.nodes) == 1  # the episode ended on its first successful call
        hits += 1
    assert hits == 3
    tools = json.loads((local_run / "manifest.json").read_text())["config"]["tools"]
    assert tools["miss_policy"] == "constant" and tools["miss_options"] == {"body": {"ok": 1}}


def test_strict_counts_the_unsure_episode_zero_beside_the_answer_length_metric(
    site: Path, local_run: Path
) -> None:
    scores = {"default": json.loads((local_run / "scores.json").read_text())["pass_rate"]}
    flags = ("--protocol", "strict", "--step-metric", "answer-length", "--json", "--no-plots")
    done = sandbox(site, "eval", str(local_run), *flags)
    assert done.returncode == 0, done.stderr
    written = json.loads((local_run / "scores.json").read_text())
    scores["strict"] = written["pass_rate"]
    answers = [t.final_answer for t in read_trajectories(local_run) if t.final_answer]
    added = written["step_scores"]["metrics"]["answer-length"]["dimensions"]["answer_length"]
    expected = sum(min(1.0, len(a) / 500) for a in answers) / len(answers)
    assert added["mean"] == pytest.approx(expected)
    assert "unsure 0," in (local_run / "report.md").read_text()
    assert scores["default"]["protocol"] == "default"
    assert scores["strict"]["protocol"] == "strict"
    assert scores["default"]["unsure"] == scores["strict"]["unsure"] == 1
    n = scores["default"]["n"]
    drop = scores["default"]["pass_rate"]["value"] - scores["strict"]["pass_rate"]["value"]
    assert drop == pytest.approx(0.5 / n)


def test_unknown_names_list_the_installed_plugins(
    site: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(site))  # listing the plugins imports none of them
    assert main(["run", "--agent", "second-best", "--out", str(site.parent / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "first-hit" in installed_plugins(err)
    assert not (site.parent / "none").exists()
    assert "sandbox_example_plugin" not in sys.modules


def installed_plugins(message: str) -> list[str]:
    """The plugin names an unknown-name message lists (a user may have installed others)."""
    found = re.search(r"; installed plugins: ([^;]*)", message)
    return found[1].strip().split(", ") if found else []


def test_the_example_is_found_among_plugins_the_user_installed(
    site: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A strategy plugin installed as docs/architecture.md says (an entry point of the group)
    is listed beside the example's, before it: the example's test does not need to be alone."""
    other = tmp_path / "other-site"
    info = other / "alpha_strategy-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: alpha-strategy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[agent_sandbox.strategies]\nalpha = alpha_mod:Alpha\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(other))
    assert main(["run", "--agent", "second-best", "--out", str(tmp_path / "none")]) == 2
    listed = installed_plugins(capsys.readouterr().err)
    assert listed[:1] == ["alpha"] and "first-hit" in listed


def test_on_ray_the_workers_load_the_plugins_by_path_and_by_name(
    site: Path, suite: Path, local_run: Path
) -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed")
    on_ray = run(
        site, suite, "ray", "--agent", "sandbox_example_plugin:FirstHit", "--executor", "ray"
    )

    def episodes(path: Path) -> list[tuple[str, str, str | None, str]]:
        return sorted(
            (t.scenario_id, t.status.value, t.final_answer, t.agent.name)
            for t in read_trajectories(path)
        )

    assert episodes(on_ray) == episodes(local_run)


def test_no_project_file_changed(before: str, local_run: Path) -> None:
    """Last: installing and using the plugin changed nothing in the checkout."""
    assert project_files() == before
