"""An episode's state checks: the calls of its chosen path replayed on a fresh world and judged
against the task's checks (``mock_tools.worlds.verdict``).

Only the calls the world answered count (their observation carries a state hash: a fault, a
schema violation or an unknown name never reached the world), and only those of the chosen
path: a search's abandoned branches were undone (their states restored away), so they are not
what happened. Each replayed call must reach the hash its observation recorded; the first that
does not is the verdict's ``divergence`` (and the verdict fails). May import ``agents`` records
and ``mock_tools``.
"""

from __future__ import annotations

from agents.trajectory import Trajectory
from mock_tools.models import Task
from mock_tools.worlds.verdict import Action, WorldVerdict, judge, replay
from mock_tools.worlds.world import WorldEngine

__all__ = ["chosen_actions", "world_verdict"]


def chosen_actions(traj: Trajectory) -> list[Action]:
    """The calls of the chosen path that reached the world, as actions to replay."""
    out = []
    turn = 0
    for node_id in traj.chosen_path:
        node = traj.nodes[node_id]
        if node.kind == "user":
            turn += 1
        for call in node.calls:
            obs = call.observation
            if obs is None or obs.state is None:
                continue
            api = call.function or call.name
            label = f"node {node_id}, call {call.id} ({api})"
            out.append(Action(api, dict(call.args or {}), obs.state, label, turn))
    return out


def world_verdict(engine: WorldEngine, task: Task, traj: Trajectory) -> WorldVerdict:
    """The state checks of one episode."""
    return judge(engine, task, replay(engine, task, chosen_actions(traj), traj.seed), traj.seed)
