"""An episode as ToolEval's judge sees it: the converted-answer entry, and its shortcuts.

ToolEval judges ToolBench's converted-answer format (``convert_to_answer_format.py``): ``{method,
total_steps, final_answer, answer_details}``, where ``final_answer`` is the ``Finish`` call's
arguments as a JSON string and ``answer_details`` the answer path as a chain of ``{role, message,
next}`` nodes (``tool`` nodes hold the repr of ``{name, arguments, response}``). The one converter
of the project, ``sandbox.interop.export_toolbench.to_converted``, makes it; ``sandbox export
toolbench`` writes the same entries for ToolEval itself, so both judges read the same answer.

- ``final_step_is_finish``: ToolEval's ``get_steps`` takes the last ``tool`` node of the chain
  as the final step and asks no judge unless it is a ``Finish`` call
  (``eval_pass_rate.py::compute_pass_rate``);
- ``empty_or_give_up``: ``check_is_solved``'s shortcut in ``rtl.py``;
- ``for_preference``: ``annotate_preference``'s ``process_answer`` in ``base.py``: the final
  answer cut to 1,000 characters and ``method`` left out, so the judge cannot tell the methods
  apart by name.
May import ``sandbox.interop`` (the converter) and ``eval`` modules.
"""

from __future__ import annotations

import json
from typing import Any

from agents.toolenv import GIVE_UP
from agents.trajectory import Trajectory
from sandbox.eval.actions import episode_path
from sandbox.interop.export_toolbench import to_converted

__all__ = [
    "PREFERENCE_ANSWER_CHARS",
    "converted_answer",
    "empty_or_give_up",
    "final_step_is_finish",
    "for_preference",
    "same_answer",
]

PREFERENCE_ANSWER_CHARS = 1000
"""ToolEval's ``process_answer`` keeps the first 1,000 characters of a final answer."""


def converted_answer(traj: Trajectory) -> dict[str, Any]:
    """The ``answer`` part of the episode's converted-answer entry.

    The chain is the chosen path; an episode cut short before it had one (a budget ran out) is
    read along the path to its last node, as ToolBench's converter reads the last message list.
    """
    if not traj.chosen_path and traj.nodes:
        path = [n.id for n in episode_path(traj)]
        traj = traj.model_copy(update={"chosen_path": path})
    return dict(to_converted(traj)["answer"])


def _chain(answer: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    nodes = answer.get("answer_details") or []
    while nodes and isinstance(nodes[0], dict):
        out.append(nodes[0])
        nodes = nodes[0].get("next") or []
    return out


def final_step_is_finish(answer: dict[str, Any]) -> bool:
    """Is the last tool node of the chain a ``Finish`` call? (ToolEval's substring test.)"""
    tools = [n for n in _chain(answer) if n.get("role") == "tool"]
    return bool(tools) and "'name': 'Finish'" in str(tools[-1].get("message", ""))


def finish_text(final_answer: str) -> str:
    """The answer text inside the ``Finish`` arguments string ('' when there is none)."""
    try:
        args = json.loads(final_answer)
    except (TypeError, ValueError):
        return final_answer
    if not isinstance(args, dict):
        return final_answer
    return str(args.get("final_answer") or "")


def empty_or_give_up(final_answer: str) -> bool:
    """Unsolved without asking: an empty answer, or a give-up.

    ToolEval tests the raw ``final_answer`` string (the ``Finish`` arguments), which is never
    empty once ``Finish`` was called; here an empty answer text inside those arguments counts as
    empty too (docs/evaluation.md: a judge asked about ``{"final_answer": ""}`` would not call it
    solved, and asking costs a call).
    """
    return (
        not final_answer.strip() or GIVE_UP in final_answer or not finish_text(final_answer).strip()
    )


def for_preference(answer: dict[str, Any]) -> dict[str, Any]:
    """``process_answer``: a copy without ``method``, the final answer cut to 1,000 characters."""
    out = {k: v for k, v in answer.items() if k != "method"}
    out["final_answer"] = str(answer.get("final_answer") or "")[:PREFERENCE_ANSWER_CHARS]
    return out


def same_answer(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """ToolEval's "identical answers" test before ``select_better_answer``: the same final answer
    and the same details."""
    return a.get("final_answer") == b.get("final_answer") and str(a.get("answer_details")) == str(
        b.get("answer_details")
    )
