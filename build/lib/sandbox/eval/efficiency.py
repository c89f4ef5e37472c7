"""Efficiency and search-tree statistics of an episode: plain counts, not scores in [0, 1].

The project's own counts (no paper metric): what an episode cost, and the tree DFSDT built.

Costs are the whole episode's (every node of a DFSDT tree was paid for): model calls, tool calls,
tokens, cost and wall time come from the trajectory's ``usage``; when a trajectory carries no usage
totals (a hand-built or imported one), they are summed from its nodes instead.

``redundant_calls`` counts calls on the chosen path identical (same API and canonical arguments)
to an earlier call on that path, whatever that earlier call returned.

Tree statistics: ``nodes`` (all turns), ``backtracks`` and ``max_depth`` (tool steps) as the search
recorded them in ``traj.tree``, else derived from the nodes: a backtrack is a node whose parent is
not the node created just before it; depth is the deepest node's ``depth``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from agents.toolenv import FINISH
from agents.trajectory import Node, Trajectory
from mock_tools.canonical import dumps_canonical
from sandbox.eval.actions import Action

__all__ = ["Efficiency", "TreeStats", "efficiency", "redundant_calls", "tree_stats"]


class Efficiency(BaseModel):
    model_calls: int
    tool_calls: int
    redundant_calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost: float
    wall_seconds: float


class TreeStats(BaseModel):
    nodes: int
    chosen_length: int
    backtracks: int
    max_depth: int


def redundant_calls(actions: Sequence[Action]) -> int:
    seen: set[tuple[str, str]] = set()
    count = 0
    for a in actions:
        ident = (f"{a.key}" if a.key is not None else a.name, dumps_canonical(a.args))
        if ident in seen:
            count += 1
        seen.add(ident)
    return count


def efficiency(traj: Trajectory, path_actions: Sequence[Action]) -> Efficiency:
    u = traj.usage
    nodes = traj.nodes
    model_calls = u.model_calls or len(nodes)
    tool_calls = u.tool_calls or sum(1 for n in nodes for c in n.calls if c.name != FINISH)
    prompt = u.prompt_tokens or sum(n.usage.prompt_tokens for n in nodes)
    completion = u.completion_tokens or sum(n.usage.completion_tokens for n in nodes)
    cost = u.cost or sum(n.usage.cost for n in nodes)
    return Efficiency(
        model_calls=model_calls,
        tool_calls=tool_calls,
        redundant_calls=redundant_calls(path_actions),
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cost=cost,
        wall_seconds=u.wall_seconds,
    )


def _derived_backtracks(nodes: Sequence[Node]) -> int:
    ordered = sorted(nodes, key=lambda n: n.id)
    return sum(1 for prev, cur in zip(ordered, ordered[1:], strict=False) if cur.parent != prev.id)


def tree_stats(traj: Trajectory, path: Sequence[Node]) -> TreeStats:
    recorded = traj.tree or {}
    backtracks = recorded.get("backtracks")
    depth = recorded.get("max_depth")
    return TreeStats(
        nodes=len(traj.nodes),
        chosen_length=len(path),
        backtracks=int(backtracks)
        if isinstance(backtracks, int)
        else _derived_backtracks(traj.nodes),
        max_depth=int(depth)
        if isinstance(depth, int)
        else max((n.depth for n in traj.nodes), default=0),
    )
