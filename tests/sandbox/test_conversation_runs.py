"""Conversations end to end: offline users, a model-played user recorded and replayed with its
endpoint stopped, user failures counted apart, and DFSDT returning to an earlier turn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agents import Budget, DFSDTAgent, EpisodeMeta
from agents.model import Message, Turn
from agents.trajectory import Status
from agents.users import ModelUser, PersonaUserModel
from mock_tools import Suite, create_app, in_process_client, load_suite
from sandbox.cli import main
from sandbox.eval.world_verdict import world_verdict
from sandbox.replay import replay_run
from sandbox.store import read_trajectories
from sandbox.tool_envs.http import WorldToolEnv
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply
from tests.agents.scripted import ScriptedModel, call, finish, give_up

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tinyworld"
VOLATILE = {"run_id", "started_at", "ended_at", "wall_seconds", "latency_ms"}


def _suite(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TINY, tmp_path / "bank"))


def _run(tmp_path: Path, suite: Path, *args: str) -> Path:
    out = tmp_path / "runs"
    code = main(
        ["run", "--suite", str(suite), "--tasks", "chat_*", "--out", str(out), "--json", *args]
    )
    assert code == 0
    return max(out.iterdir(), key=lambda p: p.stat().st_mtime)


def _stripped(run: Path) -> list[Any]:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE and k != "source"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    lines = (run / "trajectories.jsonl").read_text().splitlines()
    return sorted((strip(json.loads(line)) for line in lines), key=lambda r: r["scenario_id"])


@pytest.mark.parametrize("agent", ["react", "dfsdt", "react@4"])
def test_the_reference_solves_conversations_with_the_offline_users(
    tmp_path: Path, capsys, agent: str
) -> None:
    run = _run(tmp_path, _suite(tmp_path), "--model", "reference", "--agent", agent)
    summary = json.loads(capsys.readouterr().out)
    assert summary["pass_rate"] == 1.0 and summary["episodes"] == 2
    trajs = {t.scenario_id: t for t in read_trajectories(run)}
    chat = trajs["chat_freeze_which"]
    users = [n for n in chat.nodes if n.kind == "user"]
    assert [u.content for u in users] == [
        "My account id is A-2.",
        "Yes, please go ahead.",
        "Thank you, that is all.",
    ]
    assert users[-1].user == {"signal": "done", "source": "persona"}
    report = replay_run(run)
    assert report.ok and report.episodes == 2, [v.first_diff for v in report.verdicts]


def _persona_endpoint(body: dict[str, Any]) -> Any:
    """A user model on a fake endpoint: answers the questions of the freeze task, ends when told
    it is done."""
    last = body["messages"][-1]["content"]
    if "Which account" in last:
        return text_reply("It is A-2.")
    if "Shall I" in last:
        return text_reply("Yes, do it.")
    return tool_call_reply("end_conversation", {"reason": "done"})


def test_a_model_played_user_replays_from_its_record_with_the_endpoint_stopped(
    tmp_path: Path, capsys
) -> None:
    suite = _suite(tmp_path)
    cache = tmp_path / "cache.sqlite"
    with ScriptedOpenAIServer() as server:
        server.default = _persona_endpoint
        user = f"openai:user-sim@{server.base_url}"
        first = _run(
            tmp_path,
            suite,
            "--model",
            "reference",
            "--user-model",
            user,
            "--model-cache",
            str(cache),
        )
        asked = len(server.requests)
    assert asked == 3  # the persona task's three answers; the scripted task never asks it
    assert (suite / "users.jsonl").is_file()
    capsys.readouterr()
    second = _run(
        tmp_path, suite, "--model", "reference", "--user-model", user, "--model-cache", str(cache)
    )
    assert _stripped(first) == _stripped(second)
    sources = [
        n.user["source"]
        for t in read_trajectories(second)
        for n in t.nodes
        if n.kind == "user" and n.user and "source" in n.user
    ]
    assert "record" in sources and "live" not in sources
    report = replay_run(first)  # the endpoint is gone: the replay answers from the run itself
    assert report.ok, [v.first_diff for v in report.verdicts]


def test_a_user_that_answers_nothing_is_a_user_failure_counted_apart(
    tmp_path: Path, capsys
) -> None:
    suite = _suite(tmp_path)
    with ScriptedOpenAIServer() as server:
        server.default = text_reply("")
        run = _run(
            tmp_path, suite, "--model", "reference", "--user-model", f"openai:u@{server.base_url}"
        )
    summary = json.loads(capsys.readouterr().out)
    freeze = next(t for t in read_trajectories(run) if t.scenario_id == "chat_freeze_which")
    assert freeze.status is Status.error and freeze.user_error
    assert freeze.end_reason == "user_failure:empty"
    scores = json.loads((run / "scores.json").read_text())
    assert scores["pass_rate"]["user_failures"] == 1
    assert summary["n"] == 1  # the scripted task counts; the user's failure does not
    assert not (suite / "users.jsonl").exists()  # failures are not recorded


async def test_dfsdt_returns_to_an_earlier_turn_with_the_state_restored(tmp_path: Path) -> None:
    suite: Suite = load_suite(_suite(tmp_path))
    task = suite.task("chat_freeze_which")
    starts = 0

    def agent(messages: list[Message]) -> Turn:
        nonlocal starts
        said = [m for m in messages if m["role"] in ("assistant", "tool")]
        last = messages[-1]
        if not said:
            starts += 1
            if starts == 1:  # the wrong branch: freeze A-1 without asking, and say so
                wrong = call("set_frozen", account_id="A-1", frozen=True)
                told = finish("I froze A-1 for you, is that right?")
                return Turn(tool_calls=[*wrong.tool_calls, *told.tool_calls])
            return finish("Which account id should I freeze?")
        if last["role"] == "user" and "don't know" in last["content"]:
            return give_up("The user is unhappy; start over.")
        if last["role"] == "user" and "A-2" in last["content"]:
            return finish("Shall I set account A-2 to frozen?")
        if last["role"] == "user" and "go ahead" in last["content"]:
            return call("set_frozen", account_id="A-2", frozen=True)
        return finish("Account A-2 is frozen now.")

    assert task.user is not None and task.user.persona is not None
    persona = task.user.persona
    async with in_process_client(create_app(suite)) as client:
        env = WorldToolEnv(client, task, suite.apis, session="s", seed=0)
        env.user = ModelUser(  # type: ignore[attr-defined]
            PersonaUserModel(known=persona.known, accept=[a.model_dump() for a in persona.accept]),
            "",
            name="persona-user",
            source="persona",
        )
        traj = await DFSDTAgent().run(
            model=ScriptedModel(agent),
            env=env,
            query=task.query,
            budget=Budget(),
            episode=EpisodeMeta(scenario_id=task.id),
        )
    assert traj.status is Status.answered and traj.final_answer == "Account A-2 is frozen now."
    kinds = [n.kind for n in traj.nodes]
    assert kinds[:3] == ["finish", "user", "give_up"]  # the abandoned branch
    assert traj.nodes[0].calls[0].name == "set_frozen"  # it froze A-1, then told the user
    assert traj.nodes[1].content == "I'm sorry, I don't know that."
    assert traj.nodes[3].parent is None and traj.chosen_path[0] == 3  # a new first turn
    assert suite.world is not None
    verdict = world_verdict(suite.world, task, traj)
    assert verdict.passed, verdict.failures()  # A-1 is not frozen: its freeze was undone


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "persona-user"], "persona-user plays the user of conversations"),
        (["--model", "reference", "--user-model", "no-such-alias"], "no-such-alias"),
    ],
)
def test_users_named_wrong_are_one_line_and_exit_2(
    tmp_path: Path, capsys, args: list[str], message: str
) -> None:
    suite = _suite(tmp_path)
    out = tmp_path / "runs"
    code = main(["run", "--suite", str(suite), "--tasks", "chat_*", "--out", str(out), *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    ("agent", "model"), [("react", "reference"), ("dfsdt", "noisy-reference:0.5")]
)
def test_a_conversations_run_replays_episode_for_episode(
    tmp_path: Path, capsys, agent: str, model: str
) -> None:
    """The replay model walks past the user's answers: a Finish the user answered is matched as
    the reply the history shows (it was matched as a Finish call, and every conversation's
    replay diverged at its second turn)."""
    run = _run(tmp_path, _suite(tmp_path), "--model", model, "--agent", agent)
    capsys.readouterr()
    assert main(["replay", str(run)]) == 0
    assert "REPRODUCED: 2/2 episodes identical" in " ".join(capsys.readouterr().out.split())
