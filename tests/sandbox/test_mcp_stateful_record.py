"""Recording a stateful MCP server once, then replaying it offline on its write histories.

What it protects: a run on a live to-do list server (its reads depend on the writes before
them; ``todo_mcp_server.py``) with ``--record-into`` records every answer under the episode's
write history, which APIs write coming from the server's ``readOnlyHint`` annotations or, for a
server without them, from the recorded suite's ``writes``; with the server gone, ``sandbox
replay`` (agent and call level) reproduces every episode and a new run of the same agent on the
recorded suite gets exactly the live observations, all recorded hits; an agent that leaves the
recorded history (a write the live run never made there, the reads after it) gets misses, and
the miss policy decides what they answer (``error``: the no-recording error; ``nearest``: the
closest recording of the empty history). Without write histories the same reads would collide:
the run records no conflict.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mock_tools import load_suite
from mock_tools.history import history_of
from sandbox.cli import main
from sandbox.store import read_trajectories
from tests.agents.models.openai_server import ScriptedOpenAIServer, finish_reply, tool_call_reply

SERVER = Path(__file__).with_name("todo_mcp_server.py")
QUERIES = [
    "list",
    "add milk; list",
    "add milk; add eggs; done 1; list; count",
    "add tea; list; list",
    "add milk; done 2; count",
]
TOOL = "todo_list"  # the server's name: its tools' suite tool


def _calls(query: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for step in query.split(";"):
        verb, *rest = step.split()
        if verb == "add":
            out.append(("add_todo", {"text": rest[0]}))
        elif verb == "done":
            out.append(("complete_todo", {"id": int(rest[0])}))
        else:
            out.append(({"list": "list_todos", "count": "open_count"}[verb], {}))
    return out


def _policy(body: dict[str, Any]) -> Any:
    """A scripted agent: the query's calls in order, then Finish with the last observation."""
    messages = body["messages"]
    query = next(m["content"] for m in messages if m["role"] == "user")
    observations = [m["content"] for m in messages if m["role"] == "tool"]
    calls = _calls(query)
    if len(observations) < len(calls):
        name, args = calls[len(observations)]
        return tool_call_reply(name, args, call_id=f"call_{len(observations)}")
    return finish_reply(observations[-1])


def _server(*flags: str) -> str:
    return f"stdio:{sys.executable} {SERVER} {' '.join(flags)}".strip()


def _observed(run: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Per task: every call's name, observation text and provenance, in order."""
    out = {}
    for t in read_trajectories(run):
        out[t.scenario_id] = [
            (c.name, c.observation.content, c.observation.provenance)
            for n in sorted(t.nodes, key=lambda n: n.id)
            for c in n.calls
            if c.observation is not None
        ]
    return out


@pytest.fixture
def model_server() -> Any:
    with ScriptedOpenAIServer(models=["scripted"]) as server:
        server.default = _policy
        yield server


def _run(model_server: Any, tmp_path: Path, run_id: str, *args: str) -> list[str]:
    argv = ["run", *args, "--model", f"openai:scripted@{model_server.base_url}"]
    argv += ["--out", str(tmp_path / "runs"), "--run-id", run_id, "--json", "--no-plots"]
    return argv


def test_a_stateful_server_recorded_once_replays_offline_on_its_histories(
    tmp_path: Path, model_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "queries.yaml"
    tasks.write_text(yaml.safe_dump(QUERIES))
    recorded = tmp_path / "recorded"
    live_args = ["--suite", str(tasks), "--mcp-server", _server(), "--record-into", str(recorded)]
    assert main(_run(model_server, tmp_path, "live", *live_args)) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["by_status"] == {"answered": 5}
    live = _observed(tmp_path / "runs" / "live")
    texts = {
        task: [json.loads(text)["response"] for _, text, _ in calls] for task, calls in live.items()
    }
    assert texts["q1"] == [[]]
    assert texts["q3"][3] == [
        {"id": 1, "text": "milk", "done": True},
        {"id": 2, "text": "eggs", "done": False},
    ]
    assert texts["q4"][1:] == [[{"id": 1, "text": "tea", "done": False}]] * 2

    # The recorded suite: which tools write came from the annotations, every answer is kept
    # under the writes before it in its episode, and no two episodes' answers collided.
    suite = load_suite(recorded)
    kinds = {api: spec.read_only for (_, api), spec in suite.apis.items()}
    assert kinds == {
        "add_todo": False,
        "complete_todo": False,
        "list_todos": True,
        "open_count": True,
    }
    milk, eggs, done = (
        (TOOL, "add_todo", '{"text":"milk"}'),
        (TOOL, "add_todo", '{"text":"eggs"}'),
        (TOOL, "complete_todo", '{"id":1}'),
    )
    lists = {r.history: r.response.body for r in suite.recordings if r.api == "list_todos"}
    assert lists == {
        None: [],
        history_of([milk]): [{"id": 1, "text": "milk", "done": False}],
        history_of([milk, eggs, done]): texts["q3"][3],
        history_of([(TOOL, "add_todo", '{"text":"tea"}')]): texts["q4"][1],
    }
    tea = history_of([(TOOL, "add_todo", '{"text":"tea"}')])
    looks = sorted(r.occurrence or 0 for r in suite.recordings if r.history == tea)
    assert looks == [1, 2]  # the nth identical read after the same writes

    # Offline, the server gone: both replays reproduce every episode.
    run = tmp_path / "runs" / "live"
    assert main(["replay", str(run)]) == 0
    assert "REPRODUCED: 5/5 episodes identical" in capsys.readouterr().out
    assert main(["replay", str(run), "--calls"]) == 0
    assert "REPRODUCED" in capsys.readouterr().out

    # The same agent on the recorded suite: exactly the live observations, every one a hit.
    assert main(_run(model_server, tmp_path, "offline", "--suite", str(recorded))) == 0
    capsys.readouterr()
    offline = _observed(tmp_path / "runs" / "offline")
    assert {t: [(n, text) for n, text, _ in c] for t, c in offline.items()} == {
        t: [(n, text) for n, text, _ in c] for t, c in live.items()
    }
    assert {p for calls in offline.values() for _, _, p in calls} == {"hit"}

    # Off the recorded history: a write never made there, and the reads after it, are misses.
    offered = next(t for t in suite.tasks if t.id == "q1").tools
    off = [
        {"id": "eggs_first", "query": "add eggs; list", "tools": [r.model_dump() for r in offered]},
        {
            "id": "milk_twice",
            "query": "add milk; add milk; list",
            "tools": [r.model_dump() for r in offered],
        },
    ]
    (recorded / "tasks" / "off.yaml").write_text(yaml.safe_dump(off))
    picked = ["--suite", str(recorded), "--tasks", "eggs_first,milk_twice"]
    assert main(_run(model_server, tmp_path, "off", *picked)) == 0
    capsys.readouterr()
    missed = _observed(tmp_path / "runs" / "off")
    assert [p for _, _, p in missed["eggs_first"]] == ["miss", "miss"]
    assert "no recording for" in json.loads(missed["eggs_first"][1][1])["error"]
    # milk is recorded at the empty history; a second milk and the list after it are not
    assert [p for _, _, p in missed["milk_twice"]] == ["hit", "miss", "miss"]
    # the miss policy decides: nearest finds no add close enough to eggs, and answers the read
    # with the closest recording of the empty history
    nearest = [*picked, "--miss-policy", "nearest"]
    assert main(_run(model_server, tmp_path, "nearest", *nearest)) == 0
    capsys.readouterr()
    near = _observed(tmp_path / "runs" / "nearest")["eggs_first"]
    assert [p for _, _, p in near] == ["miss", "nearest"]
    assert json.loads(near[1][1])["response"] == []


def test_a_server_without_hints_is_recorded_by_the_suites_writes(
    tmp_path: Path, model_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "queries.yaml"
    tasks.write_text(yaml.safe_dump(["add milk; list", "list"]))
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    meta = {"name": "todo", "writes": ["add_todo", "complete_todo"]}
    (recorded / "suite.yaml").write_text(yaml.safe_dump(meta))
    args = ["--suite", str(tasks), "--mcp-server", _server("--no-hints")]
    assert main(_run(model_server, tmp_path, "live", *args, "--record-into", str(recorded))) == 0
    capsys.readouterr()
    suite = load_suite(recorded)
    assert {spec.read_only for spec in suite.apis.values()} == {None}  # the server said nothing
    lists = {r.history: r.response.body for r in suite.recordings if r.api == "list_todos"}
    assert lists == {
        None: [],
        history_of([(TOOL, "add_todo", '{"text":"milk"}')]): [
            {"id": 1, "text": "milk", "done": False}
        ],
    }
    assert main(["replay", str(tmp_path / "runs" / "live")]) == 0
    assert "REPRODUCED: 2/2 episodes identical" in capsys.readouterr().out

    # A name the server's tools do not have is one line, exit 2, before any episode.
    (recorded / "suite.yaml").write_text(yaml.safe_dump({"name": "todo", "writes": ["pop"]}))
    code = main(_run(model_server, tmp_path, "bad", *args, "--record-into", str(recorded)))
    err = capsys.readouterr().err
    assert code == 2 and "writes: 'pop' names no API" in err and "Traceback" not in err
