"""The ``reference`` offline model: follows a task's reference solution, then answers.

Stateless: progress is read from the request history, so one instance serves every branch of a
search tree. A plan step is done when the assistant's calls, walked in order, contain a call to
the step's function with the step's arguments (compared as parsed JSON objects) after the
previous step's match. The next step is returned as a tool call (the step's thought as content);
when every step is done, ``Finish(give_answer, plan.answer)``. For an unsolvable task the plan's
answer is the explanation of why it cannot be done.

Failures a retry may fix: when the latest attempt of the step just done came back with an error
that reads as transient (a server error, a timeout, a rate limit, an empty or malformed body, an
unreachable tool: ``transient_error``), the model does what a model would, and calls again with
the same arguments, up to ``MAX_RETRIES`` times; then it gives up (``Finish(give_up_and_restart)``),
so a search strategy can try another branch. A plan whose next step is that same call already
retries (the suite's recovery tasks): it is followed as written. Errors that are the tool's
answer (not found, invalid arguments, no recording) are not retried.

Usage is estimated (about four characters a token) so token budgets behave deterministically;
latency is 0.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from agents.model import Message, ToolCall, Turn, Usage
from agents.models.history import HistoryCall, call_results, history_calls, parse_json_object
from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP

CHARS_PER_TOKEN = 4
FINISH_THOUGHT = "I have gathered everything needed, so I will give the final answer."
REPLY_THOUGHT = "I will tell the user where things stand."
RETRY_THOUGHT = "The call failed ({error}); this looks temporary, so I will try it again."
FAILED_THOUGHT = "The tool keeps failing ({error}); I will restart and try another way."
MAX_RETRIES = 2
"""Repeats of a call whose answer reads as a transient failure, before giving up."""

_TRANSIENT = re.compile(
    r"^\s*(?:HTTP\s*)?(?:5\d\d|429)\b|\b(?:internal (?:server )?error|server error|unavailable|"
    r"timed? ?out|timeout|rate.?limit|too many requests|try again|retry|malformed body|"
    r"empty body|cannot reach)\b",
    re.IGNORECASE,
)
_ECHOED_ARGUMENTS = re.compile(r"\{.*\}", re.DOTALL)
"""Arguments an error message quotes back: their words say nothing about the failure."""


class PlanStep(BaseModel):
    thought: str = ""
    function: str = Field(description="The function name as offered, e.g. ``<api>_for_<tool>``.")
    args: dict[str, Any] = Field(default_factory=dict)
    turn: int = Field(default=0, description="In a conversation: the turn it belongs to.")


class ReferencePlan(BaseModel):
    steps: list[PlanStep] = Field(default_factory=list)
    answer: str = ""
    solvable: bool = True
    replies: list[str] = Field(
        default_factory=list,
        description="In a conversation: the reply ending each turn but the last (``answer``).",
    )


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


def estimate_usage(messages: list[Message], tools: list[dict[str, Any]], turn: Turn) -> Usage:
    """Deterministic token counts for an offline turn."""
    prompt = json.dumps(messages, ensure_ascii=False, sort_keys=True) + json.dumps(
        tools, ensure_ascii=False, sort_keys=True
    )
    completion = (turn.content or "") + "".join(c.name + c.arguments for c in turn.tool_calls)
    return Usage(
        prompt_tokens=estimate_tokens(prompt), completion_tokens=1 + estimate_tokens(completion)
    )


def _is_step(call: HistoryCall, step: PlanStep) -> bool:
    return call.name == step.function and parse_json_object(call.arguments) == step.args


def progress(plan: ReferencePlan, messages: list[Message]) -> tuple[int, int | None]:
    """How many plan steps the history has completed, in order, and the position (among the
    history's calls) of the call that completed the last of them."""
    done, at = 0, None
    for i, call in enumerate(history_calls(messages)):
        if done >= len(plan.steps):
            break
        if _is_step(call, plan.steps[done]):
            done, at = done + 1, i
    return done, at


def steps_done(plan: ReferencePlan, messages: list[Message]) -> int:
    """How many plan steps the history has completed, in order."""
    return progress(plan, messages)[0]


def transient_error(result: str | None) -> str | None:
    """The error of a tool answer that a retry may fix, else None.

    The answer is the observation text the model sees (``{"error": ..., "response": ...}``)."""
    if not result:
        return None
    try:
        data = json.loads(result)
    except json.JSONDecodeError:
        return None
    error = str(data.get("error") or "") if isinstance(data, dict) else ""
    return error if error and _TRANSIENT.search(_ECHOED_ARGUMENTS.sub("", error)) else None


def _failing_attempts(plan: ReferencePlan, messages: list[Message]) -> tuple[PlanStep, int, str]:
    """The step just done, how often it was attempted since, and the error of the latest
    attempt, when that attempt failed transiently and the plan does not repeat the call itself;
    raises LookupError otherwise."""
    done, at = progress(plan, messages)
    if at is None:
        raise LookupError
    step = plan.steps[done - 1]
    following = plan.steps[done] if done < len(plan.steps) else None
    if following is not None and (following.function, following.args) == (step.function, step.args):
        raise LookupError  # the plan retries this call itself
    attempts = [r for c, r in call_results(messages)[at:] if _is_step(c, step)]
    error = transient_error(attempts[-1])
    if error is None:
        raise LookupError
    return step, len(attempts), error


def next_call_id(messages: list[Message]) -> str:
    """A deterministic id, unique within the conversation."""
    return f"call_{len(history_calls(messages))}"


def finish_args(return_type: str, answer: str = "") -> str:
    return json.dumps({"return_type": return_type, "final_answer": answer}, ensure_ascii=False)


def _reaction(plan: ReferencePlan, messages: list[Message], call_id: str) -> Turn | None:
    """A retry of a call that failed transiently, or a give-up after ``MAX_RETRIES``."""
    try:
        step, attempts, error = _failing_attempts(plan, messages)
    except LookupError:
        return None
    brief = error if len(error) <= 80 else error[:77] + "..."
    if attempts > MAX_RETRIES:
        return Turn(
            content=FAILED_THOUGHT.format(error=brief),
            tool_calls=[ToolCall(id=call_id, name=FINISH, arguments=finish_args(GIVE_UP))],
        )
    args = json.dumps(step.args, ensure_ascii=False)
    return Turn(
        content=RETRY_THOUGHT.format(error=brief),
        tool_calls=[ToolCall(id=call_id, name=step.function, arguments=args)],
    )


def pending_reply(plan: ReferencePlan, messages: list[Message], done: int) -> str | None:
    """In a conversation: the reply of a turn whose steps are done and that was not said yet
    (the history holds no assistant message with its text)."""
    if not plan.replies:
        return None
    upto = plan.steps[done].turn if done < len(plan.steps) else len(plan.replies)
    said = {m.get("content") for m in messages if m.get("role") == "assistant"}
    return next((r for r in plan.replies[:upto] if r not in said), None)


def planned_turn(plan: ReferencePlan, messages: list[Message]) -> Turn:
    """The reference's next turn for this history (usage not filled in). In a conversation,
    a turn whose steps are done ends with its reply (``replies``) before the next turn's steps."""
    call_id = next_call_id(messages)
    reaction = _reaction(plan, messages, call_id)
    if reaction is not None:
        return reaction
    done = steps_done(plan, messages)
    reply = pending_reply(plan, messages, done)
    if reply is not None:
        return Turn(
            content=REPLY_THOUGHT,
            tool_calls=[
                ToolCall(id=call_id, name=FINISH, arguments=finish_args(GIVE_ANSWER, reply))
            ],
        )
    if done < len(plan.steps):
        step = plan.steps[done]
        args = json.dumps(step.args, ensure_ascii=False)
        return Turn(
            content=step.thought,
            tool_calls=[ToolCall(id=call_id, name=step.function, arguments=args)],
        )
    return Turn(
        content=FINISH_THOUGHT,
        tool_calls=[
            ToolCall(id=call_id, name=FINISH, arguments=finish_args(GIVE_ANSWER, plan.answer))
        ],
    )


class ReferenceModel:
    """Deterministic policy that executes ``plan`` and answers with its reference answer."""

    def __init__(self, plan: ReferencePlan, *, name: str = "reference") -> None:
        self.plan = plan
        self.name = name

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        turn = planned_turn(self.plan, messages)
        turn.usage = estimate_usage(messages, tools, turn)
        return turn
