"""What a task says about its world: the initial state's patch, the frozen clock and the checks.

A task of a world suite carries ``world:`` (a ``TaskWorld``)::

    world:
      now: "2026-03-02T09:00:00+00:00"     # the frozen clock (default: the world's)
      state:                                # merged into the world's base state
        orders: {O-1002: {status: delivered}}
        carts: {C-9: null}                  # null removes a record
      checks:
        gold: true                          # final state == the gold actions' state (default)
        ignore: [orders.*.updated_at]       # paths left out of that comparison
        assert:                             # assertions over the final state
          - {path: orders.O-1002.status, equals: returned}
          - {path: payments, where: {order_id: O-1002}, count: 1}
        forbid:                             # any hit fails the task
          actions: [{api: refund_payment, args: {payment_id: P-7}}]
          states: [{path: orders.O-1001.status, equals: cancelled}]
        require:
          actions: [{api: cancel_order, args: {order_id: O-1002}}]
        env_assertions:                     # calls on the final state and what they answer
          - {call: get_order_status, args: {order_id: O-1002}, value: returned}
        nl_assertions:                      # judged by a model (--judge), else skipped
          - The agent confirms the refund amount before cancelling.

The gold actions are the task's ``reference.steps`` (each a call of the world's tool, ``tool``
being the world's name). Paths and their comparisons are ``mock_tools.worlds.paths``.
``nl_assertions`` are statements about the conversation that no rule decides (τ²-bench's
natural-language assertions): ``sandbox eval --judge MODEL`` (or ``sandbox run --judge``) asks
a judge model about each (``sandbox.eval.nl_judge``), and the episode passes only if every one
is met; without a judge they are skipped and counted. Pure pydantic; imports nothing of the
project.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "ActionPattern",
    "EnvAssertion",
    "StateAssertion",
    "TaskWorld",
    "WorldChecks",
    "COMPARISONS",
]

COMPARISONS = (
    "equals",
    "not_equals",
    "one_of",
    "contains",
    "exists",
    "gt",
    "ge",
    "lt",
    "le",
    "count",
)
"""The comparisons an assertion may make; exactly one per assertion."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StateAssertion(_Strict):
    """A claim about a state: the value at ``path`` compared one way.

    ``path`` is ``collection.id.field...`` (``mock_tools.worlds.paths``); ``*`` in the id place
    means every record (the claim must hold for each). With ``where`` (field -> value), ``path``
    names a collection and the claim is about the records whose fields equal those values:
    ``count`` compares how many there are, any other comparison must hold for each of them (and
    holds for none when there are none)."""

    path: str = Field(min_length=1)
    where: dict[str, Any] | None = None
    equals: Any = None
    not_equals: Any = None
    one_of: list[Any] | None = None
    contains: Any = None
    exists: bool | None = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    count: int | None = Field(default=None, ge=0)
    field: str | None = Field(
        default=None, description="With ``where``: the field of each matching record compared."
    )

    @model_validator(mode="before")
    @classmethod
    def _one_comparison(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [k for k in COMPARISONS if k in data]
            if len(given) != 1:
                names = ", ".join(COMPARISONS)
                raise ValueError(
                    f"an assertion makes exactly one comparison ({names}); "
                    f"{'none' if not given else ', '.join(given)} given"
                )
            if "count" in data and "where" not in data and "*" not in str(data.get("path")):
                raise ValueError("'count' counts records: give 'where' (or a path with '*')")
        return data

    @property
    def comparison(self) -> str:
        return next(k for k in COMPARISONS if k in self.model_fields_set)

    @property
    def expected(self) -> Any:
        return getattr(self, self.comparison)

    def describe(self) -> str:
        where = f" where {self.where}" if self.where else ""
        of = f".{self.field}" if self.field else ""
        return f"{self.path}{where}{of} {self.comparison} {self.expected!r}"


class ActionPattern(_Strict):
    """A call of a world tool: ``api`` (the tool's name) and the arguments it must have (a
    subset: other arguments may differ), compared after canonicalisation."""

    api: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    tool: str | None = Field(default=None, description="The world's name (default: the suite's).")

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.api}({args})"


class Forbidden(_Strict):
    actions: list[ActionPattern] = Field(default_factory=list)
    states: list[StateAssertion] = Field(default_factory=list)


class Required(_Strict):
    actions: list[ActionPattern] = Field(default_factory=list)


class EnvAssertion(_Strict):
    """A call on the final state and the answer it must give (τ²'s environment assertion:
    ``env_type``, ``func_name``, ``arguments``, ``assert_value``). In a world of the project, the
    call is one of its tools (the agent's or the user's), run on the final state and discarded;
    a τ² world runs τ²'s own ``run_env_assertion``, whose functions need not be tools."""

    call: str = Field(min_length=1, description="The function (a tool's name).")
    args: dict[str, Any] = Field(default_factory=dict)
    side: Literal["agent", "user"] = Field(
        default="agent", description="Whose side it runs on (τ²'s env_type assistant/user)."
    )
    value: Any = Field(default=True, description="What the call must answer.")
    message: str | None = Field(default=None, description="What a failure means, if said.")

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{self.call}({args}) on the {self.side}'s side answers {self.value!r}"


class WorldChecks(_Strict):
    gold: bool = Field(
        default=True,
        description="The final state must equal the state the gold actions (reference steps) "
        "reach from the same initial state (τ²-bench's rule). On by default when the task "
        "has reference steps; written explicitly on a task without any, the final state must "
        "be its initial state.",
    )
    ignore: list[str] = Field(
        default_factory=list, description="Paths left out of the gold comparison ('*' matches)."
    )
    assertions: list[StateAssertion] = Field(default_factory=list, alias="assert")
    forbid: Forbidden = Field(default_factory=Forbidden)
    require: Required = Field(default_factory=Required)
    env_assertions: list[EnvAssertion] = Field(
        default_factory=list,
        description="Calls on the final state, each of which must answer its value.",
    )
    judged_turns: Literal["every", "with_gold"] = Field(
        default="every",
        description="A scripted conversation: which turns the per-turn checks judge. every: "
        "each turn; with_gold: only turns that have gold actions, each of which must hold a "
        "call of the agent (BFCL's rule: a turn without gold actions is one where the agent "
        "should not act, and is not checked).",
    )
    calls_only: bool = Field(
        default=False,
        description="The label is the state checks' alone (BFCL's rule: an entry is judged by "
        "the calls made in each turn): how the episode ended (a give-up, a spent budget, no "
        "final answer) does not fail it. Infrastructure and user failures are still left out.",
    )
    stops_judged: bool = Field(
        default=False,
        description="An agent that stops (gives up, or hands the customer over) is judged on "
        "what it left, as one that answered (τ²'s rule: an agent's stop is graded like the "
        "user's); a spent budget or an error still fails.",
    )
    nl_assertions: list[str] = Field(
        default_factory=list,
        description="Statements about the conversation a judge model decides (τ²-bench's "
        "natural-language assertions): with --judge, the episode passes only if the judge finds "
        "every one met; without a judge they are skipped and counted.",
    )
    turn_answers: bool = Field(
        default=False,
        description="A scripted conversation: at the end of each judged turn, the answers of "
        "that turn's gold actions must be among the answers of the agent's calls so far, each "
        "matched once, in any order (BFCL's execution-result check).",
    )


class TaskWorld(_Strict):
    now: str | None = Field(
        default=None, description="The frozen clock (ISO 8601); default: the world's own."
    )
    state: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Merged into the world's base state: collection -> id -> record (merged "
        "into the base record field by field; null removes it).",
    )
    checks: WorldChecks = Field(default_factory=WorldChecks)
