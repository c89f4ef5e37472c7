"""Probe mode (T-Eval's protocol): teacher-forced questions about each reference step prefix.

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
  the observation by ``verdict_of_observation`` (``verdict_of`` on a ``Response``).

Scoring (``score_answer``), T-Eval's dimensions (Chen et al. 2024; ``teval/evaluators/``):
``instruct`` (the answer is one parseable call to an offered function; ``instruct_evaluator.py``),
``retrieve`` (the right next function given the gold history, T-Eval's definition:
``reason_retrieve_understand_evaluator.py``, name equality), ``understand`` (T-Eval's: the
similarity of the argument objects' text, by the chosen backend), ``reason`` (thought similarity,
same backend: sentence embeddings by default, ``reason_score``), ``plan_*`` (``plan_score`` of the
submitted plan, ``planning_evaluator.py``) and ``review`` (verdict accuracy,
``review_evaluator.py``); beside them UltraTool's ``understand_exact`` / ``understand_kv`` on the
step's arguments (``arg_scores``).

The offline oracle (``ProbeOracle``) answers the plan and review questions for the ``reference``
and ``noisy-reference`` models: the plan from the reference plan it was given, the verdict by
reading the observation in the history (never the probe's gold). Next-step questions go to the
model it wraps (the agents' reference model) or, without one, are answered from the plan too.
May import ``sandbox.tool_envs`` (its calls) and ``eval`` modules.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.model import Message, Model, ToolCall, Turn
from agents.toolenv import FINISH, FINISH_FUNCTION, GIVE_ANSWER
from mock_tools.canonical import canonical_args
from mock_tools.models import Reference, Response, Task
from mock_tools.names import NameResolver, function_name
from sandbox.eval.actions import Action, Apis
from sandbox.eval.arg_scores import ArgumentScores
from sandbox.eval.measure import Measure, mean_measure
from sandbox.eval.plan_score import plan_score
from sandbox.eval.reason_score import (
    LexicalSimilarity,
    ThoughtSimilarity,
    args_similarity,
    similarity_label,
)
from sandbox.eval.stats import seeded_rng
from sandbox.tool_envs import EpisodeToolEnv, ToolEnvs, tool_functions

__all__ = [
    "PROBE_DIMENSIONS",
    "SUBMIT_PLAN",
    "SUBMIT_REVIEW",
    "VERDICTS",
    "ProbeItem",
    "ProbeOracle",
    "ProbeReport",
    "ProbeResult",
    "build_probes",
    "oracle_models",
    "run_probe",
    "score_answer",
    "summarise_probe",
    "verdict_of",
    "verdict_of_observation",
]

ProbeKind = Literal["next_step", "plan", "review"]
VERDICTS = {
    "A": "Success: the call worked and returned what was asked for",
    "B": "Internal error: the tool failed on its side (server error, timeout, rate limit)",
    "C": "Input error: the call's arguments were wrong or incomplete",
    "D": "Irrelevant response: the tool answered something unrelated",
    "E": "Unable to accomplish: the call worked but the tool has nothing for this request",
}
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

_INPUT_ERROR = re.compile(
    r"invalid|missing|required|must be|must have|not a valid|bad request|unknown (param|arg|field)"
    r"|unexpected (param|arg|field)|expected|format|out of range|not found|\b(400|404|422)\b",
    re.IGNORECASE,
)

PROBE_DIMENSIONS: tuple[str, ...] = (
    "instruct",
    "retrieve",
    "understand",
    "understand_exact",
    "understand_kv",
    "reason",
    "plan_precision",
    "plan_recall",
    "plan_f1",
    "review",
)


# -- gold verdicts --------------------------------------------------------------------------------


_STATUS = re.compile(r"^\s*(?:HTTP\s*)?([1-5]\d\d)\b", re.IGNORECASE)


def _classify(ok: bool, error: str, body: Any) -> str:
    if not ok or error:
        status = _STATUS.match(error or "")
        if status:
            code = int(status.group(1))
            return "B" if code == 429 or code >= 500 else "C" if code >= 400 else "B"
        return "C" if _INPUT_ERROR.search(error or "") else "B"
    return "E" if body in (None, "", [], {}) else "A"


def verdict_of(response: Response) -> str:
    """Gold verdict of a recorded response.

    ok with a non-empty body: A; ok but empty: E; an error: by the HTTP status it starts with
    when there is one (4xx but 429: C, input error; 429 and 5xx: B, internal error), else C when
    the text names bad input (invalid, missing, required, expected, not found...), else B.
    D (irrelevant response) needs judgement; the rule never gives it.
    """
    return _classify(response.ok, response.error, response.body)


def verdict_of_observation(content: str) -> str:
    """The same rule applied to an observation as a model sees it (``{"error", "response"}``)."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return "B"
    if not isinstance(data, dict):
        return "A"
    error = str(data.get("error") or "")
    return _classify(not error, error, data.get("response"))


# -- building the requests ------------------------------------------------------------------------


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
    items: list[ProbeItem] = []
    functions, targets = tool_functions(task, apis)
    offered = {pair: name for name, pair in targets.items()}
    base: list[Message] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task.query},
    ]
    history = list(base)
    steps = task.reference.steps
    for k, step in enumerate(steps):
        name = offered.get((step.tool, step.api)) or function_name(step.tool, step.api)
        gold: dict[str, Any] = {"function": name, "tool": step.tool, "api": step.api}
        gold |= {"args": step.args, "thought": step.thought}
        items.append(
            ProbeItem(
                task_id=task.id,
                kind="next_step",
                index=k,
                messages=list(history),
                tools=[*functions, FINISH_FUNCTION],
                gold=gold,
            )
        )
        observation = await env.call(name, dict(step.args))
        call_id = f"ref_{k}"
        history.append(
            {
                "role": "assistant",
                "content": step.thought,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(step.args)},
                    }
                ],
            }
        )
        history.append(
            {"role": "tool", "tool_call_id": call_id, "name": name, "content": observation.content}
        )
        if observation.provenance == "hit":
            items.append(
                ProbeItem(
                    task_id=task.id,
                    kind="review",
                    index=k,
                    messages=[*history, {"role": "user", "content": REVIEW_PROMPT}],
                    tools=[SUBMIT_REVIEW],
                    gold={"verdict": verdict_of_observation(observation.content)},
                )
            )
    items.append(
        ProbeItem(
            task_id=task.id,
            kind="next_step",
            index=len(steps),
            messages=list(history),
            tools=[*functions, FINISH_FUNCTION],
            gold={"function": FINISH},
        )
    )
    docs = "\n".join(json.dumps(f["function"], ensure_ascii=False) for f in functions)
    plan_gold = [{"tool": s.tool, "api": s.api, "args": s.args} for s in steps]
    items.append(
        ProbeItem(
            task_id=task.id,
            kind="plan",
            index=0,
            messages=[*base, {"role": "user", "content": PLAN_PROMPT.format(docs=docs)}],
            tools=[SUBMIT_PLAN],
            gold={"steps": plan_gold},
        )
    )
    return items


# -- the offline oracle ---------------------------------------------------------------------------


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
        steps = [
            {"function": function_name(s.tool, s.api), "args": dict(s.args)}
            for s in self._ref.steps
        ]
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
        steps = self._ref.steps
        if done >= len(steps):
            return _call(FINISH, {"return_type": GIVE_ANSWER, "final_answer": self._ref.answer})
        step = steps[done]
        name, args = function_name(step.tool, step.api), dict(step.args)
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


# -- scoring --------------------------------------------------------------------------------------


class ProbeResult(BaseModel):
    task_id: str
    kind: ProbeKind
    index: int
    scores: dict[str, float] = Field(description="The dimensions this question scores.")
    answer: str = Field(default="", description="What was answered, briefly.")
    error: str | None = Field(default=None, description="The model call failed (not scored).")


class ProbeReport(BaseModel):
    model: str
    similarity: str = Field(default="lexical", description="What scored reason and understand.")
    questions: int
    errors: int
    dimensions: dict[str, Measure]
    results: list[ProbeResult]


def _first_call(turn: Turn, expected: set[str]) -> tuple[ToolCall | None, dict[str, Any] | None]:
    call = turn.tool_calls[0] if turn.tool_calls else None
    if call is None or call.name not in expected:
        return call, None
    try:
        return call, call.parsed_args()
    except ValueError:
        return call, None


def score_answer(
    item: ProbeItem,
    turn: Turn,
    apis: Apis,
    resolver: NameResolver,
    similarity: ThoughtSimilarity | None = None,
) -> ProbeResult:
    """Score one answer against its probe's gold with the step-level metrics."""
    offered = {t["function"]["name"] for t in item.tools}
    call, args = _first_call(turn, offered)
    scores: dict[str, float] = {"instruct": 1.0 if args is not None else 0.0}
    answer = f"{call.name}({call.arguments})" if call else (turn.content or "")[:200]
    if item.kind == "review":
        verdict = (args or {}).get("verdict")
        if verdict not in VERDICTS:
            scores["instruct"] = 0.0
        scores["review"] = 1.0 if verdict == item.gold["verdict"] else 0.0
    elif item.kind == "plan":
        gold = [
            Action(
                tool=s["tool"],
                api=s["api"],
                name="",
                args=_canon(apis, s["tool"], s["api"], s["args"]),
            )
            for s in item.gold["steps"]
        ]
        raw = (args or {}).get("steps")
        if not isinstance(raw, list):
            scores["instruct"] = 0.0
            scores |= {"plan_precision": 0.0, "plan_recall": 0.0, "plan_f1": 0.0}
        else:
            pred = [_plan_action(s, apis, resolver) for s in raw]
            p = plan_score(pred, gold)
            scores |= {"plan_precision": p.precision, "plan_recall": p.recall, "plan_f1": p.f1}
    else:
        sim = similarity or LexicalSimilarity()
        scores |= _score_next_step(item, turn, call, args, apis, resolver, sim)
    return ProbeResult(
        task_id=item.task_id, kind=item.kind, index=item.index, scores=scores, answer=answer
    )


def _canon(apis: Apis, tool: str, api: str, args: Any) -> dict[str, Any]:
    spec = apis.get((tool, api))
    return canonical_args(args if isinstance(args, dict) else {}, spec.parameters if spec else None)


def _plan_action(step: Any, apis: Apis, resolver: NameResolver) -> Action:
    name = str(step.get("function", "")) if isinstance(step, dict) else ""
    key = resolver.resolve_function(name) if name else None
    args = step.get("args") if isinstance(step, dict) else None
    if key is None:
        return Action(name=name, args=args if isinstance(args, dict) else {})
    return Action(tool=key[0], api=key[1], name=name, args=_canon(apis, key[0], key[1], args))


def _score_next_step(
    item: ProbeItem,
    turn: Turn,
    call: ToolCall | None,
    args: dict[str, Any] | None,
    apis: Apis,
    resolver: NameResolver,
    similarity: ThoughtSimilarity,
) -> dict[str, float]:
    gold = item.gold
    if gold["function"] == FINISH:
        return {"retrieve": 1.0 if call is not None and call.name == FINISH else 0.0}
    key = resolver.resolve_function(call.name) if call is not None else None
    out = {"retrieve": 1.0 if key == (gold["tool"], gold["api"]) else 0.0}
    gold_args = _canon(apis, gold["tool"], gold["api"], gold["args"])
    pred_args = _canon(apis, gold["tool"], gold["api"], args or {})
    values = ArgumentScores()
    values.add(pred_args, gold_args)
    exact, kv = values.measures()
    out |= {"understand_exact": exact.value or 0.0, "understand_kv": kv.value or 0.0}
    out["understand"] = args_similarity(pred_args, gold_args, similarity) if args else 0.0
    if str(gold.get("thought") or "").strip():
        out["reason"] = similarity((turn.content or "").strip(), gold["thought"].strip())
    return out


def summarise_probe(model: str, results: Sequence[ProbeResult]) -> ProbeReport:
    scored = [r for r in results if r.error is None]
    dims = {d: mean_measure(r.scores[d] for r in scored if d in r.scores) for d in PROBE_DIMENSIONS}
    return ProbeReport(
        model=model,
        questions=len(results),
        errors=len(results) - len(scored),
        dimensions=dims,
        results=list(results),
    )


# -- running --------------------------------------------------------------------------------------


async def run_probe(
    items: Sequence[ProbeItem],
    model_for: Callable[[str], Model],
    apis: Apis,
    *,
    model_name: str = "",
    concurrency: int = 4,
    similarity: ThoughtSimilarity | None = None,
) -> ProbeReport:
    """Ask every question (``model_for(task_id)`` answers it) and score the answers.

    ``similarity`` scores ``reason`` and ``understand`` (lexical when not given)."""
    from agents.errors import ModelError

    resolver = NameResolver.for_apis(apis)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def ask(item: ProbeItem) -> ProbeResult:
        async with gate:
            try:
                turn = await model_for(item.task_id).complete(item.messages, item.tools, None)
            except ModelError as e:
                return ProbeResult(
                    task_id=item.task_id, kind=item.kind, index=item.index, scores={}, error=str(e)
                )
        return score_answer(item, turn, apis, resolver, similarity)

    results = await asyncio.gather(*(ask(i) for i in items))
    report = summarise_probe(model_name, results)
    report.similarity = similarity_label(similarity or LexicalSimilarity())
    return report


ModelFor = Callable[[str], Model]


def oracle_models(tasks: Mapping[str, Task], *, rate: float = 0.0, seed: int = 0) -> ModelFor:
    """``model_for`` answering every question of a task with a ``ProbeOracle`` of its reference."""
    oracles = {
        tid: ProbeOracle(t.reference, rate=rate, seed=seed, task_id=tid) for tid, t in tasks.items()
    }
    return oracles.__getitem__
