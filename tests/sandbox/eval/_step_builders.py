"""Tiny hand-built suites, tasks and trajectories for the step-level metric tests."""

from __future__ import annotations

import json
from typing import Any

from agents.toolenv import FINISH, Observation
from agents.trajectory import Component, FinishCall, Node, Status, StepCall, Trajectory
from mock_tools.models import ApiRef, ApiSpec, Reference, RefStep, Task
from mock_tools.names import function_name
from sandbox.eval.steps.actions import Action

WEATHER = ApiSpec(
    name="get_weather",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
        },
        "required": ["city"],
    },
)
FORECAST = ApiSpec(
    name="get_forecast",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
    },
)
GEOCODE = ApiSpec(
    name="geocode",
    parameters={
        "type": "object",
        "properties": {"address": {"type": "string"}},
        "required": ["address"],
    },
)
APIS: dict[tuple[str, str], ApiSpec] = {
    ("weatherly", "get_weather"): WEATHER,
    ("weatherly", "get_forecast"): FORECAST,
    ("maps", "geocode"): GEOCODE,
}

REF_STEPS = [
    RefStep(thought="Find where Paris is.", tool="maps", api="geocode", args={"address": "Paris"}),
    RefStep(
        thought="Get the current weather in Paris.",
        tool="weatherly",
        api="get_weather",
        args={"city": "Paris"},
    ),
    RefStep(
        thought="Get the three day forecast for Paris.",
        tool="weatherly",
        api="get_forecast",
        args={"city": "Paris", "days": 3},
    ),
]


def make_task(steps: list[RefStep] | None = None, **kw: Any) -> Task:
    return Task(
        id=kw.pop("id", "t1"),
        query="What is the weather in Paris?",
        tools=[ApiRef(tool=t, api=a) for t, a in APIS],
        reference=Reference(steps=REF_STEPS if steps is None else steps, answer="Sunny, 20C"),
        **kw,
    )


def act(tool: str | None, api: str | None, args: dict[str, Any] | None = None, **kw: Any) -> Action:
    name = function_name(tool, api) if tool and api else kw.pop("name", "nope")
    return Action(tool=tool, api=api, name=name, args=args or {}, **kw)


def call(
    tool: str,
    api: str,
    args: dict[str, Any] | None = None,
    *,
    ok: bool = True,
    raw: str | None = None,
    provenance: str = "hit",
    resolved: bool = True,
) -> StepCall:
    args = {} if args is None else args
    text = raw if raw is not None else json.dumps(args)
    try:
        parsed = json.loads(text)
        parsed = parsed if isinstance(parsed, dict) else None
    except json.JSONDecodeError:
        parsed = None
    return StepCall(
        id=f"c{api}{len(text)}",
        name=function_name(tool, api),
        arguments=text,
        args=parsed,
        tool=tool if resolved else None,
        api=api if resolved else None,
        observation=Observation(
            ok=ok,
            content=json.dumps({"error": "" if ok else "boom", "response": "x" if ok else ""}),
            provenance=provenance,
        ),
    )


def finish_node(nid: int, parent: int | None, answer: str = "Sunny, 20C", depth: int = 0) -> Node:
    args = {"return_type": "give_answer", "final_answer": answer}
    return Node(
        id=nid,
        parent=parent,
        depth=depth,
        kind="finish",
        calls=[StepCall(id=f"f{nid}", name=FINISH, arguments=json.dumps(args), args=args)],
        finish=FinishCall(return_type="give_answer", final_answer=answer),
    )


def chain(
    steps: list[tuple[str, list[StepCall]]],
    *,
    status: Status = Status.answered,
    finish: bool = True,
) -> Trajectory:
    """A ReAct chain: one action node per (thought, calls), then a Finish node."""
    nodes = [
        Node(id=i, parent=i - 1 if i else None, depth=i + 1, kind="action", content=t, calls=c)
        for i, (t, c) in enumerate(steps)
    ]
    if finish:
        nodes.append(finish_node(len(nodes), len(nodes) - 1 if nodes else None, depth=len(nodes)))
    return Trajectory(
        scenario_id="t1",
        agent=Component(name="react"),
        model=Component(name="test"),
        status=status,
        final_answer="Sunny, 20C" if status is Status.answered else None,
        nodes=nodes,
        chosen_path=[n.id for n in nodes],
    )


def reference_chain() -> Trajectory:
    return chain([(s.thought, [call(s.tool, s.api, s.args)]) for s in REF_STEPS])
