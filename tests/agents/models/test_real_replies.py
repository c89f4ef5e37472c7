"""The native tool-call parsing and the text adapter over replies a real model sent.

``tests/fixtures/real_replies/replies.jsonl`` holds what SmolLM2-135M-Instruct on llama.cpp's
server answered in real ReAct episodes (``capture.py`` beside it says how). Each exact body is
served again to the OpenAI client (native) or to the text adapter over it, and the turn goes
through the loop's ``interpret_turn``: every reply maps to a defined turn kind, the one it mapped
to when captured, and nothing crashes. No server is needed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.errors import ModelError
from agents.model import CUT_AT_TOKEN_LIMIT, Model, Turn
from agents.models import OpenAICompatModel, TextReActModel
from agents.step import interpret_turn
from agents.strategies import resolve_strategy
from tests.agents.scripted import FakeToolEnv

httpx2 = pytest.importorskip("httpx2")

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "real_replies"
REPLIES = [json.loads(line) for line in (FOLDER / "replies.jsonl").read_text("utf-8").splitlines()]
OVERFLOW = json.loads((FOLDER / "context_overflow.json").read_text("utf-8"))
KINDS = {"action", "finish", "give_up", "thought", "invalid"}
ENTITY = re.compile(r"&(#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
ASK = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Go."}]


def served(status: int, body: dict[str, Any]) -> OpenAICompatModel:
    """A client whose endpoint answers every request with ``body``."""
    transport = httpx2.MockTransport(lambda request: httpx2.Response(status, json=body))
    return OpenAICompatModel(
        "SmolLM2-135M-Instruct",
        "http://corpus.test/v1",
        http_client=httpx2.AsyncClient(transport=transport),
    )


def tools_of(entry: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
        for n in entry["functions"]
    ]


async def turn_of(entry: dict[str, Any]) -> Turn:
    client = served(200, entry["body"])
    model: Model = TextReActModel(client) if entry["adapter"] == "text" else client
    try:
        return await model.complete(ASK, tools_of(entry))
    finally:
        await client.aclose()


def choice_of(entry: dict[str, Any]) -> dict[str, Any]:
    return entry["body"]["choices"][0]


@pytest.mark.parametrize("entry", REPLIES, ids=[e["id"] for e in REPLIES])
async def test_each_real_reply_maps_to_the_turn_kind_it_had(entry: dict[str, Any]) -> None:
    turn = await turn_of(entry)
    plan = interpret_turn(turn, entry["functions"])
    assert plan.kind in KINDS
    assert plan.kind == entry["kind"]
    usage = entry["body"]["usage"]
    assert turn.usage.prompt_tokens == usage["prompt_tokens"] > 0
    assert turn.usage.completion_tokens == usage["completion_tokens"]
    if entry["adapter"] == "text":
        assert plan.kind != "thought"  # the adapter gives a call or says what is wrong
    cut = choice_of(entry)["finish_reason"] == "length"
    if cut and not turn.tool_calls:
        assert plan.kind == "invalid" and plan.format_error is not None
        assert plan.format_error.startswith(CUT_AT_TOKEN_LIMIT)


def test_the_corpus_holds_every_kind_of_reply_the_issue_names() -> None:
    native = [e for e in REPLIES if e["adapter"] == "native"]
    text = [e for e in REPLIES if e["adapter"] == "text"]
    assert len(REPLIES) >= 30 and len(native) >= 12 and len(text) >= 12

    def calls(e: dict[str, Any]) -> list[Any]:
        return choice_of(e)["message"].get("tool_calls") or []

    assert any(calls(e) for e in native), "a native tool call"
    assert any(not calls(e) for e in native), "a native reply without a call"
    assert any(choice_of(e)["finish_reason"] == "length" for e in native), "a cut native reply"
    assert any(choice_of(e)["finish_reason"] == "length" for e in text), "a cut text reply"
    assert any(e["kind"] == "invalid" for e in text), "a text reply the adapter could not parse"

    def unreadable(e: dict[str, Any]) -> bool:
        try:
            return any(
                not isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls(e)
            )
        except ValueError:
            return True

    assert any(unreadable(e) for e in native if calls(e)), "arguments that do not parse"


async def test_html_entities_are_kept_as_the_model_wrote_them() -> None:
    """The generic client and the text adapter never unescape ``&#39;`` and the like: the turn
    carries the model's text and arguments verbatim (an alias whose server escapes its prompts
    unescapes above them: tests/sandbox/test_entities.py)."""
    with_entities = [e for e in REPLIES if ENTITY.search(json.dumps(choice_of(e)["message"]))]
    assert with_entities, "the corpus has replies with HTML entities"
    for entry in with_entities:
        turn = await turn_of(entry)
        message = choice_of(entry)["message"]
        if entry["adapter"] == "text":
            assert turn.raw["text"] == message["content"]
            for call in turn.tool_calls:
                if call.arguments.startswith("{") and call.arguments in message["content"]:
                    continue  # verbatim JSON, entities and all
                assert not ENTITY.search(message["content"]), entry["id"]
        else:
            assert turn.content == message.get("content")
            wrote = [c["function"]["arguments"] for c in message.get("tool_calls") or []]
            assert [c.arguments for c in turn.tool_calls] == wrote


async def test_arguments_that_fail_to_parse_are_answered_not_sent() -> None:
    broken = []
    for entry in REPLIES:
        turn = await turn_of(entry)
        plan = interpret_turn(turn, entry["functions"])
        broken += [c for c in plan.calls if c.function is not None and c.args is None]
    for call in broken:
        assert call.observation is not None and not call.observation.ok
        assert call.observation.error and "invalid arguments" in call.observation.error


async def test_the_real_servers_overflow_answer_ends_the_episode_as_a_context_overflow() -> None:
    assert OVERFLOW["status"] == 400
    client = served(OVERFLOW["status"], OVERFLOW["body"])
    with pytest.raises(ModelError) as info:
        await client.complete(ASK, [])
    assert info.value.kind == "context_length" and info.value.attempts == 1
    traj = (
        await resolve_strategy("react")
        .build()
        .run(
            model=client,
            env=FakeToolEnv({}),
            query="Go.",
            budget=Budget(max_model_calls=3),
            episode=EpisodeMeta(scenario_id="overflow", run_id="corpus"),
        )
    )
    await client.aclose()
    assert traj.status.value == "context_overflow" and traj.end_reason == "context_overflow"
    assert not traj.infra_error
