"""The texts the agent loops send to a model: system prompt, diversity prompt, format feedback.

All wording here is the project's own. The system prompt follows the shape of ToolBench's
function-calling prompt (solve the task step by step with functions, always end with ``Finish``).
Imports ``agents.toolenv`` only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP

DEFAULT_SYSTEM_PROMPT = f"""\
You solve the user's task by calling functions (tools). Work step by step: think briefly about \
what to do next, then call a function; its result is shown to you in the next message.
When you have gathered enough information, call {FINISH} with return_type "{GIVE_ANSWER}" and a \
complete final_answer written for the user. If you cannot make progress from the current state, \
call {FINISH} with return_type "{GIVE_UP}" instead.
Always end with {FINISH}: only the final_answer is shown to the user."""

CONVERSATION_NOTE = f"""\
You are in a conversation with the user. A message without a function call, or the final_answer \
of {FINISH} with return_type "{GIVE_ANSWER}", is your reply: the user reads it and may answer, \
and the conversation goes on until the user ends it. Ask the user when you need something only \
they know, and confirm actions that change something before you take them."""
"""Appended to the system prompt of an episode that has a user (``agents.user``)."""


POLICY_HEADER = "Keep to this policy of the tools' owner in everything you do:"
"""The line before a world's policy at the end of the system prompt (``with_policy``)."""


def with_policy(system_prompt: str, policy: str) -> str:
    """The system prompt of an episode on a tool env that has a policy (a world's rules,
    ``agents.toolenv.env_policy``): the prompt, then the policy under ``POLICY_HEADER``."""
    return f"{system_prompt}\n\n{POLICY_HEADER}\n{policy}" if policy else system_prompt


DIVERSITY_HEADER = "You have been at this exact state before."
"""First line of every diversity prompt (tests and tools may look for it)."""


TOOLBENCH_ACTION_VALUE = "mento-carlo-action-value"
"""The key ToolBench's DFS adds to every candidate (``tree_node.compute_weight``: always 0.0)."""


def diversity_prompt(
    earlier: Sequence[dict[str, Any]], last_observation: str | None, *, toolbench: bool = False
) -> str:
    """The user message that asks a DFSDT node's next child to differ from its earlier children.

    ``earlier`` holds one entry per earlier child action: ``{"name", "arguments",
    "function_output"}``. ``last_observation`` is what the state itself last observed, if any.
    ``toolbench``: the candidates as ToolBench's DFS writes them (each with its constant action
    value, the JSON ASCII-escaped); the wording stays the project's.
    """
    candidates = [dict(e) for e in earlier]
    if toolbench:
        for entry in candidates:
            entry[TOOLBENCH_ACTION_VALUE] = 0.0
    lines = [
        DIVERSITY_HEADER,
        "Earlier attempts from this state took these actions, with these results:",
        json.dumps(candidates, indent=2, ensure_ascii=toolbench),
    ]
    if last_observation:
        lines.append(f"As a reminder, the last result you observed here was: {last_observation}")
    lines.append(
        "Those attempts did not solve the task. Take an action that differs from all of them: "
        "call another function, or the same function with different arguments."
    )
    return "\n".join(lines)


def format_feedback(reason: str, function_names: Sequence[str]) -> str:
    """The user message sent back after a turn that held no usable function call."""
    names = ", ".join(function_names)
    return (
        f"Your last message could not be used: {reason}. "
        f"Reply with a call to one of the available functions ({names}). "
        f'To end, call {FINISH} with return_type "{GIVE_ANSWER}" and a final_answer, '
        f'or "{GIVE_UP}" to restart.'
    )


def error_observation(message: str) -> str:
    """The observation text for a call that was not sent to the tools (ToolBench's shape)."""
    return json.dumps({"error": message, "response": ""}, ensure_ascii=False)
