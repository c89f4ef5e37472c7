"""An episode's model turns as the replies a benchmark reads, and its reference as their gold.

The reference step protocols (``teval``, ``ultratool``, ``tooleyes``) score an episode by
handing each benchmark the records its own code reads; this module makes the parts they share:

- ``Reply``: one model turn of the chosen path (nodes of kind ``error`` are no turn), with its
  text (the thought) and its **first** call as written (name and raw argument text; a usable
  ``Finish`` is a call of ``Finish`` with its recorded arguments). A benchmark reply holds one
  action, so a turn's further calls are not part of it;
- ``calls``: every call of the chosen path (not ``Finish``) as written, in order: the executed
  plan;
- ``gold_steps``: the reference steps with the name the episode offered for their API (the
  ToolBench ``<api>_for_<tool>`` name when it offered none) and their arguments as written in
  the reference (never canonicalised: the benchmarks compare what is written).

``argument_text``: an empty argument text is written ``{}`` (the API's "no arguments"), so an
empty call reads as an empty object everywhere. ``parsed``: the argument text read as JSON, or
the text itself when it is no JSON. Pure; imports ``eval.steps`` modules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agents.toolenv import FINISH
from agents.trajectory import Node
from mock_tools.models import RefStep
from mock_tools.names import NameResolver, function_name
from sandbox.eval.steps.actions import ApiKey

__all__ = [
    "GoldStep",
    "Reply",
    "WrittenCall",
    "argument_text",
    "calls",
    "gold_steps",
    "offered_names",
    "parsed",
    "replies",
]


@dataclass(frozen=True)
class WrittenCall:
    """A call as the model wrote it."""

    name: str
    arguments: str
    observation: str | None = None
    """What the call answered (its observation's text), None when it has none."""


@dataclass(frozen=True)
class Reply:
    """One model turn: its text and its first call (None: the turn made no call)."""

    thought: str
    call: WrittenCall | None
    node: Node


@dataclass(frozen=True)
class GoldStep:
    thought: str
    name: str
    args: dict[str, Any]


def argument_text(raw: str | None) -> str:
    """The argument text as written; an empty one is ``{}``."""
    text = (raw or "").strip()
    return text or "{}"


def parsed(raw: str | None) -> Any:
    """The argument text read as JSON; the text itself when it is no JSON."""
    text = argument_text(raw)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _finish_call(node: Node) -> WrittenCall | None:
    if node.finish is None:
        return None
    written = node.finish.arguments
    if written is None:
        written = json.dumps(
            {"return_type": node.finish.return_type, "final_answer": node.finish.final_answer},
            ensure_ascii=False,
        )
    return WrittenCall(FINISH, written)


def _first_call(node: Node) -> WrittenCall | None:
    for call in node.calls:
        obs = call.observation
        return WrittenCall(call.name, call.arguments, obs.content if obs is not None else None)
    return _finish_call(node)


def replies(path: list[Node]) -> list[Reply]:
    """The model turns of a path, in order (``error`` nodes left out)."""
    return [Reply(n.content or "", _first_call(n), n) for n in path if n.kind != "error"]


def calls(path: list[Node]) -> list[WrittenCall]:
    """Every call of the path but ``Finish``, in order."""
    return [
        WrittenCall(c.name, c.arguments, c.observation.content if c.observation else None)
        for n in path
        for c in n.calls
        if c.name != FINISH
    ]


def offered_names(functions: list[dict[str, Any]], resolver: NameResolver) -> dict[ApiKey, str]:
    """The function name an episode offered for each API (first offer wins)."""
    out: dict[ApiKey, str] = {}
    for f in functions:
        name = str(f.get("function", {}).get("name") or "")
        key = resolver.resolve_function(name) if name and name != FINISH else None
        if key is not None:
            out.setdefault(key, name)
    return out


def gold_steps(steps: list[RefStep], names: dict[ApiKey, str]) -> list[GoldStep]:
    """The reference steps with the names offered for their APIs (module doc)."""
    return [
        GoldStep(s.thought, names.get((s.tool, s.api)) or function_name(s.tool, s.api), s.args)
        for s in steps
    ]
