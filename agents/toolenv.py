"""The tool environment protocol: the functions offered, a way to call them, and the dispatch rule.

A model names the function it calls; the *dispatch rule* says which offered function that name
means. ``exact`` (the default): the name must equal an offered function's name.
``toolbench_suffix``: ToolBench's rule (``rapidapi_wrapper._step``): the first offered function,
in the order offered, whose name ends with the name written, so a model that shortens
``get_weather_for_weatherapi`` to ``weatherapi`` still reaches it. ``dispatch`` below is the one
implementation; the agents' step, the importers and replay all call it. A ``ToolEnv`` declares
its rule with a ``dispatch`` attribute (``exact`` when it has none).

Imports nothing from the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

FINISH = "Finish"
GIVE_ANSWER = "give_answer"
GIVE_UP = "give_up_and_restart"

HALLUCINATED_NAME = "invalid_hallucination_function_name"
"""What ToolBench's history shows instead of a function name that matched no offered function."""

DispatchRule = Literal["exact", "toolbench_suffix"]
DISPATCH_RULES: tuple[DispatchRule, ...] = get_args(DispatchRule)

FinishRule = Literal["first_finish", "toolbench"]
"""How a turn that calls ``Finish(give_answer)`` and then other functions answers:
``first_finish`` (the default): with the ``Finish``'s answer; ``toolbench``: as ToolBench's loops
(``DFS.py``, ``single_chain.py``) record it, with the raw argument text of the turn's last call,
the node their chain ends on. The later calls run under both rules."""
FINISH_RULES: tuple[FinishRule, ...] = get_args(FinishRule)

FINISH_FUNCTION: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": FINISH,
        "description": (
            "If you believe that you have obtained a result that can answer the task, call this "
            "function to provide the final answer. Alternatively, if you recognize that you are "
            "unable to proceed with the task in the current state, call this function to restart. "
            "Remember: you must ALWAYS call this function at the end of your attempt, and the "
            "only part that will be shown to the user is the final answer."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "return_type": {"type": "string", "enum": [GIVE_ANSWER, GIVE_UP]},
                "final_answer": {
                    "type": "string",
                    "description": (
                        "The final answer you want to give the user. You should have this "
                        "field if return_type=='give_answer'"
                    ),
                },
            },
            "required": ["return_type"],
        },
    },
}
"""ToolBench's ``Finish`` function, offered by every agent next to the env's functions."""


class Observation(BaseModel):
    """What a tool call returned, as the agent sees it, plus how it was produced."""

    ok: bool
    content: str = Field(description="The text shown to the model (JSON: {error, response}).")
    status: int | None = Field(default=None, description="HTTP status, when there is one.")
    provenance: str = Field(
        default="hit",
        description="hit | miss | nearest | simulated | upstream | invalid | fault:<kind> | ...",
    )
    error: str = ""
    origin: dict[str, Any] | None = Field(
        default=None,
        description="Where an answer made at run time came from (source, simulator model, time).",
    )
    infra: bool = Field(
        default=False,
        description="An infrastructure failure (tool server, simulator or upstream down): "
        "the episode stops as an infrastructure error, never the agent's.",
    )
    truncated: bool = Field(default=False, description="Content was cut to the configured size.")
    original_length: int | None = None
    latency_ms: float = 0.0
    state: str | None = Field(
        default=None,
        description="A stateful tool env (a world): the hash of its state after this call. "
        "Left out of the record when None.",
    )
    changes: list[dict[str, Any]] | None = Field(
        default=None,
        description="A stateful tool env: the records this call changed (collection, id, "
        "before, after). Left out of the record when None.",
    )

    @model_serializer(mode="wrap")
    def _without_stateless_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            if data.get("state") is None:
                data.pop("state", None)
            if data.get("changes") is None:
                data.pop("changes", None)
        return data


@runtime_checkable
class ToolEnv(Protocol):
    """The agent's side of the tools. ``functions`` excludes ``Finish``; agents add it.

    ``call`` receives the offered function's full name (the loops dispatch the name the model
    wrote first). An env may also declare ``dispatch: DispatchRule`` (see ``env_dispatch``) and
    ``finish_rule: FinishRule`` (``env_finish_rule``).
    """

    @property
    def functions(self) -> list[dict[str, Any]]: ...

    async def call(self, name: str, args: dict[str, Any]) -> Observation: ...


@runtime_checkable
class StatefulToolEnv(ToolEnv, Protocol):
    """A tool env whose answers depend on a state the calls change (a world).

    ``restore_state(state)`` puts the env back in a state it has been in, by the hash its
    observations carried (``Observation.state``); ``None`` is the episode's initial state. The
    agents' step restores, before a node's calls, the state its parent ended in, so every branch
    of a search and every chain of ReAct@N acts on its own state."""

    async def restore_state(self, state: str | None) -> None: ...


def stateful(env: object) -> StatefulToolEnv | None:
    """``env`` when it keeps a state (it has ``restore_state``), else None."""
    return env if callable(getattr(env, "restore_state", None)) else None  # type: ignore[return-value]


def env_policy(env: object) -> str:
    """The rules a tool env asks the agent to keep (its ``policy`` text: a world's, which the
    agents' step puts at the end of the system prompt), "" for none."""
    policy = getattr(env, "policy", "")
    return policy.strip() if isinstance(policy, str) else ""


def dispatch(name: str, function_names: Sequence[str], rule: DispatchRule = "exact") -> str | None:
    """The offered function that a call named ``name`` reaches under ``rule``, or None.

    ``function_names`` are the offered functions in the order offered. ``Finish`` is never a
    dispatch target: the loops read it before dispatching (ToolBench compares it exactly first;
    a name that only ``Finish`` ends with, such as ``ish``, crashes ToolBench's harness and is
    simply unknown here).
    """
    if rule == "exact":
        return name if name in function_names and name != FINISH else None
    if rule == "toolbench_suffix":
        return next((f for f in function_names if f != FINISH and f.endswith(name)), None)
    raise ValueError(f"unknown dispatch rule {rule!r}; known: {', '.join(DISPATCH_RULES)}")


def env_finish_rule(env: object) -> FinishRule:
    """The finish rule a tool env declares (``finish_rule``; ``first_finish`` when none)."""
    rule = getattr(env, "finish_rule", "first_finish")
    if rule not in FINISH_RULES:
        raise ValueError(f"unknown finish rule {rule!r}; known: {', '.join(FINISH_RULES)}")
    return rule


def env_dispatch(env: object) -> DispatchRule:
    """The dispatch rule a tool env declares (``exact`` for an env that declares none)."""
    rule = getattr(env, "dispatch", "exact")
    if rule not in DISPATCH_RULES:
        raise ValueError(f"unknown dispatch rule {rule!r}; known: {', '.join(DISPATCH_RULES)}")
    return rule
