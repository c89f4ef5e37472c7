"""``examples/agents/chat_loop.py`` holds conversations through ``/reply``, and replays offline.

What it protects, through the real command line and a real agent process: on the conversational
tasks of the tiny world, with the offline ``reference`` model behind the proxy and the offline
users (a script, the persona player), the example solves both, and its trajectories hold the
same nodes as the built-in ReAct's (every kind, parent, text, reply, user answer and call, the
model's exchanges aside); ``sandbox replay`` re-runs it with 0 divergences, byte for byte. With
a model-played user on an endpoint and ``--model-cache``, a second run with the endpoint
stopped is identical but for the user turns' ``source`` (``record``), and ``sandbox replay``
needs no endpoint either.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from sandbox.cli import main
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "suites" / "tinyworld"
CHAT_LOOP = f"{sys.executable} {ROOT / 'examples' / 'agents' / 'chat_loop.py'}"
VOLATILE = {"run_id", "started_at", "ended_at", "wall_seconds", "latency_ms", "tree", "model"}
"""What a replay or a second run changes: when, which run, the agent process's timings, and the
model's name (the replay model stands in for it)."""


def _suite(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TINY, tmp_path / "bank"))


def _run(tmp_path: Path, suite: Path, *args: str) -> Path:
    out = tmp_path / "runs"
    argv = ["run", "--suite", str(suite), "--tasks", "chat_*", "--model", "reference"]
    assert main([*argv, "--out", str(out), "--no-plots", "--json", *args]) == 0
    return max(out.iterdir(), key=lambda p: p.stat().st_mtime)


def _external(tmp_path: Path, suite: Path, *args: str) -> Path:
    return _run(tmp_path, suite, "--agent", "external", "-O", f"command={CHAT_LOOP}", *args)


def _records(run: Path, drop: frozenset[str] = frozenset()) -> dict[str, Any]:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            gone = VOLATILE | drop
            if value.get("object") == "chat.completion" and "minted" in drop:
                gone = gone | {"id", "created"}
            return {k: strip(v) for k, v in value.items() if k not in gone}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    lines = (run / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["scenario_id"]: strip(r) for r in map(json.loads, lines)}


def _conversation(record: dict[str, Any]) -> list[Any]:
    """What a conversation's nodes say and do, however the agent's model turns were made."""
    return [
        (
            n["id"],
            n["parent"],
            n["kind"],
            n.get("finish"),
            n.get("user"),
            n["content"] if n["kind"] == "user" else None,
            [(c["name"], c["arguments"], c["observation"]["content"]) for c in n["calls"]],
        )
        for n in record["nodes"]
    ]


def _replays(
    run: Path, capsys: pytest.CaptureFixture[str], drop: frozenset[str] = frozenset()
) -> dict[str, Any]:
    capsys.readouterr()
    replayed = run.parent / "replayed"
    assert main(["replay", str(run), "--json", "--out", str(replayed)]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["episodes"] == 2 and report["divergent"] == 0
    return _records(next(replayed.iterdir()), drop)


def test_the_chat_example_converses_like_react_and_replays_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path)
    react = _records(_run(tmp_path / "react", suite, "--agent", "react"))
    capsys.readouterr()
    run = _external(tmp_path / "external", suite)
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["pass_rate"] == 1.0 and summary["by_status"] == {"answered": 2}
    chat = _records(run)
    for task in ("chat_freeze_which", "chat_rent_then_more"):
        assert _conversation(chat[task]) == _conversation(react[task])
        assert chat[task]["final_answer"] == react[task]["final_answer"]
        assert chat[task]["world"] == react[task]["world"]
    users = [n for n in chat["chat_freeze_which"]["nodes"] if n["kind"] == "user"]
    assert users[-1]["user"] == {"signal": "done", "source": "persona"}
    assert _replays(run, capsys) == chat


def _persona_endpoint(body: dict[str, Any]) -> Any:
    """A user model on a fake endpoint, for the freeze task."""
    last = body["messages"][-1]["content"]
    if "Which account" in last:
        return text_reply("It is A-2.")
    if "Shall I" in last:
        return text_reply("Yes, do it.")
    return tool_call_reply("end_conversation", {"reason": "done"})


def test_a_model_played_user_of_the_chat_example_replays_with_the_endpoint_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path)
    cache = str(tmp_path / "cache.sqlite")
    with ScriptedOpenAIServer() as server:
        server.default = _persona_endpoint
        user = f"openai:user-sim@{server.base_url}"
        first = _external(tmp_path / "one", suite, "--user-model", user, "--model-cache", cache)
        asked = len(server.requests)
    assert asked == 3  # the persona task's three answers; the scripted task never asks it
    second = _external(tmp_path / "two", suite, "--user-model", user, "--model-cache", cache)
    recorded = _records(first)
    freeze = recorded["chat_freeze_which"]
    assert [n["content"] for n in freeze["nodes"] if n["kind"] == "user"] == [
        "It is A-2.",
        "Yes, do it.",
        "",
    ]
    assert freeze["status"] == "answered"
    # a second run differs in the user turns' source and in the ids and times the proxy mints
    # for each completion (a replay serves the recorded ones)
    again = frozenset({"source", "minted"})
    assert _records(second, again) == _records(first, again)
    sources = [
        n["user"].get("source")
        for n in _records(second)["chat_freeze_which"]["nodes"]
        if n["kind"] == "user"
    ]
    assert sources == ["record"] * 3
    source = frozenset({"source"})  # a replay's user answers from the run: "record"
    assert _replays(first, capsys, source) == _records(first, source)
