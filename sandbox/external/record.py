"""The trajectory of a black box: model turns and tool calls, merged as they happen.

An external agent's episode is recorded as the built-in ReAct records one: a chain of nodes, one
per model turn, each with the tool calls that turn asked for and their observations. What the
sandbox sees of the agent is the model requests through its proxy and the tool calls through
its scope, so:

- each answered model request adds a node (``add_turn``), interpreted as the built-in loops
  interpret a turn (``agents.step.interpret_turn``: thought, action, finish, give_up,
  invalid), its calls not yet run; a failed one adds an ``error`` node (``add_failed_turn``).
  Both keep the request and the answer served as an exchange (``agents.models.exchange``);
- each tool call fills the call of a turn that asked for it (``attach``): a pending call with
  the same id (and name and arguments), else the latest turn's pending call with the same name
  and arguments; a call no turn asked for is
  added to the latest turn (a thought or invalid turn that thus reached a tool becomes an
  ``action``), or to a node of its own when no model turn came before;
- the episode's ``Finish`` (through ``/call``, or the answer the agent printed) is the latest
  turn's finish when that turn did not ask for one itself (``finish``);
- in a conversation, a reply to the user (``/reply``, or a ``Finish`` giving an answer) is the
  latest turn when that turn said it (a thought with that text, a ``Finish`` with that answer),
  else a ``thought`` node of its own (``reply``); the user's answer is a ``user`` node under it
  (``add_user``), as the built-in loops record one. Nothing after a user node joins a turn
  before it. Functions the user hides are not offered (a call of one reaches no function, as
  in the built-in loops) until a user turn reveals them (``offered``).

Observations are those the agent was answered, never guessed: a call the agent did not run has
none. Imports the agents' records, step and user only.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime, timezone
from typing import Any

from agents.agent import EpisodeMeta
from agents.errors import BAD_REQUEST, CONTEXT_LENGTH, REPLY_TOO_LARGE, ModelError
from agents.model import Message, ToolCall, Turn
from agents.models.exchange import ModelRequest, exchange_record
from agents.step import EpisodeEnd, Interpretation, function_name, interpret_turn
from agents.toolenv import GIVE_ANSWER, DispatchRule
from agents.trajectory import (
    Component,
    ErrorRecord,
    FinishCall,
    Node,
    NodeKind,
    Status,
    StepCall,
    Trajectory,
    transcript_for,
)
from agents.user import UserTurn

__all__ = ["EpisodeRecord"]

AGENTS_MODEL_ERRORS = frozenset({BAD_REQUEST, CONTEXT_LENGTH, REPLY_TOO_LARGE})
"""Kinds of a failed model call that are the episode's own outcome, not the infrastructure's:
the agent's request refused, its history over the model's context, a reply over the cap."""
_UNMADE: tuple[NodeKind, ...] = ("thought", "invalid")
"""Kinds of a turn that becomes an ``action`` when a call it did not ask for reaches a tool."""


class EpisodeRecord:
    """The trajectory of one external episode, built as its model turns and calls happen."""

    def __init__(
        self,
        *,
        agent: Component,
        model: Component,
        meta: EpisodeMeta,
        query: str,
        functions: list[dict[str, Any]],
        dispatch: DispatchRule,
        hidden: Collection[str] = (),
    ) -> None:
        self.functions = functions
        self.function_names = [function_name(f) for f in functions]
        self.hidden = frozenset(hidden)
        """In a conversation, the functions the user hides until a turn of theirs reveals them."""
        self.revealed: set[str] = set()
        self.dispatch: DispatchRule = dispatch
        self.trajectory = Trajectory(
            run_id=meta.run_id,
            scenario_id=meta.scenario_id,
            trial=meta.trial,
            seed=meta.seed,
            agent=agent,
            model=model,
            status=Status.error,
            end_reason="running",
            prompt=[{"role": "user", "content": query}],
            functions=functions,
        )
        self._previous: ModelRequest | None = None
        self._unnamed = 0

    @property
    def nodes(self) -> list[Node]:
        return self.trajectory.nodes

    @property
    def turns(self) -> int:
        """Model turns recorded so far (failed calls included)."""
        return len(self.trajectory.exchanges)

    def offered(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The functions offered now (and their names): all but those the user hides and has
        not revealed yet."""
        keep = [
            (f, name)
            for f, name in zip(self.functions, self.function_names, strict=True)
            if name not in self.hidden or name in self.revealed
        ]
        return [f for f, _ in keep], [name for _, name in keep]

    def since_user(self) -> list[Node]:
        """The nodes after the user's last answer (all of them before the first)."""
        last = next((n.id for n in reversed(self.nodes) if n.kind == "user"), -1)
        return [n for n in self.nodes if n.id > last]

    @property
    def user_turns(self) -> int:
        """How often the user has answered."""
        return sum(1 for n in self.nodes if n.kind == "user")

    def interpret(
        self, name: str, arguments: str, call_id: str | None
    ) -> tuple[Interpretation, str]:
        """One call the agent made, read as the built-in loops read a call of a turn: the
        interpretation (``finish`` set for a usable ``Finish``, else one ``StepCall``, already
        answered when it cannot be sent) and the call's id."""
        call_id = self.call_id(call_id)
        turn = Turn(tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)])
        return interpret_turn(turn, self.offered()[1], self.dispatch), call_id

    def call_id(self, given: str | None) -> str:
        """The id of a call the agent made: its own, else one made up (``sandbox_call_<n>``)."""
        if given:
            return given
        self._unnamed += 1
        return f"sandbox_call_{self._unnamed}"

    # -- model turns ------------------------------------------------------------------------

    def add_turn(
        self,
        turn: Turn,
        request: ModelRequest,
        *,
        model: str | None,
        stream: bool,
        response: dict[str, Any],
    ) -> Node:
        """The node of an answered model request (its calls not run yet)."""
        plan = interpret_turn(turn, self.offered()[1], self.dispatch)
        for call in plan.calls:
            call.observation = None  # the agent decides whether to run it
        node = self._add(
            kind=plan.kind,
            content=turn.content,
            calls=plan.calls,
            finish=plan.finish,
            format_error=plan.format_error,
            usage=turn.usage,
            latency_ms=turn.latency_ms,
        )
        self._exchange(node, request, model=model, stream=stream, response=response)
        return node

    def add_failed_turn(
        self, error: ModelError, request: ModelRequest, *, model: str | None, stream: bool
    ) -> Node:
        """The ``error`` node of a model request that failed (after the model layer's retries)."""
        node = self._add(kind="error", error=f"{error.kind}: {error}")
        self._exchange(node, request, model=model, stream=stream, error=error)
        # the infrastructure's failure, unless the request or the model's reply caused it
        kind = "agent" if error.kind in AGENTS_MODEL_ERRORS else "infra"
        self.trajectory.errors.append(ErrorRecord(kind=kind, message=str(error), node=node.id))
        return node

    def _exchange(self, node: Node, request: ModelRequest, **fields: Any) -> None:
        record = exchange_record(node.id, request, self._previous, **fields)
        self.trajectory.exchanges.append(record)
        self._previous = request

    # -- tool calls -------------------------------------------------------------------------

    def attach(self, call: StepCall) -> Node:
        """Put a call the agent ran (its observation set) where it belongs; its node."""
        by_id = [(n, c) for n in self.nodes for c in n.calls if c.id == call.id]
        latest = self._latest()
        by_call = [(latest, c) for c in latest.calls] if latest is not None else []
        for node, slot in [*reversed(by_id), *by_call]:
            if slot.observation is None and slot.name == call.name and _same_args(slot, call):
                slot.observation = call.observation
                slot.tool, slot.api = call.tool, call.api
                return node
        if latest is None:
            kind: NodeKind = "action" if call.function is not None else "invalid"
            return self._add(kind=kind, calls=[call])
        if any(c.id == call.id for c in latest.calls):
            call.id = f"{call.id}_{len(latest.calls)}"
        latest.calls.append(call)
        if latest.kind in _UNMADE and call.function is not None:
            latest.kind = "action"
        return latest

    def finish(self, finish: FinishCall) -> Node:
        """Record the episode's ``Finish`` on the latest turn (unless it asked for it itself)."""
        node = self._latest()
        if node is not None and node.finish == finish:
            return node
        if node is None or node.finish is not None:
            return self._add(kind=_finish_kind(finish), finish=finish)
        node.finish = finish
        node.kind = _finish_kind(finish)
        return node

    # -- the user of a conversation ---------------------------------------------------------

    def reply(self, message: str) -> Node:
        """The node of a reply to the user: the latest turn when it said ``message`` (a thought
        with that text, a ``Finish`` with that answer), else a ``thought`` of its own."""
        node = self._latest()
        if node is not None and node.reply == message:
            return node
        return self._add(kind="thought", content=message)

    def transcript(self, reply: Node) -> list[Message]:
        """What the user has seen when answering ``reply`` (``transcript_for``)."""
        return transcript_for(self.trajectory.prompt, self.trajectory.path_to(reply.id))

    def add_user(self, turn: UserTurn) -> Node:
        """The user's answer to the latest reply, as a ``user`` node (with the calls of its own
        tools it made, dual control); what it reveals is offered from now on."""
        self.revealed.update(turn.reveal)
        return self._add(
            kind="user",
            content=turn.content,
            user=turn.record(),
            usage=turn.usage,
            calls=turn.calls,
        )

    def _latest(self) -> Node | None:
        """The latest node a call or an answer can belong to: not a failed model call, and
        nothing before the user's last answer."""
        for node in reversed(self.nodes):
            if node.kind == "user":
                return None
            if node.kind != "error":
                return node
        return None

    def _add(self, **fields: Any) -> Node:
        parent = self.nodes[-1] if self.nodes else None
        node = Node(
            id=len(self.nodes),
            parent=parent.id if parent else None,
            depth=(parent.depth if parent else 0) + 1,
            **fields,
        )
        self.nodes.append(node)
        return node

    # -- the end ----------------------------------------------------------------------------

    def close(self, end: EpisodeEnd, *, wall_seconds: float, process: dict[str, Any]) -> Trajectory:
        """Close the episode: its end, the chain as chosen path, the agent's process record."""
        t = self.trajectory
        t.status = end.status
        t.end_reason = end.reason
        t.final_answer = end.final_answer
        t.chosen_path = [n.id for n in t.nodes]
        t.tree = {"external": process}
        t.usage.wall_seconds = round(wall_seconds, 6)
        t.ended_at = datetime.now(timezone.utc)
        return t


def _finish_kind(finish: FinishCall) -> NodeKind:
    return "finish" if finish.return_type == GIVE_ANSWER else "give_up"


def _same_args(a: StepCall, b: StepCall) -> bool:
    """The same call as far as its arguments go: equal text, or equal JSON objects."""
    if a.arguments == b.arguments:
        return True
    if a.args is not None and b.args is not None:
        return a.args == b.args
    try:
        return bool(json.loads(a.arguments or "{}") == json.loads(b.arguments or "{}"))
    except ValueError:
        return False
