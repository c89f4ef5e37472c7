"""The step all agent loops share: ask the model, interpret the turn, run the calls, record a Node.

``Episode`` owns one episode's state (the trajectory being built, the budget accountant, the
functions offered, the env's dispatch rule, the depth unit). ``Episode.step(parent)`` grows the
tree by one node under ``parent`` (``None`` for a root-level node) and says whether the episode
must stop. The request it sends is exactly ``messages_for(prompt, path_to(parent))``, plus the
DFSDT diversity prompt for that one request when given, so a replay model can rebuild every
request from the trajectory. ``Episode.close(end)`` records how the episode ended (an
``EpisodeEnd``: status, end reason, chosen path, final answer; ``agents.outcome`` builds it).
Strategies call the step through the chain loop (``agents.chain``).

Turn interpretation (``interpret_turn``, pure), following ToolBench's harness:

- ``turn.format_error`` set (a text adapter could not parse it), or an empty turn -> ``invalid``:
  nothing is executed, the model gets a feedback message and the episode continues.
- Text and no call -> ``thought``: no observation, no feedback; the next turn follows it
  (ToolBench keeps it as a ``Thought`` node and expands it).
- ``Finish`` is read as ToolBench reads it (``agents.finish``): an answer -> ``finish``, a
  give-up -> ``give_up`` (other calls of the same turn run first; only the first counts); an
  unusable ``Finish`` is answered with ToolBench's literal error text as its observation. When
  calls follow the ``Finish`` in its turn, ``FinishCall.position`` records where it stood; under
  the env's ``toolbench`` finish rule (the presets) a ``Finish(give_answer)`` followed by calls
  answers with the last one's argument text (``FinishCall.late_answer``), as ToolBench records
  it; under the default, with the ``Finish``'s own answer.
- Every other call is dispatched by the env's rule (``agents.toolenv.dispatch``). A name that
  reaches no offered function is answered with ToolBench's ``No such function name`` observation
  and shown in later histories as ``invalid_hallucination_function_name`` (``hallucinated``).
  Arguments that are not a JSON object are not sent: an error observation says why.
- A turn that reached at least one offered function is an ``action``; one whose calls were all
  answered with errors (invented names, unusable ``Finish``) is ``invalid`` and gets no feedback
  message: the observations are the feedback, as in ToolBench.

A failed model call is an ``error`` node and a stop, by what the failure means: a request longer
than the model's context (``ModelError`` of kind ``context_length``) ends the episode as
``context_overflow`` (the agent's outcome, counted unsolved; running it again would overflow
again); a reply over the cap (``reply_too_large``) as ``error`` with an agent error record (what
the model sent, counted unsolved); any other failure as ``error`` with an infrastructure error
record. DFSDT with
``on_model_error = "prune"`` prunes either branch and goes on. A configuration error of the
endpoint (``ModelError.configuration``: a refused key, an unknown model) is not the episode's:
it is raised, so the run stops at the first one instead of failing every episode alike.

Every observation longer than ``max_observation_chars`` is cut there and ``...`` is appended
(ToolBench's ``max_observation_length`` cut). Imports the agents' records, prompts and Finish
reader, never a strategy, ``sandbox`` or ``mock_tools``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from agents.accounting import Accountant, Clock, DeadlineReached
from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.depth import node_levels
from agents.errors import (
    CONTEXT_LENGTH,
    REPLY_TOO_LARGE,
    ModelError,
    ReplayDivergence,
    ToolEnvError,
)
from agents.finish import read_finish
from agents.model import Message, Model, ToolCall, Turn
from agents.options import DEFAULT_MAX_OBSERVATION_CHARS, AgentOptions, DepthUnit
from agents.prompts import (
    CONVERSATION_NOTE,
    DEFAULT_SYSTEM_PROMPT,
    error_observation,
    format_feedback,
    with_policy,
)
from agents.toolenv import (
    FINISH,
    FINISH_FUNCTION,
    GIVE_ANSWER,
    DispatchRule,
    FinishRule,
    Observation,
    ToolEnv,
    dispatch,
    env_dispatch,
    env_finish_rule,
    env_policy,
    stateful,
)
from agents.trajectory import (
    Component,
    ErrorRecord,
    FinishCall,
    Node,
    NodeKind,
    Status,
    StepCall,
    Trajectory,
    messages_for,
    transcript_for,
)
from agents.user import User, UserTurn, ask_user, failure_kind
from agents.user_tools import user_tools

DEFAULT_MAX_USER_TURNS = 10
"""How often the user of a conversation may answer when the budget sets no ``max_user_turns``."""

CUT_MARK = "..."
"""Appended to a cut observation (ToolBench's ``rapidapi_wrapper.step`` appends the same)."""


@dataclass(frozen=True)
class Stop:
    """Why the episode must end now."""

    status: Status
    reason: str


@dataclass(frozen=True)
class EpisodeEnd:
    """How an episode ends: what its trajectory records (``agents.outcome`` builds one)."""

    status: Status
    reason: str
    """The trajectory's ``end_reason``."""
    chosen_path: list[int]
    final_answer: str | None = None

    @property
    def tree_end(self) -> str:
        """The ``end`` a search records in ``trajectory.tree``: ``answer_found``, ``budget``,
        ``context_overflow``, ``error`` or (gave up) ``tree_exhausted``."""
        if self.status is Status.answered:
            return "answer_found"
        if self.status is Status.gave_up:
            return "tree_exhausted"
        if self.status is Status.context_overflow:
            return "context_overflow"
        return "budget" if self.status is Status.budget_exhausted else "error"


@dataclass(frozen=True)
class StepResult:
    """The node added (if the model was asked) and whether the episode must stop.

    A failed model call gives an ``error`` node and a stop; a search may prune that branch
    instead of stopping (``on_model_error = "prune"``)."""

    node: Node | None
    stop: Stop | None = None


@dataclass
class Interpretation:
    kind: NodeKind
    calls: list[StepCall]
    finish: FinishCall | None = None
    format_error: str | None = None


def function_name(schema: dict[str, Any]) -> str:
    """The name of an OpenAI tool schema (``{"type": "function", "function": {...}}`` or bare)."""
    inner = schema.get("function", schema)
    return str(inner["name"])


def no_such_function(name: str) -> Observation:
    """ToolBench's answer to a call whose name matched no function (its exact text)."""
    error = f"No such function name: {name}"
    return Observation(
        ok=False,
        content=json.dumps({"error": error, "response": ""}),
        provenance="invalid",
        error=error,
    )


def _invalid_observation(message: str, content: str | None = None) -> Observation:
    return Observation(
        ok=False,
        content=error_observation(message) if content is None else content,
        provenance="invalid",
        error=message,
    )


def _unusable_finish(tc: ToolCall, observation: str) -> tuple[StepCall, str]:
    """A ``Finish`` call ToolBench cannot read, answered with its text; and the problem."""
    reason = f"unusable {FINISH} call: {observation}"
    answered = StepCall(
        id=tc.id,
        name=tc.name,
        arguments=tc.arguments,
        observation=_invalid_observation(reason, observation),
    )
    return answered, reason


def _prepare_call(
    tc: ToolCall, names: list[str], rule: DispatchRule
) -> tuple[StepCall, str | None]:
    """A call other than ``Finish``, dispatched by ``rule``: ready to send, or already answered
    with an error observation; and the problem when its name reaches no function."""
    call = StepCall(id=tc.id, name=tc.name, arguments=tc.arguments)
    target = dispatch(tc.name, names, rule)
    if target is None:
        call.hallucinated = True
        call.observation = no_such_function(tc.name)
        return call, f"unknown function {tc.name!r}"
    call.function = target
    try:
        call.args = tc.parsed_args()
    except ValueError as e:
        call.observation = _invalid_observation(f"invalid arguments for {tc.name}: {e}")
    return call, None


def interpret_turn(
    turn: Turn,
    function_names: Collection[str],
    rule: DispatchRule = "exact",
    finish_rule: FinishRule = "first_finish",
) -> Interpretation:
    """Classify a turn and prepare its calls (see the module docstring). Pure.

    ``function_names`` are the offered functions in the order offered (``Finish`` may be among
    them); ``rule`` is the env's dispatch rule, ``finish_rule`` its finish rule."""
    if turn.format_error:
        unparsed = [StepCall(id=c.id, name=c.name, arguments=c.arguments) for c in turn.tool_calls]
        return Interpretation(kind="invalid", calls=unparsed, format_error=turn.format_error)
    if not turn.tool_calls:
        if (turn.content or "").strip():
            return Interpretation(kind="thought", calls=[])
        return Interpretation(
            kind="invalid", calls=[], format_error="the turn was empty: no text, no function call"
        )

    names = list(function_names)
    finish: FinishCall | None = None
    finish_index = before = 0  # the Finish's place in the turn, and the calls before it
    problems: list[str] = []
    calls: list[StepCall] = []
    for index, tc in enumerate(turn.tool_calls):
        problem: str | None
        if tc.name != FINISH:
            call, problem = _prepare_call(tc, names, rule)
        else:
            reading = read_finish(tc.arguments)
            if reading.outcome != "error":
                if finish is None:  # only the first usable Finish counts
                    assert reading.return_type is not None
                    finish = FinishCall(
                        return_type=reading.return_type, final_answer=reading.final_answer
                    )
                    finish_index, before = index, sum(1 for c in calls if c.name != FINISH)
                continue
            call, problem = _unusable_finish(tc, reading.observation)
        if problem is not None:
            problems.append(problem)
        calls.append(call)

    if finish is not None:
        kind: NodeKind = "finish" if finish.return_type == GIVE_ANSWER else "give_up"
        # an unusable Finish next to the usable one is dropped from the executed calls
        calls = [c for c in calls if c.name != FINISH]
        if before < len(calls):
            finish.position = before
        later = turn.tool_calls[finish_index + 1 :]
        if finish_rule == "toolbench" and kind == "finish" and later:
            finish.late_answer = later[-1].arguments
        return Interpretation(kind=kind, calls=calls, finish=finish)
    if any(c.function is not None for c in calls):
        return Interpretation(kind="action", calls=calls)
    return Interpretation(kind="invalid", calls=calls, format_error="; ".join(problems))


def truncate_observation(obs: Observation, max_chars: int | None) -> Observation:
    """``obs`` with its content cut to ``max_chars`` and ``...`` appended, the cut recorded."""
    if max_chars is None or len(obs.content) <= max_chars:
        return obs
    return obs.model_copy(
        update={
            "content": obs.content[:max_chars] + CUT_MARK,
            "truncated": True,
            "original_length": obs.original_length or len(obs.content),
        }
    )


def _model_params(model: Model) -> dict[str, Any]:
    params = getattr(model, "params", None)
    return dict(params) if isinstance(params, dict) else {}


class Episode:
    """One episode's state, shared by the steps of an agent loop."""

    @classmethod
    def begin(
        cls,
        name: str,
        options: AgentOptions,
        *,
        model: Model,
        env: ToolEnv,
        query: str,
        budget: Budget,
        meta: EpisodeMeta,
    ) -> Episode:
        """An episode of strategy ``name``: its options give the recorded params, the system
        prompt, the observation limit and the depth unit."""
        return cls(
            agent=Component(name=name, params=options.model_dump(mode="json")),
            model=model,
            env=env,
            query=query,
            budget=budget,
            meta=meta,
            system_prompt=options.system_prompt or DEFAULT_SYSTEM_PROMPT,
            max_observation_chars=options.max_observation_chars,
            depth_unit=options.depth_unit,
        )

    def __init__(
        self,
        *,
        agent: Component,
        model: Model,
        env: ToolEnv,
        query: str,
        budget: Budget,
        meta: EpisodeMeta,
        system_prompt: str,
        max_observation_chars: int | None = DEFAULT_MAX_OBSERVATION_CHARS,
        depth_unit: DepthUnit = "turns",
        clock: Clock = time.monotonic,
    ) -> None:
        self.model = model
        self.env = env
        self.budget = budget
        self.max_observation_chars = max_observation_chars
        self.depth_unit: DepthUnit = depth_unit
        self.dispatch_rule: DispatchRule = env_dispatch(env)
        self.finish_rule: FinishRule = env_finish_rule(env)
        self.functions: list[dict[str, Any]] = [*env.functions, FINISH_FUNCTION]
        self.function_names: list[str] = [function_name(f) for f in self.functions]
        self._levels: dict[int, int] = {}
        self.user: User | None = getattr(env, "user", None)
        """In a conversation, who answers the agent's replies (``agents.user``)."""
        self.hidden: frozenset[str] = frozenset(self.user.hidden if self.user else ())
        if self.user is not None:
            system_prompt = f"{system_prompt}\n\n{CONVERSATION_NOTE}"
        system_prompt = with_policy(system_prompt, env_policy(env))  # a world's rules, last
        self.trajectory = Trajectory(
            run_id=meta.run_id,
            scenario_id=meta.scenario_id,
            trial=meta.trial,
            seed=meta.seed,
            agent=agent,
            model=Component(name=model.name, params=_model_params(model)),
            status=Status.error,
            end_reason="running",
            prompt=[
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": query},
            ],
            functions=self.functions,
        )
        self.accountant = Accountant(budget, self.trajectory.usage, clock)

    # -- building requests --------------------------------------------------------------------

    def path(self, node_id: int | None) -> list[Node]:
        return [] if node_id is None else self.trajectory.path_to(node_id)

    def level(self, node: Node) -> int:
        """The node's depth in the episode's depth unit (its own levels included). In a
        conversation it counts from the user's last answer: the depth limit is per turn."""
        if self.depth_unit == "turns" and self.user is None:
            return node.depth
        if node.id not in self._levels:
            above = self.level(self.trajectory.node(node.parent)) if node.parent is not None else 0
            if node.kind == "user":
                self._levels[node.id] = 0
            else:
                self._levels[node.id] = above + node_levels(node, self.depth_unit)
        return self._levels[node.id]

    # -- conversations ------------------------------------------------------------------------

    def offered(self, parent: int | None) -> tuple[list[dict[str, Any]], list[str]]:
        """The functions offered to a child of ``parent`` (and their names): every function
        but those the user hides and has not revealed on the path yet."""
        if not self.hidden:
            return self.functions, self.function_names
        revealed = {
            name
            for n in self.path(parent)
            if n.kind == "user" and n.user
            for name in n.user.get("reveal", [])
        }
        keep = [
            (f, name)
            for f, name in zip(self.functions, self.function_names, strict=True)
            if name not in self.hidden or name in revealed
        ]
        return [f for f, _ in keep], [name for _, name in keep]

    def transcript(self, node_id: int | None) -> list[Message]:
        """What the user has seen up to ``node_id``: its first message, then each reply of the
        agent and each of its own answers, in order."""
        return transcript_for(self.trajectory.prompt, self.path(node_id))

    def user_turns(self, node_id: int | None) -> int:
        """How often the user has answered on the path to ``node_id``."""
        return sum(1 for n in self.path(node_id) if n.kind == "user")

    def last_reply(self, node: Node) -> str | None:
        """The agent's last reply to the user on the path to ``node``."""
        for n in reversed(self.path(node.id)):
            if n.kind != "user" and n.reply is not None:
                return n.reply
        return None

    async def user_step(self, reply: Node) -> StepResult:
        """The user's answer to ``reply`` (a thought or a ``Finish``), recorded as a ``user``
        node under it; a stop when the user may not answer again (``max_user_turns``) or failed
        (its failure is the user's: an ``ErrorRecord`` of kind ``user``). A user with tools of
        its own (dual control, ``agents.user_tools``) acts from the state after ``reply``; its
        calls are the node's, so the state after the node includes them; one that failed in
        the infrastructure stops the episode as ``tool_infra``, never the user's failure."""
        assert self.user is not None
        limit = self.budget.max_user_turns
        if limit is None:
            limit = DEFAULT_MAX_USER_TURNS
        if self.user_turns(reply.id) >= limit:
            return StepResult(None, Stop(Status.budget_exhausted, "budget:max_user_turns"))
        tools = user_tools(self.env, self.state_after(reply.id))
        try:
            turn: UserTurn = await self.accountant.bounded(
                ask_user(self.user, self.transcript(reply.id), tools)
            )
        except DeadlineReached:
            return StepResult(None, Stop(Status.budget_exhausted, "budget:max_seconds"))
        node = self._add(
            reply.id,
            kind="user",
            content=turn.content,
            user=turn.record(),
            usage=turn.usage,
            calls=turn.calls,
        )
        infra = next((c for c in turn.calls if c.observation and c.observation.infra), None)
        if infra is not None and infra.observation is not None:
            obs = infra.observation
            message = f"the user's call {infra.name} failed in the infrastructure: {obs.error}"
            node.error = message
            self.trajectory.errors.append(ErrorRecord(kind="infra", message=message, node=node.id))
            return StepResult(node, Stop(Status.error, f"tool_infra:{obs.provenance}"))
        if turn.failure:
            self.trajectory.errors.append(
                ErrorRecord(kind="user", message=turn.failure, node=node.id)
            )
            return StepResult(node, Stop(Status.error, f"user_failure:{failure_kind(turn)}"))
        return StepResult(node)

    def request_messages(
        self, parent: int | None, diversity_prompt: str | None = None
    ) -> list[Message]:
        """The exact request for a child of ``parent``."""
        messages = messages_for(self.trajectory.prompt, self.path(parent))
        if diversity_prompt:
            messages.append({"role": "user", "content": diversity_prompt})
        return messages

    # -- one step -----------------------------------------------------------------------------

    def _add(self, parent: int | None, **fields: Any) -> Node:
        """Record a new node under ``parent`` (its id and depth follow from the tree)."""
        path = self.path(parent)
        node = Node(
            id=len(self.trajectory.nodes),
            parent=parent,
            depth=(path[-1].depth if path else 0) + 1,
            **fields,
        )
        self.trajectory.nodes.append(node)
        return node

    async def step(self, parent: int | None, *, diversity_prompt: str | None = None) -> StepResult:
        """Ask the model for the next turn after ``parent`` and record it as a new node."""
        blocked = self.accountant.model_call_blocked() or self._turn_blocked(parent)
        if blocked:
            return StepResult(None, Stop(Status.budget_exhausted, f"budget:{blocked}"))
        reply = await self._ask(parent, diversity_prompt)
        if isinstance(reply, StepResult):
            return reply
        self.accountant.add_model_call(reply.usage, retries=reply.retries)
        node = self._record_turn(reply, parent, diversity_prompt)
        if node.kind == "invalid":
            reason = node.format_error or "no usable function call"
            if all(c.observation is None for c in node.calls):
                node.feedback = format_feedback(reason, self.function_names)
            self.trajectory.errors.append(ErrorRecord(kind="agent", message=reason, node=node.id))
            return StepResult(node)
        if node.kind == "thought":
            return StepResult(node)
        stop = await self._run_calls(node)
        return StepResult(node, stop)

    def _turn_blocked(self, parent: int | None) -> str | None:
        """``max_turn_model_calls``: model calls since the user's last answer on the path."""
        limit = self.budget.max_turn_model_calls
        if limit is None:
            return None
        since = 0
        for n in reversed(self.path(parent)):
            if n.kind == "user":
                break
            since += 1
        return "max_turn_model_calls" if since >= limit else None

    async def _ask(self, parent: int | None, diversity_prompt: str | None) -> Turn | StepResult:
        """The model's turn after ``parent``; or, when the call failed, the step's result."""
        messages = self.request_messages(parent, diversity_prompt)
        functions, _ = self.offered(parent)
        try:
            turn: Turn = await self.accountant.bounded(self.model.complete(messages, functions))
        except DeadlineReached:
            self.accountant.add_model_call(Turn().usage)
            return StepResult(None, Stop(Status.budget_exhausted, "budget:max_seconds"))
        except ReplayDivergence as e:
            # A replay asked for a turn its recording does not hold: no node, a clear stop.
            self.trajectory.errors.append(ErrorRecord(kind="internal", message=str(e)))
            return StepResult(None, Stop(Status.error, "replay_divergence"))
        except ModelError as e:
            if e.configuration:  # the run is set up wrong: not this episode's end
                raise
            self.accountant.add_model_call(Turn().usage, retries=max(0, e.attempts - 1))
            node = self._add(
                parent, kind="error", diversity_prompt=diversity_prompt, error=f"{e.kind}: {e}"
            )
            if e.kind == CONTEXT_LENGTH:  # the history outgrew the model's context
                self.trajectory.errors.append(
                    ErrorRecord(kind="agent", message=str(e), node=node.id)
                )
                return StepResult(node, Stop(Status.context_overflow, "context_overflow"))
            # a reply over the cap is what the model sent: its outcome, not the infrastructure's
            kind = "agent" if e.kind == REPLY_TOO_LARGE else "infra"
            self.trajectory.errors.append(ErrorRecord(kind=kind, message=str(e), node=node.id))
            return StepResult(node, Stop(Status.error, f"model_error:{e.kind}"))
        return turn

    def _record_turn(self, turn: Turn, parent: int | None, diversity_prompt: str | None) -> Node:
        """The turn as a node: interpreted, its error observations cut, not yet executed."""
        plan = interpret_turn(turn, self.offered(parent)[1], self.dispatch_rule, self.finish_rule)
        for call in plan.calls:
            if call.observation is not None:
                call.observation = truncate_observation(
                    call.observation, self.max_observation_chars
                )
        return self._add(
            parent,
            kind=plan.kind,
            content=turn.content,
            calls=plan.calls,
            finish=plan.finish,
            format_error=plan.format_error,
            diversity_prompt=diversity_prompt,
            usage=turn.usage,
            latency_ms=turn.latency_ms,
        )

    def state_after(self, node_id: int | None) -> str | None:
        """The state a stateful env is in after ``node_id`` (and its calls): the last state an
        observation on its path carried; None for the initial state."""
        for n in reversed(self.path(node_id)):
            for c in reversed(n.calls):
                if c.observation is not None and c.observation.state is not None:
                    return c.observation.state
        return None

    async def _restore(self, node: Node) -> Stop | None:
        """Put a stateful env in the state ``node``'s parent ended in, before its calls (a
        search's backtrack, ReAct@N's next chain); nothing for a stateless env."""
        env = stateful(self.env)
        if env is None or all(c.observation is not None for c in node.calls):
            return None
        try:
            await self.accountant.bounded(env.restore_state(self.state_after(node.parent)))
        except DeadlineReached:
            node.error = "interrupted while restoring the state: budget:max_seconds"
            return Stop(Status.budget_exhausted, "budget:max_seconds")
        except ToolEnvError as e:
            node.error = f"the state could not be restored: {e.kind}: {e}"
            self.trajectory.errors.append(ErrorRecord(kind="infra", message=str(e), node=node.id))
            return Stop(Status.error, f"tool_error:{e.kind}")
        return None

    async def _run_calls(self, node: Node) -> Stop | None:
        stop = await self._restore(node)
        if stop is not None:
            return stop
        for call in node.calls:
            if call.observation is not None:  # not sendable: already answered with an error
                continue
            blocked = self.accountant.tool_call_blocked()
            if blocked:
                node.error = f"interrupted before call {call.id}: budget:{blocked}"
                return Stop(Status.budget_exhausted, f"budget:{blocked}")
            try:
                target = call.function or call.name
                obs: Observation = await self.accountant.bounded(
                    self.env.call(target, call.args or {})
                )
            except DeadlineReached:
                self.accountant.add_tool_call()
                node.error = f"interrupted during call {call.id}: budget:max_seconds"
                return Stop(Status.budget_exhausted, "budget:max_seconds")
            except ToolEnvError as e:
                self.accountant.add_tool_call()
                node.error = f"call {call.id} got no answer: {e.kind}: {e}"
                self.trajectory.errors.append(
                    ErrorRecord(kind="infra", message=str(e), node=node.id)
                )
                return Stop(Status.error, f"tool_error:{e.kind}")
            self.accountant.add_tool_call()
            call.observation = truncate_observation(obs, self.max_observation_chars)
            if obs.infra:
                message = f"tool call {call.name} failed in the infrastructure: {obs.error}"
                node.error = message
                self.trajectory.errors.append(
                    ErrorRecord(kind="infra", message=message, node=node.id)
                )
                return Stop(Status.error, f"tool_infra:{obs.provenance}")
        return None

    # -- the end ------------------------------------------------------------------------------

    def close(self, end: EpisodeEnd, *, tree: dict[str, Any] | None = None) -> Trajectory:
        """Close the episode as ``end`` says (and record the search's ``tree``)."""
        return self.end(
            end.status,
            end.reason,
            chosen_path=end.chosen_path,
            final_answer=end.final_answer,
            tree=tree,
        )

    def end(
        self,
        status: Status,
        reason: str,
        *,
        chosen_path: list[int],
        final_answer: str | None = None,
        tree: dict[str, Any] | None = None,
    ) -> Trajectory:
        """Close the episode with these fields and return its trajectory (``close`` takes them
        as one ``EpisodeEnd``)."""
        t = self.trajectory
        t.status = status
        t.end_reason = reason
        t.final_answer = final_answer
        t.chosen_path = chosen_path
        if tree is not None:
            t.tree = tree
        self.accountant.close()
        t.ended_at = datetime.now(timezone.utc)
        return t
