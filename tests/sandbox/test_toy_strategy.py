"""A strategy defined outside the project joins with one registry call, and then everything works
with it: the CLI flags, a run, an agent-level replay, and scoring.

The toy strategy here, "second-chance", runs one ReAct chain and, when that chain gives up, one
more (``retries`` times), each starting again from the prompt. It is built from the agents'
public pieces (``Episode``, ``run_chain``) and touches no project file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import Field

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.options import AgentOptions
from agents.react import run_chain
from agents.step import Episode
from agents.strategies import STRATEGIES, strategy_entry
from agents.toolenv import ToolEnv
from agents.trajectory import Status, Trajectory
from sandbox.cli import main
from sandbox.eval.evaluate import evaluate_run
from sandbox.replay import replay_run
from sandbox.run import run_suite
from sandbox.store import RunConfig, RunStore, read_trajectories

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"


class SecondChanceOptions(AgentOptions):
    retries: int = Field(default=1, ge=0, description="Chains started again after a give-up.")


class SecondChance(BaseAgent[SecondChanceOptions]):
    name = "second-chance"
    Options = SecondChanceOptions

    async def run(
        self, *, model: Model, env: ToolEnv, query: str, budget: Budget, episode: EpisodeMeta
    ) -> Trajectory:
        ep = Episode.begin(
            self.name, self.options, model=model, env=env, query=query, budget=budget, meta=episode
        )
        for _ in range(self.options.retries + 1):
            end = await run_chain(ep, max_depth=budget.max_depth)
            path = [n.id for n in ep.path(end.last.id)] if end.last else []
            if end.outcome == "answered" and end.last and end.last.finish:
                answer = end.last.finish.final_answer
                return ep.end(Status.answered, "answered", chosen_path=path, final_answer=answer)
            if end.outcome != "gave_up":
                break
        return ep.end(Status.gave_up, "gave_up", chosen_path=path)


@pytest.fixture
def toy():
    with STRATEGIES.registered("second-chance", strategy_entry(SecondChance)):
        yield


def test_a_registered_strategy_runs_replays_and_scores(toy, tmp_path: Path) -> None:
    config = RunConfig(
        suite=str(MINI),
        agent="second-chance",
        agent_options={"retries": 2},
        model="noisy-reference:0.5",
        seed=4,
        out=str(tmp_path),
    )
    result = run_suite(config, show_progress=False)
    trajectories = read_trajectories(result.path)
    assert trajectories and all(t.agent.name == "second-chance" for t in trajectories)
    assert all(t.agent.params["retries"] == 2 for t in trajectories)
    assert RunStore.open(result.path).manifest.agent["params"]["retries"] == 2
    # more than one root-level chain somewhere: the strategy's own loop ran
    assert any(sum(n.parent is None for n in t.nodes) > 1 for t in trajectories)

    report = replay_run(result.path)
    assert report.ok and report.episodes == len(trajectories)

    scores = evaluate_run(result.path)
    assert scores.agent == "second-chance" and scores.episodes == len(trajectories)
    assert scores.pass_rate.pass_rate.value == pytest.approx(result.pass_rate)


def test_its_options_are_command_line_flags(toy, tmp_path: Path, capsys) -> None:
    argv = ["run", "--suite", str(MINI), "--agent", "second-chance", "--retries", "0"]
    argv += ["--model", "reference", "--out", str(tmp_path), "--json", "--no-plots"]
    assert main(argv) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    assert RunStore.open(run).manifest.config.agent.options == {"retries": 0}
    # an option of another strategy is refused, naming who takes it
    assert main([*argv, "--width", "3"]) == 2
    assert "'width' (taken by: dfsdt)" in capsys.readouterr().err
