"""Trajectories <-> ToolBench's converted-answer format (the input of ToolBench's ToolEval).

One JSON file per test set (``<set>.json``, the set taken from scenario ids ``<set>-<qid>``)::

    {qid: {"query": str, "available_tools": [function schemas],
           "answer": {"method": str, "total_steps": int,
                      "final_answer": str,        # the Finish arguments as a JSON string
                      "answer_details": [node]}}} # node = {"role", "message", "next": [node]}

Each entry is what StableToolBench's ``convert_to_answer_format.py`` (``process_valid_data``)
writes for the episode's chosen path:

- ``method``: the method ToolBench names the strategy by: ``DFS_woFilter_w<width>`` (``dfsdt``),
  ``CoT@<n>`` (``react@n``; ``react`` is ``CoT@1``); another strategy keeps its own name;
- ``available_tools``: the functions offered, as offered (``{"type": "function", "function":
  {...}}``, ``Finish`` included);
- ``answer_details``: a chain of ``system`` and ``user`` nodes (their messages empty, as the
  converter's ``convert_to_dict`` writes them), then per turn: a turn without a call is an
  ``assistant`` node holding its text; a turn with calls is one ``tool`` node per call whose
  message is the dict ``{"name", "arguments", "response"}`` (the thought of such a turn is not
  kept; an invented name is ``invalid_hallucination_function_name``, as ToolBench's history shows
  it), and its ``Finish`` a ``tool`` node with an empty response, after which the converter reads
  no further call of the turn (calls the turn made after its ``Finish`` are not written);
- ``total_steps``: the nodes of that chain, ``system`` and ``user`` included;
- ``final_answer``: the ``Finish`` arguments (as the model wrote them when the record has them,
  else as JSON); under ToolBench's finish rule (the presets), a ``Finish(give_answer)`` followed
  by calls records the last call's arguments, as ToolBench's answer files do.

A CoT@1 episode without an answer (``react``, ``react@1``: ToolBench's ``valid_data`` is false)
is written as the converter's ``process_invalid_data`` writes its one try: every turn's text as
an ``assistant`` node (a calling turn's too), every call in its turn's order as a ``tool`` node
with the name as written and its observation, the ``Finish`` with the observation ToolBench gave
it (``{"response":"chose to give up and restart"}`` for a give-up), and ``final_answer`` empty.

``read_converted`` reads such a file back into one branch per entry. May import
``sandbox.store`` and ``interop`` modules.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP, HALLUCINATED_NAME, Observation
from agents.trajectory import Component, FinishCall, Node, Status, StepCall, Trajectory
from sandbox.errors import RunError, SandboxError
from sandbox.interop.finish import finish_answer
from sandbox.interop.observations import parse_observation
from sandbox.interop.suite_writer import file_slug
from sandbox.store import read_trajectories
from sandbox.store.input_files import InputFileError, json_text, read_json
from sandbox.store.run_store import write_new

__all__ = [
    "converted_method",
    "export_run",
    "read_converted",
    "split_scenario_id",
    "to_converted",
]

DEFAULT_SET = "toolbench"
_NO_SUCH = re.compile(r"^No such function name: (?P<name>.*)$", re.S)


def split_scenario_id(scenario_id: str) -> tuple[str, str]:
    """``G1_instruction-42`` -> ``("G1_instruction", "42")``; other ids go to one default set."""
    head, sep, tail = scenario_id.rpartition("-")
    if sep and head and tail:
        return head, tail
    return DEFAULT_SET, scenario_id


def _query(traj: Trajectory) -> str:
    """The task's query: an imported episode's own (its prompt is ToolBench's message around
    it), else the prompt's user message."""
    imported = traj.tree.get("toolbench")
    if isinstance(imported, dict) and isinstance(imported.get("query"), str):
        return str(imported["query"])
    users = [m.get("content") or "" for m in traj.prompt if m.get("role") == "user"]
    return str(users[-1]) if users else ""


def _finish_arguments(finish: FinishCall) -> str:
    if finish.arguments is not None:
        return finish.arguments
    args: dict[str, Any] = {"return_type": finish.return_type}
    if finish.return_type == GIVE_ANSWER:
        args["final_answer"] = finish.final_answer
    return json.dumps(args, ensure_ascii=False)


def converted_method(agent: Component) -> str:
    """The method name ToolBench gives the strategy (``DFS_woFilter_w2``, ``CoT@1``...)."""
    if agent.name == "dfsdt":
        return f"DFS_woFilter_w{agent.params.get('width', 2)}"
    if agent.name == "react@n":
        return f"CoT@{agent.params.get('n', 1)}"
    if agent.name == "react":
        return "CoT@1"
    return agent.name


def _turn_nodes(node: Node) -> tuple[list[dict[str, Any]], str | None]:
    """The converter's nodes for one turn, and the final answer it records (if it finished):
    the calls before the ``Finish``, then the ``Finish``, where the converter stops reading the
    turn; the final answer is the ``Finish`` arguments, or under ToolBench's finish rule the last
    call's (``FinishCall.late_answer``)."""
    if node.kind == "error":
        return [], None
    if not node.calls and node.finish is None:
        return [{"role": "assistant", "message": node.content or ""}], None
    out: list[dict[str, Any]] = []
    finish_at = len(node.calls)
    if node.finish is not None and node.finish.position is not None:
        finish_at = node.finish.position
    for call in node.calls[:finish_at]:
        if call.name == FINISH:  # an unusable Finish: the converter stops at any Finish
            finish = {"name": FINISH, "arguments": call.arguments, "response": ""}
            return [*out, {"role": "tool", "message": finish}], None
        content = call.observation.content if call.observation else ""
        name = HALLUCINATED_NAME if call.hallucinated else call.name
        message = {"name": name, "arguments": call.arguments, "response": content}
        out.append({"role": "tool", "message": message})
    if node.finish is None:
        return out, None
    arguments = _finish_arguments(node.finish)
    finish = {"name": FINISH, "arguments": arguments, "response": ""}
    answer = node.finish.late_answer if node.finish.late_answer is not None else arguments
    return [*out, {"role": "tool", "message": finish}], answer


GIVE_UP_OBSERVATION = '{"response":"chose to give up and restart"}'
"""What ToolBench's ``rapidapi_wrapper._step`` answers a ``Finish(give_up_and_restart)``."""


def _try_nodes(node: Node) -> list[dict[str, Any]]:
    """The converter's nodes for one turn of a CoT try without an answer
    (``process_invalid_data``): its text as an ``assistant`` node when it had text (a failed
    model call: its error), then every call in the turn's order, the ``Finish`` included, each a
    ``tool`` node with the name as written and the observation ToolBench gave it."""
    out: list[dict[str, Any]] = []
    text = node.content if node.kind != "error" else (node.content or node.error)
    if text is not None:
        out.append({"role": "assistant", "message": text})
    calls: list[dict[str, Any]] = []
    for call in node.calls:
        content = call.observation.content if call.observation else ""
        calls.append({"name": call.name, "arguments": call.arguments, "response": content})
    if node.finish is not None:
        response = GIVE_UP_OBSERVATION if node.finish.return_type == GIVE_UP else ""
        finish = {"name": FINISH, "arguments": _finish_arguments(node.finish), "response": response}
        at = node.finish.position if node.finish.position is not None else len(calls)
        calls.insert(at, finish)
    return [*out, *({"role": "tool", "message": c} for c in calls)]


def _one_try_without_answer(traj: Trajectory) -> bool:
    """A CoT@1 episode that did not answer: ToolBench's converter reads its one try whole."""
    return converted_method(traj.agent) == "CoT@1" and traj.status is not Status.answered


def to_converted(traj: Trajectory) -> dict[str, Any]:
    """One trajectory as a converted-answer entry (its chosen path)."""
    chain: list[dict[str, Any]] = [
        {"role": "system", "message": ""},
        {"role": "user", "message": ""},
    ]
    final_answer = ""
    if _one_try_without_answer(traj):
        for node in traj.chosen():
            chain.extend(_try_nodes(node))
    else:
        for node in traj.chosen():
            nodes, arguments = _turn_nodes(node)
            chain.extend(nodes)
            if arguments is not None:
                final_answer = arguments
    if not final_answer and traj.status is Status.answered and traj.final_answer is not None:
        final_answer = _finish_arguments(
            FinishCall(return_type=GIVE_ANSWER, final_answer=traj.final_answer)
        )
    details: dict[str, Any] | None = None
    for item in reversed(chain):
        details = {**item, "next": [details] if details else []}
    return {
        "query": _query(traj),
        "available_tools": list(traj.functions),
        "answer": {
            "method": converted_method(traj.agent),
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
        write_new(path, json.dumps(entries, ensure_ascii=False, indent=1))
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
            data = read_json(f)
        except InputFileError as e:  # not a regular file, not JSON, nested too deep
            raise SandboxError(f"not a converted-answer file: {e}") from None
        if not isinstance(data, dict):
            raise SandboxError(f"{f}: a converted-answer file maps query ids to answers")
        for qid, entry in data.items():
            try:
                out.append(_trajectory(f.stem, str(qid), entry))
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                raise SandboxError(f"{f}: entry {qid!r}: {e}") from None
    return out


def _invented(response: str) -> str | None:
    """The name ToolBench's ``No such function name`` observation quotes."""
    parsed = parse_observation(response)
    m = _NO_SUCH.match(parsed.error) if parsed is not None else None
    return m["name"] if m else None


def _node(node_id: int, parent: int | None, depth: int, item: dict[str, Any]) -> Node:
    """One node of a converted chain: an assistant text (a thought) or one tool call."""
    if item.get("role") == "assistant":
        text = str(item.get("message") or "")
        return Node(id=node_id, parent=parent, depth=depth + 1, kind="thought", content=text)
    msg = _tool_message(item.get("message"))
    arguments = str(msg.get("arguments") or "")
    if msg["name"] == FINISH:
        args = json_text(arguments) if arguments.strip() else {}
        return_type = str(args.get("return_type") or GIVE_UP)
        return Node(
            id=node_id,
            parent=parent,
            depth=depth + 1,
            kind="finish" if return_type == GIVE_ANSWER else "give_up",
            finish=FinishCall(
                return_type=return_type,
                final_answer=str(args.get("final_answer") or ""),
                arguments=arguments,
            ),
        )
    try:
        parsed = json_text(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        parsed = None
    content = str(msg.get("response") or "")
    name = str(msg["name"])
    invented = _invented(content) if name == HALLUCINATED_NAME else None
    call = StepCall(
        id=f"call_{node_id}",
        name=invented or name,
        arguments=arguments,
        hallucinated=invented is not None,
        args=parsed if isinstance(parsed, dict) and invented is None else None,
        observation=Observation(ok=True, content=content),
    )
    return Node(id=node_id, parent=parent, depth=depth + 1, kind="action", calls=[call])


def _trajectory(test_set: str, qid: str, entry: dict[str, Any]) -> Trajectory:
    answer = entry["answer"]
    nodes: list[Node] = []
    for item in _chain(answer.get("answer_details")):
        if item.get("role") in ("assistant", "tool"):
            parent = nodes[-1] if nodes else None
            depth = parent.depth if parent else 0
            nodes.append(_node(len(nodes), parent.id if parent else None, depth, item))
    finish = nodes[-1].finish if nodes and nodes[-1].finish else None
    final = finish_answer(answer.get("final_answer"))
    gave_answer = finish is not None and finish.return_type == GIVE_ANSWER
    answered = gave_answer or final is not None
    tools = entry.get("available_tools") or []
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
        functions=[
            f if f.get("type") == "function" else {"type": "function", "function": f} for f in tools
        ],
        nodes=nodes,
        chosen_path=[n.id for n in nodes],
    )
