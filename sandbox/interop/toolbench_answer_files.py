"""ToolBench / StableToolBench answer files, in every layout, -> ``AnswerEpisode`` s.

Three layouts, told apart by their keys (a file fits none: ``ValueError`` with the reason):

- **DFS** (``<qid>[_<model>]_DFS_woFilter_w2.json``): ``tree.tree`` holds the whole search,
  ``forward_args`` its settings (``tree_beam_size``, ``single_chain_max_step``,
  ``max_query_count``), ``answer_generation`` the offered ``function`` schemas, ``finish_type``,
  ``final_answer`` (the raw Finish arguments), ``train_messages`` (last list: the chosen path);
- **CoT chains** (``..._CoT@N.json``, also ``ReAct@N``): ``trys`` holds one chain of node JSONs
  per try, ``forward_args`` ``pass_at`` and ``single_chain_max_step``; no tree, no finish type;
- **converted answers** (``model_predictions_converted/<model>/<test set>.json``, the input of
  ToolEval): ``{qid: {query, available_tools, answer: {method, total_steps, final_answer,
  answer_details}}}``, ``answer_details`` one chain of ``system``/``user``/``assistant``/``tool``
  messages, each tool message ``str({"name", "arguments", "response"})`` (or the dict itself).
  ToolBench's converter drops the thoughts of call turns and renames invented function names to
  ``invalid_hallucination_function_name``; the original name is read back from the observation.
  An older converter cut every message to 100 characters: such entries cannot be read.

File names: ToolBench writes ``<qid>_<method>.json`` (its example data adds the model:
``10_ChatGPT_DFS_woFilter_w2.json``). The task id is ``<set>-<qid>``, the set being the folder
without ``_answer`` (``G1_answer`` -> ``G1``; StableToolBench's ``G1_instruction`` stays), or,
for converted answers, the file's stem, so answers line up with tasks imported from the matching
query file. May import ``agents``, ``mock_tools``, ``sandbox.store`` and interop modules.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from agents.model import Message
from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP, HALLUCINATED_NAME
from agents.trajectory import Component, EpisodeUsage, Status, Trajectory
from mock_tools.models import ApiRef
from sandbox.errors import SandboxError
from sandbox.interop.finish import finish_answer
from sandbox.interop.observations import parse_observation
from sandbox.interop.summary import ImportSummary
from sandbox.interop.toolbench_functions import api_from_function
from sandbox.interop.toolbench_queries import ToolCatalog
from sandbox.interop.toolbench_settings import EpisodeSettings, Settled, dfs_candidates
from sandbox.interop.toolbench_tree import ObservedCall, Offered, TurnReader
from sandbox.store.input_files import InputFileError, read_json

__all__ = ["RECORDED_AT", "UNKNOWN_CATEGORY", "AnswerEpisode", "answer_files", "read_answer_file"]

Layout = Literal["dfs", "chain", "converted"]

RECORDED_AT = datetime(2023, 7, 1, tzinfo=timezone.utc)
"""ToolBench's example answers were recorded against RapidAPI in mid-2023 (day unknown)."""

_METHOD = re.compile(r"^(dfs|cot|react)", re.IGNORECASE)
_WIDTH = re.compile(r".+_w(\d+)")
_AT = re.compile(r"@(\d+)$")
_NO_SUCH = re.compile(r"^No such function name: (?P<name>.*)$", re.S)
UNKNOWN_CATEGORY = "toolbench"
"""The category of a tool until a query file names it (answer files do not)."""
DEFAULT_DEPTH = 12
"""ToolBench's ``single_chain_max_step`` (``run_single_task``), when a file does not say."""


@dataclass
class AnswerEpisode:
    """One imported episode: its task, its trajectory (nodes from ToolBench's), the calls it
    observed, and the settings to re-run it with."""

    source: str
    layout: Layout
    method: str
    model: str
    task_id: str
    query: str
    offered: list[ApiRef]
    trajectory: Trajectory
    calls: list[ObservedCall]
    harness_observations: int
    candidates: list[EpisodeSettings]
    answered_by_toolbench: bool
    reference_answer: str | None
    notes: list[str] = field(default_factory=list)
    settled: Settled | None = None


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


def file_parts(path: Path) -> tuple[str, str, str]:
    """``(query id, model, method)`` from ``<qid>_<method>`` or ``<qid>_<model>_<method>``."""
    qid, _, rest = path.stem.partition("_")
    if not rest or _METHOD.match(rest):
        return qid, "", rest
    model, _, method = rest.partition("_")
    return qid, model, method


def read_answer_file(
    path: Path, catalog: ToolCatalog, summary: ImportSummary
) -> list[AnswerEpisode]:
    """The episodes of one file; ``ValueError`` (the reason) when it is not an answer file."""
    try:
        data = read_json(path)
    except InputFileError as e:  # not a regular file, not JSON, nested too deep
        raise ValueError(str(e).removeprefix(f"{path}: ")) from None
    if not isinstance(data, dict):
        raise ValueError("not a ToolBench answer file: the top level is not an object")
    if isinstance(data.get("answer_generation"), dict):
        tree = data.get("tree")
        if isinstance(tree, dict) and isinstance(tree.get("tree"), dict):
            return [_generated(path, data, catalog, summary, "dfs")]
        if isinstance(data.get("trys"), list):
            return [_generated(path, data, catalog, summary, "chain")]
        raise ValueError("an answer_generation without a search tree (tree.tree) or tries (trys)")
    entries = [v for v in data.values() if isinstance(_object(v).get("answer"), dict)]
    if data and len(entries) == len(data):
        out: list[AnswerEpisode] = []
        for qid, entry in data.items():
            try:
                out.append(_converted(path, str(qid), entry, catalog, summary))
            except (ValueError, KeyError, TypeError, ValidationError) as e:
                summary.skip(f"{path} entry {qid}", f"unreadable converted answer: {e}")
        return out
    raise ValueError(
        "not a ToolBench answer file: no answer_generation (DFS or CoT answer) and not a "
        "converted-answer file ({qid: {query, available_tools, answer}})"
    )


# -- the layouts ---------------------------------------------------------------------------------


def _offered(
    functions: Any, catalog: ToolCatalog, summary: ImportSummary, source: str
) -> tuple[Offered, list[ApiRef], list[dict[str, Any]]]:
    names: list[str] = []
    targets: dict[str, tuple[str, str]] = {}
    refs: list[ApiRef] = []
    schemas: list[dict[str, Any]] = []
    for fn in functions if isinstance(functions, list) else []:
        if not isinstance(fn, dict):
            continue
        fn = fn.get("function", fn) if fn.get("type") == "function" else fn
        schemas.append({"type": "function", "function": fn})
        if fn.get("name") == FINISH:
            continue
        try:
            found = api_from_function(fn)
        except (ValueError, ValidationError) as e:
            summary.skip(f"{source} function {fn.get('name')!r}", f"malformed function: {e}")
            continue
        catalog.add(found.tool, UNKNOWN_CATEGORY, found.api)  # query files may tell it later
        if not found.name_matches:
            summary.notes.append(f"{source}: {found.function!r} does not rebuild exactly")
        if found.function in targets:
            continue
        names.append(found.function)
        targets[found.function] = (found.tool, found.api.name)
        ref = ApiRef(tool=found.tool, api=found.api.name)
        if ref not in refs:
            refs.append(ref)
    if not names:
        raise ValueError("no function schemas besides Finish")
    return Offered(names, targets), refs, schemas


def _task_id(test_set: str, qid: str) -> str:
    return f"{test_set or 'toolbench'}-{qid}"


def _prompt(messages: Any, query: str) -> list[Message]:
    head = [
        {"role": m["role"], "content": m.get("content") or ""}
        for m in (messages if isinstance(messages, list) else [])[:2]
        if isinstance(m, dict) and m.get("role") in ("system", "user")
    ]
    return head or [{"role": "user", "content": query}]


def _total_steps(messages: Any) -> int | None:
    """ToolBench's converter's ``total_steps`` for a chosen path: system and user, then one step
    per call (per assistant message without a call)."""
    if not isinstance(messages, list) or len(messages) < 2:
        return None
    steps = 2
    for m in messages[2:]:
        if isinstance(m, dict) and m.get("role") == "assistant":
            calls = m.get("tool_calls")
            steps += len(calls) if isinstance(calls, list) and calls else 1
    return steps


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _generated(
    path: Path, data: dict[str, Any], catalog: ToolCatalog, s: ImportSummary, layout: Layout
) -> AnswerEpisode:
    """A DFS or CoT answer file (``answer_generation`` plus the search)."""
    gen = data["answer_generation"]
    if not isinstance(gen.get("query"), str):
        raise ValueError("no answer_generation.query")
    offered, refs, schemas = _offered(gen.get("function"), catalog, s, path.name)
    qid, model, method = file_parts(path)
    forward = _object(data.get("forward_args"))
    search = _dfs_search if layout == "dfs" else _chain_search
    reader, method, candidates = search(data, offered, method, forward)
    for settings in candidates:
        settings.check()  # a file whose forward_args no agent runs with is skipped
    valid = bool(gen.get("valid_data"))
    messages = (gen.get("train_messages") or [[]])[-1]
    # a CoT file has no finish_type: only an answer is valid data there
    finish_type = (gen.get("finish_type") if layout == "dfs" else GIVE_ANSWER) if valid else None
    info = {
        "file": str(path),
        "query_id": qid,
        "query": gen["query"],
        "method": method,
        "layout": layout,
        "win": data.get("win"),
        "valid_data": gen.get("valid_data"),
        "finish_type": finish_type,
        "final_answer": gen.get("final_answer"),
        "total_steps": _total_steps(messages) if valid else None,
        "query_count": gen.get("query_count"),
        "total_tokens": gen.get("total_tokens"),
        "forward_args": forward,
    }
    return _episode(
        path,
        layout,
        method,
        model,
        _task_id(path.parent.name.removesuffix("_answer"), qid),
        gen["query"],
        refs,
        schemas,
        reader,
        candidates,
        prompt=_prompt(messages, gen["query"]),
        info=info,
        answered=finish_type == GIVE_ANSWER,
        reference=finish_answer(gen.get("final_answer")) if valid else None,
    )


def _dfs_search(
    data: dict[str, Any], offered: Offered, method: str, forward: dict[str, Any]
) -> tuple[TurnReader, str, list[EpisodeSettings]]:
    width_match = _WIDTH.match(method)
    width = _int(forward.get("tree_beam_size"), int(width_match[1]) if width_match else 2)
    if not method:
        method = f"DFS_{'wFilter' if forward.get('with_filter') else 'woFilter'}_w{width}"
    reader = TurnReader(offered, tree_mode=True)
    reader.read_tree(data["tree"]["tree"])
    if forward.get("with_filter"):
        reader.notes.append("a filtered DFS (with_filter): not DFSDT, its search order is not ours")
    max_queries = _int(forward.get("max_query_count"), None)
    base = EpisodeSettings(
        "dfsdt",
        {"width": width},
        max_depth=_int(forward.get("single_chain_max_step"), DEFAULT_DEPTH),
        # ToolBench drops the output of its last permitted call: its tree has one turn fewer
        max_model_calls=max(1, max_queries - 1) if max_queries else None,
    )
    return reader, method, dfs_candidates(base)


def _chain_search(
    data: dict[str, Any], offered: Offered, method: str, forward: dict[str, Any]
) -> tuple[TurnReader, str, list[EpisodeSettings]]:
    trys = [t for t in data["trys"] if isinstance(t, dict) and isinstance(t.get("chain"), list)]
    if not trys:
        raise ValueError("no tries (trys[].chain) in a CoT answer")
    at = _AT.search(method)
    n = _int(forward.get("pass_at"), int(at[1]) if at else len(trys)) or 1
    reader = TurnReader(offered, tree_mode=False)
    for t in trys:
        reader.read_chain(t["chain"])
    depth = _int(forward.get("single_chain_max_step"), DEFAULT_DEPTH)
    return reader, method or f"CoT@{n}", [EpisodeSettings(f"react@{n}", {}, max_depth=depth)]


def _converted(
    path: Path, qid: str, entry: dict[str, Any], catalog: ToolCatalog, s: ImportSummary
) -> AnswerEpisode:
    answer = entry["answer"]
    query = entry.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("no query")
    offered, refs, schemas = _offered(entry.get("available_tools"), catalog, s, path.name)
    method = str(answer.get("method") or "converted")
    chain = _detail_chain(answer.get("answer_details"))
    reader = TurnReader(offered, tree_mode=False)
    reader.read_chain(chain)
    if not reader.nodes:
        raise ValueError("answer_details hold no step")
    final_raw = answer.get("final_answer")
    finish_type = None
    if isinstance(final_raw, str) and final_raw:
        finish_type = "give_up" if GIVE_UP in final_raw else GIVE_ANSWER
    info = {
        "file": str(path),
        "query_id": qid,
        "query": query,
        "method": method,
        "layout": "converted",
        "finish_type": finish_type,
        "final_answer": final_raw,
        "total_steps": answer.get("total_steps"),
    }
    settings = EpisodeSettings("react", {"depth_unit": "turns"}, max_depth=len(reader.nodes))
    return _episode(
        path,
        "converted",
        method,
        path.parent.name,
        _task_id(path.stem, qid),
        query,
        refs,
        schemas,
        reader,
        [settings],
        prompt=[{"role": "user", "content": query}],
        info=info,
        answered=finish_type == GIVE_ANSWER,
        reference=finish_answer(final_raw),
        source=f"{path.name}#{qid}",
    )


def _detail_chain(details: Any) -> list[dict[str, Any]]:
    """A converted answer's chain as ToolBench node JSONs (``Thought``, ``Action``, ``Action
    Input``), so the reader of CoT chains reads it."""
    out: list[dict[str, Any]] = []
    nodes = details if isinstance(details, list) else []
    while nodes and isinstance(nodes[0], dict):
        item = nodes[0]
        nodes = item.get("next") or []
        role, message = item.get("role"), item.get("message")
        if role == "assistant":
            text = message if isinstance(message, str) else json.dumps(message)
            out.append({"node_type": "Thought", "description": text})
        elif role == "tool":
            call = _tool_message(message)
            name, arguments = str(call["name"]), call.get("arguments") or ""
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            response = call.get("response")
            observation = response if isinstance(response, str) else json.dumps(response)
            if name == HALLUCINATED_NAME:
                name = _invented_name(observation) or name
            out.append({"node_type": "Action", "description": name})
            out.append(
                {"node_type": "Action Input", "description": arguments, "observation": observation}
            )
    return out


def _tool_message(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        value: Any = text
    else:
        try:
            value = ast.literal_eval(str(text))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ValueError(
                "a tool message is not a whole dict (ToolBench's older converter cut every "
                "message to 100 characters; import the answer files instead)"
            ) from None
    if not isinstance(value, dict) or "name" not in value:
        raise ValueError("a tool message has no name")
    return value


def _invented_name(observation: str) -> str | None:
    """The name ToolBench's "No such function name" observation quotes."""
    parsed = parse_observation(observation)
    m = _NO_SUCH.match(parsed.error) if parsed is not None else None
    return m["name"] if m else None


def _episode(
    path: Path,
    layout: Layout,
    method: str,
    model: str,
    task_id: str,
    query: str,
    refs: list[ApiRef],
    schemas: list[dict[str, Any]],
    reader: TurnReader,
    candidates: list[EpisodeSettings],
    *,
    prompt: list[Message],
    info: dict[str, Any],
    answered: bool,
    reference: str | None,
    source: str | None = None,
) -> AnswerEpisode:
    if not reader.nodes:
        raise ValueError("the answer holds no step (an empty tree)")
    query_count = info.get("query_count")
    trajectory = Trajectory(
        scenario_id=task_id,
        agent=Component(name=candidates[0].agent, params=dict(candidates[0].options)),
        model=Component(name=model or "unknown", params={"source": "toolbench"}),
        status=Status.answered if answered else Status.gave_up,
        end_reason="imported",
        prompt=prompt,
        functions=schemas,
        nodes=reader.nodes,
        usage=EpisodeUsage(
            model_calls=query_count if isinstance(query_count, int) else len(reader.nodes),
            tool_calls=sum(
                1 for n in reader.nodes for c in n.calls if c.function and c.args is not None
            ),
        ),
        errors=reader.errors,
        tree={"source": "toolbench", "toolbench": info},
        started_at=RECORDED_AT,
        ended_at=RECORDED_AT,
    )
    return AnswerEpisode(
        source=source or path.name,
        layout=layout,
        method=method,
        model=model,
        task_id=task_id,
        query=query.strip(),
        offered=refs,
        trajectory=trajectory,
        calls=reader.calls,
        harness_observations=reader.harness_observations,
        candidates=candidates,
        answered_by_toolbench=answered,
        reference_answer=reference,
        notes=list(reader.notes),
    )
