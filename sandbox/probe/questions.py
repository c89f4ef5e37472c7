"""The probe's questions: teacher-forced requests about each reference step prefix of a task.

For every task of a suite, ``build_probes`` makes three kinds of requests, each a chat history plus
the functions offered:

- ``next_step`` (one per prefix ``k`` = 0..len(steps)): the history is the query followed by the
  first ``k`` reference steps as assistant tool calls, each with what the call answers through
  the run's tools (``sandbox.tool_envs``: the recording, for a suite served in process); the
  task's functions and ``Finish`` are offered; the answer is the next call (thought as content).
  Gold: reference step ``k``, or ``Finish`` after the last step.
- ``plan`` (one per task): only the query and the function docs; the single function offered is
  ``submit_plan(steps=[{function, args}])``. Gold: the reference steps.
- ``review`` (one per reference step answered by a recording): the history up to and including
  that step's response; the single function offered is ``submit_review(verdict)``, A–E. Gold from
  the observation by ``verdict_of_observation`` (``sandbox.probe.verdicts``).

May import ``sandbox.tool_envs`` (the reference steps' answers) and ``sandbox.probe.verdicts``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.model import Message
from agents.toolenv import FINISH, FINISH_FUNCTION
from mock_tools.models import RefStep, Task
from mock_tools.names import function_name
from sandbox.eval.steps.actions import Apis
from sandbox.probe.verdicts import VERDICTS, verdict_of_observation
from sandbox.tool_envs import EpisodeToolEnv, ToolEnvs, tool_functions

__all__ = ["SUBMIT_PLAN", "SUBMIT_REVIEW", "ProbeItem", "ProbeKind", "build_probes"]

ProbeKind = Literal["next_step", "plan", "review"]
SUBMIT_PLAN: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Submit the whole plan: the function calls that solve the query, in order.",
        "parameters": {
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "function": {"type": "string"},
                            "args": {"type": "object"},
                        },
                        "required": ["function"],
                    },
                }
            },
            "required": ["steps"],
        },
    },
}
SUBMIT_REVIEW: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_review",
        "description": "Judge the last tool response. "
        + "; ".join(f"{k}: {v}" for k, v in VERDICTS.items()),
        "parameters": {
            "type": "object",
            "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)}},
            "required": ["verdict"],
        },
    },
}
SYSTEM_PROMPT = (
    "You are an assistant that solves the user's query by calling the functions offered, one "
    "step at a time. Think briefly, then call a function; call Finish with the final answer."
)
PLAN_PROMPT = (
    "Before calling anything, plan. The functions you can use are:\n{docs}\n"
    "Call submit_plan with every call you would make, in order, with its arguments."
)
REVIEW_PROMPT = "Judge the last tool response: call submit_review with one verdict, A to E."


class ProbeItem(BaseModel):
    task_id: str
    kind: ProbeKind
    index: int = Field(description="Reference steps given before the question.")
    messages: list[Message]
    tools: list[dict[str, Any]]
    gold: dict[str, Any] = Field(description="What is scored against; never sent to the model.")


async def build_probes(tasks: Sequence[Task], apis: Apis, tools: ToolEnvs) -> list[ProbeItem]:
    """Every probe of every task, in task then step order.

    The history after each reference step shows what the step's call answers through ``tools``
    (a run's tool environments, ``sandbox.tool_envs``); a review question is asked only about a
    recorded answer (provenance ``hit``)."""
    items: list[ProbeItem] = []
    for task in tasks:
        env = tools.for_episode(task, session=f"probe/{task.id}")
        try:
            items.extend(await _task_probes(task, apis, env))
        finally:
            await env.reset()
    return items


async def _task_probes(task: Task, apis: Apis, env: EpisodeToolEnv) -> list[ProbeItem]:
    """The next-step question before each reference step (and a review question after it when
    the step's answer was recorded), the question after the last step, and the plan question."""
    functions, targets = tool_functions(task, apis)
    offered = {pair: name for name, pair in targets.items()}
    next_tools = [*functions, FINISH_FUNCTION]
    base: list[Message] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task.query},
    ]
    history = list(base)
    items: list[ProbeItem] = []
    steps = task.reference.agent_steps
    for k, step in enumerate(steps):
        name = offered.get((step.tool, step.api)) or function_name(step.tool, step.api)
        gold: dict[str, Any] = {"function": name, "tool": step.tool, "api": step.api}
        gold |= {"args": step.args, "thought": step.thought}
        items.append(_item(task, "next_step", k, history, next_tools, gold))
        observation = await env.call(name, dict(step.args))
        history += _answered_step(k, name, step, observation.content)
        if observation.provenance == "hit":
            asked = [*history, {"role": "user", "content": REVIEW_PROMPT}]
            verdict = verdict_of_observation(observation.content)
            items.append(_item(task, "review", k, asked, [SUBMIT_REVIEW], {"verdict": verdict}))
    items.append(_item(task, "next_step", len(steps), history, next_tools, {"function": FINISH}))
    items.append(_plan_item(task, base, functions, offered))
    return items


def _item(
    task: Task,
    kind: ProbeKind,
    index: int,
    messages: list[Message],
    tools: list[dict[str, Any]],
    gold: dict[str, Any],
) -> ProbeItem:
    return ProbeItem(
        task_id=task.id, kind=kind, index=index, messages=list(messages), tools=tools, gold=gold
    )


def _answered_step(k: int, name: str, step: RefStep, content: str) -> list[Message]:
    """Reference step ``k`` as the assistant's call and the tool's answer to it."""
    call_id = f"ref_{k}"
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(step.args)},
    }
    return [
        {"role": "assistant", "content": step.thought, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "name": name, "content": content},
    ]


def _plan_item(
    task: Task,
    base: list[Message],
    functions: list[dict[str, Any]],
    offered: dict[tuple[str, str], str],
) -> ProbeItem:
    docs = "\n".join(json.dumps(f["function"], ensure_ascii=False) for f in functions)
    plan_gold = [
        {
            "function": offered.get((s.tool, s.api)) or function_name(s.tool, s.api),
            "tool": s.tool,
            "api": s.api,
            "args": s.args,
        }
        for s in task.reference.agent_steps
    ]
    asked: list[Message] = [*base, {"role": "user", "content": PLAN_PROMPT.format(docs=docs)}]
    return _item(task, "plan", 0, asked, [SUBMIT_PLAN], {"steps": plan_gold})
