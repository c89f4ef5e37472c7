"""One episode as its page shows it: the trajectory, the task, the label, how to draw its tree.

The tree is the trajectory's nodes in expansion order (node ids), each marked:

- ``on_path``: on the chosen path (the answer branch when there is an answer);
- ``pruned``: off that path, an abandoned branch of the search;
- ``give_up``: a ``Finish(give_up_and_restart)``;
- ``depth_cut``: a leaf that neither finished nor gave up (nor is a user's answer ending the
  conversation), and after which the search went on (or ran out of tree): the depth limit
  stopped it;
- ``budget_cut``: the last node of an episode a budget, a context overflow or an error ended;
- ``chain``: which root-level branch it belongs to (ReAct@N's chains; 0 for a single root).

``divergence`` compares a replayed episode (a run made with the ``replay:<run>`` model) with the
recorded one and names the first step that differs. May import ``sandbox.store``,
``sandbox.eval``, ``sandbox.replay`` and the view modules below it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agents.trajectory import Status, Trajectory
from sandbox.errors import SandboxError
from sandbox.replay import StepDiff, compare_trajectories
from sandbox.store import EpisodeIndex, EpisodeKey
from sandbox.view.catalog import RunEntry
from sandbox.view.chat import ChatEntry
from sandbox.view.state_diff import WorldCall

__all__ = ["Divergence", "EpisodePage", "NodeMarks", "divergence", "first_difference", "node_marks"]

_TERMINAL = ("finish", "give_up")


class NodeMarks(BaseModel):
    id: int
    parent: int | None
    children: list[int] = Field(default_factory=list)
    chain: int = 0
    on_path: bool = False
    pruned: bool = False
    give_up: bool = False
    depth_cut: bool = False
    budget_cut: bool = False


class Difference(BaseModel):
    """The first step where two episodes differ, as the page shows it."""

    node: int | None
    field: str
    expected: str
    got: str
    text: str


class Divergence(BaseModel):
    """A replayed episode against the episode it replays."""

    original_run: str
    found: bool = Field(description="The recorded episode was found and read.")
    identical: bool = False
    first_diff: Difference | None = None
    note: str = ""


class EpisodePage(BaseModel):
    run: RunEntry
    task: dict[str, Any] | None = Field(default=None, description="The suite's task, if loaded.")
    label: dict[str, Any] | None = None
    trajectory: dict[str, Any]
    marks: list[NodeMarks]
    divergence: Divergence | None = None
    world_calls: list[WorldCall] = Field(
        default_factory=list,
        description="In a world: each call that reached it, the state after it and the records "
        "it changed (``sandbox.view.state_diff``); the final-vs-gold diff and the checks are "
        "the trajectory's ``world``.",
    )
    conversation: list[ChatEntry] | None = Field(
        default=None,
        description="A conversation's chat along the path its episode ended on "
        "(``sandbox.view.chat``); None for an episode without a user.",
    )
    previous: EpisodeKey | None = None
    next: EpisodeKey | None = None


def node_marks(traj: Trajectory) -> list[NodeMarks]:
    """Marks for every node, in expansion order."""
    marks = {n.id: NodeMarks(id=n.id, parent=n.parent) for n in traj.nodes}
    roots: list[int] = []
    for n in traj.nodes:
        if n.parent is None or n.parent not in marks:
            roots.append(n.id)
        else:
            marks[n.parent].children.append(n.id)
    for i, root in enumerate(roots):
        stack = [root]
        while stack:
            node = marks[stack.pop()]
            node.chain = i
            stack.extend(node.children)
    path = set(traj.chosen_path)
    ended_early = traj.status in (Status.budget_exhausted, Status.context_overflow, Status.error)
    last = traj.nodes[-1].id if traj.nodes else None
    for n in traj.nodes:
        m = marks[n.id]
        m.on_path = n.id in path
        m.pruned = bool(path) and not m.on_path
        m.give_up = n.kind == "give_up"
        ended_by_user = n.kind == "user" and bool((n.user or {}).get("signal"))
        leaf = not m.children and n.kind not in _TERMINAL and not ended_by_user
        if leaf and n.id == last and ended_early:
            m.budget_cut = True
        elif leaf and n.kind != "error":
            m.depth_cut = True
    return [marks[n.id] for n in traj.nodes]


def _text(value: Any, field: str, limit: int = 2000) -> str:
    """A step's value as a reader reads it: text as it is, other values as JSON; a value one
    side lacks as words (``no such step``, ``nothing``), never Python's ``None``."""
    if value is None:
        return "no such step" if field == "node" else "nothing"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_difference(expected: Trajectory, got: Trajectory) -> Difference | None:
    """The first step where ``got`` differs from ``expected`` (None: they are the same)."""
    diff: StepDiff | None = compare_trajectories(expected, got).first_diff
    if diff is None:
        return None
    return Difference(
        node=diff.node,
        field=diff.field,
        expected=_text(diff.expected, diff.field),
        got=_text(diff.got, diff.field),
        text=diff.describe(),
    )


def _original_folder(replay_of: str, run_path: Path, root: Path) -> Path | None:
    candidate = Path(replay_of)
    if candidate.is_absolute():
        return candidate if candidate.is_dir() else None
    for base in (Path.cwd(), root, *run_path.resolve().parents):
        if (base / candidate).is_dir():
            return base / candidate
    return None


def divergence(replay_of: str, run_path: Path, root: Path, traj: Trajectory) -> Divergence:
    """Compare a replayed episode with the recorded one of the run it replays."""
    folder = _original_folder(replay_of, run_path, root)
    if folder is None:
        return Divergence(original_run=replay_of, found=False, note="the recorded run is gone")
    try:
        original = EpisodeIndex.of(folder).trajectory((traj.scenario_id, traj.trial))
    except SandboxError as e:
        return Divergence(original_run=replay_of, found=False, note=str(e))
    if original is None:
        return Divergence(
            original_run=replay_of, found=False, note="the recorded run has no such episode"
        )
    diff = first_difference(original, traj)
    return Divergence(original_run=replay_of, found=True, identical=diff is None, first_diff=diff)
