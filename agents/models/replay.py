"""The ``replay`` offline model: returns the assistant turns of a recorded trajectory.

For each request, the request's assistant messages (system, user, feedback and DFSDT diversity
messages are ignored) are matched against the recorded tree: from the root, each assistant
message must equal the turn of one child of the current node (content, and the calls' names and
raw arguments, as ``trajectory.node_messages`` renders them). The answer is then the next child of
the node reached: the k-th request with the same history gets the k-th child, in node id order.
A request that leaves the recording raises ``ReplayDivergence`` saying where; a recorded model
failure (a node of kind ``error``) is raised again as ``ModelError``.

What a returned turn carries: the node's content, calls (ids, names, raw arguments), its
``Finish`` as a call with the recorded return type and answer, usage and latency. An invalid
node whose calls were never answered (or that had none) also returns its ``format_error``; one
whose calls were answered with errors (unknown functions...) returns just the calls, so the loop
judges them again exactly as it did when recording.

``node_difference`` says whether a re-run node is the recorded one as far as the model and the
loop are concerned (parent, kind, text, Finish, each call's name and raw arguments); replay checks
build on it and add the observations.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from agents.errors import ModelError, ReplayDivergence
from agents.model import Message, ToolCall, Turn
from agents.models.history import HistoryTurn, assistant_turns, turn_of
from agents.models.reference import finish_args
from agents.toolenv import FINISH
from agents.trajectory import Node, Trajectory, node_messages

NodeDiff = tuple[str, Any, Any]
"""``(field, expected, got)``."""

ERROR_KINDS = (
    "rate_limit",
    "server",
    "timeout",
    "connection",
    "bad_request",
    "context_length",
    "auth",
    "other",
    "malformed",
    "model_not_found",
)


def recorded_turn(node: Node) -> HistoryTurn | None:
    """How ``node`` appears in later requests (None: it never does, e.g. an error node)."""
    assistant = [m for m in node_messages(node) if m.get("role") == "assistant"]
    return turn_of(assistant[0]) if assistant else None


def node_difference(want: Node, have: Node) -> NodeDiff | None:
    """The first field in which ``have`` (re-run) differs from ``want`` (recorded), or None."""
    checks: list[NodeDiff] = [
        ("parent", want.parent, have.parent),
        ("kind", want.kind, have.kind),
        ("content", want.content or "", have.content or ""),
        ("finish", _finish(want), _finish(have)),
        ("calls", len(want.calls), len(have.calls)),
    ]
    for k, (a, b) in enumerate(zip(want.calls, have.calls, strict=False)):
        checks.append((f"calls[{k}].name", a.name, b.name))
        checks.append((f"calls[{k}].arguments", a.arguments, b.arguments))
    return next(((f, a, b) for f, a, b in checks if a != b), None)


def tree_difference(want: Trajectory, have: Trajectory) -> str | None:
    """Where a re-run tree first leaves the recorded one (``node_difference`` per node, then the
    node count), described; None when every node is the recorded one."""
    for a, b in zip(want.nodes, have.nodes, strict=False):
        diff = node_difference(a, b)
        if diff is not None:
            return f"node {a.id}, {diff[0]}: expected {diff[1]!r}, got {diff[2]!r}"
    if len(want.nodes) != len(have.nodes):
        return f"{len(want.nodes)} nodes recorded, {len(have.nodes)} re-run"
    return None


def _finish(node: Node) -> Any:
    """A node's Finish as a re-run can make it (the raw text is kept only by some records)."""
    return node.finish.model_dump(exclude={"arguments"}) if node.finish is not None else None


def error_kind(node: Node) -> str:
    prefix = (node.error or "").split(":", 1)[0].strip()
    return prefix if prefix in ERROR_KINDS else "other"


def turn_for(node: Node) -> Turn:
    """The model turn that produced ``node``."""
    if node.kind == "error":
        raise ModelError(
            f"replayed model failure at node {node.id}: {node.error or 'unknown error'}",
            kind=error_kind(node),
        )
    calls = [ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in node.calls]
    if node.finish is not None and not any(c.name == FINISH for c in calls):
        args = node.finish.arguments or finish_args(
            node.finish.return_type, node.finish.final_answer
        )
        at = node.finish.position if node.finish.position is not None else len(calls)
        calls.insert(at, ToolCall(id=f"call_finish_{node.id}", name=FINISH, arguments=args))
    format_error = None
    if node.kind == "invalid" and all(c.observation is None for c in node.calls):
        format_error = node.format_error
    return Turn(
        content=node.content,
        tool_calls=calls,
        usage=node.usage,
        latency_ms=node.latency_ms,
        format_error=format_error,
        raw={"replayed_node": node.id},
    )


class ReplayModel:
    """Serves the recorded turns of ``trajectory`` (see the module docstring)."""

    def __init__(self, trajectory: Trajectory, *, name: str = "replay") -> None:
        self.trajectory = trajectory
        self.name = name
        self._children: dict[int | None, list[Node]] = defaultdict(list)
        for node in sorted(trajectory.nodes, key=lambda n: n.id):
            self._children[node.parent].append(node)
        self._served: dict[tuple[int | None, ...], int] = defaultdict(int)

    @property
    def params(self) -> dict[str, Any]:
        return {"scenario_id": self.trajectory.scenario_id, "run_id": self.trajectory.run_id}

    def locate(self, messages: list[Message]) -> tuple[int | None, ...]:
        """The recorded nodes the request's history leads to (``(None,)``: the root).

        Usually one node; several when identical turns were recorded at the same place (a
        deterministic model asked twice): their children are then served one after the other,
        which is the order a depth-first search or sequential chains asked for them.
        """
        frontier: tuple[int | None, ...] = (None,)
        turns = assistant_turns(messages)
        step = 0
        while step < len(turns):
            children = self._children_of(frontier)
            matches = tuple(
                c.id
                for c in children
                if (shown := self._shown(c)) and turns[step : step + len(shown)] == shown
            )
            if not matches:
                got = turns[step]
                expected = [t.describe() for c in children for t in self._shown(c)[:1]]
                raise ReplayDivergence(
                    f"replay of {self.trajectory.scenario_id!r} diverged at step {step} (under "
                    f"{_where(frontier)}): got {got.describe()}; the recording has "
                    + ("; ".join(expected) if expected else "no turn there")
                )
            step += len(self._shown(self.trajectory.node(matches[0])))
            frontier = matches
        return frontier

    def _shown(self, node: Node) -> list[HistoryTurn]:
        """How ``node`` appears in later requests: one assistant turn; in a conversation, a
        ``Finish`` the user answered as the reply it was (after its other calls, if any)."""
        answered = any(c.kind == "user" for c in self._children.get(node.id, []))
        if answered and node.kind == "finish" and node.finish is not None:
            reply = HistoryTurn(content=node.finish.final_answer, calls=())
            calls = [recorded_turn(node)] if node.calls else []
            return [t for t in calls if t is not None] + [reply]
        turn = recorded_turn(node)
        return [turn] if turn is not None else []

    def _children_of(self, frontier: tuple[int | None, ...]) -> list[Node]:
        """The agent nodes that may follow ``frontier``: its children, and in a conversation
        the children of the user's answer below it (a user node is no model turn)."""
        out: list[Node] = []
        for parent in frontier:
            for c in self._children.get(parent, []):
                if c.kind == "user":
                    out.extend(self._children.get(c.id, []))
                else:
                    out.append(c)
        return out

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        frontier = self.locate(messages)
        k = self._served[frontier]
        children = self._children_of(frontier)
        if k >= len(children):
            step = len(assistant_turns(messages))
            raise ReplayDivergence(
                f"replay of {self.trajectory.scenario_id!r} diverged at step {step}: request "
                f"{k + 1} after {_where(frontier)}, but the recording has {len(children)} "
                "turn(s) there"
            )
        self._served[frontier] = k + 1
        return turn_for(children[k])


def _where(frontier: tuple[int | None, ...]) -> str:
    if frontier == (None,):
        return "the root"
    return "node " + " / ".join(str(n) for n in frontier)
