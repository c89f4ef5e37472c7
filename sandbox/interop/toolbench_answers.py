"""ToolBench / StableToolBench answer files (DFSDT trees) -> recordings, tasks and a run folder.

An answer file ``<qid>_<model>_<method>.json`` holds ``tree`` (the whole search: ``Thought``,
``Action`` and ``Action Input`` nodes, the latter with the observation), ``answer_generation``
(``function`` schemas, ``train_messages`` whose last list is the chosen path, ``final_answer``
as the Finish arguments string, ``finish_type``, ``query``...) and ``forward_args``.

What is made of it:

- **recordings** of every call the tree observed, failed branches and errors included
  (provenance ``toolbench``). Identical calls with different observations get occurrence numbers
  in tree order (DFSDT's order of execution). Calls to functions the model invented and calls
  whose arguments were not a JSON object were answered by ToolBench's harness, not by a tool: they
  stay in the trajectory but are not recordings;
- **tools** from the function schemas, in ToolBench's standardised names;
- **tasks** whose reference is the chosen path (only when the episode gave an answer);
- **trajectories** in our format, one node per assistant turn with parent links reproducing the
  tree, written as a run folder that ``sandbox replay`` reads.
May import ``sandbox.store`` and ``interop`` modules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.model import Message
from agents.outcome import fallback_path
from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP, Observation
from agents.trajectory import (
    Component,
    EpisodeUsage,
    FinishCall,
    Node,
    Status,
    StepCall,
    Trajectory,
)
from mock_tools.canonical import canonical_key
from mock_tools.models import (
    ApiRef,
    ApiSpec,
    Provenance,
    Recording,
    Reference,
    RefStep,
    Response,
    SuiteMeta,
    Task,
)
from mock_tools.suite import fingerprint
from sandbox.errors import SandboxError
from sandbox.interop.finish import finish_answer
from sandbox.interop.observations import response_from_observation
from sandbox.interop.suite_writer import write_suite
from sandbox.interop.summary import ImportSummary
from sandbox.interop.toolbench_functions import api_from_function
from sandbox.interop.toolbench_queries import ToolCatalog, task_group
from sandbox.store import Manifest, RunStore, SuiteInfo
from sandbox.store.config import RunConfig

__all__ = ["AnswerEpisode", "import_answers", "parse_answer_file"]

_FILE = re.compile(r"^(?P<qid>[^_]+)_(?P<model>[^_]+)_(?P<method>.+)$")
_RECORDED_AT = datetime(2023, 7, 1, tzinfo=timezone.utc)
"""ToolBench's example answers were recorded against RapidAPI in mid-2023 (day unknown)."""


@dataclass
class ObservedCall:
    """One tool call seen in a tree, with what it returned."""

    node: int
    tool: str
    api: str
    args: dict[str, Any]
    response: Response
    truncated: bool


@dataclass
class AnswerEpisode:
    """One answer file, converted."""

    source: str
    task: Task
    trajectory: Trajectory
    calls: list[ObservedCall] = field(default_factory=list)
    harness_observations: int = 0
    """Observations made by ToolBench's harness (unknown function, unparsable arguments)."""


def answer_files(inputs: list[Path]) -> list[Path]:
    files: list[Path] = []
    for p in inputs:
        if p.is_dir():
            files.extend(sorted(p.rglob("*.json")))
        elif p.is_file():
            files.append(p)
        else:
            raise SandboxError(f"{p}: no such file or folder")
    return files


def episode_id(path: Path) -> tuple[str, str, str, str]:
    """``(task id, query id, model, method)`` from ``<dir>/<qid>_<model>_<method>.json``.

    The task id is ``<set>-<qid>``, the set being the parent folder without ``_answer``
    (``G1_answer`` -> ``G1``; StableToolBench's ``G1_instruction`` stays), so answers line up with
    tasks imported from the matching query file.
    """
    m = _FILE.match(path.stem)
    qid, model, method = (m["qid"], m["model"], m["method"]) if m else (path.stem, "", "")
    test_set = path.parent.name.removesuffix("_answer") or "toolbench"
    return f"{test_set}-{qid}", qid, model, method


def parse_answer_file(path: Path, catalog: ToolCatalog, summary: ImportSummary) -> AnswerEpisode:
    """Convert one answer file; raises ``ValueError`` when it is not a usable answer file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not JSON ({e})") from None
    gen = data.get("answer_generation") if isinstance(data, dict) else None
    if not isinstance(gen, dict) or not isinstance(gen.get("query"), str):
        raise ValueError("no answer_generation.query")
    tree = (data.get("tree") or {}).get("tree")
    if not isinstance(tree, dict):
        raise ValueError("no tree (a CoT answer without a search tree is not supported)")
    functions: dict[str, tuple[str, ApiSpec]] = {}
    for fn in gen.get("function") or []:
        if not isinstance(fn, dict) or fn.get("name") == FINISH:
            continue
        try:
            found = api_from_function(fn)
        except (ValueError, ValidationError) as e:
            summary.skip(f"{path.name} function {fn.get('name')!r}", f"malformed function: {e}")
            continue
        catalog.add(found.tool, "toolbench", found.api)
        functions[found.function] = (found.tool, catalog.apis[found.tool][found.api.name])
        if not found.name_matches:
            summary.notes.append(f"{path.name}: {found.function!r} does not rebuild exactly")
    if not functions:
        raise ValueError("no function schemas besides Finish")

    task_id, qid, model, method = episode_id(path)
    builder = _TreeBuilder(functions)
    builder.visit(tree, parent=None, depth=0, thought=None)
    chosen_messages = (gen.get("train_messages") or [[]])[-1]
    chosen = builder.find_path(_calls_of(chosen_messages))
    finish_type = gen.get("finish_type")
    answered = bool(gen.get("valid_data")) and finish_type == GIVE_ANSWER
    final = finish_answer(gen.get("final_answer")) if answered else None

    steps: list[RefStep] = []
    if answered:
        for node_id in chosen:
            for call in builder.nodes[node_id].calls:
                if call.tool is not None and call.api is not None and call.args is not None:
                    steps.append(
                        RefStep(
                            thought=builder.nodes[node_id].content or "",
                            tool=call.tool,
                            api=call.api,
                            args=call.args,
                        )
                    )
    offered = [ApiRef(tool=t, api=a.name) for t, a in functions.values()]
    task = Task(
        id=task_id,
        query=gen["query"].strip(),
        tools=_unique(offered),
        group=task_group(task_id),
        tags=["toolbench", "toolbench-answer", path.parent.name],
        reference=Reference(steps=steps, answer=final or ""),
    )
    forward = data.get("forward_args") or {}
    prompt: list[Message] = [
        {"role": m["role"], "content": m.get("content") or ""}
        for m in chosen_messages[:2]
        if isinstance(m, dict) and m.get("role") in ("system", "user")
    ] or [{"role": "user", "content": gen["query"]}]
    trajectory = Trajectory(
        scenario_id=task_id,
        agent=Component(
            name="dfsdt",
            params={
                "width": forward.get("tree_beam_size"),
                "max_depth_nodes": forward.get("single_chain_max_step"),
                "max_model_calls": forward.get("max_query_count"),
                "toolbench_method": method,
            },
        ),
        model=Component(name=model or "unknown", params={"source": "toolbench"}),
        status=Status.answered if answered else Status.gave_up,
        end_reason=GIVE_ANSWER if answered else f"toolbench:{finish_type or 'no_answer'}",
        final_answer=final,
        prompt=prompt,
        functions=[{"type": "function", "function": f} for f in gen.get("function") or []],
        nodes=builder.nodes,
        chosen_path=chosen,
        usage=EpisodeUsage(
            model_calls=int(gen.get("query_count") or 0),
            tool_calls=sum(len(n.calls) for n in builder.nodes),
        ),
        tree={
            "source": "toolbench",
            "file": path.name,
            "win": data.get("win"),
            "valid_data": gen.get("valid_data"),
            "total_tokens": gen.get("total_tokens"),
            "forward_args": forward,
            "max_depth": max((n.depth for n in builder.nodes), default=0),
        },
        started_at=_RECORDED_AT,
        ended_at=_RECORDED_AT,
    )
    if not answered:
        # ToolBench's converter keeps a random give-up branch; ours is the documented rule of
        # agents.outcome, so a replay through our DFSDT can reproduce it. Theirs is kept apart.
        trajectory.tree["toolbench_chosen_path"] = trajectory.chosen_path
        trajectory.chosen_path = fallback_path(trajectory)
    return AnswerEpisode(
        source=path.name,
        task=task,
        trajectory=trajectory,
        calls=builder.calls,
        harness_observations=builder.harness_observations,
    )


def _unique(refs: list[ApiRef]) -> list[ApiRef]:
    out: list[ApiRef] = []
    for r in refs:
        if r not in out:
            out.append(r)
    return out


def _calls_of(messages: list[Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in messages:
        fc = m.get("function_call") if isinstance(m, dict) else None
        if m.get("role") == "assistant" and isinstance(fc, dict):
            out.append((str(fc.get("name")), str(fc.get("arguments") or "")))
    return out


def _expanded(tb: dict[str, Any]) -> bool:
    """Whether ToolBench's DFS was called on this node (it numbers the nodes it visits)."""
    num = tb.get("expand_num")
    return isinstance(num, int) and num > 0


class _TreeBuilder:
    """Walks a ToolBench tree in pre-order and emits one ``Node`` per assistant turn."""

    def __init__(self, functions: dict[str, tuple[str, ApiSpec]]) -> None:
        self.functions = functions
        self.nodes: list[Node] = []
        self.calls: list[ObservedCall] = []
        self.harness_observations = 0

    def visit(
        self, tb: dict[str, Any], parent: int | None, depth: int, thought: str | None
    ) -> None:
        kind = tb.get("node_type")
        children = [c for c in tb.get("children") or [] if isinstance(c, dict)]
        if kind == "Thought":
            text = str(tb.get("description") or "")
            if not children or _expanded(tb):
                # A turn of its own: the model wrote a thought and no call (ToolBench's search
                # then expanded the Thought node itself, which ``expand_num`` shows), and its
                # children, if any, come from the next model calls.
                node_id = self._add(
                    Node(
                        id=0,
                        parent=parent,
                        depth=depth + 1,
                        kind="invalid",
                        content=text,
                        format_error="a thought without an action",
                    )
                )
                for child in children:
                    self.visit(child, node_id, depth + 1, None)
                return
            for child in children:
                self.visit(child, parent, depth, text)
        elif kind == "Action":
            inputs = [c for c in children if c.get("node_type") == "Action Input"]
            if not inputs:
                self._add(
                    Node(
                        id=0,
                        parent=parent,
                        depth=depth + 1,
                        kind="invalid",
                        content=thought,
                        format_error="an action without an input",
                    )
                )
            for tb_input in inputs:
                node_id = self._turn(
                    str(tb.get("description") or ""), tb_input, parent, depth, thought
                )
                node = self.nodes[node_id]
                for child in tb_input.get("children") or []:
                    if isinstance(child, dict):
                        self.visit(child, node_id, node.depth, None)
        else:  # the root (an empty Action Input) or a stray input: its children are turns
            for child in children:
                self.visit(child, parent, depth, thought)

    def _add(self, node: Node) -> int:
        node.id = len(self.nodes)
        self.nodes.append(node)
        return node.id

    def _turn(
        self,
        name: str,
        tb_input: dict[str, Any],
        parent: int | None,
        depth: int,
        thought: str | None,
    ) -> int:
        arguments = str(tb_input.get("description") or "")
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else None
        if name == FINISH:
            return_type = str((args or {}).get("return_type") or "")
            if return_type in (GIVE_ANSWER, GIVE_UP):
                answer = (args or {}).get("final_answer")
                return self._add(
                    Node(
                        id=0,
                        parent=parent,
                        depth=depth + 1,
                        kind="finish" if return_type == GIVE_ANSWER else "give_up",
                        content=thought,
                        finish=FinishCall(
                            return_type=return_type,
                            final_answer=answer if isinstance(answer, str) else "",
                        ),
                    )
                )
            return self._add(
                Node(
                    id=0,
                    parent=parent,
                    depth=depth + 1,
                    kind="invalid",
                    content=thought,
                    format_error="Finish without a return_type",
                )
            )
        text = str(tb_input.get("observation") or "")
        target = self.functions.get(name)
        decoded = response_from_observation(text)
        error = decoded[0].error if decoded else ""
        recorded = target is not None and args is not None and decoded is not None
        node_id = len(self.nodes)
        call = StepCall(
            id=f"call_{node_id}",
            name=name,
            arguments=arguments,
            args=args,
            tool=target[0] if target else None,
            api=target[1].name if target else None,
            observation=Observation(
                ok=recorded and error == "",
                content=text,
                status=200 if recorded else None,
                provenance="hit" if recorded else "invalid",
                error=error,
                truncated=bool(decoded and decoded[1]),
            ),
        )
        format_error = None
        if target is None:
            format_error = f"unknown function {name!r}"
        elif args is None:
            format_error = "arguments are not a JSON object"
        self._add(
            Node(
                id=node_id,
                parent=parent,
                depth=depth + 1,
                kind="action" if format_error is None else "invalid",
                content=thought,
                calls=[call],
                format_error=format_error,
            )
        )
        if recorded and target is not None and args is not None and decoded is not None:
            self.calls.append(
                ObservedCall(
                    node=node_id,
                    tool=target[0],
                    api=target[1].name,
                    args=args,
                    response=decoded[0],
                    truncated=decoded[1],
                )
            )
        else:
            self.harness_observations += 1
        return node_id

    def find_path(self, wanted: list[tuple[str, str]]) -> list[int]:
        """The root-to-leaf node ids whose calls are ``wanted`` (last match in tree order)."""
        if not wanted:
            return []
        children: dict[int | None, list[int]] = {}
        for n in self.nodes:
            children.setdefault(n.parent, []).append(n.id)
        found: list[int] = []

        def signature(n: Node) -> tuple[str, str] | None:
            if n.calls:
                return n.calls[0].name, n.calls[0].arguments
            return None

        def walk(parent: int | None, i: int, path: list[int]) -> None:
            nonlocal found
            for child in children.get(parent, []):
                n = self.nodes[child]
                sig = signature(n)
                if n.finish is not None and wanted[i][0] == FINISH and i == len(wanted) - 1:
                    found = [*path, child]
                elif sig is not None and sig == wanted[i] and i + 1 < len(wanted):
                    walk(child, i + 1, [*path, child])
                elif sig is None and n.finish is None:  # a thought-only turn: no call to match
                    walk(child, i, [*path, child])

        walk(None, 0, [])
        return found


def merge_recordings(
    episodes: list[AnswerEpisode], schemas: dict[tuple[str, str], dict[str, Any]]
) -> tuple[list[Recording], int]:
    """One recording per distinct call; occurrences where observations of a call differ.

    Returns the recordings and how many occurrences conflicted between episodes (the first
    episode's observation is kept).
    """
    by_key: dict[tuple[str, str, str], dict[str, list[ObservedCall]]] = {}
    for ep in episodes:
        for call in ep.calls:
            key = (
                call.tool,
                call.api,
                canonical_key(call.args, schemas.get((call.tool, call.api))),
            )
            by_key.setdefault(key, {}).setdefault(ep.source, []).append(call)
    out: list[Recording] = []
    conflicts = 0
    for per_episode in by_key.values():
        sequences = list(per_episode.items())
        distinct = {_response_key(c.response) for _, calls in sequences for c in calls}
        if len(distinct) == 1:
            source, calls = sequences[0]
            out.append(_recording(calls[0], None, source))
            continue
        longest = max(len(calls) for _, calls in sequences)
        for n in range(longest):
            chosen: tuple[str, ObservedCall] | None = None
            for source, calls in sequences:
                if n < len(calls):
                    if chosen is None:
                        chosen = (source, calls[n])
                    elif _response_key(calls[n].response) != _response_key(chosen[1].response):
                        conflicts += 1
            assert chosen is not None
            out.append(_recording(chosen[1], n + 1, chosen[0]))
    return out, conflicts


def _response_key(r: Response) -> str:
    return json.dumps([r.ok, r.error, r.body], sort_keys=True, ensure_ascii=False)


def _recording(call: ObservedCall, occurrence: int | None, source: str) -> Recording:
    note = f"ToolBench answer {source}, tree node {call.node}"
    if call.truncated:
        note += "; observation cut by ToolBench at 1024 characters: body is its visible part"
    return Recording(
        tool=call.tool,
        api=call.api,
        args=call.args,
        occurrence=occurrence,
        response=call.response,
        provenance=Provenance(source="toolbench", recorded_at=_RECORDED_AT, note=note),
    )


def import_answers(
    inputs: list[Path], out: Path, run_out: Path | None = None, name: str | None = None
) -> ImportSummary:
    """Import answer files (or folders of them) into a suite folder and a run folder."""
    summary = ImportSummary(kind="toolbench-answers", out=str(out))
    catalog = ToolCatalog()
    episodes: list[AnswerEpisode] = []
    files = answer_files(inputs)
    seen: set[str] = set()
    for path in files:
        try:
            ep = parse_answer_file(path, catalog, summary)
        except (ValueError, ValidationError) as e:
            summary.skip(str(path), f"malformed answer file: {e}")
            continue
        if ep.task.id in seen:
            summary.skip(str(path), f"duplicate: task id {ep.task.id} already imported")
            continue
        seen.add(ep.task.id)
        episodes.append(ep)
    schemas = {
        (t, a): spec.parameters for t, apis in catalog.apis.items() for a, spec in apis.items()
    }
    recordings, conflicts = merge_recordings(episodes, schemas)
    tasks: dict[str, list[Task]] = {}
    for ep in episodes:
        tasks.setdefault(ep.task.group, []).append(ep.task)
    meta = SuiteMeta(
        name=name or out.name, description="Imported from ToolBench answer files (DFSDT trees)."
    )
    summary.written = write_suite(
        out, meta, catalog.by_category(), tasks, {"toolbench": recordings}
    )
    run_dir = write_run(episodes, out, run_out or out / "original-run")
    observed = sum(len(ep.calls) for ep in episodes)
    summary.read = {
        "files": len(files),
        "episodes": len(episodes),
        "tree_calls": observed + sum(ep.harness_observations for ep in episodes),
        "recorded_calls": observed,
        "harness_observations": sum(ep.harness_observations for ep in episodes),
        "truncated_observations": sum(c.truncated for ep in episodes for c in ep.calls),
    }
    summary.written["trajectories"] = len(episodes)
    summary.notes.append(f"run folder: {run_dir}")
    if conflicts:
        summary.notes.append(
            f"{conflicts} occurrences of identical calls differed between episodes; "
            "the first episode's observation was kept"
        )
    return summary


def write_run(episodes: list[AnswerEpisode], suite_dir: Path, run_dir: Path) -> Path:
    """The episodes as a run folder (manifest + trajectories) that the run store opens."""
    run_id = run_dir.name
    if (run_dir / "manifest.json").exists():
        raise SandboxError(f"{run_dir} already holds a run; choose another --run-out")
    first = episodes[0].trajectory if episodes else None
    width = first.agent.params.get("width") if first else None
    manifest = Manifest(
        run_id=run_id,
        config=RunConfig(
            suite=str(suite_dir),
            agent="dfsdt",
            model=first.model.name if first else "unknown",
            agent_options={
                "depth_unit": "toolbench_nodes",
                **({"width": width} if width else {}),
            },
            max_depth=(first.agent.params.get("max_depth_nodes") if first else None) or None,
            tasks=[ep.task.id for ep in episodes],
        ),
        suite=SuiteInfo(
            name=suite_dir.name, path=str(suite_dir), fingerprint=fingerprint(suite_dir)
        ),
        agent=first.agent.model_dump() if first else {},
        model=first.model.model_dump() if first else {},
        episodes=[(ep.task.id, 0) for ep in episodes],
        status="completed",
        started_at=_RECORDED_AT,
        ended_at=_RECORDED_AT,
    )
    with RunStore.create(run_dir.parent, manifest) as store:
        for ep in episodes:
            ep.trajectory.run_id = run_id
            store.append(ep.trajectory)
    return run_dir
