"""The depth of a node on its path, in the unit a run counts it: turns or ToolBench's tree nodes.

``turns``: every assistant turn is one level, whatever it did. ``toolbench_nodes``: ToolBench's
own count (``tree_node.get_depth`` in its ``Tree.py``), where one turn adds a ``Thought`` node when
the model wrote any text (even an empty string: ToolBench tests ``content != None``), and an
``Action`` and an ``Action Input`` node per call, ``Finish`` included; a failed model call is one
``Thought`` node. ToolBench's ``single_chain_max_step = 12`` is therefore 4 turns that each carry a
thought and a call, or 6 bare function calls. Imports ``agents.options`` and
``agents.trajectory`` only.
"""

from __future__ import annotations

from agents.options import DepthUnit
from agents.trajectory import Node

__all__ = ["DEFAULT_MAX_DEPTH", "node_levels"]

DEFAULT_MAX_DEPTH: dict[DepthUnit, int] = {"turns": 6, "toolbench_nodes": 12}
"""DFSDT's depth limit when the budget sets none: ToolBench's ``single_chain_max_step = 12``
(``run_single_task`` in its ``rapidapi.py``); in turns, the 6 bare function calls it allows."""


def node_levels(node: Node, unit: DepthUnit) -> int:
    """How many levels one turn adds to its path's depth (at least one)."""
    if unit == "turns":
        return 1
    calls = len(node.calls) + (1 if node.finish is not None else 0)
    return max(1, (1 if node.content is not None else 0) + 2 * calls)
