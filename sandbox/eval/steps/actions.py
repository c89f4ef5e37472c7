"""The executed action sequence of an episode, in the shape the step-level metrics compare.

An *action* is one tool call (never ``Finish``) reduced to what a reference step holds: the
``(tool, api)`` it resolved to, its canonical arguments, the thought of the turn that made it, and
whether its observation was an error. Names are resolved from the call's own ``tool``/``api``
fields first, then from the function name (``<api>_for_<tool>``) with ToolBench's rules.

Which nodes: the chosen path (``traj.chosen()``); when a trajectory has no chosen path (an episode
cut short before one was set) the path to its last node stands in, so a ReAct chain is always its
own path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from agents.toolenv import FINISH
from agents.trajectory import Node, StepCall, Trajectory
from mock_tools.canonical import canonical_args
from mock_tools.models import ApiSpec, RefStep
from mock_tools.names import NameResolver
from sandbox.eval.steps.matching import Edge, MatchMemo, max_weight_pairs
from sandbox.eval.steps.similarity import kv_similarity

ApiKey = tuple[str, str]
Apis = Mapping[ApiKey, ApiSpec]

__all__ = [
    "Action",
    "ApiKey",
    "Apis",
    "actions_of",
    "episode_path",
    "match_actions",
    "reference_actions",
    "resolve_call",
]


class Action(BaseModel):
    """One tool call (or reference step) as the metrics see it."""

    tool: str | None = Field(default=None, description="Resolved tool; None for unknown names.")
    api: str | None = None
    name: str = Field(description="The function name as called (or built for a reference step).")
    args: dict[str, Any] = Field(default_factory=dict, description="Canonical arguments.")
    thought: str = ""
    failed: bool = False
    node: int | None = Field(default=None, description="The trajectory node that made the call.")

    @property
    def key(self) -> ApiKey | None:
        return (self.tool, self.api) if self.tool is not None and self.api is not None else None


def episode_path(traj: Trajectory) -> list[Node]:
    """The nodes step scores use: the chosen path, else the path to the last node."""
    if traj.chosen_path:
        return traj.chosen()
    if traj.nodes:
        return traj.path_to(traj.nodes[-1].id)
    return []


def resolve_call(call: StepCall, resolver: NameResolver) -> ApiKey | None:
    """``(tool, api)`` of a call: its own fields, else the function it reached (a shortened
    name under ToolBench's suffix dispatch), else its own name; None if unknown."""
    if call.tool is not None and call.api is not None:
        return resolver.resolve(call.tool, call.api) or (call.tool, call.api)
    if call.function is not None:
        return resolver.resolve_function(call.function)
    return resolver.resolve_function(call.name)


def _canonical(args: Mapping[str, Any] | None, spec: ApiSpec | None) -> dict[str, Any]:
    return canonical_args(dict(args or {}), spec.parameters if spec is not None else None)


def actions_of(nodes: list[Node], apis: Apis, resolver: NameResolver) -> list[Action]:
    """Every non-Finish tool call of the given nodes, in order."""
    out: list[Action] = []
    for node in nodes:
        for call in node.calls:
            if call.name == FINISH:
                continue
            key = resolve_call(call, resolver)
            spec = apis.get(key) if key is not None else None
            obs = call.observation
            out.append(
                Action(
                    tool=key[0] if key else None,
                    api=key[1] if key else None,
                    name=call.name,
                    args=_canonical(call.args, spec),
                    thought=node.content or "",
                    failed=obs is not None and not obs.ok,
                    node=node.id,
                )
            )
    return out


def reference_actions(steps: list[RefStep], apis: Apis) -> list[Action]:
    """The reference steps as actions with canonical arguments."""
    return [
        Action(
            tool=s.tool,
            api=s.api,
            name=s.offered_name,
            args=_canonical(s.args, apis.get((s.tool, s.api))),
            thought=s.thought,
        )
        for s in steps
    ]


def match_actions(
    pred: list[Action], gold: list[Action], *, memo: MatchMemo | None = None
) -> list[tuple[int, int]]:
    """Pair executed actions with reference steps of the same API, one to one.

    Maximum-weight bipartite matching (``networkx``) where only same-API pairs are edges. The
    number of pairs is maximised first; among maximal matchings the one with the most similar
    arguments wins, then the one closest to the same positions (least squared offset: never a
    crossing one when an order-keeping one is as good). So a retry with corrected arguments is
    matched rather than the failed first attempt. Pairs come sorted by ``pred``. ``memo`` keeps
    searched matchings for the next episodes (``matching.MatchMemo``).
    """
    edges: list[Edge] = []
    scale = float(max(len(pred), len(gold))) ** 2
    for i, p in enumerate(pred):
        if p.key is None:
            continue
        for j, g in enumerate(gold):
            if p.key != g.key:
                continue
            sim = kv_similarity(p.args, g.args, keys="union")
            edges.append((i, j, 2.0 + sim - 1e-3 * (i - j) ** 2 / scale))
    return max_weight_pairs(edges, maxcardinality=True, memo=memo)
