"""The ``teval`` and ``teval-v1`` step protocols: T-Eval's arithmetic on an episode's steps.

T-Eval asks teacher-forced questions: before reference step ``k`` (the gold history given), what
is the next call? On an episode the agent wrote its own history, so the questions are asked
**by position**: the agent's ``k``-th turn on the chosen path (``replies.Reply``) answers T-Eval's
``k``-th question, the turn after the last reference step answers the ``Finish`` question, a
missing turn is an empty reply and turns past the last question are not asked about. (The
``default`` protocol pairs calls with reference steps by matching instead; T-Eval has no pairing
to reproduce.) Each reply is handed to T-Eval's evaluators as a JSON-format reply, the text
``{"thought": …, "name": …, "args": <the argument text as written>}`` (a turn without a call: its
text), and scored by ``sandbox.eval.benchmarks.teval``:

- ``teval-instruct``: ``instruct`` (the mean of the two below, as T-Eval's table combines them),
  ``instruct_format`` and ``instruct_args_em``, over every question;
- ``teval-rru``: ``retrieve`` (name equality) and ``rru_parse_rate`` over every question,
  ``reason`` (thought cosine) and ``understand`` (v2: exact per key over ``keys + 1e-5``) over the
  reference steps' questions (the ``Finish`` question has no gold thought or arguments);
  ``teval-v1-rru``: the same with December 2023's ``understand`` (the cosine of the two argument
  objects' ``str()``);
- ``teval-plan``: the path's calls as the predicted plan, the reference steps as the gold plan:
  ``plan_precision`` / ``plan_recall`` / ``plan_f1`` and ``plan_parse_rate``
  (``sandbox.eval.benchmarks.teval_plan``; option ``strategy``: bertscore or permutation, and
  T-Eval's weights and threshold).

Question-level measures are **pooled**: the run's figure is the mean over all questions, as
T-Eval's is over its samples. A task without reference steps is no T-Eval sample (not
applicable). Cosines come from the run's thought similarity (``cosine_of``: embeddings when
available, else the labelled lexical fallback). May import ``eval.steps`` and
``eval.benchmarks`` modules.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.toolenv import FINISH
from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.teval import Cosine, instruct_sample, rru_sample
from sandbox.eval.benchmarks.teval_plan import PlanOptions, plan_sample
from sandbox.eval.steps.episode import StepEpisode
from sandbox.eval.steps.measure import Measure, mean_measure
from sandbox.eval.steps.metric import NoOptions, StepMetric, StepProtocol
from sandbox.eval.steps.reason_score import LexicalSimilarity, cosine_of
from sandbox.eval.steps.replies import GoldStep, Reply, argument_text, parsed

__all__ = ["TEVAL_METRICS", "TEVAL_PROTOCOLS", "teval_reply"]

TEMPLATE = {"thought": "thought", "action": "name", "args": "args"}
JSON = {"response_format": "json"}


def teval_reply(reply: Reply | None) -> str:
    """A turn as the JSON-format reply T-Eval reads (module doc); no turn: ``""``."""
    if reply is None:
        return ""
    if reply.call is None:
        return reply.thought
    thought = json.dumps(reply.thought, ensure_ascii=False)
    name = json.dumps(reply.call.name, ensure_ascii=False)
    return (
        f'{{"thought": {thought}, "name": {name}, "args": {argument_text(reply.call.arguments)}}}'
    )


def _questions(episode: StepEpisode) -> list[tuple[GoldStep | None, str]]:
    """``(gold step or None for the Finish question, reply text)`` per question."""
    gold: list[GoldStep | None] = [*episode.gold_steps, None]
    turns = episode.replies
    return [(g, teval_reply(turns[k] if k < len(turns) else None)) for k, g in enumerate(gold)]


def _cosine(episode: StepEpisode) -> Cosine:
    return cosine_of(episode.context.similarity or LexicalSimilarity())


def teval_instruct(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    if not episode.gold_steps:
        return {}
    fmt, em = [], []
    for gold, text in _questions(episode):
        truth = {"action": gold.name, "args": gold.args} if gold else {"action": FINISH, "args": {}}
        datum = {"template": TEMPLATE, "prediction": text, "ground_truth": truth, "meta_data": JSON}
        score = instruct_sample(datum)
        fmt.append(score.format)
        em.append(score.args_em)
    return {
        "instruct": mean_measure((f + e) / 2 for f, e in zip(fmt, em, strict=True)),
        "instruct_format": mean_measure(fmt),
        "instruct_args_em": mean_measure(em),
    }


def _rru(episode: StepEpisode, understand: Literal["v1", "v2"]) -> dict[str, Measure]:
    if not episode.gold_steps:
        return {}
    cosine = _cosine(episode)
    reason, retrieve, args, parse = [], [], [], []
    for gold, text in _questions(episode):
        truth = {"thought": gold.thought, "name": gold.name, "args": gold.args} if gold else None
        datum = {
            "prediction": text,
            "ground_truth": truth or {"thought": "", "name": FINISH, "args": {}},
            "meta_data": JSON,
        }
        score = rru_sample(datum, cosine, understand=understand)
        retrieve.append(score.name)
        parse.append(score.parse_rate)
        if truth is not None:
            reason.append(score.thought)
            args.append(score.args)
    return {
        "reason": mean_measure(reason),
        "retrieve": mean_measure(retrieve),
        "understand": mean_measure(args),
        "rru_parse_rate": mean_measure(parse),
    }


def teval_rru(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    return _rru(episode, "v2")


def teval_v1_rru(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    return _rru(episode, "v1")


class PlanSettings(BaseModel):
    """T-Eval's ``PlanningEvaluator`` settings (its current defaults)."""

    model_config = ConfigDict(extra="forbid")

    strategy: Literal["bertscore", "permutation"] = Field(
        default="bertscore", description="bertscore_match (T-Eval's default) or permutation_match"
    )
    name_weight: float = Field(default=0.75, ge=0)
    args_weight: float = Field(default=0.25, ge=0)
    threshold: float = Field(default=0.8, description="Edges strictly above it are matched.")


def _plan_record(k: int, name: str, args: Any) -> dict[str, Any]:
    return {"id": k, "name": name, "args": args}


def teval_plan(episode: StepEpisode, options: PlanSettings) -> dict[str, Measure]:
    if not episode.gold_steps:
        return {}
    pred = [
        _plan_record(k, c.name, parsed(c.arguments)) for k, c in enumerate(episode.written_calls)
    ]
    gold = [_plan_record(k, g.name, g.args) for k, g in enumerate(episode.gold_steps)]
    settings = PlanOptions(
        options.name_weight, options.args_weight, options.threshold, options.strategy
    )
    datum = {"prediction": pred, "ground_truth": gold, "meta": {"prompt_type": "json"}}
    try:
        score = plan_sample(datum, _cosine(episode), settings)
    except NoReferenceValue:
        return {}
    n_pred, n_gold = len(pred), len(gold)
    return {
        "plan_precision": Measure(value=score.precision, n=n_pred),
        "plan_recall": Measure(value=score.recall, n=n_gold),
        "plan_f1": Measure(value=score.f1, n=1),
        "plan_parse_rate": Measure(value=score.parse_rate, n=1),
    }


_RRU = ("reason", "retrieve", "understand", "rru_parse_rate")
_INSTRUCT = ("instruct", "instruct_format", "instruct_args_em")


TEVAL_METRICS: tuple[StepMetric, ...] = (
    StepMetric(
        "teval-instruct",
        "T-Eval's instruct: format and args_em of the k-th turn against reference step k",
        _INSTRUCT,
        teval_instruct,
        pooled=_INSTRUCT,
    ),
    StepMetric(
        "teval-plan",
        "T-Eval's plan score of the path's calls against the reference (free first match kept)",
        ("plan_f1", "plan_precision", "plan_recall", "plan_parse_rate"),
        teval_plan,
        options=PlanSettings,
        similarity=True,
    ),
    StepMetric(
        "teval-rru",
        "T-Eval's reason, retrieve and understand (v2, exact per key) of the k-th turn",
        _RRU,
        teval_rru,
        pooled=_RRU,
        headline="understand",
        similarity=True,
    ),
    StepMetric(
        "teval-v1-rru",
        "T-Eval's reason, retrieve and December 2023 understand (argument text cosine)",
        _RRU,
        teval_v1_rru,
        pooled=_RRU,
        headline="understand",
        similarity=True,
    ),
)

TEVAL_PROTOCOLS: tuple[StepProtocol, ...] = (
    StepProtocol(
        "teval",
        "T-Eval's current evaluator (v2), by position on the chosen path",
        ("teval-instruct", "teval-plan", "teval-rru"),
    ),
    StepProtocol(
        "teval-v1",
        "T-Eval with its December 2023 understand (argument text cosine)",
        ("teval-instruct", "teval-plan", "teval-v1-rru"),
    ),
)
