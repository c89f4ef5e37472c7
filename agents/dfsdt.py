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
Imports the shared step (``agents.step``) and the agents' records; never ``sandbox`` or
``mock_tools``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import Field

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.depth import DEFAULT_MAX_DEPTH
from agents.finish import ANSWER_OBSERVATION, GIVE_UP_OBSERVATION
from agents.model import Model
from agents.options import AgentOptions, ModelErrorPolicy
from agents.outcome import fallback_outcome
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

    def __init__(self, episode: Episode, options: DFSDTOptions, *, max_depth: int):
        self.ep = episode
        self.opts = options
        self.max_depth = max_depth
        self.children: dict[int, list[int]] = {ROOT: []}
        """The search tree: each node's children in the order they were made."""
        self.answer: Node | None = None
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
        for _ in range(self.opts.width):
            prompt = self._diversity_prompt(parent)
            result = await self.ep.step(parent, diversity_prompt=prompt)
            child = result.node
            if child is not None:
                self.children.setdefault(_key(parent), []).append(child.id)
            if result.stop is not None:
                if child is None or child.kind != "error" or self.opts.on_model_error != "prune":
                    self.stop = result.stop
                    return 0
                self.model_errors += 1  # ToolBench prunes the failed branch and goes on
                climb = 1
            else:
                assert child is not None
                if child.kind == "finish":
                    self.answer = child
                    return 0
                if child.kind == "give_up":
                    self.give_ups += 1
                    climb = self.opts.give_up_backtrack
                elif self.ep.level(child) >= self.max_depth:
                    self.depth_limited += 1
                    climb = self.opts.depth_cut_backtrack
                else:
                    climb = await self.expand(child.id)
                    if self.halted:
                        return 0
            if climb > 1:
                return climb - 1
        return 1


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


class DFSDTAgent(BaseAgent[DFSDTOptions]):
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
        search = _Search(ep, opts, max_depth=depth_limit)
        await search.expand(None)

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
        path, final = fallback_outcome(ep.trajectory)
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
