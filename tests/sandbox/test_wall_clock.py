"""``--max-seconds`` ends an episode whatever its strategy awaits (issue 40 item 8).

A plugin strategy that never makes a model or tool call meets none of the budget's cuts; the
run gives its ``run`` the budget's seconds plus a grace, then cancels it: the episode ends
``budget_exhausted`` (``budget:max_seconds``) with an agent error that says so, and the run
goes on. A strategy that returns in time is untouched, and one without ``--max-seconds`` is
never cut.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.options import AgentOptions
from agents.step import Episode
from agents.strategies import STRATEGIES, strategy_entry
from agents.toolenv import ToolEnv
from agents.trajectory import Status, Trajectory
from sandbox.run import run_suite
from sandbox.run.wall_clock import OVERRUN_GRACE, Overran, overrun_grace, within_wall_clock
from sandbox.store import RunConfig, read_trajectories

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"


class Awaiting(BaseAgent[AgentOptions]):
    """Awaits an hour (a queue, a server of its own...), never calling the model or tools."""

    name = "awaiting"
    Options = AgentOptions

    async def run(
        self, *, model: Model, env: ToolEnv, query: str, budget: Budget, episode: EpisodeMeta
    ) -> Trajectory:
        ep = Episode.begin(
            self.name, self.options, model=model, env=env, query=query, budget=budget, meta=episode
        )
        await asyncio.sleep(3600)
        return ep.end(Status.gave_up, "gave_up")


class Stubborn(Awaiting):
    """Swallows the first cancellation and awaits again."""

    name = "stubborn"

    async def run(self, **kw: object) -> Trajectory:  # type: ignore[override]
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(3600)
        raise AssertionError("unreachable")


@pytest.mark.parametrize("strategy", [Awaiting, Stubborn])
def test_a_strategy_that_only_awaits_is_stopped_at_max_seconds(
    tmp_path: Path, strategy: type[Awaiting]
) -> None:
    with STRATEGIES.registered(strategy.name, strategy_entry(strategy)):
        config = RunConfig(
            suite=str(MINI),
            agent=strategy.name,
            model="reference",
            tasks=["mini_g1_kettle_price", "mini_g1_track"],
            max_seconds=0.5,
            out=str(tmp_path),
        )
        started = time.monotonic()
        result = run_suite(config, show_progress=False)
        took = time.monotonic() - started
    trajs = read_trajectories(result.path)
    assert len(trajs) == 2  # both episodes stopped, the run went on
    for traj in trajs:
        assert (traj.status, traj.end_reason) == (Status.budget_exhausted, "budget:max_seconds")
        assert traj.errors[0].kind == "agent"
        assert "did not return within --max-seconds 0.5" in traj.errors[0].message
    assert took < 60  # not an hour (the bound is loose for a loaded machine)


async def test_the_wall_clock_cuts_only_past_the_budget_and_its_grace() -> None:
    async def answer(after: float) -> Trajectory:
        await asyncio.sleep(after)
        return Trajectory(
            scenario_id="t", agent={"name": "a"}, model={"name": "m"}, status="answered"
        )

    assert (await within_wall_clock(answer(0.05), Budget(max_seconds=0.1), 0.5)) is not None
    assert (await within_wall_clock(answer(0.3), Budget(max_seconds=0.1), 0.5)) is not None
    with pytest.raises(Overran, match="within --max-seconds 0.1 and 0.05 s of grace"):
        await within_wall_clock(answer(0.3), Budget(max_seconds=0.1), 0.05)
    assert (await within_wall_clock(answer(0.3), Budget(), 0.0)) is not None  # no clock: no cut


@pytest.mark.parametrize("raised", [SystemExit(0), KeyboardInterrupt()])
async def test_what_a_strategy_raises_to_leave_the_process_is_handed_back(
    raised: BaseException,
) -> None:
    """Run as a task, the strategy's SystemExit would reach the event loop and end the run."""

    async def leave() -> None:
        raise raised

    with pytest.raises(type(raised)):
        await within_wall_clock(leave(), Budget(max_seconds=5), 0.5)


def test_a_strategys_own_grace_is_taken_when_it_declares_one() -> None:
    class Slow:
        overrun_grace = 12.0

    assert overrun_grace(Slow()) == 12.0
    assert overrun_grace(object()) == OVERRUN_GRACE
    from sandbox.external.options import ExternalOptions
    from sandbox.external.strategy import ExternalAgent

    agent = ExternalAgent(ExternalOptions(command="true", grace=3.0))
    assert overrun_grace(agent) == 11.0  # two graces to stop its process, and its pipes
