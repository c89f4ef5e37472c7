"""The requests a model gets from ``sandbox run --preset toolbench`` are ToolBench's.

Real StableToolBench test queries (``../shared/data``) are imported with ``toolbench-queries``;
``sandbox run`` drives DFSDT (``--preset toolbench``) and ReAct@1 (``--preset stabletoolbench``,
the CoT@1 of StableToolBench's script) against a scripted OpenAI-compatible endpoint on
127.0.0.1 whose replies depend on the request alone (calls with the offered example values, a
give-up that makes DFSDT backtrack, text on some turns, none on others). Every request it
receives is checked against shapes this test builds from ToolBench's rules, written here on
their own (not with the project's code):

- parameters: ``max_tokens`` 1024, ``frequency_penalty`` 0, ``presence_penalty`` 0, no
  ``temperature`` (``chat_completion_request``);
- functions, in ``api_list`` order, then ``Finish``: ToolBench's names, descriptions and
  parameters (``api_json_to_openai_json``), StableToolBench's ``[""]`` lists under its preset;
  two or three APIs whose names collide after the 64-character cut (queries 27847 and 79053)
  offered under the one name each, repeated, as ToolBench offers them;
- messages: each assistant message is the reply the endpoint gave for that history (``content``
  null beside calls), each call answered by ``{role: tool, name, content, tool_call_id}`` whose
  content is ASCII JSON ``{error, response}``; a diversity prompt lists the earlier candidates
  as ToolBench's ``json.dumps(js_list, indent=2)`` does, each with its 0.0 action value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tb_trees import FINISH_FN

from sandbox.cli import main
from sandbox.interop.toolbench_queries import import_queries
from tests.agents.models.openai_server import Reply, ScriptedOpenAIServer

RESERVED = {"from", "class", "return", "false", "true", "id", "and"}
TYPES = {"NUMBER": "integer", "STRING": "string", "BOOLEAN": "boolean"}
CUT = 256


# -- ToolBench's rules, as this test reads them ----------------------------------------------


def tb_name(text: str) -> str:
    """``standardize``: non-word characters to ``_``, runs collapsed, lower, stripped of ``_``,
    ``get_`` before a digit."""
    text = re.sub(r"_+", "_", re.sub(r"[^\u4e00-\u9fa5^a-zA-Z0-9_]", "_", text)).lower()
    text = text.strip("_")
    return f"get_{text}" if text[:1].isdigit() else text


def tb_param(text: str) -> str:
    name = tb_name(text)
    return f"is_{name}" if name in RESERVED else name


def expected_function(entry: dict[str, Any], lists_start: list[str]) -> dict[str, Any]:
    tool = tb_name(entry["tool_name"])
    name = f"{tb_param(entry['api_name'])}_for_{tool}"[-64:]
    description = f'This is the subfunction for tool "{tool}", you can use this tool.'
    if entry["api_description"].strip():
        text = entry["api_description"].strip().replace(entry["api_name"], name)[:CUT]
        description += f'The description of this function is: "{text}"'
    params: dict[str, Any] = {
        "type": "object",
        "properties": {},
        "required": list(lists_start),
        "optional": list(lists_start),
    }
    if entry["required_parameters"]:
        for kind in ("required", "optional"):
            for p in entry[f"{kind}_parameters"]:
                prop = {
                    "type": TYPES.get(p["type"], "string"),
                    "description": p["description"][:CUT],
                }
                if len(str(p["default"])) != 0:
                    prop["example_value"] = p["default"]
                params["properties"][tb_param(p["name"])] = prop
                params[kind].append(tb_param(p["name"]))
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": params},
    }


def finish_shape(tool: dict[str, Any]) -> dict[str, Any]:
    """``Finish`` without its descriptions (the wording is the project's own)."""
    fn = json.loads(json.dumps(tool["function"]))
    fn.pop("description", None)
    for prop in fn["parameters"]["properties"].values():
        prop.pop("description", None)
    return fn


FINISH_SHAPE = {"name": "Finish", "parameters": FINISH_FN["parameters"]}
"""ToolBench's ``Finish`` (``rapidapi_wrapper.__init__``) without its descriptions."""


# -- the scripted model ----------------------------------------------------------------------


def diverse(messages: list[dict[str, Any]]) -> bool:
    """A diversity prompt: a user message after the system prompt and the query, last."""
    return len(messages) > 2 and messages[-1]["role"] == "user"


def scripted_message(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for a request: it depends on the request's shape only."""
    messages = body["messages"]
    k = sum(1 for m in messages if m["role"] == "assistant")
    offered = [t["function"] for t in body["tools"] if t["function"]["name"] != "Finish"]
    content = None if k % 2 == 0 else f"Turn {k}: one more call."
    if diverse(messages) or k >= min(len(offered), 3):
        name, args = "Finish", {"return_type": "give_answer", "final_answer": f"after {k} turns"}
    elif k == 1:
        name, args = "Finish", {"return_type": "give_up_and_restart"}
    else:
        fn = offered[k % len(offered)]
        name = fn["name"]
        props = fn["parameters"]["properties"]
        args = {
            n: p.get("example_value", {"integer": 3}.get(p["type"], "x")) for n, p in props.items()
        }
    call = {
        "id": f"call_{k}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": content, "tool_calls": [call]}


def reply(body: dict[str, Any]) -> Reply:
    message = scripted_message(body)
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return Reply(
        body={
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [choice],
            "usage": usage,
        }
    )


# -- the test --------------------------------------------------------------------------------


def _queries(shared_data: Path) -> list[dict[str, Any]]:
    """Queries whose APIs show every rule: reserved and upper-case parameter names, NUMBER
    parameters, optional-only APIs, descriptions over 256 characters, none at all."""
    path = shared_data / "stabletoolbench/solvable_queries/test_instruction/G1_instruction.json"
    queries = json.loads(path.read_text(encoding="utf-8"))
    tests = [
        lambda e: any(tb_param(p["name"]) != p["name"] for p in e["required_parameters"]),
        lambda e: any(p["type"] == "NUMBER" for p in e["required_parameters"]),
        lambda e: not e["required_parameters"] and e["optional_parameters"],
        lambda e: len(e["api_description"].strip()) > CUT,
        lambda e: not e["api_description"].strip(),
    ]
    chosen: list[dict[str, Any]] = []
    for test in tests:
        found = next(q for q in queries if any(test(e) for e in q["api_list"]))
        if found not in chosen:
            chosen.append(found)
    for colliding in (27847, 79053):  # APIs whose names collide after the 64-character cut
        chosen.append(next(q for q in queries if q["query_id"] == colliding))
    return chosen


@pytest.mark.parametrize(
    ("preset", "agent", "lists_start"),
    [("toolbench", "dfsdt", []), ("stabletoolbench", "react@1", [""])],
)
def test_requests_are_toolbenchs(
    shared_data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    preset: str,
    agent: str,
    lists_start: list[str],
) -> None:
    queries = _queries(shared_data)
    source = tmp_path / "G1_instruction.json"
    source.write_text(json.dumps(queries), encoding="utf-8")
    import_queries([source], tmp_path / "suite")
    with ScriptedOpenAIServer(models=["scripted"]) as server:
        server.default = reply
        argv = ["run", "--suite", str(tmp_path / "suite"), "--agent", agent, "--preset", preset]
        argv += ["--model", f"openai:scripted@{server.base_url}", "--out", str(tmp_path / "runs")]
        assert main([*argv, "--json", "--no-plots"]) == 0, capsys.readouterr().err
        requests = list(server.requests)
    by_query = {q["query"]: q for q in queries}
    assert {r["messages"][1]["content"] for r in requests} == set(by_query)
    seen = [(r["messages"], scripted_message(r)) for r in requests]
    diversity = 0
    for body in requests:
        assert {k: v for k, v in body.items() if k not in ("model", "messages", "tools")} == {
            "max_tokens": 1024,
            "frequency_penalty": 0,
            "presence_penalty": 0,
        }
        query = by_query[body["messages"][1]["content"]]
        *functions, finish = body["tools"]
        assert functions == [expected_function(e, lists_start) for e in query["api_list"]]
        assert finish_shape(finish) == FINISH_SHAPE
        _check_history(body["messages"], seen)
        if diverse(body["messages"]):
            diversity += 1
            _check_diversity_prompt(body["messages"])
    assert diversity > 0 if agent == "dfsdt" else diversity == 0


def _check_history(messages: list[dict[str, Any]], seen: list[tuple[list, dict]]) -> None:
    """Each assistant message is the reply given to the history before it (a diversity prompt
    of that request aside); each call is followed by its tool message."""
    assert [m["role"] for m in messages[:2]] == ["system", "user"]
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        before = messages[:i]
        given = [
            r for asked, r in seen if asked == before or (diverse(asked) and asked[:-1] == before)
        ]
        assert given and m == given[0], (m, given[:1])
        for j, call in enumerate(m["tool_calls"]):
            if call["function"]["name"] == "Finish":
                continue
            tool = messages[i + 1 + j]
            assert list(tool) == ["role", "name", "content", "tool_call_id"]
            assert (tool["role"], tool["name"], tool["tool_call_id"]) == (
                "tool",
                call["function"]["name"],
                call["id"],
            )
            assert tool["content"].isascii() and set(json.loads(tool["content"])) == {
                "error",
                "response",
            }


def _check_diversity_prompt(messages: list[dict[str, Any]]) -> None:
    text = messages[-1]["content"]
    candidates, _ = json.JSONDecoder().raw_decode(text[text.index("[") :])
    assert json.dumps(candidates, indent=2) in text  # ToolBench's json.dumps: indent 2, ASCII
    for c in candidates:
        assert list(c) == ["name", "arguments", "function_output", "mento-carlo-action-value"]
        assert c["mento-carlo-action-value"] == 0.0
