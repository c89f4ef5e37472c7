"""DFSDT: depth-first search-based decision tree (ToolLLM, Appendix A.1, Algorithm 2).

Mirrors ToolBench's ``DFS_tree_search`` with ``with_filter=False`` (docs/agents.md has the
details and the depth mapping):

- Pre-order depth-first search. Each node gets up to ``width`` children, generated one at a time;
  a child is searched completely before its next sibling is generated.
- The first ``Finish(give_answer)`` ends the search.
- ``Finish(give_up_and_restart)`` abandons the node and backtracks ``give_up_backtrack`` levels
  (ToolBench: 2). The search returns a count of levels to climb: the give-up node returns 2, its
  parent stops generating children and returns 1 to the grandparent, which generates its next
  child. A give-up at depth 1 therefore ends the search, as in ToolBench.
- A node at the depth limit that did not answer backtracks one level: its parent generates its
  next child.
- A second or later child is generated with a diversity prompt listing the earlier children's
  actions and observations; the prompt is sent for that request only, recorded on the child
  (``Node.diversity_prompt``) and absent from the history of its descendants.
- Invalid turns (format errors, no usable call) are ordinary nodes: their feedback is part of
  the history and they are expanded like any other node (each takes one depth level).
- No answer: the deterministic rule of ``agents.outcome`` picks the chosen path; the status is
  ``gave_up`` when the search ran out of tree, ``budget_exhausted`` when a budget stopped it.
Imports the shared step (``agents.step``) and the agents' records; never ``sandbox`` or
``mock_tools``.
"""

from __future__ import annotations

from typing import Any, Literal

import networkx as nx
from pydantic import Field

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.options import AgentOptions
from agents.outcome import fallback_path
from agents.prompts import diversity_prompt
from agents.react import give_up_text
from agents.step import Episode, Stop
from agents.toolenv import FINISH, ToolEnv
from agents.trajectory import Node, Status, Trajectory

DEFAULT_WIDTH = 2
"""Children per node (ToolBench's ``tree_beam_size``)."""

DEFAULT_MAX_DEPTH = 6
"""Steps on one path when the budget sets no ``max_depth``. ToolBench's default depth of 12
nodes is 4 steps when every turn has a thought (Thought, Action, Action Input) and 6 when turns
are bare function calls (Action, Action Input), as with native tool calling; see docs/agents.md."""

DepthUnit = Literal["turns", "toolbench_nodes"]
"""How the depth limit counts: assistant turns (default), or ToolBench's tree nodes, where a
turn adds one node for its text (Thought) and two per call (Action, Action Input). The second
reproduces ToolBench's ``single_chain_max_step`` exactly, e.g. for replaying its trees."""

GIVE_UP_BACKTRACK = 2
"""Levels a give-up climbs (ToolBench's ``prune_back_length``)."""

ROOT = -1
"""The virtual root in the search graph (the prompt); it is not a trajectory node."""


def child_actions(node: Node) -> list[dict[str, Any]]:
    """What one earlier child did, for the diversity prompt (empty for an invalid/error child)."""
    if node.kind in ("invalid", "error"):
        return []
    actions: list[dict[str, Any]] = [
        {
            "name": c.name,
            "arguments": c.arguments,
            "function_output": c.observation.content if c.observation else "",
        }
        for c in node.calls
    ]
    if node.finish is not None:
        arguments: dict[str, str] = {"return_type": node.finish.return_type}
        if node.finish.final_answer:
            arguments["final_answer"] = node.finish.final_answer
        actions.append({"name": FINISH, "arguments": arguments, "function_output": ""})
    return actions


class _Search:
    """The state of one DFSDT search over an ``Episode``."""

    def __init__(
        self,
        episode: Episode,
        *,
        width: int,
        max_depth: int,
        give_up_backtrack: int,
        depth_unit: DepthUnit = "turns",
    ):
        self.ep = episode
        self.depth_unit = depth_unit
        self.levels: dict[int, int] = {}
        self.width = width
        self.max_depth = max_depth
        self.give_up_backtrack = give_up_backtrack
        self.graph: nx.DiGraph = nx.DiGraph()
        self.graph.add_node(ROOT)
        self.answer: Node | None = None
        self.stop: Stop | None = None
        self.give_ups = 0
        self.depth_limited = 0

    def _depth(self, parent: int | None, child: Node) -> int:
        """The child's depth in the configured unit (recorded for its descendants)."""
        if self.depth_unit == "turns":
            return child.depth
        level = (self.levels.get(parent, 0) if parent is not None else 0) + toolbench_levels(child)
        self.levels[child.id] = level
        return level

    @property
    def halted(self) -> bool:
        return self.answer is not None or self.stop is not None

    def _diversity_prompt(self, parent: int | None) -> str | None:
        siblings = [self.ep.trajectory.node(i) for i in self.graph.successors(_key(parent))]
        earlier = [a for child in siblings for a in child_actions(child)]
        if not earlier:
            return None
        last_observation = None
        if parent is not None:
            observed = [c.observation for c in self.ep.trajectory.node(parent).calls]
            last_observation = next((o.content for o in reversed(observed) if o), None)
        return diversity_prompt(earlier, last_observation)

    async def expand(self, parent: int | None) -> int:
        """Generate and search up to ``width`` children of ``parent``; return levels to climb."""
        for _ in range(self.width):
            prompt = self._diversity_prompt(parent)
            result = await self.ep.step(parent, diversity_prompt=prompt)
            if result.node is not None:
                self.graph.add_edge(_key(parent), result.node.id)
            if result.stop is not None:
                self.stop = result.stop
                return 0
            child = result.node
            assert child is not None
            if child.kind == "finish":
                self.answer = child
                return 0
            if child.kind == "give_up":
                self.give_ups += 1
                climb = self.give_up_backtrack
            elif self._depth(parent, child) >= self.max_depth:
                self.depth_limited += 1
                climb = 1
            else:
                climb = await self.expand(child.id)
                if self.halted:
                    return 0
            if climb > 1:
                return climb - 1
        return 1


def toolbench_levels(node: Node) -> int:
    """ToolBench tree nodes a turn adds: a Thought for its text, an Action and an Action Input
    per call (``Finish`` included); at least one."""
    calls = len(node.calls) + (1 if node.finish is not None else 0)
    return max(1, (1 if node.content else 0) + 2 * calls)


def _key(node_id: int | None) -> int:
    return ROOT if node_id is None else node_id


class DFSDTOptions(AgentOptions):
    width: int = Field(default=DEFAULT_WIDTH, ge=1, description="Children per node.")
    depth_unit: DepthUnit = Field(
        default="turns",
        description="How the depth limit counts: turns, or ToolBench's tree nodes.",
    )
    give_up_backtrack: int = Field(
        default=GIVE_UP_BACKTRACK, ge=1, description="Levels a give-up climbs."
    )


class DFSDTAgent(BaseAgent[DFSDTOptions]):
    """Depth-first search-based decision tree, ToolBench semantics.

    The depth limit is the budget's ``max_depth`` (``DEFAULT_MAX_DEPTH`` when it sets none),
    counted in ``depth_unit``.
    """

    name = "dfsdt"
    Options = DFSDTOptions

    async def run(
        self,
        *,
        model: Model,
        env: ToolEnv,
        query: str,
        budget: Budget,
        episode: EpisodeMeta,
    ) -> Trajectory:
        ep = Episode.begin(
            self.name, self.options, model=model, env=env, query=query, budget=budget, meta=episode
        )
        opts = self.options
        depth_limit = budget.max_depth if budget.max_depth is not None else DEFAULT_MAX_DEPTH
        search = _Search(
            ep,
            width=opts.width,
            max_depth=depth_limit,
            give_up_backtrack=opts.give_up_backtrack,
            depth_unit=opts.depth_unit,
        )
        await search.expand(None)

        nodes = ep.trajectory.nodes
        tree: dict[str, Any] = {
            "nodes": len(nodes),
            "edges": search.graph.number_of_edges(),
            "backtracks": search.give_ups + search.depth_limited,
            "give_ups": search.give_ups,
            "depth_limited": search.depth_limited,
            "max_depth": max((n.depth for n in nodes), default=0),
            "width": opts.width,
            "depth_limit": depth_limit,
        }
        if search.answer is not None:
            answer = search.answer
            assert answer.finish is not None
            tree["end"] = "answer_found"
            path = [n.id for n in ep.path(answer.id)]
            return ep.end(
                Status.answered,
                "answered",
                chosen_path=path,
                final_answer=answer.finish.final_answer,
                tree=tree,
            )
        path = fallback_path(ep.trajectory)
        leaf = ep.trajectory.node(path[-1]) if path else None
        final = give_up_text(leaf) if leaf is not None and leaf.kind == "give_up" else None
        if search.stop is not None:
            tree["end"] = "budget" if search.stop.status is Status.budget_exhausted else "error"
            return ep.end(
                search.stop.status,
                search.stop.reason,
                chosen_path=path,
                final_answer=final,
                tree=tree,
            )
        tree["end"] = "tree_exhausted"
        return ep.end(
            Status.gave_up, "tree_exhausted", chosen_path=path, final_answer=final, tree=tree
        )
