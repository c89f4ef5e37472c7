"""What a step metric reads: one episode, with what is derived from it once for every metric.

``ScoringContext`` is what scoring many episodes of one suite shares (the APIs, the name
resolver, the schema validators, the thought similarity, the reference steps as actions and the
searched matchings); ``StepEpisode`` is one episode in it: the trajectory, its task, the chosen
path, the path's calls as actions, and (made on first use) the reference steps as actions and
the pairing of the two. Pure; imports ``eval.steps`` modules.
"""

from __future__ import annotations

from functools import cached_property

from agents.trajectory import Node, Trajectory
from mock_tools.models import Task
from mock_tools.names import NameResolver
from sandbox.eval.steps.actions import (
    Action,
    ApiKey,
    Apis,
    actions_of,
    episode_path,
    match_actions,
    reference_actions,
)
from sandbox.eval.steps.format_score import SchemaValidators
from sandbox.eval.steps.matching import MatchMemo
from sandbox.eval.steps.reason_score import ThoughtSimilarity
from sandbox.eval.steps.replies import (
    GoldStep,
    Reply,
    WrittenCall,
    calls,
    gold_steps,
    offered_names,
    replies,
)

__all__ = ["ScoringContext", "StepEpisode"]


class ScoringContext:
    """What scoring many episodes of one suite shares: name resolution and schema validators."""

    def __init__(self, apis: Apis, similarity: ThoughtSimilarity | None = None) -> None:
        self.apis = apis
        self.resolver = NameResolver.for_apis(apis)
        self.validators = SchemaValidators(apis)
        self.similarity = similarity
        self._gold: dict[str, tuple[Task, list[Action]]] = {}
        self.matchings: MatchMemo = {}

    def gold(self, task: Task) -> list[Action]:
        """The task's reference steps as actions (made once per task object)."""
        kept = self._gold.get(task.id)
        if kept is None or kept[0] is not task:
            kept = self._gold[task.id] = (
                task,
                reference_actions(task.reference.agent_steps, self.apis),
            )
        return kept[1]


class StepEpisode:
    """One episode as the step metrics read it (``StepMetric.score``'s input).

    - ``traj``, ``task``: the trajectory and its task (``task.reference``: the reference path);
    - ``context``: the ``ScoringContext`` (``apis``, ``resolver``, ``validators``, ``similarity``);
    - ``path``: the chosen path's nodes (``actions.episode_path``: DFSDT's answered branch);
    - ``actions``: the path's tool calls as canonical ``Action``s (``Finish`` left out);
    - ``offered``: the ``(tool, api)`` pairs offered to the task that the suite has;
    - ``gold``: the reference steps as ``Action``s (empty when the reference has no steps);
    - ``pairs``: ``(action index, gold index)`` pairs of the same API (``actions.match_actions``);
    - ``replies``, ``written_calls``, ``gold_steps``: the turns, calls and reference steps as
      written, for the reference protocols (``replies``).
    """

    def __init__(self, traj: Trajectory, task: Task, context: ScoringContext) -> None:
        self.traj = traj
        self.task = task
        self.context = context
        self.path: list[Node] = episode_path(traj)
        self.actions: list[Action] = actions_of(self.path, context.apis, context.resolver)

    @cached_property
    def offered(self) -> set[ApiKey]:
        apis = self.context.apis
        return {(r.tool, r.api) for r in self.task.tools if (r.tool, r.api) in apis}

    @cached_property
    def gold(self) -> list[Action]:
        return self.context.gold(self.task) if self.task.reference.steps else []

    @cached_property
    def pairs(self) -> list[tuple[int, int]]:
        return match_actions(self.actions, self.gold, memo=self.context.matchings)

    @cached_property
    def replies(self) -> list[Reply]:
        return replies(self.path)

    @cached_property
    def written_calls(self) -> list[WrittenCall]:
        return calls(self.path)

    @cached_property
    def gold_steps(self) -> list[GoldStep]:
        names = offered_names(self.traj.functions, self.context.resolver)
        return gold_steps(self.task.reference.steps, names)
