"""ToolEyes' rule-based scores of a conversation: format alignment and tool reality.

ToolEyes (Ye et al. 2024; Junjie-Ye/ToolEyes, ``Code/Evaluation/util/utils.py``). A conversation
is ToolEyes' record: ``[{"from": "system"|"user"|"assistant"|"function", "value": text}, ...]``,
the first message holding the tool document. An assistant reply is read by ``process_message``
(the module's own, which shadows the one it imports): ``Thought:`` … ``Action:`` … ``Action
Input:`` …, each found by a regular expression anywhere in the text.

- a reply **follows the ReAct format** when all three parts are found and the action is not
  empty, and **its Action Input is valid** when Python's ``eval`` of it succeeds (here
  ``python_expr.evaluate``, which runs no code: ``{"a": true}`` fails, as under ``eval``);
- **format alignment** (IF, ``Format_alignment_score``): per assistant reply, 1 when it follows
  both, 0 otherwise, over the assistant replies; kept quirks: the *final* reply is any reply whose
  text equals the conversation's last message (ToolEyes compares text, not position), and it
  needs only the ReAct format (its ``finish`` input is free text); a final reply that holds "I
  cannot handle the task." and "trying too many times" or "During execution, an error occurs."
  (ToolEyes' forced endings) scores 0 and sets ``Ans_pass`` to 0, a well-formed final reply sets
  it to 1 (it starts at 1). Also counted: replies right in ReAct but not in input
  (``neat_json_err``) and the reverse (``neat_react_err``), as shares of the replies;
- **tool reality** (the rule part of tool selection, ``Tool_selection_score``): over the replies
  that are not final and follow both, ``1 - (hallucinated tools + replies with a parameter
  error) / replies``, 0 without such replies. A tool is hallucinated when the action names no
  tool of the document; a parameter error is a required parameter missing or a parameter the
  tool does not have. Kept quirks: once a tool was hallucinated, no later reply's parameters are
  checked (ToolEyes tests the running count); a required parameter given once counts as given
  for the rest of the conversation (ToolEyes removes it from the document's list).

The thought–action match that multiplies tool reality into TS, and IU, BP and AO, are GPT-4's
judgements; they are not computed here. Where ToolEyes' code raises (an Action Input that
evaluates to something other than an object, a document entry without ``required`` or
``properties``) the conversation has no reference value: ``NoReferenceValue``. Pure.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.python_expr import evaluate, evaluates

__all__ = [
    "DOC_MARKER",
    "FAILED_ANSWER",
    "FormatAlignment",
    "format_alignment",
    "parse_reply",
    "read_doc",
    "tool_reality",
]

FAILED_ANSWER = "I cannot handle the task."
FORCED_ENDINGS = ("trying too many times", "During execution, an error occurs.")
DOC_MARKER = "Specifically, you have access of the following tools:"
_DOC_ENDS = ("You should reply in the format of the examples.", "Let's Begin!")
_THOUGHT = re.compile("Thought:.*?Action:", re.DOTALL)
_ACTION = re.compile("Action:.*?Action Input:", re.DOTALL)
_INPUT = re.compile("Action Input:.*", re.DOTALL)


def parse_reply(message: str) -> tuple[str, str, str] | None:
    """``(thought, action, action input)`` as ToolEyes' ``process_message`` reads them; None
    where it raises (a part not found)."""
    try:
        thought = _THOUGHT.search(message)
        action = _ACTION.search(message)
        action_input = _INPUT.search(message)
    except TypeError:
        return None
    if thought is None or action is None or action_input is None:
        return None
    return (
        thought.group().replace("Action:", "").replace("Thought:", "").strip(),
        action.group()
        .replace("\\n", "")
        .replace("Action:", "")
        .replace("Action Input:", "")
        .strip(),
        action_input.group().replace("Action Input:", "").strip(),
    )


def react_ok(message: str) -> bool:
    """``reasoning_format_check``: the three parts are there and the action is not empty."""
    parts = parse_reply(message)
    return parts is not None and len(parts[1]) > 0


def input_ok(message: str) -> bool:
    """``json_format_check``: the Action Input evaluates."""
    parts = parse_reply(message)
    return parts is not None and evaluates(parts[2].replace("Action Input:", ""))


def _final(value: Any, last: Any) -> bool:
    return bool(value == last)


def _forced_end(value: str) -> bool:
    return FAILED_ANSWER in value and any(e in value for e in FORCED_ENDINGS)


@dataclass(frozen=True)
class FormatAlignment:
    score: float
    """IF: well-formed replies over assistant replies (0 without replies)."""
    replies: int
    answer_pass: int
    neat_json_err: float
    neat_react_err: float
    format_err: int
    """ToolEyes' ``format_err_cnt``: a count, not a share (its last assignment wins)."""
    json_err: int
    react_err: int
    forced_end: int


def format_alignment(conversation: Sequence[Mapping[str, Any]]) -> FormatAlignment:
    """``Format_alignment_score``'s rule part of one conversation (module doc)."""
    last = conversation[-1]["value"]
    replies = good = format_err = json_err = react_err = forced = 0
    neat_json = neat_react = 0
    answer_pass = 1
    for message in conversation:
        if message["from"] != "assistant":
            continue
        value = message["value"]
        react, valid = react_ok(value), input_ok(value)
        neat_json += react and not valid
        neat_react += valid and not react
        replies += 1
        if _final(value, last) and _forced_end(value):
            answer_pass, format_err, forced = 0, format_err + 1, forced + 1
            continue
        if _final(value, last) and react:
            answer_pass, good = 1, good + 1
            continue
        if not react:
            react_err += 1
        elif not valid:
            json_err += 1
        good += react and valid
        format_err += min((not valid) + (not react), 1)
    share = (lambda count: count / replies) if replies else (lambda count: 0.0)
    return FormatAlignment(
        score=share(good),
        replies=replies,
        answer_pass=answer_pass,
        neat_json_err=share(neat_json),
        neat_react_err=share(neat_react),
        format_err=format_err if replies else 0,
        json_err=json_err,
        react_err=react_err,
        forced_end=forced,
    )


def read_doc(system_message: str) -> list[dict[str, Any]]:
    """``get_doc``: the tool document after ToolEyes' marker, evaluated."""
    text = system_message.split(DOC_MARKER)[-1]
    for end in _DOC_ENDS:
        text = text.split(end)[0]
    try:
        doc = evaluate(text.strip())
    except Exception as e:  # noqa: BLE001 - ToolEyes' eval raises: no value
        raise NoReferenceValue(f"ToolEyes cannot read the tool document: {e}") from e
    if not isinstance(doc, list):
        raise NoReferenceValue("ToolEyes' tool document is no list")
    return doc


def tool_reality(
    conversation: Sequence[Mapping[str, Any]], doc: Sequence[Mapping[str, Any]] | None = None
) -> float:
    """The rule part of ``Tool_selection_score`` (module doc); ``doc`` default: the one in the
    conversation's first message."""
    tools = copy.deepcopy(list(doc)) if doc is not None else read_doc(conversation[0]["value"])
    last = conversation[-1]["value"]
    names = [t["name"] for t in tools]
    checked = hallucinated = param_errors = 0
    for message in conversation:
        if message["from"] != "assistant":
            continue
        value = message["value"]
        react = react_ok(value)
        if _final(value, last) and (_forced_end(value) or react):
            continue
        if not (react and input_ok(value)):
            continue
        checked += 1
        parts = parse_reply(value)
        assert parts is not None  # react_ok held
        action, params = parts[1], evaluate(parts[2])
        hallucinated += action not in names
        if hallucinated:
            continue
        entry = next(t for t in tools if t["name"] == action)
        param_errors += min(
            (not _required_given(entry, params)) + _unknown_params(entry, params), 1
        )
    return 1 - (hallucinated + param_errors) / checked if checked else 0.0


def _keys(params: Any) -> list[Any]:
    if not isinstance(params, dict):
        raise NoReferenceValue("ToolEyes reads the keys of an Action Input that is no object")
    return list(params.keys())


def _required_given(entry: Mapping[str, Any], params: Any) -> bool:
    """``required_param_check``, removing what is given from the document's list as it does."""
    try:
        required = entry["required"] if "required" in entry else entry["parameters"]["required"]
    except (KeyError, TypeError) as e:
        raise NoReferenceValue(f"ToolEyes reads a tool without 'required': {e}") from e
    for key in _keys(params):
        if key in required:
            required.remove(key)
    return len(required) == 0


def _unknown_params(entry: Mapping[str, Any], params: Any) -> int:
    try:
        known = list(entry["parameters"]["properties"].keys())
    except (KeyError, TypeError, AttributeError) as e:
        raise NoReferenceValue(f"ToolEyes reads a tool without 'properties': {e}") from e
    return sum(1 for key in _keys(params) if key not in known)
