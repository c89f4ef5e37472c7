"""``sandbox export tau2 RUN --out FILE``: a run of an imported τ² suite in τ²-bench's results
format (``Results``: ``info``, ``tasks``, ``simulations``), which τ²'s own evaluator re-grades
(``tau2 evaluate-trajs FILE -o DIR``).

Each episode becomes one simulation of its chosen path: the user's first message, then per
node: an action node is an assistant message with its text and its tool calls (the arguments
as the world ran them) followed by one tool message per call (τ²'s content: the answer's JSON,
or the error text τ²'s ``get_response`` gave); a ``Finish(give_answer)`` is an assistant
message holding the answer (the agent's reply), a text turn an assistant message, a user node a
user message. The termination reason: ``user_stop`` when the user ended the conversation (any
signal), ``agent_stop`` when the agent gave up, ``max_steps`` for a budget, ``agent_error`` /
``user_error`` / ``infrastructure_error`` for the errors. The tasks are τ²'s own, read from the
checkout by its worker (τ²'s evaluator grades a simulation against the task embedded in the
file). ``reward_info`` holds the sandbox's reward (the episode's score in ``scores.json``), so
the file read back by ``agreement`` shows both, and, for an episode a judge judged (``sandbox
eval --judge``), the verdicts on its NL assertions in τ²'s ``nl_assertions`` shape
(``nl_assertion``, ``met``, ``justification``).

``agreement(run, regraded)`` compares the sandbox's reward of each episode with the one τ²'s
evaluator wrote into its re-graded copy. Imports ``mock_tools`` and ``sandbox.store``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.trajectory import Node, Status, StepCall, Trajectory
from mock_tools.suite import load_suite
from mock_tools.worlds.tau2 import Tau2Engine, Tau2Worker, content_text
from sandbox.errors import ConfigError
from sandbox.store import read_trajectories

__all__ = ["agreement", "export_tau2", "simulation", "termination"]


def termination(traj: Trajectory) -> str:
    """τ²'s termination reason for an episode (see the module docstring)."""
    last = next((n for n in reversed(traj.nodes) if n.id in set(traj.chosen_path)), None)
    if last is not None and last.kind == "user" and (last.user or {}).get("signal"):
        return "user_stop"
    if traj.status == Status.gave_up:
        return "agent_stop"
    if traj.status == Status.budget_exhausted:
        return "max_steps"
    if traj.status == Status.answered:
        return "user_stop"
    reason = traj.end_reason or ""
    if reason.startswith("user_failure"):
        return "user_error"
    if reason.startswith(("tool_infra", "infra")):
        return "infrastructure_error"
    return "agent_error"


def _tool_content(call: Any) -> tuple[str, bool]:
    obs = call.observation
    if obs is None:
        return "", True
    if not obs.ok:
        return obs.error or obs.content, True
    try:
        shown = json.loads(obs.content)
    except ValueError:
        return obs.content, False
    if isinstance(shown, dict) and "response" in shown:
        return content_text(shown["response"]), False
    return obs.content, False


def simulation(
    traj: Trajectory, reward: float | None, nl: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One τ² ``SimulationRun`` for an episode's chosen path; ``nl``: the judge's verdicts on
    its NL assertions (``reward_info.nl_assertions``), when judged."""
    query = next((m["content"] for m in traj.prompt if m.get("role") == "user"), "")
    messages: list[dict[str, Any]] = [{"role": "user", "content": query}]
    nodes = {n.id: n for n in traj.nodes}
    for nid in traj.chosen_path:
        node: Node = nodes[nid]
        if node.kind == "user":
            # dual control: the user's calls of its own tools come before what it says
            messages.extend(_call_messages("user", None, node.calls))
            messages.append({"role": "user", "content": node.content})
        elif node.kind == "finish" and node.finish is not None:
            messages.append({"role": "assistant", "content": node.finish.final_answer})
        elif node.kind == "action":
            messages.extend(_call_messages("assistant", node.content or None, node.calls, True))
        elif node.content:
            messages.append({"role": "assistant", "content": node.content})
    started = traj.started_at
    ended = traj.ended_at or started
    return {
        "id": f"{traj.run_id}/{traj.scenario_id}/{traj.trial}",
        "task_id": traj.scenario_id,
        "trial": traj.trial,
        "seed": traj.seed,
        "start_time": started.isoformat(),
        "end_time": ended.isoformat(),
        "duration": (ended - started).total_seconds(),
        "termination_reason": termination(traj),
        "reward_info": _reward_info(reward, nl),
        "messages": messages,
    }


def _call_messages(
    role: str, content: str | None, calls: list[StepCall], always: bool = False
) -> list[dict[str, Any]]:
    """A turn's calls as τ² records them: the ``role``'s message with its calls (each with
    that requestor), then one tool message per call. Nothing for no calls, unless ``always``
    (an agent's turn whose calls were all invented names is still its message)."""
    made = [c for c in calls if not c.hallucinated]
    if not made and not always:
        return []
    out: list[dict[str, Any]] = [
        {
            "role": role,
            "content": content,
            "tool_calls": [
                {
                    "id": c.id,
                    "name": c.function or c.name,
                    "arguments": c.args or {},
                    "requestor": role,
                }
                for c in made
            ]
            or None,
        }
    ]
    for c in made:
        text, error = _tool_content(c)
        out.append({"id": c.id, "role": "tool", "content": text, "requestor": role, "error": error})
    return out


def _reward_info(reward: float | None, nl: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    if reward is None:
        return None
    info: dict[str, Any] = {"reward": reward, "info": {"by": "sandbox"}}
    if nl is not None:
        info["nl_assertions"] = [
            {"nl_assertion": v["assertion"], "met": bool(v["met"]), "justification": v["reason"]}
            for v in nl
        ]
    return info


def _scores_file(run: Path) -> dict[str, Any]:
    path = run / "scores.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _scores(run: Path) -> dict[tuple[str, int], float]:
    data = _scores_file(run)
    return {(lab["task_id"], lab["trial"]): float(lab["score"]) for lab in data.get("labels", [])}


def _nl_verdicts(run: Path) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The judge's verdicts per episode, as ``sandbox eval --judge`` wrote them into
    ``scores.json`` (``nl_assertions.results``): each assertion, met, the judge's reason."""
    results = (_scores_file(run).get("nl_assertions") or {}).get("results") or []
    return {
        (str(r["task_id"]), int(r.get("trial") or 0)): [
            {"assertion": v["assertion"], "met": v["met"], "reason": v.get("justification", "")}
            for v in r["verdicts"]
        ]
        for r in results
    }


def export_tau2(run: Path, out: Path) -> dict[str, Any]:
    """Write ``out`` (τ²'s results JSON) for ``run``; a summary of what was written."""
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    suite = load_suite(manifest["config"]["suite"])
    engine = suite.world
    if not isinstance(engine, Tau2Engine):
        raise ConfigError(f"export tau2: {run} is not a run of an imported τ² suite")
    world = engine.world_cls
    worker = Tau2Worker(world.python, world.checkout, world.domain)
    try:
        tasks = worker.request({"op": "tasks", "file": world.tasks_file}, 600)["tasks"]
    finally:
        worker.stop()
    trajectories = read_trajectories(run)
    scores = _scores(run)
    nl = _nl_verdicts(run)
    ran = {t.scenario_id for t in trajectories}
    kept = [t for t in tasks if str(t["id"]) in ran]
    sims = [
        simulation(t, scores.get((t.scenario_id, t.trial)), nl.get((t.scenario_id, t.trial)))
        for t in trajectories
    ]
    config = manifest["config"]
    results = {
        "timestamp": trajectories[0].started_at.isoformat() if trajectories else None,
        "info": {
            "git_commit": "",
            "num_trials": int(config.get("trials") or 1),
            "max_steps": int(config.get("budget", {}).get("max_model_calls") or 0),
            "max_errors": 0,
            "user_info": {
                "implementation": "agent-sandbox user",
                "llm": (config.get("user") or {}).get("model") or "persona-user",
            },
            "agent_info": {
                "implementation": f"agent-sandbox {config['agent']['name']}",
                "llm": config["model"]["name"],
            },
            "environment_info": {"domain_name": world.domain, "policy": world.policy},
            "seed": config.get("seed"),
        },
        "tasks": kept,
        "simulations": sims,
    }
    out.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return {"out": str(out), "simulations": len(sims), "tasks": len(kept)}


def agreement(run: Path, regraded: Path) -> dict[str, Any]:
    """The sandbox's reward of each episode of ``run`` against τ²'s in ``regraded`` (the file
    ``tau2 evaluate-trajs`` wrote): counts and every disagreement."""
    ours = _scores(run)
    try:
        data = json.loads(regraded.read_text(encoding="utf-8"))
        rewards = [
            (
                (str(sim["task_id"]), int(sim.get("trial") or 0)),
                (sim.get("reward_info") or {}).get("reward"),
            )
            for sim in data.get("simulations", [])
        ]
        theirs_all = [None if r is None else float(r) for _, r in rewards]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ConfigError(f"--against {regraded}: not a τ² results file ({e})") from None
    same, differ = 0, []
    for ((task, trial), _), theirs in zip(rewards, theirs_all, strict=True):
        mine = ours.get((task, trial))
        if mine is not None and theirs is not None and abs(mine - theirs) < 1e-9:
            same += 1
        else:
            differ.append({"task": task, "trial": trial, "sandbox": mine, "tau2": theirs})
    return {"agree": same, "disagree": len(differ), "disagreements": differ}
