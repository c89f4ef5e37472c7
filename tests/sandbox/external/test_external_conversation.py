"""An external agent in a conversation: ``POST /reply`` over real HTTP, and how its episode ends.

What it protects:
- a reply is answered by the task's user from the transcript it has seen, and recorded as the
  built-in loops record it: the model turn that said it (a thought, a ``Finish`` with that
  answer) is the reply node, the user's answer a ``user`` node under it; a reply no turn said
  is a ``thought`` of its own; a ``Finish`` giving an answer through ``/call`` is a reply too;
- the user's ``done`` ends the episode ``answered`` with the last reply as its answer, and
  every later request is refused saying the user ended it;
- a reply outside a conversation is refused (``no_user``) and ends nothing; a user failure ends
  the episode as the user's (``user_failure:<kind>``, an error record of kind ``user``); the
  user answers at most ``max_user_turns`` times (``budget:max_user_turns``);
- a function the user hides is not offered (stdin, ``/call``) until a user turn reveals it,
  and ``/reply`` then lists it;
- an answer printed as the agent exits an open conversation is its last reply: the user
  answers it, and a conversation the user leaves open ends ``gave_up``/``left_conversation``.
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.model import Message, ToolCall, Turn
from agents.toolenv import FINISH, FINISH_FUNCTION, env_dispatch
from agents.trajectory import Component, Status
from agents.user import UserTurn
from mock_tools import load_suite
from sandbox.external.ending import decide_end
from sandbox.external.gateway import EpisodeUrls, episode_server
from sandbox.external.process import AgentExit
from sandbox.external.record import EpisodeRecord
from sandbox.external.scope import EpisodeScope
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from sandbox.tool_envs import open_tool_envs
from sandbox.users import UserProvider

ROOT = Path(__file__).resolve().parents[3]
TINY = ROOT / "tests" / "fixtures" / "suites" / "tinyworld"
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
FREEZE = "chat_freeze_which"


class Silent:
    """A model the tests never ask (the agent here is the test, talking HTTP)."""

    name = "silent"

    async def complete(self, messages: Any, tools: Any, params: Any = None) -> Turn:
        raise AssertionError("the model was not to be asked")


class Said:
    """A model whose one turn calls ``Finish`` with an answer (a reply, in a conversation)."""

    name = "said"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(self, messages: Any, tools: Any, params: Any = None) -> Turn:
        args = json.dumps({"return_type": "give_answer", "final_answer": self.answer})
        return Turn(content="telling", tool_calls=[ToolCall(id="c0", name=FINISH, arguments=args)])


class StubUser:
    """A user that answers with the turns it is given, in order, and keeps what it saw."""

    name = "stub-user"

    def __init__(self, *turns: UserTurn, hidden: list[str] | None = None) -> None:
        self.turns = list(turns)
        self.hidden = hidden or []
        self.seen: list[list[Message]] = []

    async def reply(self, transcript: list[Message]) -> UserTurn:
        self.seen.append(transcript)
        return self.turns.pop(0)


@asynccontextmanager
async def episode(
    *,
    suite_dir: Path = TINY,
    task_id: str = FREEZE,
    user: Any = "provider",
    model: Any = None,
    budget: Budget | None = None,
) -> AsyncIterator[tuple[EpisodeScope, EpisodeUrls]]:
    suite = load_suite(suite_dir)
    task = suite.task(task_id)
    config = RunConfig(suite=str(suite_dir))
    async with open_tool_envs(config, suite) as tools:
        env = tools.for_episode(task, session=f"test/{uuid.uuid4().hex}")
        if user == "provider":
            user = UserProvider(config, suite).for_episode(task, seed=0, trial=0)
        if user is not None:
            env.user = user  # type: ignore[attr-defined]
        record = EpisodeRecord(
            agent=Component(name="external"),
            model=Component(name="m"),
            meta=EpisodeMeta(scenario_id=task.id),
            query=task.query,
            functions=[*env.functions, FINISH_FUNCTION],
            dispatch=env_dispatch(env),
            hidden=user.hidden if user is not None else (),
        )
        scope = EpisodeScope(
            model=model or Silent(),
            env=env,
            record=record,
            budget=budget or Budget(),
            max_observation_chars=2048,
        )
        async with episode_server(scope) as urls:
            yield scope, urls


async def _post(urls: EpisodeUrls, path: str, body: Any) -> tuple[int, Any]:
    async with httpx.AsyncClient() as client:
        response = await client.post(urls.base + path, json=body)
    return response.status_code, response.json()


def _finish(answer: str) -> dict[str, Any]:
    args = {"return_type": "give_answer", "final_answer": answer}
    return {"name": FINISH, "arguments": args}


EXITED = AgentExit(exit_code=0, signal=None, stdout="", stderr="", seconds=0.1)


async def test_replies_are_answered_by_the_user_and_recorded_as_the_built_in_loops_do() -> None:
    async with episode() as (scope, urls):
        status, first = await _post(
            urls, "/reply", {"message": "Which account id should I freeze?"}
        )
        assert status == 200
        assert (first["user"], first["signal"], first["reveal"]) == (
            "My account id is A-2.",
            None,
            [],
        )
        assert FINISH in [f["function"]["name"] for f in first["tools"]]
        # a Finish giving an answer is a reply too, answered with the user's answer
        status, text = await _post(urls, "/call", _finish("Shall I set account A-2 to frozen?"))
        assert status == 200 and text["user"] == "Yes, please go ahead."
        args = {"account_id": "A-2", "frozen": True}
        status, done = await _post(urls, "/call", {"name": "set_frozen", "arguments": args})
        assert status == 200 and not done["error"]
        status, last = await _post(urls, "/reply", {"message": "Account A-2 is frozen now."})
        assert status == 200 and last["signal"] == "done"
        status, after = await _post(urls, "/reply", {"message": "Anything else?"})
        assert status == 400 and after["code"] == "episode_over"
        assert "the user ended the conversation" in after["error"]
    record = scope.record
    kinds = [(n.kind, n.parent, n.content) for n in record.nodes]
    assert kinds == [
        ("thought", None, "Which account id should I freeze?"),
        ("user", 0, "My account id is A-2."),
        ("finish", 1, None),
        ("user", 2, "Yes, please go ahead."),
        ("action", 3, None),
        ("thought", 4, "Account A-2 is frozen now."),
        ("user", 5, "Thank you, that is all."),
    ]
    assert record.nodes[-1].user == {"signal": "done", "source": "persona"}
    assert record.nodes[2].reply == "Shall I set account A-2 to frozen?"
    end = decide_end(scope, record, EXITED)
    assert (end.status, end.reason, end.final_answer) == (
        Status.answered,
        "answered",
        "Account A-2 is frozen now.",
    )


async def test_the_turn_that_said_the_reply_is_its_node_and_the_user_saw_the_transcript() -> None:
    user = StubUser(UserTurn(content="Fine.", signal="transfer"))
    async with episode(user=user, model=Said("Which one?")) as (scope, urls):
        async with httpx.AsyncClient() as client:
            chat = {"messages": [{"role": "user", "content": "hi"}], "tools": []}
            answer = await client.post(f"{urls.base}/v1/chat/completions", json=chat)
            assert answer.status_code == 200
        status, heard = await _post(urls, "/reply", {"message": "Which one?"})
    assert status == 200 and heard["signal"] == "transfer"
    assert [(n.kind, n.parent) for n in scope.record.nodes] == [("finish", None), ("user", 0)]
    assert user.seen == [
        [
            {"role": "user", "content": "I want to freeze one of my accounts."},
            {"role": "assistant", "content": "Which one?"},
        ]
    ]
    end = decide_end(scope, scope.record, EXITED)
    assert (end.status, end.reason, end.final_answer) == (Status.gave_up, "gave_up", "Which one?")


async def test_a_reply_outside_a_conversation_is_refused_and_ends_nothing() -> None:
    async with episode(suite_dir=MINI, task_id="mini_g1_track", user=None) as (scope, urls):
        status, body = await _post(urls, "/reply", {"message": "hello"})
        assert (status, body["code"]) == (400, "no_user")
        status, bad = await _post(urls, "/reply", {"text": "hello"})
        assert (status, bad["code"]) == (400, "invalid")
        assert not scope.over and scope.record.nodes == []


async def test_a_user_failure_ends_the_episode_as_the_users() -> None:
    user = StubUser(UserTurn(source="live", failure="empty: the user model answered nothing"))
    async with episode(user=user) as (scope, urls):
        status, body = await _post(urls, "/reply", {"message": "Which account?"})
        assert (status, body["code"]) == (502, "user_failure")
    end = decide_end(scope, scope.record, EXITED)
    assert (end.status, end.reason) == (Status.error, "user_failure:empty")
    (error,) = scope.record.trajectory.errors
    assert error.kind == "user" and error.node == 1
    assert scope.record.nodes[1].user == {
        "source": "live",
        "failure": "empty: the user model answered nothing",
    }


async def test_the_user_answers_at_most_max_user_turns_times() -> None:
    user = StubUser(UserTurn(content="A-2."), UserTurn(content="Yes."))
    async with episode(user=user, budget=Budget(max_user_turns=1)) as (scope, urls):
        assert (await _post(urls, "/reply", {"message": "Which?"}))[0] == 200
        status, body = await _post(urls, "/reply", {"message": "Sure?"})
        assert (status, body["code"]) == (429, "budget_exhausted")
    end = decide_end(scope, scope.record, EXITED)
    assert (end.status, end.reason) == (Status.budget_exhausted, "budget:max_user_turns")
    assert [n.kind for n in scope.record.nodes] == ["thought", "user", "thought"]


async def test_a_hidden_function_is_offered_from_the_turn_that_reveals_it() -> None:
    user = StubUser(UserTurn(content="Go on.", reveal=["set_frozen"]), hidden=["set_frozen"])
    async with episode(user=user) as (scope, urls):
        args = {"account_id": "A-2", "frozen": True}
        _, before = await _post(urls, "/call", {"name": "set_frozen", "arguments": args})
        assert before["error"] == "No such function name: set_frozen"
        _, heard = await _post(urls, "/reply", {"message": "May I?"})
        assert heard["reveal"] == ["set_frozen"]
        assert "set_frozen" in [f["function"]["name"] for f in heard["tools"]]
        _, after = await _post(urls, "/call", {"name": "set_frozen", "arguments": args})
        assert not after["error"]
    # the call after the user's answer has a node of its own, under the user's
    assert [(n.kind, n.parent) for n in scope.record.nodes] == [
        ("invalid", None),
        ("thought", 0),
        ("user", 1),
        ("action", 2),
    ]


def _run_answer_line(tmp_path: Path, answer: str) -> Any:
    line = json.dumps({"answer": answer})
    config = RunConfig(
        suite=str(TINY),
        agent="external",
        agent_options={"command": f"cat > /dev/null; echo '{line}'", "grace": 0.5},
        model="reference",
        tasks=[FREEZE],
        out=str(tmp_path / "runs"),
    )
    (traj,) = read_trajectories(run_suite(config, show_progress=False).path)
    return traj


@pytest.mark.parametrize(
    ("answer", "status", "reason", "heard"),
    [
        ("Account A-2 is frozen now.", "answered", "answered", "Thank you, that is all."),
        ("Which account?", "gave_up", "left_conversation", "I'm sorry, I don't know that."),
    ],
)
def test_an_answer_printed_on_exit_is_the_last_reply_the_user_answers(
    tmp_path: Path, answer: str, status: str, reason: str, heard: str
) -> None:
    traj = _run_answer_line(tmp_path, answer)
    assert (traj.status.value, traj.end_reason, traj.final_answer) == (status, reason, answer)
    assert [(n.kind, n.content) for n in traj.nodes] == [("finish", None), ("user", heard)]
    assert traj.nodes[0].reply == answer


HIDDEN_TASK = """
- id: chat_hidden
  query: Please freeze A-2.
  user:
    hidden: [set_frozen]
    script:
      - say: You may freeze it now.
        reveal: [set_frozen]
  reference:
    steps:
      - {tool: bank, api: set_frozen, args: {account_id: A-2, frozen: true}, turn: 1}
    replies: [Let me see.]
    answer: A-2 is frozen.
"""


KEEP_STDIN = (
    "import json, pathlib, sys; task = json.loads(sys.stdin.readline()); "
    "pathlib.Path(sys.argv[1], task['task_id']).write_text(json.dumps(task)); "
    "print(json.dumps({'give_up': True}))"
)


def test_the_agent_is_told_it_is_in_a_conversation_and_offered_no_hidden_function(
    tmp_path: Path,
) -> None:
    suite = Path(shutil.copytree(TINY, tmp_path / "bank"))
    (suite / "tasks" / "hidden.yaml").write_text(HIDDEN_TASK)
    command = f'{sys.executable} -c "{KEEP_STDIN}" {tmp_path}'
    config = RunConfig(
        suite=str(suite),
        agent="external",
        agent_options={"command": command, "grace": 0.5},
        model="reference",
        tasks=["chat_hidden", "pay_bob"],
        out=str(tmp_path / "runs"),
    )
    run_suite(config, show_progress=False)
    chat = json.loads((tmp_path / "chat_hidden").read_text())
    plain = json.loads((tmp_path / "pay_bob").read_text())
    assert chat["conversation"] is True and plain["conversation"] is False
    names = [f["function"]["name"] for f in chat["tools"]]
    assert "set_frozen" not in names and "transfer" in names and names[-1] == FINISH
    assert "set_frozen" in [f["function"]["name"] for f in plain["tools"]]


CARDS = ROOT / "tests" / "fixtures" / "suites" / "cardworld"


async def test_an_external_agents_user_acts_on_its_own_tools_where_the_agents_calls_left_it() -> (
    None
):
    """Dual control behind ``/reply``: the user's calls run on the episode's session after the
    agent's, are its node's calls, and the agent's own route refuses the user's tool."""
    async with episode(suite_dir=CARDS, task_id="tap_to_pay") as (scope, urls):
        status, _ = await _post(
            urls, "/call", {"name": "unblock_card", "arguments": {"card_id": "K-1"}}
        )
        assert status == 200
        status, refused = await _post(
            urls, "/call", {"name": "set_contactless", "arguments": {"enabled": True}}
        )
        assert status == 200 and refused["error"] == "No such function name: set_contactless"
        ask = "Could you please set contactless (enabled: True) and open app?"
        status, answer = await _post(urls, "/reply", {"message": ask})
        assert status == 200
        assert answer["user"].startswith("Done. set contactless:")
    user = next(n for n in scope.record.nodes if n.kind == "user")
    assert [c.name for c in user.calls] == ["set_contactless"]
    shown = user.calls[0].observation
    assert shown is not None and shown.state is not None
    assert json.loads(shown.content)["response"] == {"contactless": True}
