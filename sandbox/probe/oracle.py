"""The probe's offline oracle: answers to probe questions derived from a task's reference plan.

It stands in for the offline models that follow the reference (``reference``,
``noisy-reference``: model kinds with ``probe="reference"``), which can play an episode but cannot
answer a plan or review question. May import ``sandbox.probe`` modules and ``eval`` statistics.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from typing import Any

from agents.model import Message, Model, ToolCall, Turn
from agents.toolenv import FINISH, GIVE_ANSWER
from mock_tools.models import Reference, Task
from sandbox.eval.stats import seeded_rng
from sandbox.probe.verdicts import VERDICTS, verdict_of_observation

__all__ = ["ModelFor", "ProbeOracle", "oracle_models"]

ModelFor = Callable[[str], Model]
"""The model that answers the questions of a task (by its id)."""


def _call(name: str, args: dict[str, Any], thought: str = "") -> Turn:
    return Turn(
        content=thought,
        tool_calls=[ToolCall(id=f"call_{name}", name=name, arguments=json.dumps(args))],
    )


class ProbeOracle:
    """Offline answers to probe questions, derived from a task's reference plan.

    - ``submit_plan`` offered: submits the reference steps as function calls;
    - ``submit_review`` offered: reads the last tool message and applies ``verdict_of_observation``;
    - otherwise (a next-step question): delegates to ``next_step`` (e.g. the agents' reference
      model) when given, else calls the first reference step the history has not made yet, or
      ``Finish`` with the reference answer.

    With ``rate`` > 0 each answer is, with that probability (seeded by seed, task and question),
    degraded: a plan loses or swaps a step, a verdict is replaced, a next step gets the wrong
    function or a wrong argument value.
    """

    def __init__(
        self,
        reference: Reference,
        *,
        next_step: Model | None = None,
        rate: float = 0.0,
        seed: int = 0,
        task_id: str = "",
    ) -> None:
        self.name = "probe-oracle" if rate == 0 else f"probe-oracle:{rate}"
        self._ref = reference
        self._next = next_step
        self._rate = rate
        self._seed = seed
        self._task = task_id

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        names = [t.get("function", {}).get("name") for t in tools]
        rng = seeded_rng(self._seed, self._task, names[:1], len(messages))
        noisy = rng.random() < self._rate
        if "submit_plan" in names:
            return self._plan(rng if noisy else None)
        if "submit_review" in names:
            return self._review(messages, rng if noisy else None)
        if self._next is not None:
            return await self._next.complete(messages, tools, params)
        return self._step(messages, [n for n in names if n and n != FINISH], rng if noisy else None)

    def _plan(self, rng: random.Random | None) -> Turn:
        steps = [{"function": s.offered_name, "args": dict(s.args)} for s in self._ref.agent_steps]
        if rng is not None and steps:
            if len(steps) > 1 and rng.random() < 0.5:
                i = rng.randrange(len(steps) - 1)
                steps[i], steps[i + 1] = steps[i + 1], steps[i]
            else:
                steps.pop(rng.randrange(len(steps)))
        return _call("submit_plan", {"steps": steps}, "Here is my plan.")

    def _review(self, messages: list[Message], rng: random.Random | None) -> Turn:
        last = next((m for m in reversed(messages) if m.get("role") == "tool"), None)
        verdict = verdict_of_observation(str(last.get("content", ""))) if last else "E"
        if rng is not None:
            verdict = rng.choice([v for v in VERDICTS if v != verdict])
        return _call("submit_review", {"verdict": verdict}, "Judging the last response.")

    def _step(self, messages: list[Message], offered: list[str], rng: random.Random | None) -> Turn:
        done = sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
        steps = self._ref.agent_steps
        if done >= len(steps):
            return _call(FINISH, {"return_type": GIVE_ANSWER, "final_answer": self._ref.answer})
        step = steps[done]
        name, args = step.offered_name, dict(step.args)
        if rng is not None:
            others = [n for n in offered if n != name]
            if others and rng.random() < 0.5:
                name = rng.choice(sorted(others))
            elif args:
                args[sorted(args)[0]] = "???"
            else:
                name = FINISH
                args = {"return_type": GIVE_ANSWER, "final_answer": ""}
        return _call(name, args, step.thought)


def oracle_models(tasks: Mapping[str, Task], *, rate: float = 0.0, seed: int = 0) -> ModelFor:
    """``model_for`` answering every question of a task with a ``ProbeOracle`` of its reference."""
    oracles = {
        tid: ProbeOracle(t.reference, rate=rate, seed=seed, task_id=tid) for tid, t in tasks.items()
    }
    return oracles.__getitem__
