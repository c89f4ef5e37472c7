"""One external episode's scope: its model, its tools, its budget, and what it recorded.

Everything the agent does reaches the sandbox through one of three doors, and each is answered
here, through the same model layer and tool env as the built-in loops, under the episode's
budget, and recorded (``sandbox.external.record``):

- ``complete(request)``: a model request (the proxy's ``/v1/chat/completions``). The run's
  model answers (retries, cache, cost are the model layer's); the answer is rendered as a
  ``chat.completion`` (a replayed one as it was served when recorded);
- ``call(name, arguments, call_id)``: a tool call by function name (``/call``, MCP): read as
  the built-in loops read a call (``Finish``, dispatch, argument validation), sent through the
  episode's tool env, its observation cut as theirs are;
- ``forward(...)``: a request to the suite's own REST routes (``sandbox.tool_envs.forward``). In
  a world suite the tools act on the episode's world session, the one the env opened; the
  session routes (``/sessions...``, ``/reset``) are refused: the sandbox opens, restores and
  judges that session, and the agent would otherwise reach other episodes' sessions;
- ``reply(message)``: in a conversation (an env with a ``user``, ``agents.user``), the agent's
  reply to the user (``/reply``; a ``Finish`` giving an answer is one too): the user answers
  from the transcript it has seen, as it answers the built-in loops (``UserAnswer``).

The first of these events ends the episode: a ``Finish`` (an answer or a give-up; in a
conversation a give-up only), the user ending the conversation (``done``: ``answered`` with the
agent's last reply as its answer; ``transfer``, ``out_of_scope``: ``gave_up``), a user failure
(``error``, the user's: ``user_failure:<kind>``), a budget spent (``budget_exhausted``;
``max_user_turns`` and ``max_turn_model_calls`` as in the built-in loops), a model or tool
failure that survived the retries (an infrastructure error; but a history longer than the
model's context is ``context_overflow`` and a request the endpoint refused is the agent's
``model_error:bad_request``), or a replay that left its recording. After it, every request is
refused (``Refusal``) and ``ended`` is set, so the process is given its grace and then stopped.
A bug or a harness error (a ``SandboxError``) raised while answering is kept in ``fatal`` for
the episode to raise. May import ``agents``, ``sandbox.tool_envs`` and ``sandbox.external``.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from agents.accounting import Accountant, DeadlineReached
from agents.budget import Budget
from agents.depth import node_levels
from agents.errors import BAD_REQUEST, CONTEXT_LENGTH, ModelError, ReplayDivergence, ToolEnvError
from agents.finish import ANSWER_OBSERVATION, GIVE_UP_OBSERVATION
from agents.model import Model, Turn
from agents.models.exchange import EXCHANGE_RESPONSE, ModelRequest, completion_of, turn_of
from agents.options import DepthUnit
from agents.step import DEFAULT_MAX_USER_TURNS, Stop, truncate_observation
from agents.toolenv import GIVE_ANSWER, Observation, ToolEnv
from agents.trajectory import ErrorRecord, FinishCall, Node, Status, StepCall
from agents.user import User, ask_user, failure_kind
from agents.user_tools import user_tools
from sandbox.external.peer import EpisodeProcesses
from sandbox.external.record import EpisodeRecord
from sandbox.tool_envs.forward import ForwardedCall, Forwarder, route_kind
from sandbox.tool_envs.http import HttpToolEnv, WorldToolEnv, observation_text

__all__ = ["CallAnswer", "EpisodeScope", "Refusal", "UserAnswer"]


@dataclass(frozen=True)
class Refusal:
    """A request the episode does not answer: why, as an HTTP status and a code."""

    status: int
    code: str
    """``budget_exhausted``, ``episode_over``, ``model_error``, ``invalid_request``,
    ``context_length_exceeded``, ``replay_divergence``, ``tool_error``, ``no_rest_routes``,
    ``session_routes``, ``user_failure`` or ``no_user``."""
    message: str


@dataclass(frozen=True)
class UserAnswer:
    """The user's answer to a reply: what ``/reply`` answers with."""

    user: str
    signal: str | None
    reveal: list[str]
    tools: list[dict[str, Any]]
    """The functions offered from now on (those revealed included)."""

    def body(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "signal": self.signal,
            "reveal": self.reveal,
            "tools": self.tools,
        }


@dataclass(frozen=True)
class CallAnswer:
    """What a tool call is answered with: the observation text the built-in loops' model
    would have seen (``{"error", "response"}``), or a refusal."""

    text: str
    ok: bool
    provenance: str = ""
    refusal: Refusal | None = None


class EpisodeScope:
    """The state every door of one episode shares (see the module docstring)."""

    def __init__(
        self,
        *,
        model: Model,
        env: ToolEnv,
        record: EpisodeRecord,
        budget: Budget,
        max_observation_chars: int | None,
        depth_unit: DepthUnit = "turns",
    ) -> None:
        self.model = model
        self.env = env
        self.record = record
        self.budget = budget
        self.max_observation_chars = max_observation_chars
        self.depth_unit: DepthUnit = depth_unit
        self.accountant = Accountant(budget, record.trajectory.usage)
        self.forwarder = Forwarder(env) if isinstance(env, HttpToolEnv) else None
        self.user: User | None = getattr(env, "user", None)
        """In a conversation, who answers the agent's replies."""
        self.finished: FinishCall | None = None
        self.stop: Stop | None = None
        self.final_answer: str | None = None
        """The answer of an episode the user ended: the agent's last reply."""
        self.user_ended = False
        self.fatal: BaseException | None = None
        self.ended = asyncio.Event()
        self.agent: EpisodeProcesses | None = None
        """The agent's processes, once started with ``bind_process``: the only ones answered."""
        self._model_lock = asyncio.Lock()
        self._tool_lock = asyncio.Lock()

    # -- how the episode ends ---------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.ended.is_set()

    def end(self, stop: Stop | None = None, finish: FinishCall | None = None) -> None:
        """End the episode (the first end wins)."""
        if self.over:
            return
        self.stop, self.finished = stop, finish
        self.ended.set()

    def fail(self, error: BaseException) -> None:
        """A bug or a harness error while answering: the episode stops and raises it."""
        if self.fatal is None:
            self.fatal = error
        self.ended.set()

    def refusal(self) -> Refusal:
        """Why a request after the end is refused."""
        if self.stop is not None and self.stop.status is Status.budget_exhausted:
            reason = self.stop.reason.removeprefix("budget:")
            return Refusal(429, "budget_exhausted", f"the episode's budget is spent ({reason})")
        why = self.stop.reason if self.stop is not None else "the agent called Finish"
        if self.user_ended:
            why = "the user ended the conversation"
        return Refusal(400, "episode_over", f"the episode is over ({why})")

    def _spent(self, field: str) -> Refusal:
        self.end(Stop(Status.budget_exhausted, f"budget:{field}"))
        return self.refusal()

    # -- the model --------------------------------------------------------------------------

    def _model_blocked(self) -> str | None:
        """The budget limit that forbids another model call: the built-in loops' limits, and
        the depth of the chain so far (in the options' depth unit)."""
        blocked = self.accountant.model_call_blocked()
        # in a conversation the depth and max_turn_model_calls count from the user's last answer
        turn = self.record.since_user()
        limit = self.budget.max_depth
        if blocked is None and limit is not None:
            depth = sum(node_levels(n, self.depth_unit) for n in turn)
            blocked = "max_depth" if depth >= limit else None
        calls = self.budget.max_turn_model_calls
        if blocked is None and calls is not None and self.user is not None:
            first = turn[0].id if turn else len(self.record.nodes)
            asked = sum(1 for e in self.record.trajectory.exchanges if e["node"] >= first)
            blocked = "max_turn_model_calls" if asked >= calls else None
        return blocked

    async def complete(
        self, request: ModelRequest, *, model: str | None, stream: bool
    ) -> dict[str, Any] | Refusal:
        """Answer one model request (see the module docstring)."""
        async with self._model_lock:
            if self.over:
                return self.refusal()
            blocked = self._model_blocked()
            if blocked is not None:
                return self._spent(blocked)
            ask = self.model.complete(request.messages, request.tools, request.params)
            try:
                turn = await self.accountant.bounded(ask)
            except DeadlineReached:
                self.accountant.add_model_call(Turn().usage)
                return self._spent("max_seconds")
            except ReplayDivergence as e:
                self.record.trajectory.errors.append(ErrorRecord(kind="internal", message=str(e)))
                self.end(Stop(Status.error, "replay_divergence"))
                return Refusal(500, "replay_divergence", str(e))
            except ModelError as e:
                self.accountant.add_model_call(Turn().usage, retries=max(0, e.attempts - 1))
                self.record.add_failed_turn(e, request, model=model, stream=stream)
                return self._model_failed(e)
            self.accountant.add_model_call(turn.usage, retries=turn.retries)
            response = self._served(turn)
            served = turn_of(response).model_copy(
                update={"usage": turn.usage, "latency_ms": turn.latency_ms}
            )
            self.record.add_turn(served, request, model=model, stream=stream, response=response)
            return response

    def _model_failed(self, error: ModelError) -> Refusal:
        """End the episode on a model call that failed after the model layer's retries, as the
        built-in loops end theirs: a history longer than the model's context is
        ``context_overflow``; a request the endpoint refused (``bad_request``: the agent's
        own request, answered 400 so its client does not retry it) and any other failure are
        ``error`` / ``model_error:<kind>`` (a 502 for the endpoint's failures)."""
        if error.kind == CONTEXT_LENGTH:
            self.end(Stop(Status.context_overflow, "context_overflow"))
            return Refusal(400, "context_length_exceeded", str(error))
        self.end(Stop(Status.error, f"model_error:{error.kind}"))
        if error.kind == BAD_REQUEST:
            return Refusal(400, "invalid_request", str(error))
        return Refusal(502, "model_error", str(error))

    def _served(self, turn: Turn) -> dict[str, Any]:
        """The ``chat.completion`` the agent gets: a replayed turn's recorded one, else the
        turn rendered (the provider's finish reason kept when it gave one)."""
        raw = turn.raw if isinstance(turn.raw, dict) else {}
        recorded = raw.get(EXCHANGE_RESPONSE)
        if isinstance(recorded, dict):
            return recorded
        return completion_of(
            turn,
            id=f"chatcmpl-{secrets.token_hex(12)}",
            created=int(time.time()),
            model=self.model.name,
            finish_reason=_finish_reason(raw),
        )

    # -- the tools --------------------------------------------------------------------------

    async def call(self, name: str, arguments: str, call_id: str | None = None) -> CallAnswer:
        """Answer one tool call by function name (see the module docstring)."""
        async with self._tool_lock:
            if self.over:
                return _refused(self.refusal())
            plan, call_id = self.record.interpret(name, arguments, call_id)
            if plan.finish is not None and self._replies(plan.finish):
                heard = await self._hear(self.record.finish(plan.finish))
                if isinstance(heard, Refusal):
                    return _refused(heard)
                return CallAnswer(json.dumps(heard.body(), ensure_ascii=False), ok=True)
            if plan.finish is not None:
                self.record.finish(plan.finish)
                self.end(finish=plan.finish)
                done = plan.finish.return_type == GIVE_ANSWER
                return CallAnswer(ANSWER_OBSERVATION if done else GIVE_UP_OBSERVATION, ok=True)
            call = plan.calls[0]
            if call.observation is None:
                refused = await self._run(call)
                if refused is not None:
                    return _refused(refused)
            assert call.observation is not None
            call.observation = truncate_observation(call.observation, self.max_observation_chars)
            node = self.record.attach(call)
            self._check_infra(call.observation, call.name, node.id)
            obs = call.observation
            return CallAnswer(obs.content, ok=obs.ok, provenance=obs.provenance)

    async def _run(self, call: StepCall) -> Refusal | None:
        """Send a call to the tools; a refusal when the budget or the tools do not allow it."""
        blocked = self.accountant.tool_call_blocked()
        if blocked is not None:
            return self._spent(blocked)
        try:
            target = call.function or call.name
            call.observation = await self.accountant.bounded(self.env.call(target, call.args or {}))
        except DeadlineReached:
            self.accountant.add_tool_call()
            return self._spent("max_seconds")
        except ToolEnvError as e:
            self.accountant.add_tool_call()
            message = f"call {call.id} got no answer: {e.kind}: {e}"
            node = self.record.attach(call.model_copy(update={"observation": _lost(message)}))
            self.record.trajectory.errors.append(
                ErrorRecord(kind="infra", message=message, node=node.id)
            )
            self.end(Stop(Status.error, f"tool_error:{e.kind}"))
            return Refusal(502, "tool_error", message)
        self.accountant.add_tool_call()
        return None

    def _check_infra(self, obs: Observation | None, name: str, node: int) -> None:
        """A call the infrastructure failed (tool server, simulator down) ends the episode as
        an infrastructure error, as it ends the built-in loops'."""
        if obs is None or not obs.infra:
            return
        message = f"tool call {name} failed in the infrastructure: {obs.error}"
        self.record.trajectory.errors.append(ErrorRecord(kind="infra", message=message, node=node))
        self.end(Stop(Status.error, f"tool_infra:{obs.provenance}"))

    # -- the user ---------------------------------------------------------------------------

    def _replies(self, finish: FinishCall) -> bool:
        """In a conversation, a ``Finish`` giving an answer is a reply to the user."""
        return self.user is not None and finish.return_type == GIVE_ANSWER

    async def reply(self, message: str) -> UserAnswer | Refusal:
        """The agent says ``message`` to the user; the user's answer (see the module
        docstring)."""
        async with self._tool_lock:
            if self.over:
                return self.refusal()
            if self.user is None:
                return Refusal(400, "no_user", "this episode's task is no conversation: no user")
            return await self._hear(self.record.reply(message))

    async def last_reply(self, finish: FinishCall) -> None:
        """The answer an agent printed as it exited a conversation the user had not ended: its
        last reply, which the user answers; a conversation the user leaves open then ends
        ``gave_up`` (``left_conversation``): the agent left it."""
        await self._hear(self.record.finish(finish))
        if not self.over:
            self.final_answer = finish.final_answer
            self.end(Stop(Status.gave_up, "left_conversation"))

    async def _hear(self, reply: Node) -> UserAnswer | Refusal:
        """The user's answer to ``reply``, recorded as a ``user`` node under it."""
        assert self.user is not None
        limit = self.budget.max_user_turns
        if self.record.user_turns >= (DEFAULT_MAX_USER_TURNS if limit is None else limit):
            return self._spent("max_user_turns")
        # dual control: the user acts on its own tools where the agent's calls left the world
        tools = user_tools(self.env, getattr(self.env, "position", None))
        try:
            ask = ask_user(self.user, self.record.transcript(reply), tools)
            turn = await self.accountant.bounded(ask)
        except DeadlineReached:
            return self._spent("max_seconds")
        node = self.record.add_user(turn)
        for call in turn.calls:
            self._check_infra(call.observation, call.name, node.id)
        if self.over:
            return self.refusal()
        if turn.failure:
            error = ErrorRecord(kind="user", message=turn.failure, node=node.id)
            self.record.trajectory.errors.append(error)
            self.end(Stop(Status.error, f"user_failure:{failure_kind(turn)}"))
            return Refusal(502, "user_failure", f"the user failed: {turn.failure}")
        if turn.signal is not None:
            self.final_answer, self.user_ended = reply.reply or "", True
            done = turn.signal == "done"
            status = Status.answered if done else Status.gave_up
            self.end(Stop(status, "answered" if done else "gave_up"))
        return UserAnswer(turn.content, turn.signal, list(turn.reveal), self.record.offered()[0])

    # -- the suite's own routes -------------------------------------------------------------

    async def forward(
        self, method: str, path: str, *, query: str, content: bytes, content_type: str | None
    ) -> ForwardedCall | Refusal:
        """A request to the suite's REST routes, in this episode's scope; a tool call among
        them is budgeted and recorded like any other."""
        if self.forwarder is None:
            return Refusal(
                501,
                "no_rest_routes",
                "this run's tools are not a mock tool server (an MCP server or a recorded "
                "run): call them with POST /call or over MCP",
            )
        if isinstance(self.env, WorldToolEnv) and _session_route(path):
            return Refusal(
                403,
                "session_routes",
                "the episode's world session is the sandbox's (it opens, restores and judges "
                "it): call the tools, through POST /call, MCP or the REST routes, and they act on "
                "it",
            )
        send = self.forwarder.forward
        if not _is_call(method, path):
            return await send(method, path, query=query, content=content, content_type=content_type)
        async with self._tool_lock:
            if self.over:
                return self.refusal()
            blocked = self.accountant.tool_call_blocked()
            if blocked is not None:
                return self._spent(blocked)
            ask = send(method, path, query=query, content=content, content_type=content_type)
            try:
                answer = await self.accountant.bounded(ask)
            except DeadlineReached:
                self.accountant.add_tool_call()
                return self._spent("max_seconds")
            self.accountant.add_tool_call()
            call = _forwarded_call(answer, self.record.call_id(None))
            node = self.record.attach(call)
            self._check_infra(answer.observation, call.name, node.id)
            return answer


def _is_call(method: str, path: str) -> bool:
    return route_kind(method, path) is not None


def _session_route(path: str) -> bool:
    """A route of the world's sessions (``mock_tools.session_routes``) or ``/reset``."""
    first = path.strip("/").split("/", 1)[0]
    return first in ("sessions", "reset")


def _forwarded_call(answer: ForwardedCall, call_id: str) -> StepCall:
    return StepCall(
        id=call_id,
        name=answer.name,
        arguments=answer.arguments,
        function=answer.function,
        args=answer.args,
        tool=answer.tool,
        api=answer.api,
        observation=answer.observation,
    )


def _refused(refusal: Refusal) -> CallAnswer:
    return CallAnswer(observation_text(refusal.message, ""), ok=False, refusal=refusal)


def _lost(message: str) -> Observation:
    return Observation(
        ok=False,
        content=observation_text(message, ""),
        provenance="transport:lost",
        error=message,
        infra=True,
    )


def _finish_reason(raw: dict[str, Any]) -> str | None:
    """The finish reason an OpenAI-compatible provider gave, if its raw answer is at hand."""
    choices = raw.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        reason = choices[0].get("finish_reason")
        return reason if isinstance(reason, str) else None
    return None
