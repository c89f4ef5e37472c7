"""ToolBench's search nodes (``Thought``, ``Action``, ``Action Input``) -> our nodes, one per turn.

ToolBench stores one model turn as several tree nodes (``DFS.py`` and ``single_chain.py``): a
``Thought`` when the model wrote text, then an ``Action`` (the function name as written) and an
``Action Input`` (the raw arguments, the observation and its status code) per call; the next turn
hangs below the turn's last node. ``TurnReader`` walks a DFS tree in pre-order (the order DFSDT
made the nodes, so our node ids are its order of execution) or a CoT try's chain, and makes one
``Node`` per turn:

- a ``Thought`` with a status code is a failed model call (ToolBench turns the error into text
  with code -1 and prunes it): an ``error`` node;
- a ``Thought`` that DFS expanded itself (``expand_num`` > 0), or that has no ``Action`` below it,
  is a turn without a call: a ``thought`` node (ChatGPT in 2023 sometimes wrote the thought in one
  call and the function call in the next);
- ``Action`` / ``Action Input`` pairs chained without DFS expanding the inputs between them are
  the parallel calls of one turn (StableToolBench's ``tool_calls``); in a CoT chain, where nothing
  is marked expanded, every pair is a turn of its own (replays the same either way).

Each turn is then classified by the agents' own ``interpret_turn`` under ToolBench's suffix
dispatch, so an imported node is exactly the node our loop makes from the same turn; the
observations are ToolBench's texts. Calls that reached a tool become ``ObservedCall`` s (the
recordings); calls ToolBench's harness answered itself (invented names, unusable ``Finish``
arguments) do not. May import ``agents``, ``mock_tools`` and ``sandbox.interop.observations``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.finish import read_finish
from agents.model import ToolCall, Turn
from agents.prompts import format_feedback
from agents.step import interpret_turn
from agents.toolenv import FINISH, DispatchRule, Observation
from agents.trajectory import ErrorRecord, Node
from mock_tools.models import Response
from sandbox.interop.observations import response_from_observation

__all__ = ["ObservedCall", "Offered", "TurnReader"]

DISPATCH: DispatchRule = "toolbench_suffix"


@dataclass
class ObservedCall:
    """One tool call seen in a tree, with what it returned."""

    node: int
    tool: str
    api: str
    args: dict[str, Any]
    response: Response
    truncated: bool


@dataclass(frozen=True)
class Offered:
    """The functions an answer offered: names in the order offered, and name -> (tool, api)."""

    names: Sequence[str]
    targets: dict[str, tuple[str, str]]


def _kids(tb: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in tb.get("children") or [] if isinstance(c, dict)]


def _expanded(tb: dict[str, Any]) -> bool:
    """Whether ToolBench's DFS was called on this node (it numbers the nodes it visits)."""
    num = tb.get("expand_num")
    return isinstance(num, int) and num > 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


@dataclass
class TurnReader:
    """Reads trees and chains of one answer into nodes (see the module docstring)."""

    offered: Offered
    tree_mode: bool = True
    nodes: list[Node] = field(default_factory=list)
    calls: list[ObservedCall] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    harness_observations: int = 0
    notes: list[str] = field(default_factory=list)

    def read_tree(self, root: dict[str, Any]) -> None:
        """A DFS tree: the root holds the prompt; its children are the first turns."""
        for child in _kids(root):
            self._turn(child, None)

    def read_chain(self, chain: Sequence[Any]) -> None:
        """One CoT try: the path of node JSONs from the first turn to the last node."""
        nested: dict[str, Any] | None = None
        for tb in reversed([c for c in chain if isinstance(c, dict)]):
            nested = {**tb, "children": [nested] if nested is not None else []}
        if nested is not None:
            self._turn(nested, None)

    # -- one turn -------------------------------------------------------------------------------

    def _turn(self, tb: dict[str, Any], parent: int | None) -> None:
        kind = tb.get("node_type")
        content: str | None = None
        start = tb
        if kind == "Thought":
            content = _text(tb.get("description"))
            kids = _kids(tb)
            if tb.get("observation_code") is not None:
                node_id = self._add_error(parent, content)
                for child in kids:
                    self._turn(child, node_id)
                return
            expanded_alone = self.tree_mode and _expanded(tb)
            if not kids or expanded_alone or kids[0].get("node_type") != "Action":
                node_id = self._interpret(parent, content, [])
                for child in kids:
                    self._turn(child, node_id)
                return
            start = kids[0]
        elif kind != "Action":  # a stray input (ToolBench's root is one): its children are turns
            for child in _kids(tb):
                self._turn(child, parent)
            return
        pairs: list[tuple[str, dict[str, Any]]] = []
        action: dict[str, Any] | None = start
        while action is not None:
            inputs = [c for c in _kids(action) if c.get("node_type") == "Action Input"]
            if not inputs:
                break
            pairs.append((_text(action.get("description")), inputs[0]))
            below = _kids(inputs[0])
            chained = (
                self.tree_mode
                and inputs[0].get("expand_num") == 0  # a turn's last node is always expanded
                and len(below) == 1
                and below[0].get("node_type") == "Action"
            )
            action = below[0] if chained else None
        if not pairs:
            self.notes.append(f"an Action without an Action Input ({start.get('description')!r})")
            self._interpret(parent, content, [], format_error="an action without an input")
            return
        node_id = self._interpret(parent, content, pairs)
        for child in _kids(pairs[-1][1]):
            self._turn(child, node_id)

    # -- nodes ----------------------------------------------------------------------------------

    def _depth(self, parent: int | None) -> int:
        return (self.nodes[parent].depth if parent is not None else 0) + 1

    def _add_error(self, parent: int | None, message: str) -> int:
        node_id = len(self.nodes)
        self.nodes.append(
            Node(
                id=node_id,
                parent=parent,
                depth=self._depth(parent),
                kind="error",
                error=f"model call failed (ToolBench): {message}",
            )
        )
        self.errors.append(ErrorRecord(kind="infra", message=message, node=node_id))
        return node_id

    def _interpret(
        self,
        parent: int | None,
        content: str | None,
        pairs: list[tuple[str, dict[str, Any]]],
        *,
        format_error: str | None = None,
    ) -> int:
        node_id = len(self.nodes)
        calls = [
            ToolCall(id=f"call_{node_id}_{k}", name=name, arguments=_text(tb.get("description")))
            for k, (name, tb) in enumerate(pairs)
        ]
        inputs = {c.id: tb for c, (_, tb) in zip(calls, pairs, strict=True)}
        turn = Turn(content=content, tool_calls=calls, format_error=format_error)
        plan = interpret_turn(turn, [*self.offered.names, FINISH], DISPATCH, "toolbench")
        if plan.finish is not None:  # the raw text of the Finish that counted: the first usable
            usable = (c for c in calls if c.name == FINISH)
            plan.finish.arguments = next(
                c.arguments for c in usable if read_finish(c.arguments).outcome != "error"
            )
        for call in plan.calls:
            text = _text(inputs[call.id].get("observation"))
            if call.observation is not None:  # answered by ToolBench's harness, not a tool
                self.harness_observations += 1
                if text and text != call.observation.content:
                    self.notes.append(
                        f"node {node_id}: ToolBench answered {call.name!r} with {text[:80]!r}, "
                        f"the agents' loop answers {call.observation.content[:80]!r}"
                    )
                    call.observation = call.observation.model_copy(update={"content": text})
                continue
            assert call.function is not None and call.args is not None
            call.tool, call.api = self.offered.targets[call.function]
            decoded = response_from_observation(text)
            if decoded is None:
                self.notes.append(f"node {node_id}: unreadable observation {text[:80]!r}")
                call.observation = Observation(
                    ok=False, content=text, provenance="hit", error="unreadable observation"
                )
                continue
            response, cut = decoded
            call.observation = Observation(
                ok=response.ok,
                content=text,
                status=200,
                provenance="hit",
                error=response.error,
                truncated=cut,
            )
            self.calls.append(
                ObservedCall(node_id, call.tool, call.api, call.args, response, truncated=cut)
            )
        node = Node(
            id=node_id,
            parent=parent,
            depth=self._depth(parent),
            kind=plan.kind,
            content=content,
            calls=plan.calls,
            finish=plan.finish,
            format_error=plan.format_error,
        )
        if plan.kind == "invalid":
            reason = plan.format_error or "no usable function call"
            if all(c.observation is None for c in node.calls):
                node.feedback = format_feedback(reason, [*self.offered.names, FINISH])
            self.errors.append(ErrorRecord(kind="agent", message=reason, node=node_id))
        self.nodes.append(node)
        return node_id
