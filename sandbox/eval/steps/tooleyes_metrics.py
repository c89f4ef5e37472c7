"""The ``tooleyes`` step protocol: ToolEyes' rule-based scores of an episode's conversation.

ToolEyes scores the conversation of a ReAct-format agent (``sandbox.eval.benchmarks.tooleyes``).
An episode's chosen path becomes that conversation: the query, then per model turn an assistant
message ``Thought: <text>\\nAction: <first call's name>\\nAction Input: <its argument text as
written>`` (a turn without a call: ``Thought: <text>`` alone), followed by the call's observation
as a ``function`` message (the feedback to an invalid turn as a ``user`` message). An episode
that ran out of budget ends with ToolEyes' own forced ending (a ``finish`` reply saying it tried
too many times and cannot handle the task), one whose model call failed with its execution-error
ending, as ToolEyes' inference loop writes them. The tool document is the functions the episode
offered (``Finish`` left out; the task's APIs when the episode did not record them), each with
its ``parameters`` (``properties`` and ``required`` empty when the schema has none).

- ``tooleyes-format``: ``format_alignment`` (IF), ``answer_pass`` (the rule part of answer
  organisation), ``neat_json_err`` and ``neat_react_err``;
- ``tooleyes-selection``: ``tool_reality`` (the rule part of tool selection; not applicable
  where ToolEyes' code raises, e.g. an Action Input that is no object).

Each is a mean over episodes, as ToolEyes averages over conversations. The GPT-4-judged scores
(TS's thought–action match, IU, BP, AO's quality) are not computed. May import ``eval.steps`` and
``eval.benchmarks`` modules.
"""

from __future__ import annotations

from typing import Any

from agents.toolenv import FINISH
from agents.trajectory import Status
from mock_tools.names import function_name
from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.tooleyes import FAILED_ANSWER, format_alignment, tool_reality
from sandbox.eval.steps.episode import StepEpisode
from sandbox.eval.steps.measure import Measure
from sandbox.eval.steps.metric import NoOptions, StepMetric, StepProtocol
from sandbox.eval.steps.replies import Reply, argument_text

__all__ = ["TOOLEYES_METRICS", "TOOLEYES_PROTOCOL", "conversation", "tool_document"]

Message = dict[str, str]
_TOO_MANY = (
    "Thought: I stopped after trying too many times.\nAction: finish\n"
    f'Action Input: {{"answer": "{FAILED_ANSWER}"}}'
)
_EXECUTION_ERROR = (
    "Thought: During execution, an error occurs.\nAction: finish\n"
    f'Action Input: {{"answer": "{FAILED_ANSWER}"}}'
)


def assistant_text(reply: Reply) -> str:
    """One turn in ToolEyes' ReAct format (module doc)."""
    if reply.call is None:
        return f"Thought: {reply.thought}"
    return (
        f"Thought: {reply.thought}\nAction: {reply.call.name}\n"
        f"Action Input: {argument_text(reply.call.arguments)}"
    )


def conversation(episode: StepEpisode) -> list[Message]:
    """The episode as ToolEyes' conversation record (module doc)."""
    out: list[Message] = [
        {"from": "system", "value": "(tool document)"},
        {"from": "user", "value": episode.task.query},
    ]
    turns = {r.node.id: r for r in episode.replies}
    for node in episode.path:
        if node.kind == "error":
            out.append({"from": "assistant", "value": _EXECUTION_ERROR})
            return out
        reply = turns[node.id]
        out.append({"from": "assistant", "value": assistant_text(reply)})
        if reply.call is not None and reply.call.observation is not None:
            out.append({"from": "function", "value": reply.call.observation})
        elif node.feedback:
            out.append({"from": "user", "value": node.feedback})
    if episode.traj.status is Status.budget_exhausted:
        out.append({"from": "assistant", "value": _TOO_MANY})
    return out


def tool_document(episode: StepEpisode) -> list[dict[str, Any]]:
    """The offered functions as ToolEyes' tool document (``Finish`` left out); an episode that
    did not record them offers its task's APIs under their ToolBench names."""
    offered = [f.get("function", {}) for f in episode.traj.functions]
    if not offered:
        apis = episode.context.apis
        offered = [
            {"name": function_name(*key), "parameters": apis[key].parameters}
            for key in sorted(episode.offered)
        ]
    doc = []
    for spec in offered:
        if spec.get("name") in (None, FINISH):
            continue
        params = dict(spec.get("parameters") or {})
        params.setdefault("properties", {})
        params["required"] = list(params.get("required") or [])
        entry = {"name": spec["name"], "description": spec.get("description", "")}
        doc.append({**entry, "parameters": params})
    return doc


def tooleyes_format(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    score = format_alignment(conversation(episode))
    if score.replies == 0:
        return {}
    return {
        "format_alignment": Measure(value=score.score, n=score.replies),
        "answer_pass": Measure(value=float(score.answer_pass), n=1),
        "neat_json_err": Measure(value=score.neat_json_err, n=score.replies),
        "neat_react_err": Measure(value=score.neat_react_err, n=score.replies),
    }


def tooleyes_selection(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    messages = conversation(episode)
    if not any(m["from"] == "assistant" for m in messages):
        return {}
    try:
        value = tool_reality(messages, tool_document(episode))
    except NoReferenceValue:
        return {}
    return {"tool_reality": Measure(value=value, n=1)}


TOOLEYES_METRICS: tuple[StepMetric, ...] = (
    StepMetric(
        "tooleyes-format",
        "ToolEyes' format alignment (IF) of the conversation, with its rule-based parts",
        ("format_alignment", "answer_pass", "neat_json_err", "neat_react_err"),
        tooleyes_format,
    ),
    StepMetric(
        "tooleyes-selection",
        "ToolEyes' tool reality: calls to documented tools with the right parameters",
        ("tool_reality",),
        tooleyes_selection,
    ),
)

TOOLEYES_PROTOCOL = StepProtocol(
    "tooleyes",
    "ToolEyes' rule-based scores (format alignment, tool reality) of the chosen path",
    tuple(m.name for m in TOOLEYES_METRICS),
)
