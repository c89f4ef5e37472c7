"""Scoring the probe's answers with the step-level metrics, and the probe's report.

``score_answer`` scores one answer against its question's gold, the probe's own dimensions (the
project's, after T-Eval's, Chen et al. 2024; ``teval/evaluators/``): ``instruct`` (the answer is
one parseable call to an offered function; ``instruct_evaluator.py``), ``retrieve`` (the right
next function given the gold history, by the API its name resolves to;
``reason_retrieve_understand_evaluator.py``), ``understand`` (the similarity of the canonical
argument objects' text, by the chosen backend), ``reason``
(thought similarity, same backend: sentence embeddings by default, ``reason_score``), ``plan_*``
(``plan_score`` of the submitted plan, ``planning_evaluator.py``) and ``review`` (verdict accuracy,
``review_evaluator.py``); beside them ``understand_exact`` / ``understand_kv`` on the step's
arguments (``arg_scores``, the project's key-value measure). An answer without a readable call
scores 0 on the three understand dimensions; an empty argument object is a call. Under a
reference step protocol (``--step-protocol teval``...) an answer is also scored by the
benchmark's own arithmetic (``reference_scoring``). ``summarise_probe`` averages them over the
answered questions.
Pure; imports ``sandbox.eval.steps`` and ``sandbox.probe`` modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from agents.model import ToolCall, Turn
from agents.toolenv import FINISH
from mock_tools.canonical import canonical_args
from mock_tools.names import NameResolver
from sandbox.eval.steps.actions import Action, Apis
from sandbox.eval.steps.arg_scores import ArgumentScores
from sandbox.eval.steps.measure import Measure, mean_measure
from sandbox.eval.steps.plan_score import plan_score
from sandbox.eval.steps.reason_score import (
    LexicalSimilarity,
    ThoughtSimilarity,
    args_similarity,
    cosine_of,
)
from sandbox.probe.questions import ProbeItem, ProbeKind
from sandbox.probe.reference_scoring import protocol_scores
from sandbox.probe.verdicts import VERDICTS

__all__ = [
    "PROBE_DIMENSIONS",
    "ProbeReport",
    "ProbeResult",
    "score_answer",
    "summarise_probe",
]

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


class ProbeResult(BaseModel):
    task_id: str
    kind: ProbeKind
    index: int
    scores: dict[str, float] = Field(description="The dimensions this question scores.")
    protocol_scores: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="Under each reference step protocol asked for, its measures of this answer.",
    )
    answer: str = Field(default="", description="What was answered, briefly.")
    error: str | None = Field(default=None, description="The model call failed (not scored).")


class ProbeReport(BaseModel):
    model: str
    similarity: str = Field(default="lexical", description="What scored reason and understand.")
    questions: int
    errors: int
    dimensions: dict[str, Measure]
    step_protocols: dict[str, dict[str, Measure]] = Field(
        default_factory=dict,
        description="Each reference step protocol's measures (``--step-protocol``), by name.",
    )
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
    protocols: Sequence[str] = (),
) -> ProbeResult:
    """Score one answer against its probe's gold with the step-level metrics, and under each
    of ``protocols`` (reference step protocols, ``reference_scoring``)."""
    cosine = cosine_of(similarity or LexicalSimilarity())
    extra = {p: protocol_scores(p, item, turn, cosine) for p in protocols}
    offered = {t["function"]["name"] for t in item.tools}
    call, args = _first_call(turn, offered)
    scores: dict[str, float] = {"instruct": 1.0 if args is not None else 0.0}
    answer = f"{call.name}({call.arguments})" if call else (turn.content or "")[:200]
    if item.kind == "review":
        scores |= _score_review(item, args)
    elif item.kind == "plan":
        scores |= _score_plan(item, args, apis, resolver)
    else:
        sim = similarity or LexicalSimilarity()
        scores |= _score_next_step(item, turn, call, args, apis, resolver, sim)
    return ProbeResult(
        task_id=item.task_id,
        kind=item.kind,
        index=item.index,
        scores=scores,
        protocol_scores=extra,
        answer=answer,
    )


def _score_review(item: ProbeItem, args: dict[str, Any] | None) -> dict[str, float]:
    """``review``: the verdict is the gold one; a verdict outside A–E also fails ``instruct``."""
    verdict = (args or {}).get("verdict")
    out = {"review": 1.0 if verdict == item.gold["verdict"] else 0.0}
    if verdict not in VERDICTS:
        out["instruct"] = 0.0
    return out


def _score_plan(
    item: ProbeItem, args: dict[str, Any] | None, apis: Apis, resolver: NameResolver
) -> dict[str, float]:
    """``plan_*`` of the submitted steps; no list of steps fails ``instruct`` and scores 0."""
    gold = [
        Action(
            tool=s["tool"], api=s["api"], name="", args=_canon(apis, s["tool"], s["api"], s["args"])
        )
        for s in item.gold["steps"]
    ]
    raw = (args or {}).get("steps")
    if not isinstance(raw, list):
        return {"instruct": 0.0, "plan_precision": 0.0, "plan_recall": 0.0, "plan_f1": 0.0}
    p = plan_score([_plan_action(s, apis, resolver) for s in raw], gold)
    return {"plan_precision": p.precision, "plan_recall": p.recall, "plan_f1": p.f1}


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
    if args is None:  # no readable call: nothing of the step was reproduced (no default credit)
        out |= {"understand_exact": 0.0, "understand_kv": 0.0, "understand": 0.0}
    else:
        gold_args = _canon(apis, gold["tool"], gold["api"], gold["args"])
        pred_args = _canon(apis, gold["tool"], gold["api"], args)
        values = ArgumentScores()
        values.add(pred_args, gold_args)
        exact, kv = values.measures()
        out |= {"understand_exact": exact.value or 0.0, "understand_kv": kv.value or 0.0}
        # an empty argument object is a call too: {} against a gold {} is the same arguments
        out["understand"] = args_similarity(pred_args, gold_args, similarity)
    if str(gold.get("thought") or "").strip():
        out["reason"] = similarity((turn.content or "").strip(), gold["thought"].strip())
    return out


def summarise_probe(
    model: str, results: Sequence[ProbeResult], protocols: Sequence[str] = ()
) -> ProbeReport:
    """Each dimension's mean over the answered questions it applies to (each protocol's too)."""
    scored = [r for r in results if r.error is None]
    dims = {d: mean_measure(r.scores[d] for r in scored if d in r.scores) for d in PROBE_DIMENSIONS}
    by_protocol: dict[str, dict[str, Measure]] = {}
    for name in protocols:
        answers = [r.protocol_scores.get(name, {}) for r in scored]
        measures = dict.fromkeys(m for a in answers for m in a)
        by_protocol[name] = {m: mean_measure(a[m] for a in answers if m in a) for m in measures}
    return ProbeReport(
        model=model,
        questions=len(results),
        errors=len(results) - len(scored),
        dimensions=dims,
        step_protocols=by_protocol,
        results=list(results),
    )
