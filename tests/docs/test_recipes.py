"""docs/architecture.md's recipes, followed literally, work from a package outside the project.

What it protects: every recipe's code block is a complete module that type-checks with the
project's mypy settings as it is written; together with the entry-point lines of the recipes'
``toml`` blocks (written as an installed package's ``entry_points.txt``, on ``PYTHONPATH``)
the strategy, the model kind, the miss policy and its option, the tool transport and its
option, the executor, the evaluation protocol and the step metric work through the ``sandbox``
command line, by their entry-point names and by ``package.module:NAME`` paths, with no project
file changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.store import RunStore, read_trajectories

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
RECIPES = (
    "A strategy",
    "A model kind",
    "A miss policy with an option",
    "A tool transport",
    "An executor",
    "An evaluation protocol",
    "A step metric",
)
_BLOCK = re.compile(r"```(python|toml)\n(.*?)```", re.S)
_GROUP = re.compile(r'^\[project\.entry-points\."([\w.]+)"\]$')
_POINT = re.compile(r'^([\w.-]+) = "([\w.]+:[\w.]+)"$')


def recipes() -> dict[str, str]:
    """Each recipe's section of docs/architecture.md, by its title."""
    text = DOC.read_text(encoding="utf-8")
    part = text[text.index("\n## Recipes\n") : text.index("\n## Conventions")]
    sections = re.split(r"\n### ", part)[1:]
    return {s.split("\n", 1)[0]: s for s in sections}


def blocks(section: str, language: str) -> list[str]:
    return [code for lang, code in _BLOCK.findall(section) if lang == language]


def entry_points(sections: dict[str, str]) -> dict[str, dict[str, str]]:
    """The entry points the recipes' ``toml`` blocks declare: group -> name -> object."""
    points: dict[str, dict[str, str]] = {}
    for section in sections.values():
        for block in blocks(section, "toml"):
            group = None
            for line in block.strip().splitlines():
                if _GROUP.match(line):
                    group = _GROUP.match(line)[1]  # type: ignore[index]
                else:
                    found = _POINT.match(line)
                    assert group is not None and found is not None, f"unread line: {line}"
                    points.setdefault(group, {})[found[1]] = found[2]
    return points


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recipes as the package ``my_plugins``, installed by hand: modules and a dist-info."""
    site = tmp_path_factory.mktemp("recipes-site")
    package = site / "my_plugins"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    sections = recipes()
    for title in RECIPES:
        for code in blocks(sections[title], "python"):
            name = re.match(r"# my_plugins/(\w+\.py)\n", code)
            assert name is not None, f"a recipe block names its file first: {code[:60]!r}"
            (package / name[1]).write_text(code, encoding="utf-8")
    info = site / "my_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: my-plugins\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = []
    for group, points in entry_points({t: sections[t] for t in RECIPES}).items():
        lines += [f"[{group}]", *(f"{n} = {v}" for n, v in points.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return site


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mini suite without recordings: every call is a miss."""
    suite = tmp_path_factory.mktemp("recipes-suite") / "suite"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache", "*.jsonl"))
    return suite


def sandbox(site: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sandbox", *argv],
        env={**os.environ, "PYTHONPATH": str(site)},
        cwd=site,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run(site: Path, suite: Path, run_id: str, *flags: str) -> Path:
    out = suite.parent / "runs"
    argv = ["run", "--suite", str(suite), "--out", str(out), "--run-id", run_id, "--no-plots"]
    done = sandbox(site, *argv, *flags)
    assert done.returncode == 0, done.stderr
    return out / run_id


def test_every_recipe_is_a_module_and_its_entry_point() -> None:
    sections = recipes()
    assert list(sections)[: len(RECIPES)] == list(RECIPES)  # then: a run setting, in the project
    for title in RECIPES:
        section = sections[title]
        assert len(blocks(section, "python")) >= 1, title
        assert len(blocks(section, "toml")) == 1, title
        assert "Files touched: `my_plugins/" in section.replace("\n", " "), title
    groups = entry_points({t: sections[t] for t in RECIPES})
    assert sorted(groups) == sorted(
        f"agent_sandbox.{g}"
        for g in (
            "strategies",
            "model_kinds",
            "miss_policies",
            "tool_transports",
            "executors",
            "protocols",
            "step_metrics",
        )
    )


def test_the_recipes_type_check_as_written(site: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
        + [str(site / "my_plugins")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout


def test_the_recipes_run_by_their_entry_point_names(site: Path, suite: Path) -> None:
    path = run(
        site,
        suite,
        "named",
        *("--agent", "second-chance", "-O", "retries=2", "--model", "parrot"),
        *("--miss-policy", "echo", "--miss-option", "tag=recipe", "--executor", "serial"),
    )
    manifest = RunStore.open(path).manifest
    assert manifest.model["kind"] == "parrot" and manifest.config.executor.name == "serial"
    trajectories = read_trajectories(path)
    assert len(trajectories) == 4
    for traj in trajectories:
        assert traj.agent.name == "second-chance" and traj.agent.params["retries"] == 2
        (call,) = [c for n in traj.nodes for c in n.calls]
        assert call.observation is not None and call.observation.provenance == "echo"
        assert json.loads(call.observation.content)["response"]["tag"] == "recipe"
        assert traj.final_answer == call.observation.content  # the parrot repeats it

    before = json.loads((path / "scores.json").read_text())
    done = sandbox(site, "eval", str(path), "--protocol", "checks-only", "--no-plots")
    assert done.returncode == 0, done.stderr
    after = json.loads((path / "scores.json").read_text())
    assert after["pass_rate"]["protocol"] == "checks-only"
    assert after["labels"] == before["labels"]  # the default protocol's, without a judge
    check_answer_length(site, path, "answer-length")


def check_answer_length(site: Path, path: Path, metric: str) -> None:
    """``sandbox eval --step-metric`` scores the recipe's metric with its option."""
    flags = ("--step-metric", metric, "--step-option", "answer-length.max_chars=10")
    done = sandbox(site, "eval", str(path), "--no-plots", *flags)
    assert done.returncode == 0, done.stderr
    added = json.loads((path / "scores.json").read_text())["step_scores"]["metrics"]
    answers = [t.final_answer for t in read_trajectories(path) if t.final_answer is not None]
    expected = sum(min(1.0, len(a) / 10) for a in answers) / len(answers)
    assert added["answer-length"]["options"] == {"max_chars": 10}
    assert added["answer-length"]["dimensions"]["answer_length"]["mean"] == pytest.approx(expected)


def test_the_recipes_run_by_their_paths(site: Path, suite: Path) -> None:
    reply = "every call answered alike"
    path = run(
        site,
        suite,
        "by-path",
        *(
            "--agent",
            "my_plugins.first_hit:FirstHit",
            "--model",
            "my_plugins.parrot:PARROT",
        ),
        *("--transport", "my_plugins.static_tools:STATIC", "--transport-option", f"reply={reply}"),
    )
    assert RunStore.open(path).manifest.tools == {"transport": "static", "reply": reply}
    for traj in read_trajectories(path):
        assert traj.agent.name == "first-hit" and traj.end_reason == "answered"
        (call,) = [c for n in traj.nodes for c in n.calls]
        assert call.observation is not None and call.observation.provenance == "static"
        assert traj.final_answer == reply
        assert len(traj.nodes) == 1  # answered on the first hit: the parrot never said Finish
    check_answer_length(site, path, "my_plugins.answer_length:ANSWER_LENGTH")


def test_the_chain_reading_the_strategy_recipe_describes_works() -> None:
    """The recipe's "Reading the chain so far" names what a hook reads: each name it gives is
    an attribute of the records, and its failed-call count counts the chain's failed calls."""
    from agents.toolenv import Observation
    from agents.trajectory import FinishCall, Node, StepCall

    section = recipes()["A strategy"]
    said = section[section.index("**Reading the chain so far.**") :]
    for name in ("kind", "content", "calls", "finish"):
        assert f"`{name}`" in said and name in Node.model_fields
    for name in ("name", "function", "args", "observation"):
        assert f"`{name}`" in said and name in StepCall.model_fields
    for name in ("ok", "content", "error"):
        assert name in Observation.model_fields
    assert {"return_type", "final_answer"} <= set(FinishCall.model_fields)
    failed = Observation(ok=False, content="{}")
    nodes = [
        Node(id=0, kind="action", calls=[StepCall(id="a", name="f", arguments="{}")]),
        Node(
            id=1,
            parent=0,
            kind="action",
            calls=[
                StepCall(id="b", name="f", arguments="{}", observation=failed),
            ],
        ),
    ]
    count = sum(
        1 for n in nodes for c in n.calls if c.observation is not None and not c.observation.ok
    )
    assert count == 1
    assert "episode.path(node.id)" in said and "`episode.trajectory.nodes`" in said
