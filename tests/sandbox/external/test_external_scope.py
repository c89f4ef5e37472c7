"""One external episode's server, over real HTTP on 127.0.0.1: the model proxy and the tool scope.

What it protects:
- the proxy answers the official OpenAI client, streamed or not, with the same turn; the
  usage chunk comes when ``stream_options.include_usage`` asks for it;
- a spent budget answers the over-budget request with 429 ``budget_exhausted`` that the SDK
  does not retry, and ends the episode ``budget_exhausted``; later tool calls are refused;
- ``POST /call`` answers as the built-in loops' calls are answered (an unknown name, arguments
  that are not an object, a real call); a usable ``Finish`` ends the episode;
- the suite's native and ``/virtual`` routes work under the episode's base URL, in the
  episode's scope (occurrences count per episode), and are recorded as calls;
- MCP lists the episode's functions (``Finish`` included) and calls them as ``/call`` does;
- a wrong token and the Responses API are 404s that say why; a run whose tools are not a mock
  tool server answers the REST routes 501.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.model import Message, ToolCall, Turn, Usage
from agents.toolenv import FINISH_FUNCTION, Observation, env_dispatch
from agents.trajectory import Component, Status
from mock_tools import load_suite
from sandbox.external.gateway import EpisodeUrls, episode_server
from sandbox.external.record import EpisodeRecord
from sandbox.external.scope import EpisodeScope
from sandbox.store.config import RunConfig
from sandbox.tool_envs import open_tool_envs

MINI = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "mini"
ORDER_TASK = "mini_g2_order_and_ship"
ORDER = {"product_id": "K-1", "quantity": 2}


class Scripted:
    """A model that answers with the turns it is given, in order, and keeps the requests."""

    name = "scripted"

    def __init__(self, *turns: Turn) -> None:
        self.turns = list(turns)
        self.requests: list[tuple[list[Message], list[dict[str, Any]], dict[str, Any]]] = []

    async def complete(
        self, messages: list[Message], tools: list[dict[str, Any]], params: Any = None
    ) -> Turn:
        self.requests.append((messages, tools, dict(params or {})))
        return self.turns.pop(0).model_copy(deep=True)


def _calling(name: str, args: dict[str, Any], call_id: str = "c1") -> Turn:
    call = ToolCall(id=call_id, name=name, arguments=json.dumps(args))
    return Turn(
        content="calling", tool_calls=[call], usage=Usage(prompt_tokens=9, completion_tokens=4)
    )


@asynccontextmanager
async def episode(
    model: Any, budget: Budget | None = None, task_id: str = ORDER_TASK
) -> AsyncIterator[tuple[EpisodeScope, EpisodeUrls]]:
    suite = load_suite(MINI)
    task = next(t for t in suite.tasks if t.id == task_id)
    async with open_tool_envs(RunConfig(suite=str(MINI)), suite) as tools:
        env = tools.for_episode(task, session=f"test/{uuid.uuid4().hex}")
        record = EpisodeRecord(
            agent=Component(name="external"),
            model=Component(name=model.name),
            meta=EpisodeMeta(scenario_id=task.id),
            query=task.query,
            functions=[*env.functions, FINISH_FUNCTION],
            dispatch=env_dispatch(env),
        )
        scope = EpisodeScope(
            model=model,
            env=env,
            record=record,
            budget=budget or Budget(),
            max_observation_chars=2048,
        )
        async with episode_server(scope) as urls:
            yield scope, urls


def _client(urls: EpisodeUrls, sent: list[httpx.Request] | None = None) -> openai.AsyncOpenAI:
    async def count(request: httpx.Request) -> None:
        if sent is not None:
            sent.append(request)

    http = httpx.AsyncClient(event_hooks={"request": [count]})
    return openai.AsyncOpenAI(base_url=f"{urls.base}/v1", api_key="x", http_client=http)


async def test_the_proxy_answers_the_openai_client_streamed_or_not_with_the_same_turn() -> None:
    model = Scripted(_calling("search_products_for_shop", {"query": "kettle"}), Turn(content="hi"))
    model.turns.insert(1, model.turns[0].model_copy(deep=True))
    async with episode(model) as (scope, urls):
        client = _client(urls)
        messages = [{"role": "user", "content": "kettles?"}]
        plain = await client.chat.completions.create(model="any", messages=messages)
        stream = await client.chat.completions.create(
            model="any", messages=messages, stream=True, stream_options={"include_usage": True}
        )
        chunks = [c async for c in stream]
        text = await client.chat.completions.create(model="any", messages=messages, stream=True)
        text_chunks = [c async for c in text]
    call = plain.choices[0].message.tool_calls[0]
    streamed = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert [(t.id, t.function.name, t.function.arguments) for t in streamed] == [
        (call.id, call.function.name, call.function.arguments)
    ]
    assert chunks[-1].usage.total_tokens == plain.usage.total_tokens == 13
    assert "".join(c.choices[0].delta.content or "" for c in text_chunks if c.choices) == "hi"
    assert all(c.usage is None for c in text_chunks)
    assert scope.record.turns == 3 and not scope.over


async def test_a_spent_budget_is_a_429_the_sdk_does_not_retry_and_ends_the_episode() -> None:
    model = Scripted(_calling("search_products_for_shop", {"query": "kettle"}), Turn(content="x"))
    sent: list[httpx.Request] = []
    async with episode(model, Budget(max_model_calls=1)) as (scope, urls):
        client = _client(urls, sent)
        messages = [{"role": "user", "content": "kettles?"}]
        await client.chat.completions.create(model="any", messages=messages)
        with pytest.raises(openai.RateLimitError) as refused:
            await client.chat.completions.create(model="any", messages=messages)
        async with httpx.AsyncClient() as http:
            call = await http.post(f"{urls.base}/call", json={"name": "Finish", "arguments": {}})
    assert refused.value.code == "budget_exhausted"
    assert len(sent) == 2 and len(model.requests) == 1
    assert scope.stop is not None and scope.stop.status is Status.budget_exhausted
    assert scope.stop.reason == "budget:max_model_calls"
    assert call.status_code == 429 and "budget" in call.json()["error"]


async def test_call_answers_as_the_built_in_loops_and_finish_ends_the_episode() -> None:
    async with episode(Scripted()) as (scope, urls), httpx.AsyncClient() as http:

        async def call(name: str, arguments: Any) -> httpx.Response:
            return await http.post(f"{urls.base}/call", json={"name": name, "arguments": arguments})

        unknown = await call("place_orders", {})
        not_object = await call("place_order_for_shop", "[1, 2]")
        first = await call("place_order_for_shop", ORDER)
        again = await call("place_order_for_shop", json.dumps(ORDER))
        done = await call("Finish", {"return_type": "give_answer", "final_answer": "ORD-42"})
        after = await call("place_order_for_shop", ORDER)
    assert unknown.json() == {"error": "No such function name: place_orders", "response": ""}
    assert "must be a JSON object" in not_object.json()["error"]
    assert first.json()["error"] == "500 internal error: please retry"
    assert again.json()["response"]["order_id"] == "ORD-42"
    assert done.text == '{"response":"successfully giving the final answer."}'
    assert scope.finished is not None and scope.finished.final_answer == "ORD-42"
    assert after.status_code == 400 and "over" in after.json()["error"]
    calls = [c for n in scope.record.nodes for c in n.calls]
    assert [c.hallucinated for c in calls] == [True, False, False, False]
    assert scope.record.trajectory.usage.tool_calls == 2  # only the calls that reached a tool


async def test_the_suites_rest_routes_work_in_the_episodes_scope_and_are_recorded() -> None:
    async with episode(Scripted()) as (scope, urls), httpx.AsyncClient() as http:
        health = await http.get(f"{urls.base}/health")
        native = await http.post(f"{urls.base}/tools/shop/place_order", json=ORDER)
        virtual = await http.post(
            f"{urls.base}/virtual",
            json={
                "category": "",
                "tool_name": "shop",
                "api_name": "place_order",
                "tool_input": ORDER,
            },
            headers={"X-Sandbox-Session": "somebody-else"},  # the episode's scope wins
        )
    async with episode(Scripted()) as (_, other), httpx.AsyncClient() as http:
        fresh = await http.post(f"{other.base}/tools/shop/place_order", json=ORDER)
    assert health.status_code == 200 and "fingerprint" in health.json()
    assert native.json()["ok"] is False and "retry" in native.json()["error"]
    assert virtual.json()["error"] == "" and virtual.json()["response"]["order_id"] == "ORD-42"
    assert fresh.json()["ok"] is False  # another episode counts its occurrences from 1
    calls = [c for n in scope.record.nodes for c in n.calls]
    assert [(c.name, c.function, c.observation.ok) for c in calls] == [
        ("place_order_for_shop", "place_order_for_shop", False),
        ("place_order_for_shop", "place_order_for_shop", True),
    ]
    assert calls[0].args == calls[1].args == ORDER


async def test_mcp_lists_the_episodes_functions_and_calls_them_as_call_does() -> None:
    from mcp import Client

    async with episode(Scripted()) as (scope, urls), Client(f"{urls.base}/mcp") as mcp:
        names = [t.name for t in (await mcp.list_tools()).tools]
        failed = await mcp.call_tool("place_order_for_shop", ORDER)
        placed = await mcp.call_tool("place_order_for_shop", ORDER)
        finish = await mcp.call_tool(
            "Finish", {"return_type": "give_up_and_restart", "final_answer": "no"}
        )
    assert names == [f["function"]["name"] for f in scope.record.functions]
    assert names[-1] == "Finish"
    assert failed.is_error and json.loads(failed.content[0].text)["error"].startswith("500")
    assert not placed.is_error and json.loads(placed.content[0].text)["error"] == ""
    assert not finish.is_error and scope.finished is not None
    assert scope.finished.return_type == "give_up_and_restart"


async def test_a_wrong_token_and_the_responses_api_are_404s_that_say_why() -> None:
    async with episode(Scripted()) as (_, urls), httpx.AsyncClient() as http:
        root = urls.base.rsplit("/e/", 1)[0]
        wrong = await http.post(f"{root}/e/not-the-token/call", json={"name": "x"})
        responses = await http.post(f"{urls.base}/v1/responses", json={"input": "hi"})
        models = await http.get(f"{urls.base}/v1/models")
    assert wrong.status_code == 404 and "token" in wrong.json()["error"]
    assert responses.status_code == 404
    assert "chat_completions" in responses.json()["error"]["message"]
    assert models.json()["data"][0]["id"] == "scripted"


class _PlainTools:
    """A tool env that is not a mock tool server (as an MCP server's or a recorded run's)."""

    functions: list[dict[str, Any]] = []

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        return Observation(ok=True, content='{"error": "", "response": 1}')


async def test_rest_routes_of_tools_that_are_no_mock_server_are_501() -> None:
    record = EpisodeRecord(
        agent=Component(name="external"),
        model=Component(name="m"),
        meta=EpisodeMeta(scenario_id="t"),
        query="q",
        functions=[FINISH_FUNCTION],
        dispatch="exact",
    )
    scope = EpisodeScope(
        model=Scripted(),
        env=_PlainTools(),
        record=record,
        budget=Budget(),
        max_observation_chars=None,
    )
    async with episode_server(scope) as urls, httpx.AsyncClient() as http:
        native = await http.post(f"{urls.base}/tools/a/b", json={})
    assert native.status_code == 501 and "/call" in native.json()["error"]
