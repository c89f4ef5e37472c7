"""DFSDT: depth-first search-based decision tree (ToolLLM, Appendix A.1, Algorithm 2).

Mirrors ToolBench's ``DFS_tree_search.DFS`` with ``with_filter=False`` (docs/agents.md has the
details, each setting with ToolBench's value, and the depth mapping):

- Pre-order depth-first search. Each node gets up to ``width`` children, generated one at a time;
  a child is searched completely before its next sibling is generated.
- ``expand`` returns how many levels the search climbs. A child that reached a dead end climbs:
  ``Finish(give_up_and_restart)`` ``give_up_backtrack`` levels (ToolBench: 2), a child at the depth
  limit without an answer ``depth_cut_backtrack`` levels (ToolBench's published code: 1), a failed
  model call (with ``on_model_error = "prune"``) and a node whose children are all spent one level.
  Climbing 1 means the parent generates its next child; climbing 2 means the parent gives up too
  and the grandparent generates its next child. A give-up at depth 1 therefore ends the search.
- The first ``Finish(give_answer)`` ends the search.
- Thoughts (text without a call) and invalid turns are ordinary children: expanded like any
  other node, each taking its depth.
- A second or later child is asked for with a diversity prompt (``diversity_prompt``) that
  lists, per earlier child, the first action on its path (ToolBench walks through thought-only
  turns to the first call) with its observation, and the node's own last observation. The prompt
  is sent for that request only, recorded on the child (``Node.diversity_prompt``) and absent from
  the history of its descendants (as ChatGPT saw it: ToolBench drops it from later requests).
- No answer: ``agents.outcome`` picks the chosen path; the status is ``gave_up`` when the search
  ran out of tree, ``budget_exhausted`` when a budget stopped it, ``error`` when a model failure
  stopped it (``on_model_error = "stop"``, the default).

Every child is one ``agents.chain.chain_step`` with this agent as its hooks, so a child's branch
ends where a ReAct chain would (``ends_chain``: answer, give-up, depth limit; a stop or failed
model call), and a subclass's ``before_model_call``, ``after_observation`` and ``ends_chain`` act
in the tree as in a chain. What follows a dead end (how far to climb) is the walk's own. Imports
the chain step and the agents' records; never ``sandbox`` or ``mock_tools``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import Field

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.chain import ChainHooks, chain_step
from agents.depth import DEFAULT_MAX_DEPTH
from agents.finish import ANSWER_OBSERVATION, GIVE_UP_OBSERVATION
from agents.model import Model
from agents.options import AgentOptions, ModelErrorPolicy
from agents.outcome import ChainEnd, episode_end, fallback_end
from agents.prompts import diversity_prompt
from agents.step import Episode, Stop
from agents.toolenv import FINISH, GIVE_ANSWER, ToolEnv
from agents.trajectory import FinishCall, Node, Status, Trajectory

DEFAULT_WIDTH = 2
"""Children per node (ToolBench's ``tree_beam_size``: ``DFS_woFilter_w2``)."""

DEPTH_CUT_BACKTRACK = 1
"""Levels a branch climbs at the depth limit (ToolBench's ``DFS`` returns 1 there)."""

GIVE_UP_BACKTRACK = 2
"""Levels a give-up climbs (ToolBench's ``prune_back_length``)."""

ROOT = -1
"""The virtual root in the search graph (the prompt); it is not a trajectory node."""


def finish_arguments(finish: FinishCall) -> str:
    """A ``Finish`` call's arguments as JSON text."""
    args: dict[str, str] = {"return_type": finish.return_type}
    if finish.final_answer or finish.return_type == GIVE_ANSWER:
        args["final_answer"] = finish.final_answer
    return json.dumps(args, ensure_ascii=False)


def first_action(node: Node, children: Callable[[int], list[Node]]) -> dict[str, Any] | None:
    """The first action on the path that starts with ``node``, for the diversity prompt.

    A turn with calls gives its first call; a ``Finish`` turn its ``Finish``; a thought (or an
    invalid turn answered with feedback) gives the first action of its first child, as
    ToolBench's walk down first children does; a failed model call gives nothing."""
    if node.calls:
        c = node.calls[0]
        output = c.observation.content if c.observation else ""
        return {"name": c.name, "arguments": c.arguments, "function_output": output}
    if node.finish is not None:
        output = GIVE_UP_OBSERVATION if node.kind == "give_up" else ANSWER_OBSERVATION
        return {
            "name": FINISH,
            "arguments": finish_arguments(node.finish),
            "function_output": output,
        }
    if node.kind == "error":
        return None
    below = children(node.id)
    return first_action(below[0], children) if below else None


class _Search:
    """The state of one DFSDT search over an ``Episode``."""

    def __init__(
        self, episode: Episode, options: DFSDTOptions, hooks: ChainHooks, *, max_depth: int
    ):
        self.ep = episode
        self.opts = options
        self.hooks = hooks
        self.max_depth = max_depth
        self.children: dict[int, list[int]] = {ROOT: []}
        """The search tree: each node's children in the order they were made."""
        self.answer: ChainEnd | None = None
        self.stop: Stop | None = None
        self.give_ups = 0
        self.depth_limited = 0
        self.model_errors = 0

    @property
    def halted(self) -> bool:
        return self.answer is not None or self.stop is not None

    def _children(self, parent: int | None) -> list[Node]:
        return [self.ep.trajectory.node(i) for i in self.children.get(_key(parent), [])]

    def _diversity_prompt(self, parent: int | None) -> str | None:
        if not self.opts.diversity_prompt:
            return None
        earlier = [
            a for child in self._children(parent) if (a := first_action(child, self._children))
        ]
        if not earlier:
            return None
        last_observation = None
        if parent is not None:
            calls = self.ep.trajectory.node(parent).calls
            if calls and calls[-1].observation is not None:
                last_observation = calls[-1].observation.content or None
        return diversity_prompt(earlier, last_observation)

    async def expand(self, parent: int | None) -> int:
        """Generate and search up to ``width`` children of ``parent``; return levels to climb."""
        parent_node = self.ep.trajectory.node(parent) if parent is not None else None
        for _ in range(self.opts.width):
            child, end = await chain_step(
                self.ep,
                parent_node,
                self.hooks,
                max_depth=self.max_depth,
                diversity_prompt=self._diversity_prompt(parent),
            )
            if child is not None:
                self.children.setdefault(_key(parent), []).append(child.id)
            if end is not None:
                climb = self._dead_end(end)
            else:
                assert child is not None
                climb = await self.expand(child.id)
            if self.halted:
                return 0
            if climb > 1:
                return climb - 1
        return 1

    def _dead_end(self, end: ChainEnd) -> int:
        """Levels to climb after a child that ended its branch (it halts the search on an
        answer or a stop)."""
        if end.outcome == "answered":
            self.answer = end
            return 0
        if end.outcome == "gave_up":
            self.give_ups += 1
            return self.opts.give_up_backtrack
        if end.outcome == "depth_limit":
            self.depth_limited += 1
            return self.opts.depth_cut_backtrack
        if end.outcome == "model_error" and self.opts.on_model_error == "prune":
            self.model_errors += 1  # ToolBench prunes the failed branch and goes on
            return 1
        self.stop = end.stop
        return 0


def _key(node_id: int | None) -> int:
    return ROOT if node_id is None else node_id


class DFSDTOptions(AgentOptions):
    width: int = Field(default=DEFAULT_WIDTH, ge=1, description="Children per node.")
    depth_cut_backtrack: int = Field(
        default=DEPTH_CUT_BACKTRACK,
        ge=1,
        description="Levels a branch climbs when it reaches the depth limit without an answer.",
    )
    give_up_backtrack: int = Field(
        default=GIVE_UP_BACKTRACK, ge=1, description="Levels a give-up climbs."
    )
    diversity_prompt: bool = Field(
        default=True,
        description="Ask for a different action when generating a second or later child.",
    )
    on_model_error: ModelErrorPolicy = Field(
        default="stop",
        description="A failed model call: stop the episode, or prune that branch and go on.",
    )


class DFSDTAgent(ChainHooks, BaseAgent[DFSDTOptions]):
    """Depth-first search-based decision tree, ToolBench semantics.

    The depth limit is the budget's ``max_depth`` (``DEFAULT_MAX_DEPTH`` of the depth unit when
    it sets none), counted in the options' ``depth_unit``.
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
        depth_limit = budget.max_depth or DEFAULT_MAX_DEPTH[opts.depth_unit]
        search = _Search(ep, opts, self, max_depth=depth_limit)
        await search.expand(None)
        if search.answer is not None:
            end = episode_end(ep.trajectory, search.answer)
        elif search.stop is not None:
            end = fallback_end(ep.trajectory, search.stop.status, search.stop.reason)
        else:
            end = fallback_end(ep.trajectory, Status.gave_up, "tree_exhausted")
        nodes = ep.trajectory.nodes
        tree: dict[str, Any] = {
            "nodes": len(nodes),
            "edges": sum(len(c) for c in search.children.values()),
            "backtracks": search.give_ups + search.depth_limited + search.model_errors,
            "give_ups": search.give_ups,
            "depth_limited": search.depth_limited,
            "model_errors": search.model_errors,
            "max_depth": max((ep.level(n) for n in nodes), default=0),
            "width": opts.width,
            "depth_limit": depth_limit,
            "end": end.tree_end,
        }
        return ep.close(end, tree=tree)
