"""Trajectories <-> ToolBench's converted-answer format (the input of ToolBench's ToolEval).

One JSON file per test set (``<set>.json``, the set taken from scenario ids ``<set>-<qid>``)::

    {qid: {"query": str, "available_tools": [function schemas],
           "answer": {"method": str, "total_steps": int,
                      "final_answer": str,        # the Finish arguments as a JSON string
                      "answer_details": [node]}}} # node = {"role", "message", "next": [node]}

``answer_details`` is the chosen path as a chain: ``system`` (empty message), ``user`` (the
query), then per step an ``assistant`` node (the thought, when there is one) and one ``tool`` node
per call whose message is the Python repr of ``{"name", "arguments", "response"}`` (ToolBench's
``str(dict)``); Finish is a ``tool`` node with an empty response. ToolBench's own converter cuts
each message to 100 characters; this exporter keeps them whole so that the file reads back into
the same steps (``read_converted``), and ToolEval reads it the same way.
May import ``sandbox.store`` and ``interop`` modules.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP, Observation
from agents.trajectory import Component, FinishCall, Node, Status, StepCall, Trajectory
from sandbox.errors import RunError, SandboxError
from sandbox.interop.finish import finish_answer
from sandbox.interop.suite_writer import file_slug
from sandbox.store import read_trajectories

__all__ = ["export_run", "read_converted", "split_scenario_id", "to_converted"]

DEFAULT_SET = "toolbench"


def split_scenario_id(scenario_id: str) -> tuple[str, str]:
    """``G1_instruction-42`` -> ``("G1_instruction", "42")``; other ids go to one default set."""
    head, sep, tail = scenario_id.rpartition("-")
    if sep and head and tail:
        return head, tail
    return DEFAULT_SET, scenario_id


def _query(traj: Trajectory) -> str:
    users = [m.get("content") or "" for m in traj.prompt if m.get("role") == "user"]
    return str(users[-1]) if users else ""


def _finish_arguments(finish: FinishCall) -> str:
    args: dict[str, Any] = {"return_type": finish.return_type}
    if finish.return_type == GIVE_ANSWER:
        args["final_answer"] = finish.final_answer
    return json.dumps(args, ensure_ascii=False)


def to_converted(traj: Trajectory) -> dict[str, Any]:
    """One trajectory as a converted-answer entry (its chosen path)."""
    chain: list[dict[str, Any]] = [
        {"role": "system", "message": ""},
        {"role": "user", "message": _query(traj)},
    ]
    final_answer = ""
    for node in traj.chosen():
        if node.content:
            chain.append({"role": "assistant", "message": node.content})
        for call in node.calls:
            content = call.observation.content if call.observation else ""
            message = {"name": call.name, "arguments": call.arguments, "response": content}
            chain.append({"role": "tool", "message": str(message)})
        if node.finish is not None:
            final_answer = _finish_arguments(node.finish)
            message = {"name": FINISH, "arguments": final_answer, "response": ""}
            chain.append({"role": "tool", "message": str(message)})
    if not final_answer and traj.status is Status.answered and traj.final_answer is not None:
        final_answer = _finish_arguments(
            FinishCall(return_type=GIVE_ANSWER, final_answer=traj.final_answer)
        )
    details: dict[str, Any] | None = None
    for item in reversed(chain):
        details = {**item, "next": [details] if details else []}
    return {
        "query": _query(traj),
        "available_tools": [f.get("function", f) for f in traj.functions],
        "answer": {
            "method": traj.agent.name,
            "total_steps": len(chain),
            "final_answer": final_answer,
            "answer_details": [details],
        },
    }


def export_run(run: Path, out: Path) -> dict[str, Any]:
    """Write ``<out>/<set>.json`` files for every trajectory of a run; returns a summary."""
    trajectories = read_trajectories(run)
    if not trajectories:
        raise RunError(f"{run}: the run has no trajectories to export")
    sets: dict[str, dict[str, Any]] = {}
    for traj in trajectories:
        test_set, qid = split_scenario_id(traj.scenario_id)
        key = qid if traj.trial == 0 else f"{qid}#{traj.trial}"
        sets.setdefault(test_set, {})[key] = to_converted(traj)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for test_set, entries in sets.items():
        path = out / f"{file_slug(test_set)}.json"
        path.write_text(json.dumps(entries, ensure_ascii=False, indent=1), encoding="utf-8")
        files.append(str(path))
    return {"run": str(run), "out": str(out), "episodes": len(trajectories), "files": files}


def _chain(details: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    nodes = details if isinstance(details, list) else []
    while nodes:
        node = nodes[0]
        if not isinstance(node, dict):
            break
        out.append(node)
        nodes = node.get("next") or []
    return out


def _tool_message(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = ast.literal_eval(str(text))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("tool message is not a complete dict repr (cut to 100 chars?)") from None
    if not isinstance(value, dict) or "name" not in value:
        raise ValueError("tool message has no name")
    return value


def read_converted(path: Path) -> list[Trajectory]:
    """Trajectories (one branch each) from a converted-answer file or a folder of them."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    out: list[Trajectory] = []
    for f in files:
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SandboxError(f"{f}: not a converted-answer file ({e})") from None
        if not isinstance(data, dict):
            raise SandboxError(f"{f}: a converted-answer file maps query ids to answers")
        for qid, entry in data.items():
            try:
                out.append(_trajectory(f.stem, str(qid), entry))
            except (ValueError, KeyError, TypeError) as e:
                raise SandboxError(f"{f}: entry {qid!r}: {e}") from None
    return out


def _trajectory(test_set: str, qid: str, entry: dict[str, Any]) -> Trajectory:
    answer = entry["answer"]
    nodes: list[Node] = []
    thought: str | None = None
    for item in _chain(answer.get("answer_details")):
        role = item.get("role")
        if role == "assistant":
            thought = str(item.get("message") or "")
        elif role == "tool":
            msg = _tool_message(item.get("message"))
            node_id, parent = len(nodes), (len(nodes) - 1 if nodes else None)
            depth = nodes[-1].depth if nodes else 0
            arguments = str(msg.get("arguments") or "")
            if msg["name"] == FINISH:
                args = json.loads(arguments) if arguments.strip() else {}
                return_type = str(args.get("return_type") or GIVE_UP)
                nodes.append(
                    Node(
                        id=node_id,
                        parent=parent,
                        depth=depth,
                        kind="finish" if return_type == GIVE_ANSWER else "give_up",
                        content=thought,
                        finish=FinishCall(
                            return_type=return_type,
                            final_answer=str(args.get("final_answer") or ""),
                        ),
                    )
                )
            else:
                try:
                    parsed = json.loads(arguments) if arguments.strip() else {}
                except json.JSONDecodeError:
                    parsed = None
                content = str(msg.get("response") or "")
                nodes.append(
                    Node(
                        id=node_id,
                        parent=parent,
                        depth=depth + 1,
                        kind="action",
                        content=thought,
                        calls=[
                            StepCall(
                                id=f"call_{node_id}",
                                name=str(msg["name"]),
                                arguments=arguments,
                                args=parsed if isinstance(parsed, dict) else None,
                                observation=Observation(ok=True, content=content),
                            )
                        ],
                    )
                )
            thought = None
    finish = nodes[-1].finish if nodes and nodes[-1].finish else None
    final = finish_answer(answer.get("final_answer"))
    gave_answer = finish is not None and finish.return_type == GIVE_ANSWER
    answered = gave_answer or final is not None
    return Trajectory(
        scenario_id=f"{test_set}-{qid}" if test_set != DEFAULT_SET else qid,
        agent=Component(name=str(answer.get("method") or "toolbench")),
        model=Component(name="unknown", params={"source": "toolbench-converted"}),
        status=Status.answered if answered else Status.gave_up,
        end_reason=GIVE_ANSWER if answered else GIVE_UP,
        final_answer=final
        if final is not None
        else (finish.final_answer if gave_answer and finish else None),
        prompt=[{"role": "user", "content": str(entry.get("query") or "")}],
        functions=[{"type": "function", "function": f} for f in entry.get("available_tools") or []],
        nodes=nodes,
        chosen_path=[n.id for n in nodes],
    )
