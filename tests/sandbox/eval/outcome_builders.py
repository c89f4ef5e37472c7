"""Hand-built tasks and trajectories for the outcome tests (pass rate, win rate, report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.toolenv import Observation
from agents.trajectory import (
    Component,
    EpisodeUsage,
    ErrorRecord,
    FinishCall,
    Node,
    Status,
    StepCall,
    Trajectory,
)
from mock_tools.models import ApiRef, Check, Task


def task(
    task_id: str = "t1",
    *,
    group: str = "G1",
    solvable: bool = True,
    checks: list[dict[str, Any]] | None = None,
    query: str = "What is the answer?",
) -> Task:
    return Task(
        id=task_id,
        query=query,
        tools=[ApiRef(tool="calc", api="add")],
        group=group,
        solvable=solvable,
        checks=[Check(**c) for c in (checks or [])],
    )


def call(api: str, ok: bool = True, tool: str = "calc", i: int = 0) -> StepCall:
    return StepCall(
        id=f"c{i}",
        name=f"{api}_for_{tool}",
        arguments="{}",
        args={},
        tool=tool,
        api=api,
        observation=Observation(ok=ok, content="{}", error="" if ok else "boom"),
    )


def traj(
    task_id: str = "t1",
    *,
    status: Status = Status.answered,
    answer: str | None = "42",
    calls: list[list[StepCall]] | None = None,
    trial: int = 0,
    run_id: str = "r1",
    infra: bool = False,
    give_up_text: str = "",
    cost: float = 0.0,
    model: str = "m",
    agent: str = "react",
) -> Trajectory:
    """A one-branch trajectory: one action node per entry of ``calls``, then a finish node."""
    nodes: list[Node] = []
    for step in calls or []:
        nodes.append(
            Node(id=len(nodes), parent=len(nodes) - 1 if nodes else None, kind="action", calls=step)
        )
    parent = len(nodes) - 1 if nodes else None
    if status is Status.answered and answer is not None:
        nodes.append(
            Node(
                id=len(nodes),
                parent=parent,
                kind="finish",
                finish=FinishCall(return_type="give_answer", final_answer=answer),
            )
        )
    elif status is Status.gave_up:
        nodes.append(
            Node(
                id=len(nodes),
                parent=parent,
                kind="give_up",
                finish=FinishCall(return_type="give_up_and_restart", final_answer=give_up_text),
            )
        )
    errors = [ErrorRecord(kind="infra", message="endpoint down")] if infra else []
    n_calls = sum(len(n.calls) for n in nodes)
    return Trajectory(
        run_id=run_id,
        scenario_id=task_id,
        trial=trial,
        agent=Component(name=agent),
        model=Component(name=model),
        status=status,
        final_answer=answer if status is Status.answered else None,
        nodes=nodes,
        chosen_path=[n.id for n in nodes],
        usage=EpisodeUsage(model_calls=len(nodes), tool_calls=n_calls, cost=cost),
        errors=errors,
    )


SUITE_FILES: dict[str, str] = {
    "suite.yaml": "name: outcome-mini\nversion: '1'\n",
    "tools/calc.yaml": """
name: calc
description: arithmetic
apis:
  - name: add
    description: add two integers
    parameters:
      type: object
      properties:
        a: {type: integer}
        b: {type: integer}
      required: [a, b]
""",
    "tasks/tasks.yaml": """
- id: add
  query: What is 2 + 3?
  group: G1
  tools: [{tool: calc, api: add}]
  reference:
    steps: [{thought: add them, tool: calc, api: add, args: {a: 2, b: 3}}]
    answer: "5"
  checks: [{kind: number, value: 5}]
- id: open
  query: Say something nice about 2 + 3.
  group: G2
  tools: [{tool: calc, api: add}]
  reference:
    steps: [{thought: add them, tool: calc, api: add, args: {a: 2, b: 3}}]
    answer: "5 is nice"
- id: impossible
  query: Divide 1 by 0 with the calculator.
  group: G2
  solvable: false
  tools: [{tool: calc, api: add}]
""",
}


def make_suite(root: Path) -> Path:
    for rel, text in SUITE_FILES.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return root


def add_call(a: int, b: int, ok: bool = True, i: int = 0) -> StepCall:
    args = {"a": a, "b": b}
    return StepCall(
        id=f"c{i}",
        name="add_for_calc",
        arguments=json.dumps(args),
        args=args,
        tool="calc",
        api="add",
        observation=Observation(ok=ok, content=json.dumps({"error": "", "response": a + b})),
    )


def make_run(
    out: Path,
    suite: Path,
    run_id: str,
    trajs: list[Trajectory],
    *,
    trials: int = 1,
    model: str = "reference",
) -> Path:
    from mock_tools.suite import load_suite
    from sandbox.store import Manifest, RunStore, SuiteInfo
    from sandbox.store.config import RunConfig

    loaded = load_suite(suite)
    manifest = Manifest(
        run_id=run_id,
        config=RunConfig(suite=str(suite), model=model, trials=trials),
        suite=SuiteInfo(name=loaded.name, path=str(suite), fingerprint=loaded.fingerprint),
        agent={"name": "react"},
        model={"name": model},
        episodes=[(t.id, i) for t in loaded.tasks for i in range(trials)],
    )
    with RunStore.create(out, manifest) as store:
        for t in trajs:
            store.append(t)
    return out / run_id


def two_answers(run_id: str = "cand") -> list[Trajectory]:
    """Two answered episodes of ``make_suite``'s tasks, each adding 2 and 3."""
    return [
        traj("add", answer="The sum is 5.", calls=[[add_call(2, 3)]], run_id=run_id),
        traj("open", answer="lovely", calls=[[add_call(2, 3)]], run_id=run_id),
    ]
