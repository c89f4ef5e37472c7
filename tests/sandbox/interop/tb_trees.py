"""Small ToolBench answer files written by hand: node builders for trees and chains, and files.

A turn is built as ToolBench's ``DFS.py`` stores it: an optional ``Thought`` (the text), then an
``Action`` (the name) whose ``Action Input`` holds the raw arguments, the observation and its
status code. ``expand_num`` marks the nodes DFS was called on: the last node of every turn (and a
``Thought`` that was a turn of its own).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Tb = dict[str, Any]

ANSWER_OK = '{"response":"successfully giving the final answer."}'
GIVE_UP_OK = '{"response":"chose to give up and restart"}'


def function(api: str, tool: str, *, params: dict[str, str] | None = None, required=()) -> Tb:
    """A ToolBench function schema ``<api>_for_<tool>``."""
    return {
        "name": f"{api}_for_{tool}",
        "description": f'This is the subfunction for tool "{tool}", you can use this tool.'
        f'The description of this function is: "{api} of {tool}"',
        "parameters": {
            "type": "object",
            "properties": {
                k: {"type": t, "description": "", "example_value": ""}
                for k, t in (params or {}).items()
            },
            "required": list(required),
            "optional": [],
        },
    }


FINISH_FN: Tb = {
    "name": "Finish",
    "description": "finish",
    "parameters": {
        "type": "object",
        "properties": {
            "return_type": {"type": "string", "enum": ["give_answer", "give_up_and_restart"]},
            "final_answer": {"type": "string"},
        },
        "required": ["return_type"],
    },
}

TRACK = function("track", "parcels", params={"code": "string"}, required=["code"])
STATUS = function("status", "parcels", params={"code": "string"})
SEARCH = function("search", "shops", params={"q": "string"})
FUNCTIONS = [TRACK, STATUS, SEARCH]


def obs(response: Any, error: str = "") -> str:
    """An observation as ToolBench writes it (``json.dumps``, ASCII-escaped)."""
    return json.dumps({"error": error, "response": response})


def call(
    name: str,
    args: dict[str, Any] | str,
    observation: str,
    *children: Tb,
    code: int = 0,
    expand: int = 1,
    pruned: bool = False,
) -> Tb:
    """An ``Action`` with its ``Action Input``; ``children`` are the next turns."""
    text = args if isinstance(args, str) else json.dumps(args)
    return {
        "node_type": "Action",
        "description": name,
        "expand_num": 0,
        "children": [
            {
                "node_type": "Action Input",
                "description": text,
                "observation": observation,
                "observation_code": code,
                "expand_num": expand,
                "pruned": pruned,
                "children": list(children),
            }
        ],
    }


def thought(text: str, *children: Tb, expand: int = 0, code: int | None = None) -> Tb:
    """A ``Thought``: of a turn with a call (one ``call`` child, ``expand=0``), a turn of its own
    (``expand`` > 0), or a failed model call (``code=-1``)."""
    node: Tb = {
        "node_type": "Thought",
        "description": text,
        "expand_num": expand,
        "children": list(children),
    }
    if code is not None:
        node["observation_code"] = code
        node["pruned"] = True
    return node


def finish(answer: str = "Done.", *children: Tb, raw: str | None = None, code: int = 3) -> Tb:
    """A ``Finish`` turn; an unusable one (``code=2``) may have next turns below it."""
    args = raw or json.dumps({"return_type": "give_answer", "final_answer": answer})
    observation = {3: ANSWER_OK, 4: GIVE_UP_OK}.get(code, '{error:"must have "final_answer""}')
    return call("Finish", args, observation, *children, code=code)


def give_up(reason: str = "") -> Tb:
    args = {"return_type": "give_up_and_restart"}
    if reason:
        args["final_answer"] = reason
    return call("Finish", args, GIVE_UP_OK, code=4, pruned=True)


def dfs_file(
    query: str,
    *turns: Tb,
    functions: list[Tb] | None = None,
    width: int = 2,
    depth: int = 12,
    max_queries: int = 200,
    final_answer: str | None = None,
    finish_type: str = "give_answer",
) -> Tb:
    """A DFS answer file (``DFS_woFilter_w<width>``): ``turns`` are the root's children."""
    valid = final_answer is not None
    return {
        "win": valid and finish_type == "give_answer",
        "tree": {
            "size": 0,
            "max_length": 0,
            "tree": {"node_type": "Action Input", "description": "", "children": list(turns)},
        },
        "forward_args": {
            "single_chain_max_step": depth,
            "tree_beam_size": width,
            "max_query_count": max_queries,
            "answer": 1,
            "with_filter": False,
        },
        "compare_candidates": [],
        "answer_generation": {
            "valid_data": valid,
            "query_count": 0,
            "total_tokens": 0,
            "final_answer": final_answer or "",
            "finish_type": finish_type,
            "function": [*(functions or FUNCTIONS), FINISH_FN],
            "chain": [],
            "query": query,
        },
    }


def flat(node: Tb) -> list[Tb]:
    """A nested turn as a CoT chain: the node JSONs from the first one to the last, no children."""
    out: list[Tb] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append({k: v for k, v in n.items() if k != "children"})
        kids = n.get("children") or []
        assert len(kids) <= 1, "a chain has one child per node"
        stack.extend(kids)
    return out


def cot_file(query: str, *tries: Tb, depth: int = 12, answered: bool = True) -> Tb:
    """A CoT answer file (``CoT@N``): one chain per try, each given as a nested turn."""
    return {
        "win": answered,
        "try_count": len(tries),
        "trys": [{"chain": flat(t), "win": answered} for t in tries],
        "compare_candidates": [],
        "forward_args": {"single_chain_max_step": depth, "pass_at": len(tries), "answer": 1},
        "answer_generation": {
            "valid_data": answered,
            "final_answer": "",
            "function": [*FUNCTIONS, FINISH_FN],
            "query_count": 0,
            "total_tokens": 0,
            "train_messages": [],
            "chain": [],
            "query": query,
        },
    }


def write(folder: Path, name: str, data: Tb) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path
