"""Dual control in a world of the project (tests/fixtures/suites/cardworld): the user has tools
of its own (``@write(user=True)``) that the agent is never offered and cannot call; the user
calls them on the episode's session, its calls are its node's, a search that backtracks past
them undoes them, a replay makes them again, and env assertions judge the final state."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents import Budget, DFSDTAgent, EpisodeMeta
from agents.model import Message, Turn
from agents.trajectory import Status
from agents.users.model_user import ModelUser
from agents.users.persona import PersonaUserModel
from mock_tools import Suite, create_app, in_process_client, load_suite
from mock_tools.errors import SuiteError
from mock_tools.validate import validate_suite
from mock_tools.worlds import Context, World, read
from mock_tools.worlds.state import State
from mock_tools.worlds.task import EnvAssertion
from mock_tools.worlds.world import WorldEngine
from sandbox.cli import main
from sandbox.eval.world_verdict import world_verdict
from sandbox.replay import fork_run
from sandbox.store import read_trajectories
from sandbox.tool_envs.http import WorldToolEnv
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply
from tests.agents.scripted import ScriptedModel, call, finish, give_up

CARDS = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "cardworld"


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    return load_suite(shutil.copytree(CARDS, tmp_path / "cardworld"))


@pytest.fixture
async def client(suite: Suite) -> AsyncIterator[httpx.AsyncClient]:
    async with in_process_client(create_app(suite)) as c:
        yield c


def test_the_users_tools_are_the_users_and_never_offered_to_the_agent(suite: Suite) -> None:
    world = suite.world
    assert world is not None
    assert sorted(world.tools) == ["get_card", "unblock_card"]
    assert sorted(world.user_tools) == ["open_app", "set_contactless"]
    assert sorted(api.name for api in world.tool_spec().apis) == ["get_card", "unblock_card"]
    offered = [f["function"]["name"] for f in world.user_functions()]
    assert offered == ["open_app", "set_contactless"]
    schema = world.user_functions()[1]["function"]["parameters"]
    assert schema["properties"]["enabled"]["type"] == "boolean"


async def test_the_agents_route_refuses_a_user_tool_and_the_users_route_an_agent_tool(
    client: httpx.AsyncClient, suite: Suite
) -> None:
    opened = await client.post("/sessions", json={"session": "s1", "task": "tap_to_pay"})
    assert opened.status_code == 201
    agent_try = await client.post(
        "/tools/cards/set_contactless",
        json={"enabled": True},
        headers={"X-Sandbox-Session": "s1"},
    )
    assert agent_try.status_code == 404
    user_try = await client.post("/sessions/s1/user/unblock_card", json={"card_id": "K-1"})
    assert user_try.status_code == 404
    assert "open_app, set_contactless" in user_try.json()["error"]
    bad = await client.post("/sessions/s1/user/set_contactless", json={"colour": "red"})
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_arguments"
    nobody = await client.post("/sessions/nobody/user/open_app", json={})
    assert nobody.status_code == 404
    done = await client.post("/sessions/s1/user/set_contactless", json={"enabled": True})
    assert done.status_code == 200
    body = done.json()
    assert body["ok"] and body["body"] == {"contactless": True}
    assert body["changes"][0]["collection"] == "cards"
    state = (await client.get("/sessions/s1/state")).json()
    assert state["state"] == body["state"]
    assert state["data"]["cards"]["K-1"]["contactless"] is True


async def test_the_users_route_reads_its_body_as_the_agents_call_routes_do(
    client: httpx.AsyncClient,
) -> None:
    """A body that is no object, too deep, too large or not JSON gets the call routes' refusal
    ({ok, error, code}); FastAPI's own reader answered {detail} (a 100,000-deep body without
    naming the depth) and parsed a body of any size."""
    await client.post("/sessions", json={"session": "s1", "task": "tap_to_pay"})
    url = "/sessions/s1/user/set_contactless"
    json_type = {"content-type": "application/json"}
    cases = [
        (b"[1, 2]", 422, "not_an_object"),
        (b'"enabled"', 422, "not_an_object"),
        (b"{bad", 400, "malformed_json"),
        (b'{"enabled": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 422, "too_deep"),
        (json.dumps({"enabled": True, "x": "a" * 1_100_000}).encode(), 413, "body_too_large"),
    ]
    for body, status, code in cases:
        r = await client.post(url, content=body, headers=json_type)
        assert (r.status_code, r.json()["code"]) == (status, code), body[:20]
        assert r.json()["ok"] is False
    xml = await client.post(url, content=b"<enabled/>", headers={"content-type": "text/xml"})
    assert (xml.status_code, xml.json()["code"]) == (415, "unsupported_media_type")
    # an empty body is no arguments; a good one is still answered
    empty = await client.post("/sessions/s1/user/open_app", content=b"")
    assert empty.status_code == 200 and empty.json()["body"]["contactless"] is False
    ok = await client.post(url, content=b'{"enabled": true}', headers=json_type)
    assert ok.status_code == 200 and ok.json()["body"] == {"contactless": True}


def test_an_env_assertions_value_tells_true_from_1(suite: Suite) -> None:
    """JSON's true is not the number 1: an assertion of `true` (the default value) on a call
    answering 1 held, and one of {blocked: 1} held on a card that is blocked (Python's
    True == 1)."""
    world = suite.world
    assert world is not None
    state = world.initial("tap_to_pay", suite.task("tap_to_pay").world)
    kw: dict[str, Any] = {"now": world.clock(None, "test"), "task": "tap_to_pay", "seed": 0}

    def holds(value: Any, call: str = "open_app", **args: Any) -> bool:
        side = "user" if call == "open_app" else "agent"
        want = EnvAssertion(call=call, args=args, side=side, value=value)
        return world.env_assertion(state, want, **kw)[0]

    assert holds({"blocked": True, "contactless": False})
    assert not holds({"blocked": 1, "contactless": 0})
    assert not holds({"blocked": True, "contactless": 0})
    assert not holds([True, False])
    card = {"id": "K-1", "owner": "ada", "blocked": True, "contactless": False}
    assert holds(card, "get_card", card_id="K-1")
    assert not holds({**card, "blocked": 1}, "get_card", card_id="K-1")
    assert not holds({**card, "extra": None}, "get_card", card_id="K-1")


class _Meter(World):
    """A world of one read tool answering a number: the reading of a meter."""

    name = "meter"

    @read
    def reading(self, ctx: Context, meter_id: str) -> Any:
        """A meter's reading.

        Args:
            meter_id: The meter's id.
        """
        return (ctx.db.get("meters", meter_id) or {}).get("value")


@pytest.mark.parametrize(
    ("value", "want", "holds"),
    [
        (1, 1.0, True),
        (1.0, 1, True),
        (1, True, False),
        (0, False, False),
        (2, 3, False),
        ({"a": 1}, {"a": 1.0}, True),
        ([1, True], [1, 1], False),
        ([1, 2], [1, 2, 3], False),
        ([1, 2], [1.0, 2], True),
    ],
)
def test_an_env_assertion_compares_numbers_as_json_and_never_with_booleans(
    value: Any, want: Any, holds: bool
) -> None:
    engine = WorldEngine(
        _Meter, State.from_documents({"meters": {"M-1": {"value": value}}}), source="test"
    )
    check = EnvAssertion(call="reading", args={"meter_id": "M-1"}, value=want)
    kw: dict[str, Any] = {"now": engine.default_now, "task": None, "seed": 0}
    assert engine.env_assertion(engine.base, check, **kw)[0] is holds


def _edited(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    """A copy of cardworld with its tasks file edited (each ``(old, new)`` must be found)."""
    folder = shutil.copytree(CARDS, tmp_path / name)
    tasks = folder / "tasks" / "tasks.yaml"
    text = tasks.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    tasks.write_text(text)
    return folder


PERSONA = (CARDS / "tasks" / "tasks.yaml").read_text().split("  user:\n")[1].split("  world:")[0]
GOLD_SWITCH = "api: set_contactless, args: {enabled: true}, by: user"
ACT = "act: [{api: set_contactless, args: {enabled: true}}]"
ASSERTED = "{call: open_app, side: user, value: {blocked: false, contactless: true}}"


@pytest.mark.parametrize(
    ("edits", "error"),
    [
        # the user route refuses these arguments (422): the gold must not make such a call
        (
            [(GOLD_SWITCH, GOLD_SWITCH.replace("true", "maybe"))],
            "reference step 3 cards/set_contactless: arguments enabled: 'maybe' is not of type "
            "'boolean'",
        ),
        (
            [(ACT, ACT.replace("true", "maybe"))],
            "user act 1 set_contactless: arguments enabled: 'maybe' is not of type 'boolean'",
        ),
        (
            [(ACT, ACT.replace("set_contactless", "unblock_card"))],
            "user act 1 unblock_card: the world has no such user tool",
        ),
        # a scripted user has no tools: the gold's call by the user could never be made
        (
            [(PERSONA, "    script: [{say: Done.}]\n")],
            "reference step 3 cards/set_contactless: a step by the user, but the task's user is "
            "a script, which makes no calls (give it a persona)",
        ),
        # side: user on the agent's tool, side: agent (the default) on the user's
        (
            [(ASSERTED, "{call: get_card, side: user, args: {card_id: K-1}, value: true}")],
            "env assertion 1 get_card: on the user's side, but get_card is the agent's tool",
        ),
        (
            [(ASSERTED, ASSERTED.replace("side: user, ", ""))],
            "env assertion 1 open_app: on the agent's side, but open_app is the user's tool",
        ),
        (
            [(ASSERTED, "{call: get_card, args: {card: K-1}, value: true}")],
            "env assertion 1 get_card: arguments (root): 'card_id' is a required property",
        ),
    ],
)
def test_validate_checks_the_users_calls_and_env_assertions_against_the_tools(
    tmp_path: Path, edits: list[tuple[str, str]], error: str
) -> None:
    report = validate_suite(_edited(tmp_path, "edited", *edits))
    assert any(e.endswith(error) for e in report.errors), report.errors


@pytest.mark.parametrize(
    ("edit", "field", "read"),
    [
        (
            (ACT, "act: [{api: set_contactless, args: {on: true}}]"),
            "user.persona.act.0.args",
            "true",
        ),
        (
            (ASSERTED, "{call: open_app, side: user, args: {no: 1}}"),
            "env_assertions.0.args",
            "false",
        ),
        ((ASSERTED, "{call: open_app, side: user, args: {~: 1}}"), "env_assertions.0.args", "null"),
    ],
)
def test_a_key_yaml_reads_as_a_boolean_is_named_as_such(
    tmp_path: Path, edit: tuple[str, str], field: str, read: str
) -> None:
    """YAML 1.1 reads an unquoted `on:` as true: the error said `args.1.[key]: Input should be a
    valid string`, naming neither the key nor why."""
    with pytest.raises(SuiteError) as e:
        load_suite(_edited(tmp_path, "yaml", edit))
    message = str(e.value)
    assert f"{field}.[key]: a key YAML read as {read}, not as text" in message
    assert 'quote it ("on": ...)' in message and "\n" not in message


def _run(suite_dir: Path, out: Path, run_id: str, *extra: str) -> Path:
    code = main(
        [
            "run",
            "--suite",
            str(suite_dir),
            "--model",
            "reference",
            "--out",
            str(out),
            "--run-id",
            run_id,
            "--no-plots",
            *extra,
        ]
    )
    assert code == 0
    return out / run_id


@pytest.mark.parametrize("agent", ["react", "dfsdt"])
def test_the_reference_and_the_persona_play_the_gold_conversation_and_replay_it(
    tmp_path: Path, suite: Suite, agent: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert suite.path is not None
    run = _run(Path(suite.path), tmp_path / "runs", agent, "--agent", agent)
    (traj,) = read_trajectories(run)
    assert traj.status is Status.answered
    users = [n for n in traj.nodes if n.kind == "user"]
    assert [c.name for c in users[0].calls] == ["set_contactless"]
    assert users[0].content == 'Done. set contactless: {"contactless": true}.'
    assert traj.world is not None
    assert [(c["kind"], c["passed"]) for c in traj.world["checks"]] == [
        ("gold", True),
        ("env_assertion", True),
    ]
    # the agent's requests never offered the user's tools
    capsys.readouterr()
    assert main(["replay", str(run)]) == 0
    assert "REPRODUCED: 1/1 episodes identical" in capsys.readouterr().out


def test_a_fork_of_a_dual_control_conversation_replays_any_prefix_of_its_path(
    tmp_path: Path, suite: Suite
) -> None:
    """Steps of a path count the user's nodes, the replayed prefix counted the agent's turns:
    a fork whose prefix held a user node asked the recording for a turn it never had
    (replay_divergence)."""
    assert suite.path is not None
    run = _run(Path(suite.path), tmp_path / "runs", "gold", "--agent", "react")
    (recorded,) = read_trajectories(run)
    kinds = [recorded.node(i).kind for i in recorded.chosen_path]
    assert kinds.count("user") == 2 and kinds[-1] == "user"
    for k in range(1, len(kinds) + 1):
        forked = fork_run(
            run, task="tap_to_pay", until_step=k, then_model="reference", out=tmp_path / "forks"
        )
        (traj,) = read_trajectories(forked.path)
        assert (traj.status, traj.end_reason) == (Status.answered, "answered"), (k, traj.errors)
        assert traj.world is not None and all(c["passed"] for c in traj.world["checks"])


def test_an_agent_that_never_asks_the_user_fails_the_env_assertion(
    tmp_path: Path, suite: Suite
) -> None:
    assert suite.path is not None
    tasks = Path(suite.path) / "tasks" / "tasks.yaml"
    # the reference without the reply that asks for the switch: it only unblocks the card
    text = tasks.read_text().replace("    replies:\n", "    replies: []\n    unused:\n")
    text = text.replace("    unused:\n      - ", "    # ")
    tasks.write_text(text)
    run = _run(Path(suite.path), tmp_path / "runs", "silent", "--agent", "react")
    (traj,) = read_trajectories(run)
    assert all(not n.calls for n in traj.nodes if n.kind == "user")
    assert traj.world is not None
    failed = {c["kind"]: c["detail"] for c in traj.world["checks"] if not c["passed"]}
    assert set(failed) == {"gold", "env_assertion"}
    assert "'contactless': False" in failed["env_assertion"]
    scores = json.loads((run / "scores.json").read_text())
    assert scores["labels"][0]["label"] == "unsolved"


def _asks_then_gives_up_then_looks() -> Any:
    """First branch: ask the user to switch contactless on, then give up; second branch: look
    at the card (the state the search came back to)."""
    starts = 0

    def reply(messages: list[Message]) -> Turn:
        nonlocal starts
        last = messages[-1]
        if last["role"] == "user" and "Done." in (last.get("content") or ""):
            return give_up("That did not help; starting again.")
        if last["role"] == "tool":
            return finish(f"The card shows: {last['content']}")
        starts += 1
        if starts == 1:
            return finish("Could you please set contactless (enabled: True) in your app?")
        return call("get_card", card_id="K-1")

    return reply


async def test_a_search_that_backtracks_past_the_users_calls_undoes_them(
    client: httpx.AsyncClient, suite: Suite
) -> None:
    task = suite.task("tap_to_pay")
    world = suite.world
    assert world is not None and task.user is not None and task.user.persona is not None
    env = WorldToolEnv(
        client,
        task,
        suite.apis,
        session="run/tap/0",
        seed=0,
        user_functions=world.user_functions(),
    )
    persona = PersonaUserModel(known={}, act=[a.model_dump() for a in task.user.persona.act])
    user = ModelUser(persona, "persona", name="persona-user", source="persona")
    env.user = user  # type: ignore[attr-defined]  # the episode's user rides on its env
    traj = await DFSDTAgent().run(
        model=ScriptedModel(_asks_then_gives_up_then_looks()),
        env=env,
        query=task.query,
        budget=Budget(max_user_turns=1),
        episode=EpisodeMeta(scenario_id=task.id),
    )
    switched = next(n for n in traj.nodes if n.kind == "user" and n.calls)
    assert switched.calls[0].observation is not None
    looked = next(n for n in traj.nodes if n.calls and n.calls[0].name == "get_card")
    assert looked.calls[0].observation is not None
    seen = json.loads(looked.calls[0].observation.content)["response"]
    # the second branch starts from the initial state: the user's switch was undone
    assert seen["contactless"] is False
    assert looked.calls[0].observation.state != switched.calls[0].observation.state
    verdict = world_verdict(world, task, traj)
    assert verdict.divergence is None


def _writes_gives_up_then_asks() -> Any:
    """First branch: unblock the card, then give up; second branch: ask the user to switch
    contactless on and open the app (which shows whether the card is blocked)."""
    starts = 0

    def reply(messages: list[Message]) -> Turn:
        nonlocal starts
        last = messages[-1]
        if last["role"] == "tool":
            return give_up("Wrong card; starting again.")
        if last["role"] == "user" and "Done." in (last.get("content") or ""):
            return finish(f"Thanks. {last['content']}")
        starts += 1
        if starts == 1:
            return call("unblock_card", card_id="K-1")
        return finish("Could you please set contactless (enabled: True) and open app?")

    return reply


async def test_the_user_acts_on_the_state_its_branch_ended_in_not_the_last_one_visited(
    client: httpx.AsyncClient, suite: Suite
) -> None:
    task = suite.task("tap_to_pay")
    world = suite.world
    assert world is not None
    env = WorldToolEnv(
        client, task, suite.apis, session="run/tap/1", seed=0, user_functions=world.user_functions()
    )
    act = [
        {"api": "set_contactless", "args": {"enabled": True}},
        {"api": "open_app", "args": {}},
    ]
    user = ModelUser(PersonaUserModel(known={}, act=act), "persona", name="persona-user")
    env.user = user  # type: ignore[attr-defined]
    traj = await DFSDTAgent().run(
        model=ScriptedModel(_writes_gives_up_then_asks()),
        env=env,
        query=task.query,
        budget=Budget(max_user_turns=2),
        episode=EpisodeMeta(scenario_id=task.id),
    )
    switched = next(n for n in traj.nodes if n.kind == "user" and n.calls)
    assert [c.name for c in switched.calls] == ["set_contactless", "open_app"]
    shown = switched.calls[1].observation
    assert shown is not None
    # the first branch's unblock was undone before the user acted on the second branch
    assert json.loads(shown.content)["response"] == {"blocked": True, "contactless": True}


def test_a_user_model_on_an_endpoint_calls_its_tool_and_a_second_run_replays_it(
    tmp_path: Path, suite: Suite, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's tools go to a real OpenAI-compatible endpoint as functions, its tool call comes
    back through the client, runs on the session and is recorded; a second run with the endpoint
    gone answers from the record and makes the call again."""
    assert suite.path is not None
    record = tmp_path / "users.jsonl"
    with ScriptedOpenAIServer() as server:
        server.push(
            tool_call_reply("set_contactless", {"enabled": True}),
            text_reply("Done, the app says contactless is on."),
        )
        server.default = tool_call_reply("end_conversation", {"reason": "done"})
        user = f"openai:u@{server.base_url}"
        args = ["--agent", "react", "--user-model", user, "--user-record", str(record)]
        first = _run(Path(suite.path), tmp_path / "runs", "live", *args)
        offered = [f["function"]["name"] for f in server.requests[0]["tools"]]
        assert offered == ["end_conversation", "open_app", "set_contactless"]
        sent = server.requests[1]["messages"]
        assert sent[-2]["tool_calls"][0]["function"]["name"] == "set_contactless"
        assert sent[-1]["role"] == "tool" and '"contactless": true' in sent[-1]["content"]
    (traj,) = read_trajectories(first)
    assert traj.status is Status.answered
    acted = [n for n in traj.nodes if n.kind == "user" and n.calls]
    assert [c.name for c in acted[0].calls] == ["set_contactless"]
    assert acted[0].content == "Done, the app says contactless is on."
    # the endpoint is gone: every user turn from the record, the call made again
    args = [*args, "--user-miss", "error"]
    again = _run(Path(suite.path), tmp_path / "runs", "again", *args)
    (replayed,) = read_trajectories(again)
    assert replayed.status is traj.status and replayed.end_reason == traj.end_reason
    made = [n for n in replayed.nodes if n.kind == "user" and n.calls]
    now, then = made[0].calls[0].observation, acted[0].calls[0].observation
    assert now is not None and then is not None
    assert (now.content, now.state) == (then.content, then.state)
    assert made[0].user is not None and made[0].user["source"] == "record"
