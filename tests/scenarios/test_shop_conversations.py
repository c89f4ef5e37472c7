"""The shop's conversational tasks (``conv_*``, group ``conversation``): what they hold, that the
offline users and the reference solve them, that what the conversation adds is what decides
them, and that a model-played user on an endpoint replays from ``--model-cache`` with the
endpoint stopped, byte for byte.

What it protects: at least ten conversations over the shop's world, with scripts and personas;
a scripted customer who changes their mind (the final state is not the first request's, and an
agent that ignores the second message fails), one whose function is revealed mid-conversation,
personas whose query leaves out a fact the agent must ask for (a clarifying question); the
reference model solves each under react, dfsdt and react@4 (``test_shop_suite.py`` runs every
task); the default suite has no conversation."""

from __future__ import annotations

import asyncio
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agents.users import PersonaUserModel
from mock_tools import Suite, Task, load_suite
from mock_tools.worlds.verdict import Action, judge, replay
from mock_tools.worlds.world import WorldEngine
from sandbox.cli import main
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "scenarios" / "shop"
DEFAULT = ROOT / "scenarios" / "default"
VOLATILE = {"started_at", "ended_at", "wall_seconds", "run_id", "latency_ms", "source"}
"""What a second run measures again or names anew (the clock, the run, where a user turn came
from: ``live`` then ``cache``); everything else must be the first run's bytes."""


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SHOP)


def _conversations(suite: Suite) -> list[Task]:
    return [t for t in suite.tasks if t.id.startswith("conv_")]


def test_the_shop_has_ten_conversations_with_scripts_and_personas(suite: Suite) -> None:
    chats = _conversations(suite)
    assert len(chats) >= 10
    assert all(t.user is not None and t.group == "conversation" for t in chats)
    assert [t.id for t in suite.tasks if t.user is not None] == [t.id for t in chats]
    scripted = [t for t in chats if t.user and t.user.script]
    personas = [t for t in chats if t.user and t.user.persona]
    assert len(scripted) >= 4 and len(personas) >= 4
    changed = [t for t in scripted if any("changed my mind" in s.say for s in t.user.script or [])]
    assert len(changed) >= 2, [t.id for t in scripted]
    revealed = [t for t in scripted if t.user and t.user.hidden]
    assert revealed and all(any(s.reveal for s in t.user.script or []) for t in revealed)


def test_the_default_suite_has_no_conversation() -> None:
    assert all(t.user is None for t in load_suite(DEFAULT).tasks)


def _persona_model(task: Task) -> PersonaUserModel:
    assert task.user is not None and task.user.persona is not None
    p = task.user.persona
    return PersonaUserModel(
        known=dict(p.known),
        accept=[a.model_dump() for a in p.accept],
        refuse=[r.model_dump() for r in p.refuse],
    )


def _answer(model: PersonaUserModel, replies: list[str]) -> str:
    messages: list[Any] = [{"role": "user", "content": r} for r in replies]
    turn = asyncio.run(model.complete(messages, []))
    return turn.content or ""


def test_clarifying_questions_are_needed_and_answered_with_what_the_persona_knows(
    suite: Suite,
) -> None:
    """A persona's facts are not in its query: the agent can only learn them by asking, and
    the reference's first reply asks and is told them."""
    asking = []
    for task in _conversations(suite):
        if task.user is None or task.user.persona is None or not task.reference.replies:
            continue
        known = task.user.persona.known
        assert not any(v.casefold() in task.query.casefold() for v in known.values()), task.id
        said = _answer(_persona_model(task), task.reference.replies[:1])
        if all(v in said for v in known.values()):
            asking.append(task.id)
    assert len(asking) >= 3, asking


def test_proposals_the_persona_does_not_accept_are_refused(suite: Suite) -> None:
    task = next(t for t in suite.tasks if t.id == "conv_coupon_which")
    model = _persona_model(task)
    assert _answer(model, ["Shall I apply coupon SPRING10 to order O-1012?"]).startswith("Yes")
    assert _answer(model, ["Shall I apply coupon GOLD15 to order O-1012?"]).startswith("No")
    assert _answer(model, ["Shall I cancel order O-1012?"]).startswith("No")


def test_a_customer_who_changes_their_mind_decides_the_final_state(suite: Suite) -> None:
    """Doing only what the first message asked leaves a state the gold (which follows the
    change of mind) rejects; the gold actions pass."""
    assert suite.world is not None
    world: WorldEngine = suite.world
    for task_id in ("conv_shipping_changed_mind", "conv_swap_mug_changed_mind"):
        task = next(t for t in suite.tasks if t.id == task_id)
        steps = task.reference.steps
        full = [Action(s.api, dict(s.args), turn=s.turn) for s in steps]
        first = [a for a in full if a.turn == 0]
        assert len(first) < len(full)
        assert judge(world, task, replay(world, task, full, seed=0), seed=0).passed, task_id
        lazy = judge(world, task, replay(world, task, first, seed=0), seed=0)
        assert not lazy.passed and lazy.turns == [True, False], (task_id, lazy.turns)


# -- a model-played user on an endpoint, kept in the model cache -----------------------------------


def _persona_endpoint(suite: Suite) -> Any:
    """An OpenAI-compatible user model that plays each persona as ``persona-user`` does: it
    finds the task by the scenario in its system prompt."""
    players = {
        t.user.persona.scenario: _persona_model(t)
        for t in _conversations(suite)
        if t.user is not None and t.user.persona is not None
    }
    pool = ThreadPoolExecutor(max_workers=1)

    def answer(body: dict[str, Any]) -> Any:
        system = body["messages"][0]["content"]
        player = next(p for scenario, p in players.items() if scenario in system)
        turn = pool.submit(asyncio.run, player.complete(body["messages"], [])).result()
        if turn.tool_calls:
            call = turn.tool_calls[0]
            return tool_call_reply(call.name, json.loads(call.arguments))
        return text_reply(turn.content or "")

    return answer


def _stripped(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


def _trajectories(run: Path) -> list[Any]:
    lines = (run / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted((json.loads(line) for line in lines), key=lambda t: t["scenario_id"])


def test_a_model_played_user_replays_from_the_model_cache_with_its_endpoint_stopped(
    tmp_path: Path,
    suite: Suite,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shop = Path(shutil.copytree(SHOP, tmp_path / "shop"))
    cache = tmp_path / "cache.sqlite"
    argv = ["run", "--suite", str(shop), "--tasks", "conv_*", "--model", "reference"]
    argv += ["--user-model", "shopper", "--model-cache", str(cache), "--no-plots", "--json"]
    runs = []
    with ScriptedOpenAIServer() as server:
        server.default = _persona_endpoint(suite)
        models = tmp_path / "models.yaml"
        models.write_text(
            "models:\n  shopper:\n    kind: openai\n    model: shopper\n"
            f"    base_url: {server.base_url}\n"
            "    retry: {max_retries: 0}\n"
        )
        monkeypatch.setenv("SANDBOX_MODELS_FILE", str(models))
        # its own user record, so the second run's answers can only come from the model cache
        first = [*argv, "--user-record", str(tmp_path / "one.jsonl"), "--out", str(tmp_path)]
        assert main([*first, "--run-id", "one"]) == 0
        runs.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
        asked = len(server.requests)
    assert asked >= 5  # the personas' turns went to the endpoint
    second = [*argv, "--user-record", str(tmp_path / "two.jsonl"), "--out", str(tmp_path)]
    assert main([*second, "--run-id", "two"]) == 0  # the endpoint is stopped now
    runs.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    assert [r["pass_rate"] for r in runs] == [1.0, 1.0] and runs[0]["n"] >= 10

    one, two = _trajectories(tmp_path / "one"), _trajectories(tmp_path / "two")
    assert _stripped(one) == _stripped(two)
    sources = {
        n["user"].get("source", "script") for t in two for n in t["nodes"] if n["kind"] == "user"
    }
    assert "live" not in sources and "cache" in sources, sources
