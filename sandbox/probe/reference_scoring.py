"""Probe answers scored under the reference step protocols (``--step-protocol`` on ``probe``).

The probe asks T-Eval's own questions (teacher-forced next steps, a plan, review verdicts), so
under ``teval`` and ``teval-v1`` each answer is handed to T-Eval's evaluators as the reply T-Eval
reads (``sandbox.eval.benchmarks.teval``), as the episodes' protocol does:

- a next-step answer is the JSON-format reply ``{"thought": <text>, "name": <first call>,
  "args": <its argument text as written>}`` (no call: the answer's text): ``instruct`` (format,
  args_em), ``reason``, ``retrieve``, ``understand`` and ``rru_parse_rate`` against the
  reference step; the question after the last step scores instruct, retrieve and the parse
  rate against ``Finish`` (it has no gold thought or arguments);
- a plan answer is ``submit_plan``'s steps as T-Eval's plan records (``function`` as ``name``,
  in order; an answer that is no list of steps: the call's argument text, else the answer's
  text, which T-Eval reads as it reads any reply): ``plan_*`` by ``bertscore_match``;
- a review answer is the ``verdict`` as the str-format reply (else the answer's text): T-Eval's
  first letter after the first colon, ``review`` and ``review_parse_rate``.

``ultratool`` scores the next-step answers as one-step UltraTool samples: ``tool_usage``
(argument accuracy) and ``tool_selection``. ``tooleyes`` scores conversations, which the probe
does not hold: ``probe_protocols`` refuses it. Each measure is the mean over the questions it
applies to, as the benchmarks average over their samples. Pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agents.model import Turn
from agents.toolenv import FINISH
from sandbox.errors import ConfigError
from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.teval import Cosine, instruct_sample, review_sample, rru_sample
from sandbox.eval.benchmarks.teval_plan import PlanOptions, plan_sample
from sandbox.eval.benchmarks.ultratool import param_scores, select_lists
from sandbox.eval.steps.metric import DEFAULT_STEP_PROTOCOL
from sandbox.eval.steps.replies import argument_text, parsed
from sandbox.probe.questions import ProbeItem

__all__ = ["PROBE_PROTOCOLS", "probe_protocols", "protocol_scores"]

PROBE_PROTOCOLS: tuple[str, ...] = ("teval", "teval-v1", "ultratool")
"""The reference step protocols that score probe answers (``default`` is the probe's own)."""
TEMPLATE = {"thought": "thought", "action": "name", "args": "args"}
JSON = {"response_format": "json"}


def probe_protocols(names: Sequence[str]) -> list[str]:
    """The reference protocols among ``names`` (``default`` is always scored); ``ConfigError``
    for a protocol that cannot score probe answers."""
    out = []
    for name in dict.fromkeys(names):
        if name == DEFAULT_STEP_PROTOCOL:
            continue
        if name not in PROBE_PROTOCOLS:
            raise ConfigError(
                f"step protocol {name!r} does not score probe answers; the probe scores "
                f"{', '.join([DEFAULT_STEP_PROTOCOL, *PROBE_PROTOCOLS])}"
            )
        out.append(name)
    return out


def teval_answer(turn: Turn) -> str:
    """An answer as the JSON-format reply T-Eval reads (module doc)."""
    if not turn.tool_calls:
        return turn.content or ""
    call = turn.tool_calls[0]
    thought = json.dumps(turn.content or "", ensure_ascii=False)
    name = json.dumps(call.name, ensure_ascii=False)
    return f'{{"thought": {thought}, "name": {name}, "args": {argument_text(call.arguments)}}}'


def protocol_scores(protocol: str, item: ProbeItem, turn: Turn, cosine: Cosine) -> dict[str, float]:
    """The measures ``protocol`` gives this answer (empty where none applies)."""
    try:
        if protocol == "ultratool":
            return _ultratool(item, turn)
        understand = "v1" if protocol == "teval-v1" else "v2"
        if item.kind == "review":
            return _review(item, turn)
        if item.kind == "plan":
            return _plan(item, turn, cosine)
        return _next_step(item, turn, cosine, understand)
    except NoReferenceValue:
        return {}


def _next_step(item: ProbeItem, turn: Turn, cosine: Cosine, understand: str) -> dict[str, float]:
    gold = item.gold
    reply = teval_answer(turn)
    final = gold["function"] == FINISH
    truth = {"action": gold["function"], "args": {} if final else gold["args"]}
    shown = {"template": TEMPLATE, "prediction": reply, "ground_truth": truth, "meta_data": JSON}
    ins = instruct_sample(shown)
    rru_gold = {
        "thought": "" if final else gold.get("thought", ""),
        "name": gold["function"],
        "args": {} if final else gold["args"],
    }
    rru_datum = {"prediction": reply, "ground_truth": rru_gold, "meta_data": JSON}
    rru = rru_sample(rru_datum, cosine, understand=understand)
    out = {
        "instruct": (ins.format + ins.args_em) / 2,
        "instruct_format": ins.format,
        "instruct_args_em": ins.args_em,
        "retrieve": rru.name,
        "rru_parse_rate": rru.parse_rate,
    }
    if not final:
        out |= {"reason": rru.thought, "understand": rru.args}
    return out


def _plan_prediction(turn: Turn) -> Any:
    if not turn.tool_calls:
        return turn.content or ""
    raw = turn.tool_calls[0].arguments
    args = parsed(raw)
    steps = args.get("steps") if isinstance(args, dict) else None
    if not isinstance(steps, list):
        return argument_text(raw)
    return [
        {"id": i, "name": s.get("function"), "args": s.get("args")} if isinstance(s, dict) else s
        for i, s in enumerate(steps)
    ]


def _plan(item: ProbeItem, turn: Turn, cosine: Cosine) -> dict[str, float]:
    gold = [
        {"id": i, "name": s.get("function", ""), "args": s["args"]}
        for i, s in enumerate(item.gold["steps"])
    ]
    datum = {
        "prediction": _plan_prediction(turn),
        "ground_truth": gold,
        "meta": {"prompt_type": "json"},
    }
    score = plan_sample(datum, cosine, PlanOptions())
    return {
        "plan_precision": score.precision,
        "plan_recall": score.recall,
        "plan_f1": score.f1,
        "plan_parse_rate": score.parse_rate,
    }


def _review(item: ProbeItem, turn: Turn) -> dict[str, float]:
    reply = turn.content or ""
    if turn.tool_calls:
        args = parsed(turn.tool_calls[0].arguments)
        if isinstance(args, Mapping) and "verdict" in args:
            reply = str(args["verdict"])
    datum = {
        "prediction": reply,
        "ground_truth": {"answer": item.gold["verdict"]},
        "meta_data": {"response_format": "str"},
    }
    quality, parse = review_sample(datum)
    return {"review": quality, "review_parse_rate": parse}


def _ultratool(item: ProbeItem, turn: Turn) -> dict[str, float]:
    if item.kind != "next_step" or item.gold["function"] == FINISH:
        return {}
    gold = [{"step": "1", "tool": item.gold["function"], "param": item.gold["args"]}]
    pred = [
        {"step": "1", "tool": c.name, "param": parsed(c.arguments)} for c in turn.tool_calls[:1]
    ]
    chosen, wanted = select_lists(pred, gold)
    return {
        "tool_usage": param_scores(pred, gold)[0],
        "tool_selection": 1.0 if chosen == wanted else 0.0,
    }
