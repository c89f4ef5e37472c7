"""The ``noisy-reference`` offline model: the reference policy with seeded mistakes.

At each request, with probability ``rate``, the turn is a mistake instead of the reference's
next turn. The draw comes from ``sha256(seed, task_id, position, attempt)`` where *position* is a
digest of the request's assistant turns and tool results (``history.history_digest``) and
*attempt* counts how often this instance was already asked at that position. So a second request
at the same state (DFSDT's second child, ReAct@N's second chain) can get a different turn, yet a
whole run is reproducible bit for bit. Build one instance per episode.

The mistake mix (``MISTAKE_WEIGHTS``, shares of the mistakes) is chosen so that search helps:

====================  ======  ===============================================================
mistake               share   what a strategy can do about it
====================  ======  ===============================================================
wrong_tool            0.20    another offered function with the step's arguments; recoverable:
                              the next turn retries the step
unknown_tool          0.10    a function that does not exist; recoverable the same way
missing_argument      0.15    a required argument dropped; recoverable
wrong_argument        0.15    one argument value altered; recoverable
malformed_arguments   0.05    argument text that is not JSON; recoverable
give_up               0.25    Finish(give_up_and_restart): ends a ReAct chain; DFSDT backtracks
                              and ReAct@N starts another chain, so search recovers
premature_answer      0.10    Finish(give_answer) with a partial, wrong answer: ends every
                              strategy with a wrong answer; nothing recovers
====================  ======  ===============================================================

With every plan step already done, call mistakes become a spurious call of another offered
function, and a premature answer is a wrong final answer.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from agents.model import Message, ToolCall, Turn
from agents.models.history import history_digest
from agents.models.reference import (
    PlanStep,
    ReferencePlan,
    estimate_usage,
    finish_args,
    next_call_id,
    planned_turn,
    steps_done,
)
from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP

MISTAKE_WEIGHTS: dict[str, float] = {
    "wrong_tool": 0.20,
    "unknown_tool": 0.10,
    "missing_argument": 0.15,
    "wrong_argument": 0.15,
    "malformed_arguments": 0.05,
    "give_up": 0.25,
    "premature_answer": 0.10,
}
RECOVERABLE_BY_RETRY = frozenset(MISTAKE_WEIGHTS) - {"give_up", "premature_answer"}

_UNKNOWN_SUFFIXES = ("v2", "pro", "lookup", "advanced", "search")
GIVE_UP_THOUGHT = "I cannot make progress from this state, so I will restart."
PREMATURE_THOUGHT = "I think I already know enough to answer."


def draw_rng(seed: int, task_id: str, position: str, attempt: int) -> random.Random:
    """The seeded generator of one request."""
    key = f"{seed}\x1f{task_id}\x1f{position}\x1f{attempt}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def offered_names(tools: list[dict[str, Any]]) -> list[str]:
    return [str(t.get("function", t).get("name")) for t in tools]


def required_params(tools: list[dict[str, Any]], function: str) -> list[str]:
    for t in tools:
        fn = t.get("function", t)
        if fn.get("name") == function:
            return list((fn.get("parameters") or {}).get("required") or [])
    return []


def altered_value(value: Any) -> Any:
    """A plausible but different value of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 1.5 + 1
    if isinstance(value, str):
        return value[::-1] + "x" if value else "unknown"
    if isinstance(value, list):
        return value[:-1] if value else ["unknown"]
    if isinstance(value, dict):
        return {}
    return "unknown"


def wrong_answer(answer: str) -> str:
    """A partial, wrong answer: the first half of the words, every digit shifted by one."""
    words = answer.split()
    partial = " ".join(words[: max(1, len(words) // 2)])
    shifted = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), partial)
    return shifted if shifted and shifted != answer else "I could not verify this."


class NoisyReferenceModel:
    """``ReferenceModel`` with seeded mistakes at ``rate`` (see the module docstring)."""

    def __init__(
        self,
        plan: ReferencePlan,
        rate: float = 0.3,
        seed: int = 0,
        task_id: str = "",
        *,
        name: str | None = None,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"the mistake rate must be between 0 and 1, got {rate}")
        self.plan = plan
        self.rate = rate
        self.seed = seed
        self.task_id = task_id
        self.name = name or f"noisy-reference:{rate:g}"
        self._attempts: dict[str, int] = {}

    @property
    def params(self) -> dict[str, Any]:
        return {"rate": self.rate, "seed": self.seed}

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        position = history_digest(messages)
        attempt = self._attempts.get(position, 0)
        self._attempts[position] = attempt + 1
        rng = draw_rng(self.seed, self.task_id, position, attempt)
        mistake: str | None = None
        if rng.random() < self.rate:
            kinds = list(MISTAKE_WEIGHTS)
            mistake = rng.choices(kinds, weights=[MISTAKE_WEIGHTS[k] for k in kinds])[0]
            turn = self._mistake(mistake, rng, messages, tools)
        else:
            turn = planned_turn(self.plan, messages)
        turn.usage = estimate_usage(messages, tools, turn)
        turn.raw = {"mistake": mistake, "attempt": attempt}
        return turn

    # -- mistakes ------------------------------------------------------------------------------

    def _mistake(
        self, kind: str, rng: random.Random, messages: list[Message], tools: list[dict[str, Any]]
    ) -> Turn:
        call_id = next_call_id(messages)
        if kind == "give_up":
            call = ToolCall(id=call_id, name=FINISH, arguments=finish_args(GIVE_UP))
            return Turn(content=GIVE_UP_THOUGHT, tool_calls=[call])
        if kind == "premature_answer":
            args = finish_args(GIVE_ANSWER, wrong_answer(self.plan.answer))
            return Turn(
                content=PREMATURE_THOUGHT,
                tool_calls=[ToolCall(id=call_id, name=FINISH, arguments=args)],
            )

        done = steps_done(self.plan, messages)
        names = [n for n in offered_names(tools) if n != FINISH]
        if done >= len(self.plan.steps):
            # nothing left to call: a spurious call of some offered function
            step = PlanStep(thought="Let me double-check one more thing.", function="", args={})
            kind = "wrong_tool"
        else:
            step = self.plan.steps[done]
        name, args_text = self._bad_call(kind, rng, step, names, tools)
        return Turn(
            content=step.thought, tool_calls=[ToolCall(id=call_id, name=name, arguments=args_text)]
        )

    def _bad_call(
        self,
        kind: str,
        rng: random.Random,
        step: PlanStep,
        names: list[str],
        tools: list[dict[str, Any]],
    ) -> tuple[str, str]:
        args = dict(step.args)
        if kind == "missing_argument" and args:
            required = [k for k in required_params(tools, step.function) if k in args]
            del args[rng.choice(sorted(required or args))]
            return step.function, json.dumps(args, ensure_ascii=False)
        if kind == "wrong_argument" and args:
            key = rng.choice(sorted(args))
            args[key] = altered_value(args[key])
            return step.function, json.dumps(args, ensure_ascii=False)
        if kind == "malformed_arguments":
            return step.function, json.dumps(args, ensure_ascii=False)[:-1]
        others = [n for n in names if n != step.function]
        if kind == "wrong_tool" and others:
            return rng.choice(others), json.dumps(args, ensure_ascii=False)
        base = step.function or (names[0] if names else "tool")
        offered = set(names)
        for suffix in rng.sample(_UNKNOWN_SUFFIXES, len(_UNKNOWN_SUFFIXES)):
            candidate = f"{base}_{suffix}"
            if candidate not in offered:
                return candidate, json.dumps(args, ensure_ascii=False)
        return f"{base}_unknown_{rng.randrange(10**6)}", json.dumps(args, ensure_ascii=False)
