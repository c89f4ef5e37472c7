"""How an episode ends: how a chain ended (``ChainEnd``), mapped onto the episode's end
(``EpisodeEnd``: status, end reason, chosen path, final answer), and the deterministic rule that
picks the chosen path when no node answered.

Every strategy ends its episode through this module:

- ``episode_end(trajectory, end)``: the episode ends because chain ``end`` ended. An answer
  gives status ``answered`` with the chain's text; a give-up ``gave_up`` with its explanation; the
  depth limit ``budget_exhausted`` (``budget:max_depth``); a stop (budget, model or tool failure,
  a hook's stop) the stop's status and reason. The chosen path runs to the chain's last node.
  ReAct ends this way, and so does every answer of ReAct@N and DFSDT.
- ``fallback_end(trajectory, status, reason)``: a search (many chains, a tree) ends without an
  answer; the chosen path and final answer follow the rule below.

The rule (``fallback_path``): ToolBench's converter picks a random give-up node; here the choice
is reproducible: among all nodes except model-error nodes, take the one whose root path has the
most successful tool calls, then the deepest, then the lowest node id, and return the path from
the root to it. A successful call is one that reached the tools (provenance not ``invalid``) and
returned ``ok``. With no candidate node at all the path is empty. When that path ends in a
give-up with an explanation, the explanation is the episode's final answer (``fallback_outcome``).
Imports the agents' records and the step's ``Stop`` and ``EpisodeEnd``; never a strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.step import EpisodeEnd, Stop
from agents.toolenv import Observation
from agents.trajectory import Node, Status, Trajectory

ChainOutcome = Literal["answered", "gave_up", "depth_limit", "model_error", "stopped"]
"""How a chain ends: an answer, a give-up, the depth limit, a failed model call (the episode may
go on: ``on_model_error = "prune"``), or a stop (budget, tool failure, a hook's stop)."""

_STOPS: tuple[ChainOutcome, ...] = ("model_error", "stopped")


@dataclass(frozen=True)
class ChainEnd:
    """How one chain ended: its outcome, its last node (if any), why it stopped (for
    ``model_error`` and ``stopped``, and only for those) and, for ``answered`` and ``gave_up``,
    the text the episode ends with (the answer, or the give-up's explanation)."""

    outcome: ChainOutcome
    last: Node | None
    stop: Stop | None = None
    final_answer: str | None = None

    def __post_init__(self) -> None:
        if (self.stop is not None) != (self.outcome in _STOPS):
            raise ValueError(
                f"a chain that ends {self.outcome!r} "
                + ("needs a stop" if self.outcome in _STOPS else "takes no stop")
            )


def successful_observations(node: Node) -> list[Observation]:
    """The observations of the node's calls that reached the tools and succeeded, in order."""
    return [
        c.observation
        for c in node.calls
        if c.observation is not None and c.observation.ok and c.observation.provenance != "invalid"
    ]


def successful_calls(node: Node) -> int:
    """Tool calls of one node that reached the tools and succeeded."""
    return len(successful_observations(node))


def fallback_path(trajectory: Trajectory) -> list[int]:
    """The chosen path of an episode without an answer (see the module docstring)."""
    best_key: tuple[int, int, int] | None = None
    best_id: int | None = None
    score: dict[int, int] = {}
    for node in trajectory.nodes:  # parents always come before their children
        inherited = score[node.parent] if node.parent is not None else 0
        score[node.id] = inherited + successful_calls(node)
        if node.kind == "error":
            continue
        key = (score[node.id], node.depth, -node.id)
        if best_key is None or key > best_key:
            best_key, best_id = key, node.id
    if best_id is None:
        return []
    return [n.id for n in trajectory.path_to(best_id)]


def give_up_text(node: Node | None) -> str | None:
    """The explanation a give-up node gave, if any (kept as the episode's final answer)."""
    if node is None or node.kind != "give_up" or node.finish is None:
        return None
    return node.finish.final_answer or None


def fallback_outcome(trajectory: Trajectory) -> tuple[list[int], str | None]:
    """The chosen path of an episode without an answer, and its final answer (a give-up's
    explanation, or None)."""
    path = fallback_path(trajectory)
    leaf = trajectory.node(path[-1]) if path else None
    return path, give_up_text(leaf)


def episode_end(trajectory: Trajectory, end: ChainEnd) -> EpisodeEnd:
    """The episode's end when chain ``end`` ends it (see the module docstring)."""
    path = [n.id for n in trajectory.path_to(end.last.id)] if end.last else []
    if end.outcome == "answered":
        return EpisodeEnd(Status.answered, "answered", path, end.final_answer)
    if end.outcome == "gave_up":
        return EpisodeEnd(Status.gave_up, "gave_up", path, end.final_answer)
    if end.outcome == "depth_limit":
        return EpisodeEnd(Status.budget_exhausted, "budget:max_depth", path)
    assert end.stop is not None
    return EpisodeEnd(end.stop.status, end.stop.reason, path)


def fallback_end(trajectory: Trajectory, status: Status, reason: str) -> EpisodeEnd:
    """A search's end without an answer: the chosen path and final answer by the rule."""
    path, final = fallback_outcome(trajectory)
    return EpisodeEnd(status, reason, path, final)
