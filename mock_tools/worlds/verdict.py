"""The state checks of a task: a sequence of calls replayed on a fresh world, and the task's
checks on the states they reach.

``replay(engine, task, calls, seed)`` re-executes ``calls`` (each an ``Action``: the tool, its
arguments as given, and, when known, the state hash a run recorded after it) from the task's
initial state, with the seed and the task's clock, exactly as the server does (canonical
arguments, the engine's atomic call). A call whose recorded hash the replay does not reach is a
``divergence`` (the world's code or state files changed since the run, or its code is not
deterministic); the replay stops there. ``judge(engine, task, replayed, seed)`` then checks:

- ``gold``: the final state equals the state the gold actions (the task's reference steps)
  reach from the same initial state, bookkeeping collections and ``ignore``d paths left out
  (τ²-bench's rule). On a difference, ``diff`` sorts every differing path into ``collateral``
  (the agent changed it, the gold did not), ``missed`` and ``wrong``;
- ``assert``: each assertion holds on the final state;
- ``env_assertions``: each call, run on the final state, answers its value (τ²'s environment
  assertions; ``WorldEngine.env_assertion``);
- ``forbid.states``: no state along the calls (the initial one included) satisfies one;
- ``forbid.actions``: no call the world carried out (answered ok) matches one;
- ``require.actions``: each is matched by a call the world carried out.

A gold action that fails is a ``WorldDefinitionError`` naming it (``validate`` reports it before
any run). Imports the worlds' engine, state, paths and task models, and ``mock_tools.canonical``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from mock_tools.canonical import canonical_args
from mock_tools.models import Task
from mock_tools.worlds.errors import WorldDefinitionError
from mock_tools.worlds.paths import PathError, check_assertion, diff_states
from mock_tools.worlds.state import State
from mock_tools.worlds.task import ActionPattern, TaskWorld
from mock_tools.worlds.world import WorldAnswer, WorldEngine

__all__ = [
    "Action",
    "Replayed",
    "WorldCheck",
    "WorldVerdict",
    "call_world",
    "gold_actions",
    "gold_state",
    "judge",
    "replay",
]


class WorldCheck(BaseModel):
    kind: str = Field(
        description="gold | assert | env_assertion | forbid_state | forbid_action | "
        "require_action | turn_state | turn_answers"
    )
    passed: bool
    detail: str = ""


class WorldVerdict(BaseModel):
    """What the state checks found (a trajectory keeps it in ``Trajectory.world``)."""

    world: str
    initial: str
    final: str
    gold: str | None = None
    checks: list[WorldCheck] = Field(default_factory=list)
    diff: dict[str, Any] | None = None
    divergence: str | None = None
    turns: list[bool] | None = Field(
        default=None,
        description="A scripted conversation: whether each judged turn passed its per-turn "
        "checks: the state at its end was the gold state of that turn, and where the task asks "
        "for them, the agent called something in it and the gold answers were among the "
        "agent's (BFCL's rule: the task passes only if every turn does; the share that did is "
        "our partial credit).",
    )

    @property
    def passed(self) -> bool:
        return self.divergence is None and all(c.passed for c in self.checks)

    def failures(self) -> list[str]:
        out = [f"{c.kind}: {c.detail}" for c in self.checks if not c.passed]
        if self.divergence:
            out.insert(0, f"divergence: {self.divergence}")
        return out


@dataclass(frozen=True)
class Action:
    """A call to replay: the tool, its arguments as given, the state hash recorded after it
    (None: not checked) and a label for messages (``node 3, call c1``)."""

    api: str
    args: dict[str, Any]
    recorded: str | None = None
    label: str = ""
    turn: int = 0
    """In a conversation: the turn it was made in (how many answers of the user came before)."""


@dataclass
class Replayed:
    """The states a replay went through: ``states[0]`` the initial one, ``states[i]`` the one
    after ``actions[i - 1]``; ``ok[i - 1]`` whether the world carried that call out."""

    states: list[State]
    actions: list[Action] = field(default_factory=list)
    ok: list[bool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """The error of each call the world refused ("" for those it carried out)."""
    texts: list[str] = field(default_factory=list)
    """Each call's answer as text (``WorldAnswer.answer_text``)."""
    divergence: str | None = None

    @property
    def final(self) -> State:
        return self.states[-1]


def _spec(task: Task) -> TaskWorld:
    return task.world if task.world is not None else TaskWorld()


def call_world(
    engine: WorldEngine, state: State, api: str, args: dict[str, Any], task: Task, seed: int
) -> WorldAnswer:
    """One call as the server makes it, at the task's clock (``WorldEngine.call``)."""
    now = engine.clock(_spec(task), f"task {task.id}")
    return engine.call(state, api, args, now=now, task=task.id, seed=seed)


def replay(engine: WorldEngine, task: Task, actions: Sequence[Action], seed: int) -> Replayed:
    """Replay ``actions`` from the task's initial state (see the module docstring)."""
    out = Replayed(states=[engine.initial(task.id, task.world)])
    for action in actions:
        answer = call_world(engine, out.final, action.api, action.args, task, seed)
        if action.recorded is not None and answer.state.hash != action.recorded:
            out.divergence = (
                f"{action.label or action.api}: the world reached state "
                f"{answer.state.hash[:12]}, the run recorded {action.recorded[:12]}"
            )
            return out
        out.states.append(answer.state)
        out.actions.append(action)
        out.ok.append(answer.ok)
        out.errors.append(answer.error)
        out.texts.append(answer.answer_text())
    return out


def gold_actions(engine: WorldEngine, task: Task) -> list[Action]:
    """The task's reference steps as actions; a step of another tool is a
    ``WorldDefinitionError``."""
    out = []
    for i, step in enumerate(task.reference.steps, 1):
        if step.tool != engine.name:
            raise WorldDefinitionError(
                f"task {task.id!r}: gold action {i} calls tool {step.tool!r}, not the world "
                f"{engine.name!r}"
            )
        out.append(
            Action(step.api, dict(step.args), label=f"gold action {i} ({step.api})", turn=step.turn)
        )
    return out


def gold_state(engine: WorldEngine, task: Task, seed: int = 0) -> State:
    """The state the gold actions reach; one that fails is a ``WorldDefinitionError``."""
    state = engine.initial(task.id, task.world)
    for action in gold_actions(engine, task):
        answer = call_world(engine, state, action.api, action.args, task, seed)
        if not answer.ok:
            raise WorldDefinitionError(f"task {task.id!r}: {action.label} fails: {answer.error}")
        state = answer.state
    return state


def matches(pattern: ActionPattern, action: Action, engine: WorldEngine) -> bool:
    """Whether a call matches a pattern: its tool and every argument the pattern names, both
    canonical (the pattern's other arguments are free)."""
    if action.api != pattern.api or pattern.tool not in (None, engine.name):
        return False
    tool = engine.find_tool(action.api)
    schema = tool.parameters if tool is not None else {}
    have = canonical_args(action.args, schema)
    props = schema.get("properties", {})
    given = {"type": "object", "properties": {k: props[k] for k in pattern.args if k in props}}
    want = canonical_args(pattern.args, given)
    return all(k in have and have[k] == v for k, v in want.items())


def judge(engine: WorldEngine, task: Task, done: Replayed, seed: int) -> WorldVerdict:
    """The task's state checks on a replay (see the module docstring)."""
    checks = _spec(task).checks
    initial, final = done.states[0], done.final
    verdict = WorldVerdict(
        world=engine.name, initial=initial.hash, final=final.hash, divergence=done.divergence
    )
    if checks.gold and (task.reference.steps or "gold" in checks.model_fields_set):
        gold = gold_state(engine, task, seed)
        verdict.gold = gold.hash
        diff = diff_states(initial, final, gold, checks.ignore)
        same = diff.empty if checks.ignore else final.data_hash == gold.data_hash
        if not same and diff.empty:
            detail = "the final state differs from the gold state in number types only"
        else:
            detail = "the final state is the gold state" if same else diff.summary()
        verdict.checks.append(WorldCheck(kind="gold", passed=same, detail=detail))
        if not same:
            verdict.diff = diff.to_json()
    for a in checks.assertions:
        try:
            result = check_assertion(final, a)
        except PathError as e:
            raise WorldDefinitionError(f"task {task.id!r}: assertion {a.path!r}: {e}") from None
        verdict.checks.append(
            WorldCheck(
                kind="assert", passed=result.passed, detail=f"{a.describe()}: {result.detail}"
            )
        )
    now = engine.clock(_spec(task), f"task {task.id}")
    for env in checks.env_assertions:
        met, said = engine.env_assertion(final, env, now=now, task=task.id, seed=seed)
        verdict.checks.append(
            WorldCheck(kind="env_assertion", passed=met, detail=f"{env.describe()}: {said}")
        )
    for a in checks.forbid.states:
        hit = next((i for i, s in enumerate(done.states) if check_assertion(s, a).passed), None)
        when = "never reached" if hit is None else _when(hit, done)
        verdict.checks.append(
            WorldCheck(kind="forbid_state", passed=hit is None, detail=f"{a.describe()}: {when}")
        )
    script = task.user.script if task.user is not None else None
    if script is not None:
        _judge_turns(engine, task, done, seed, verdict)
    carried = [a for a, ok in zip(done.actions, done.ok, strict=True) if ok]
    for p in checks.forbid.actions:
        hits = [a for a in carried if matches(p, a, engine)]
        said = f"carried out ({hits[0].label or hits[0].api})" if hits else "never carried out"
        verdict.checks.append(
            WorldCheck(kind="forbid_action", passed=not hits, detail=f"{p.describe()}: {said}")
        )
    for p in checks.require.actions:
        hits = [a for a in carried if matches(p, a, engine)]
        said = f"carried out ({hits[0].label or hits[0].api})" if hits else "never carried out"
        verdict.checks.append(
            WorldCheck(kind="require_action", passed=bool(hits), detail=f"{p.describe()}: {said}")
        )
    return verdict


def _state_at_turn(states: list[State], actions: list[Action], turn: int) -> State:
    """The state at the end of ``turn``: after the last action made in it or before."""
    last = 0
    for i, action in enumerate(actions, 1):
        if action.turn <= turn:
            last = i
    return states[last]


def _judge_turns(
    engine: WorldEngine, task: Task, done: Replayed, seed: int, verdict: WorldVerdict
) -> None:
    """Per turn of a scripted conversation: the state at its end against the gold actions of
    the turns up to it (``turn``), and the script's claims about it (``turn_assert``)."""
    assert task.user is not None and task.user.script is not None
    script = task.user.script
    gold = replay(engine, task, gold_actions(engine, task), seed)
    checks = _spec(task).checks
    ignore = checks.ignore
    results: list[bool] = []
    for k in range(len(script) + 1):
        theirs_now = [i for i, a in enumerate(gold.actions) if a.turn == k]
        if checks.judged_turns == "with_gold" and not theirs_now:
            continue
        passed = True
        if checks.judged_turns == "with_gold" and not any(a.turn == k for a in done.actions):
            passed = False
            verdict.checks.append(
                WorldCheck(
                    kind="turn_calls", passed=False, detail=f"turn {k}: no call of the agent"
                )
            )
        mine = _state_at_turn(done.states, done.actions, k)
        theirs = _state_at_turn(gold.states, gold.actions, k)
        diff = diff_states(done.states[0], mine, theirs, ignore)
        same = diff.empty if ignore else mine.data_hash == theirs.data_hash
        passed = passed and same
        detail = "the gold state of the turn" if same else diff.summary()
        verdict.checks.append(WorldCheck(kind="turn", passed=same, detail=f"turn {k}: {detail}"))
        if checks.turn_answers:
            so_far = [t for a, t in zip(done.actions, done.texts, strict=True) if a.turn <= k]
            missing = _missing_answers([gold.texts[i] for i in theirs_now], so_far)
            passed = passed and not missing
            said = (
                "every gold answer is among the agent's"
                if not missing
                else f"{len(missing)} gold answer(s) missing: {_cut(missing[0])}"
            )
            verdict.checks.append(
                WorldCheck(kind="turn_answers", passed=not missing, detail=f"turn {k}: {said}")
            )
        results.append(passed)
        for a in script[k - 1].expect if k > 0 else []:
            result = check_assertion(mine, a)
            verdict.checks.append(
                WorldCheck(
                    kind="turn_assert",
                    passed=result.passed,
                    detail=f"turn {k}: {a.describe()}: {result.detail}",
                )
            )
    verdict.turns = results


def _missing_answers(wanted: list[str], have: list[str]) -> list[str]:
    """The answers of ``wanted`` not among ``have``, each of ``have`` matching once."""
    pool = list(have)
    missing = []
    for text in wanted:
        if text in pool:
            pool.remove(text)
        else:
            missing.append(text)
    return missing


def _cut(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _when(i: int, done: Replayed) -> str:
    if i == 0:
        return "the initial state"
    action = done.actions[i - 1]
    return f"reached after {action.label or action.api}"
