"""The deterministic rule that picks an episode's chosen path when no node answered.

ToolBench's converter picks a random give-up node in that case; here the choice is reproducible:
among all nodes except model-error nodes, take the one whose root path has the most successful
tool calls, then the deepest, then the lowest node id, and return the path from the root to it.
A successful call is one that reached the tools (provenance not ``invalid``) and returned
``ok``. With no candidate node at all the path is empty. When that path ends in a give-up with
an explanation, the explanation is the episode's final answer (``fallback_outcome``).
Imports ``agents.trajectory`` only.
"""

from __future__ import annotations

from agents.trajectory import Node, Trajectory


def successful_calls(node: Node) -> int:
    """Tool calls of one node that reached the tools and succeeded."""
    return sum(
        1
        for c in node.calls
        if c.observation is not None and c.observation.ok and c.observation.provenance != "invalid"
    )


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
