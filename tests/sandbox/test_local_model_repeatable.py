"""Runs of a model on a server of the run's own repeat: seeded requests, and a cached overflow.

What it protects (issue 38, item 12): a server that samples draws from its own random state when
a request sends no seed (llama.cpp goes on from its previous request's), so the same episode got
other replies run to run. An alias that launches its own server now sends each request a seed
made from the run's seed, the task, the trial, the request and how many times the episode sent
it: the same in every run, another for another trial or chain, none for other endpoints or when
the alias fixes its own. And a context overflow is the model's answer to the request: the model
cache keeps it, so a re-run from the cache ends the episode as the first run did, with no
endpoint. The server is a fake on 127.0.0.1 (the alias's ``launch:`` finds it answering at its
``base_url`` and starts nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.models.cache import CachedModel, EpisodeIdentity, RequestCache
from sandbox.models.seeded import SEED_BITS, SeededModel
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from tests.agents.models.openai_server import Reply, ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
TASKS = ["mini_g1_kettle_price", "mini_g1_track"]
OVERFLOW = Reply(
    status=400,
    body={
        "error": {
            "message": "This model's maximum context length is 512 tokens. However, you "
            "requested 1086 tokens (894 in the messages, 192 in the completion).",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
)


def _alias(base_url: str, *, launch: bool = True, **more: Any) -> dict[str, Any]:
    alias: dict[str, Any] = {"kind": "openai", "model": "scripted-model", "base_url": base_url}
    if launch:
        alias["launch"] = {"server": "llamacpp", "gguf": "/nonexistent/never-started.gguf"}
    return alias | more


def _run(tmp_path: Path, name: str, alias: dict[str, Any], **settings: Any) -> str:
    models = tmp_path / f"{name}.yaml"
    models.write_text(yaml.safe_dump({"models": {"local": alias}}))
    config = RunConfig(
        suite=str(MINI),
        agent="react",
        model="local",
        tasks=TASKS,
        out=str(tmp_path / name),
        concurrency=1,
        **settings,
    )
    return run_suite(config, env={"SANDBOX_MODELS_FILE": str(models)}, show_progress=False).path


def _seeds(server: ScriptedOpenAIServer) -> list[Any]:
    seeds = [body.get("seed") for body in server.requests]
    server.reset()
    return seeds


def test_a_launched_alias_sends_the_same_seeds_in_every_run_and_others_per_trial(
    tmp_path: Path,
) -> None:
    with ScriptedOpenAIServer() as server:
        alias = _alias(server.base_url)
        _run(tmp_path, "first", alias, trials=2)
        first = _seeds(server)
        _run(tmp_path, "again", alias, trials=2)
        again = _seeds(server)
        _run(tmp_path, "other", alias, trials=2, seed=1)
        other = _seeds(server)
    assert len(first) == 4  # two tasks, two trials, one Finish each
    assert all(isinstance(s, int) and 0 <= s < 2**SEED_BITS for s in first)
    assert again == first
    assert len(set(first)) == 4  # every task and trial draws its own
    assert not set(other) & set(first)  # another run seed, other draws


def test_other_endpoints_and_an_alias_s_own_seed_are_left_alone(tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as server:
        _run(tmp_path, "remote", _alias(server.base_url, launch=False))
        remote = _seeds(server)
        _run(tmp_path, "fixed", _alias(server.base_url, params={"seed": 42}))
        fixed = _seeds(server)
    assert remote == [None, None]
    assert fixed == [42, 42]


async def test_a_request_asked_again_in_an_episode_gets_another_seed() -> None:
    class Recorder:
        name = "recorder"
        params: dict[str, Any] = {}

        def __init__(self) -> None:
            self.seeds: list[int] = []

        async def complete(self, messages: Any, tools: Any, params: Any = None) -> Any:
            self.seeds.append(params["seed"])
            return None

    ask = [{"role": "user", "content": "q"}]
    one, two = Recorder(), Recorder()
    episode = EpisodeIdentity(seed=0, task="t", trial=0)
    for inner in (one, two):
        model = SeededModel(inner, episode=episode)
        await model.complete(ask, [])
        await model.complete(ask, [])  # ReAct@N's second chain asks the same
        await model.complete([*ask, {"role": "assistant", "content": "a"}], [])
        await model.complete(ask, [], {"seed": 5})  # the call's own seed wins
        for call_id in ("call_a", "call_b"):  # ids a server made up at random do not count
            call = {"id": call_id, "type": "function", "function": {"name": "f", "arguments": ""}}
            turn = {"role": "assistant", "content": "", "tool_calls": [call]}
            answer = {"role": "tool", "tool_call_id": call_id, "content": "x"}
            await SeededModel(inner, episode=episode).complete([*ask, turn, answer], [])
    assert one.seeds == two.seeds
    assert len(set(one.seeds[:3])) == 3 and one.seeds[3] == 5
    assert one.seeds[4] == one.seeds[5] and one.seeds[4] not in one.seeds[:4]


def test_a_context_overflow_is_cached_and_a_re_run_reproduces_it_without_the_endpoint(
    tmp_path: Path,
) -> None:
    cache = str(tmp_path / "cache.sqlite")
    with ScriptedOpenAIServer() as server:
        server.default = OVERFLOW
        first = _run(tmp_path, "first", _alias(server.base_url), model_cache=cache)
        asked = len(server.requests)
    # the endpoint is gone: any request the cache could not answer would fail the run
    again = _run(tmp_path, "again", _alias("http://127.0.0.1:9/v1"), model_cache=cache)
    before, after = read_trajectories(first), read_trajectories(again)
    assert asked == 2
    assert [t.status.value for t in before] == ["context_overflow"] * 2
    assert [(t.status, t.end_reason, t.usage.model_calls) for t in after] == [
        (t.status, t.end_reason, t.usage.model_calls) for t in before
    ]
    assert [n.error for t in after for n in t.nodes] == [n.error for t in before for n in t.nodes]


@pytest.mark.parametrize("kind", ["server", "timeout"])
async def test_a_failure_of_the_endpoint_is_never_cached(kind: str) -> None:
    from agents.errors import ModelError

    class Failing:
        name = "failing"
        calls = 0

        async def complete(self, messages: Any, tools: Any, params: Any = None) -> Any:
            Failing.calls += 1
            raise ModelError("down", kind=kind)

    store = RequestCache(":memory:")
    for _ in range(2):
        model = CachedModel(Failing(), store, identity="x")
        with pytest.raises(ModelError):
            await model.complete([{"role": "user", "content": "q"}], [])
    assert Failing.calls == 2 and len(store) == 0
