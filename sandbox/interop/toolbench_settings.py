"""Which search settings reproduce an imported tree, found by re-running our agent over it.

An imported episode comes with candidate settings (``EpisodeSettings``: the strategy, its options
on top of the ``toolbench`` preset, and the depth and model-call budgets). ``settle`` re-runs the
strategy with each candidate in turn, offline: a ``ReplayModel`` serves the recorded turns and
``RecordedEnv`` the recorded observations. The first candidate whose re-run makes exactly the
recorded nodes (``agents.models.replay.tree_difference``) is the episode's setting, and the re-run
gives the outcome our agent reaches on that tree (status, chosen path, final answer, tree
statistics), which the imported trajectory keeps so that ``sandbox replay`` can compare it.

For DFS trees the candidates vary the two numbers ToolBench's code versions disagree on: how far
a depth cut climbs (1 in the published ``DFS.py``; trees made by an earlier version behave as if
it were 2) and how far a give-up climbs (2; 1 in a variant). Settings resolve through
``RunConfig`` exactly as the imported run's replay resolves them. May import ``agents``,
``sandbox.store`` and interop modules.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agents.agent import EpisodeMeta
from agents.errors import AgentsError
from agents.models.replay import ReplayModel, tree_difference
from agents.step import function_name
from agents.toolenv import FINISH, DispatchRule, Observation
from agents.trajectory import Trajectory
from sandbox.store.config import RunConfig
from sandbox.store.error_text import first_error

__all__ = ["DFS_BACKTRACKS", "EpisodeSettings", "RecordedEnv", "Settled", "settle"]

PRESET = "toolbench"

DFS_BACKTRACKS: tuple[tuple[int, int], ...] = ((1, 2), (2, 2), (1, 1), (2, 1))
"""``(depth_cut_backtrack, give_up_backtrack)`` candidates, ToolBench's published pair first."""


@dataclass(frozen=True)
class EpisodeSettings:
    """What an imported episode runs with: a strategy, its options (over the preset) and two
    budgets."""

    agent: str
    options: dict[str, Any] = field(default_factory=dict)
    max_depth: int | None = None
    max_model_calls: int | None = None

    def config(self, **values: Any) -> RunConfig:
        """A run config with these settings (and ``values``)."""
        budget: dict[str, Any] = {"max_depth": self.max_depth}
        if self.max_model_calls is not None:
            budget["max_model_calls"] = self.max_model_calls
        return RunConfig.model_validate(
            {
                "agent": {"name": self.agent, "options": dict(self.options)},
                "preset": PRESET,
                "budget": budget,
                **values,
            }
        )

    def check(self) -> None:
        """``ValueError`` saying why no agent runs with these settings (an answer file's
        ``forward_args`` giving ``tree_beam_size: -5``), before any episode is re-run."""
        try:
            config = self.config()
            config.strategy()
            config.budget_for()
        except (AgentsError, ValidationError) as e:
            text = first_error(e) if isinstance(e, ValidationError) else str(e)
            raise ValueError(f"its settings run no agent: {text}") from None

    def key(self) -> str:
        return json.dumps(
            [self.agent, self.options, self.max_depth, self.max_model_calls], sort_keys=True
        )


def dfs_candidates(base: EpisodeSettings) -> list[EpisodeSettings]:
    """``base`` with each pair of ``DFS_BACKTRACKS``."""
    return [
        EpisodeSettings(
            base.agent,
            {**base.options, "depth_cut_backtrack": cut, "give_up_backtrack": give_up},
            base.max_depth,
            base.max_model_calls,
        )
        for cut, give_up in DFS_BACKTRACKS
    ]


class RecordedEnv:
    """A tool env that answers each call with its recorded observation, in recorded order."""

    def __init__(self, trajectory: Trajectory, dispatch: DispatchRule = "toolbench_suffix") -> None:
        self.dispatch: DispatchRule = dispatch
        self._functions = [f for f in trajectory.functions if function_name(f) != FINISH]
        self._answers: dict[tuple[str, str], deque[Observation]] = defaultdict(deque)
        for node in trajectory.nodes:
            for call in node.calls:
                if call.function is not None and call.args is not None and call.observation:
                    self._answers[(call.function, _key(call.args))].append(call.observation)

    @property
    def functions(self) -> list[dict[str, Any]]:
        return self._functions

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        queue = self._answers.get((name, _key(args)))
        if queue:
            return queue.popleft()
        return Observation(
            ok=False, content='{"error": "not recorded", "response": ""}', provenance="miss"
        )


def _key(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Settled:
    """The setting an episode got and what our agent made of its tree (None: no candidate
    reproduced it; ``difference`` says where the first candidate left it)."""

    settings: EpisodeSettings
    rerun: Trajectory | None
    difference: str | None = None


async def rerun(trajectory: Trajectory, settings: EpisodeSettings, query: str) -> Trajectory:
    """Run ``settings``' strategy over the recorded turns and observations of ``trajectory``."""
    config = settings.config()
    agent = config.strategy(trajectory.scenario_id).build()
    return await agent.run(
        model=ReplayModel(trajectory),
        env=RecordedEnv(trajectory),
        query=query,
        budget=config.budget_for(trajectory.scenario_id),
        episode=EpisodeMeta(scenario_id=trajectory.scenario_id),
    )


async def settle(trajectory: Trajectory, candidates: list[EpisodeSettings], query: str) -> Settled:
    """The first candidate whose re-run makes exactly the recorded nodes."""
    first: str | None = None
    for settings in candidates:
        got = await rerun(trajectory, settings, query)
        difference = tree_difference(trajectory, got)
        if difference is None:
            return Settled(settings, got)
        first = first or difference
    return Settled(candidates[0], None, first)
