"""``sandbox.view.chat``: a conversation's episode as the chat its page shows.

What it protects: the chat follows the path the episode ended on, the user's answer to its last
reply included: the task's query, then the agent's replies (a ``Finish``'s answer, a text turn),
each user turn with where it came from (``persona``, ``script`` when it names none, ``live``,
``record``), its signal and what it reveals, and the nodes that called functions; a branch a
search abandoned is not in it; an episode a user failure ended shows the failure on its last
user turn; an episode without a user has no chat. The viewer's API serves it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agents.toolenv import Observation
from agents.trajectory import Component, Node, Status, StepCall, Trajectory
from sandbox.cli import main
from sandbox.store import read_trajectories
from sandbox.view.app import create_app
from sandbox.view.chat import ChatEntry, chat
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply

TINY = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "tinyworld"


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Trajectory]:
    suite = tmp_path / "bank"
    if not suite.exists():
        shutil.copytree(TINY, suite)
    argv = ["run", "--suite", str(suite), "--model", "reference", "--no-plots", "--json"]
    assert main([*argv, "--out", str(tmp_path / "runs"), *args]) == 0
    run = Path(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run"])
    return {t.scenario_id: t for t in read_trajectories(run)}


def _shape(entries: list[ChatEntry] | None) -> list[tuple[str, str]]:
    assert entries is not None
    return [(e.role, e.source or "") for e in entries]


def test_a_persona_conversation_is_a_chat_along_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trajs = _run(tmp_path, capsys, "--tasks", "chat_*,balance", "--agent", "dfsdt")
    freeze = trajs["chat_freeze_which"]
    entries = chat(freeze, "I want to freeze one of my accounts.")
    assert _shape(entries) == [
        ("user", "task"),
        ("agent", ""),
        ("user", "persona"),
        ("agent", ""),
        ("user", "persona"),
        ("calls", ""),
        ("agent", ""),
        ("user", "persona"),
    ]
    assert entries is not None
    assert entries[0].text == "I want to freeze one of my accounts." and entries[0].node is None
    assert [e.text for e in entries if e.role == "agent"] == [
        "Which account id should I freeze?",
        "Shall I set account A-2 to frozen?",
        "Account A-2 is frozen now.",
    ]
    assert [e.text for e in entries if e.role == "user"][1:] == [
        "My account id is A-2.",
        "Yes, please go ahead.",
        "Thank you, that is all.",
    ]
    assert [e.signal for e in entries if e.role == "user"] == [None, None, None, "done"]
    calls = next(e for e in entries if e.role == "calls")
    assert [c.name for c in freeze.node(calls.node or 0).calls][0].startswith("set_frozen")
    on_path = set(freeze.chosen_path)
    assert all(e.node is None or e.node in on_path or e.role == "user" for e in entries)
    # the query comes from the prompt when the task is not at hand
    assert chat(freeze) == entries

    rent = chat(trajs["chat_rent_then_more"])
    assert [(e.role, e.source) for e in rent or [] if e.role == "user"] == [
        ("user", "task"),
        ("user", "script"),  # a scripted turn names no source: the script's
        ("user", "script"),
    ]
    others = [t for name, t in trajs.items() if not name.startswith("chat_")]
    assert others and all(chat(t) is None for t in others)


def _traj(nodes: list[Node], path: list[int]) -> Trajectory:
    return Trajectory(
        scenario_id="t",
        agent=Component(name="dfsdt"),
        model=Component(name="m"),
        status=Status.answered,
        nodes=nodes,
        chosen_path=path,
    )


def test_a_search_s_abandoned_branch_is_not_in_the_chat() -> None:
    """Two replies to the query: the first, abandoned, is answered by the user; the chosen path
    goes through the second."""
    nodes = [
        Node(id=0, kind="thought", content="Which one?"),
        Node(id=1, parent=0, kind="user", content="A-2.", user={"source": "live"}),
        Node(id=2, kind="thought", content="Which account id?"),
        Node(id=3, parent=2, kind="user", content="A-9.", user={"source": "record"}),
        Node(id=4, parent=3, kind="thought", content="Done."),
        Node(id=5, parent=4, kind="user", user={"signal": "done", "source": "record"}),
    ]
    traj = _traj(nodes, [2, 3, 4])
    entries = chat(traj, "Freeze it.")
    assert entries is not None
    assert [(e.role, e.node, e.text) for e in entries] == [
        ("user", None, "Freeze it."),
        ("agent", 2, "Which account id?"),
        ("user", 3, "A-9."),
        ("agent", 4, "Done."),
        ("user", 5, ""),
    ]
    assert entries[-1].signal == "done" and entries[-1].source == "record"
    # without a chosen path, the chat ends at the last node
    traj.chosen_path = []
    assert [e.node for e in chat(traj, "Freeze it.") or []] == [None, 2, 3, 4, 5]
    traj.chosen_path = [0]
    assert [e.node for e in chat(traj, "Freeze it.") or []] == [None, 0, 1]


def test_a_give_up_and_a_revealed_function_show_in_the_chat() -> None:
    nodes = [
        Node(id=0, kind="thought", content="Done. Anything else?"),
        Node(id=1, parent=0, kind="user", content="Refund T-1.", user={"reveal": ["refund"]}),
        Node(id=2, parent=1, kind="invalid", format_error="no usable call"),
        Node(id=3, parent=2, kind="give_up"),
    ]
    entries = chat(_traj(nodes, [0, 1, 2, 3]), "Pay.")
    assert entries is not None
    assert entries[2].reveal == ["refund"] and entries[2].source == "script"
    assert [(e.role, e.text) for e in entries[3:]] == [
        ("note", "invalid: no usable call"),
        ("note", "gave up"),
    ]


def test_the_users_own_calls_show_before_its_answer() -> None:
    """Dual control: the user's calls of its own tools changed the world; the chat showed only
    its text, as if the agent's reply alone had done it."""
    switched = StepCall(
        id="act-1",
        name="set_contactless",
        arguments='{"enabled": true}',
        args={"enabled": True},
        observation=Observation(ok=True, content='{"error": "", "response": {"on": true}}'),
    )
    nodes = [
        Node(id=0, kind="thought", content="Could you switch contactless on?"),
        Node(id=1, parent=0, kind="user", content="Done.", user={"source": "persona"}),
        Node(id=2, parent=1, kind="thought", content="Anything else?"),
    ]
    nodes[1].calls = [switched]
    entries = chat(_traj(nodes, [0, 1, 2]), "Tap fails.")
    assert entries is not None
    assert [(e.role, e.node) for e in entries] == [
        ("user", None),
        ("agent", 0),
        ("calls", 1),
        ("user", 1),
        ("agent", 2),
    ]
    assert entries[3].text == "Done." and entries[2].text == ""


def _forgetful(body: dict[str, Any]) -> Any:
    last = body["messages"][-1]["content"]
    if "Which account" in last:
        return text_reply("It is A-2.")
    if "Shall I" in last:
        return text_reply("")  # answers nothing: a user failure
    return tool_call_reply("end_conversation", {"reason": "done"})


def test_a_user_failure_shows_on_the_last_user_turn_and_the_api_serves_the_chat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = _forgetful
        user = f"openai:u@{server.base_url}"
        trajs = _run(tmp_path, capsys, "--tasks", "chat_freeze_which", "--user-model", user)
    entries = chat(trajs["chat_freeze_which"])
    assert entries is not None
    assert [(e.role, e.source) for e in entries if e.role == "user"] == [
        ("user", "task"),
        ("user", "live"),
        ("user", "live"),
    ]
    assert entries[-1].failure is not None and entries[-1].failure.startswith("empty")

    client = TestClient(create_app(tmp_path / "runs"))
    (run,) = client.get("/api/runs").json()
    key = run["key"]
    page = client.get(f"/api/runs/{key}/episodes/chat_freeze_which/0").json()
    assert page["conversation"] == [e.model_dump(mode="json") for e in entries]
