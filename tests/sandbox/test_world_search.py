"""Search over a world's state: DFSDT's backtrack and ReAct@N's next chain start from the state
their parent ended in, so an abandoned branch's writes are undone."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Budget, DFSDTAgent, EpisodeMeta, ReActAtN
from agents.model import Message, Turn
from agents.trajectory import Status, Trajectory
from mock_tools import Suite, create_app, in_process_client, load_suite
from sandbox.eval.world_verdict import world_verdict
from sandbox.tool_envs.http import WorldToolEnv
from tests.agents.scripted import ScriptedModel, call, finish, give_up

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tinyworld"


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    return load_suite(shutil.copytree(TINY, tmp_path / "tinyworld"))


@pytest.fixture
async def client(suite: Suite) -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_client(create_app(suite)) as c:
        yield c


class NoRestore(WorldToolEnv):
    """A world env that forgets to go back: what the search would do without restores."""

    async def restore_state(self, state: str | None) -> None:
        if self.position is None:
            await self._open()


def wrong_then_right() -> Any:
    """A wrong transfer and a give-up on the first branch (or chain); the right one on the
    second."""
    starts = 0

    def reply(messages: list[Message]) -> Turn:
        nonlocal starts
        said = [m for m in messages if m["role"] in ("assistant", "tool")]
        if not said:
            starts += 1
            if starts > 1:
                return call("transfer", source="A-1", target="A-3", amount=200, memo="rent")
            return call("transfer", source="A-1", target="A-2", amount=999, memo="oops")
        last = said[-1]
        if "999" in json.dumps(said[0]):
            return give_up("I moved the wrong amount to the wrong account; starting again.")
        seen = json.loads(last["content"])
        if seen["error"]:
            return finish(f"The transfer failed: {seen['error']}")
        return finish(f"Moved 200 cents to A-3: transfer {seen['response']['transfer']}")

    return reply


async def search(
    client: httpx.AsyncClient, suite: Suite, env_class: type[WorldToolEnv], agent: Any
) -> Trajectory:
    task = suite.task("pay_bob")
    env = env_class(client, task, suite.apis, session="run/pay_bob/0", seed=0)
    traj = await agent.run(
        model=ScriptedModel(wrong_then_right()),
        env=env,
        query=task.query,
        budget=Budget(),
        episode=EpisodeMeta(scenario_id=task.id),
    )
    assert suite.world is not None
    traj.world = world_verdict(suite.world, task, traj).model_dump(mode="json")
    return traj


async def test_dfsdt_undoes_an_abandoned_branchs_writes(
    client: httpx.AsyncClient, suite: Suite
) -> None:
    traj = await search(client, suite, WorldToolEnv, DFSDTAgent())
    assert traj.status is Status.answered
    assert traj.final_answer == "Moved 200 cents to A-3: transfer T-1"
    wrong, _, right, _ = traj.nodes
    assert wrong.calls[0].observation and right.calls[0].observation
    # the second branch started from the initial state, not from the wrong transfer's
    assert wrong.calls[0].observation.state != right.calls[0].observation.state
    assert traj.chosen_path == [2, 3]
    assert traj.world is not None and traj.world["divergence"] is None
    assert all(c["passed"] for c in traj.world["checks"]), traj.world["checks"]


async def test_without_the_restore_the_same_search_ends_in_the_wrong_state(
    client: httpx.AsyncClient, suite: Suite
) -> None:
    traj = await search(client, suite, NoRestore, DFSDTAgent())
    # the wrong branch's 999 cents are still gone, so the right transfer is refused
    assert traj.final_answer == "The transfer failed: account A-1 holds 1, less than 200"
    assert traj.world is not None
    failed = [c["kind"] for c in traj.world["checks"] if not c["passed"]]
    assert failed == ["gold", "assert", "assert"]


async def test_react_at_n_starts_each_chain_from_the_initial_state(
    client: httpx.AsyncClient, suite: Suite
) -> None:
    traj = await search(client, suite, WorldToolEnv, ReActAtN(n=2))
    assert traj.final_answer == "Moved 200 cents to A-3: transfer T-1"
    assert traj.world is not None and traj.world["divergence"] is None
    assert all(c["passed"] for c in traj.world["checks"])
