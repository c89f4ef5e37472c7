"""The example agents through the proxy to a server as strict as llama-cpp-python's.

What it protects (issue 38, item 11): an agent that echoes the model's reply into its history
sends an assistant turn with ``content: null`` (``fetch_loop.mjs``) or with no ``content`` at
all (``openai_loop.py``, which drops the nulls); llama-cpp-python's server answers either with
HTTP 500. The proxy forwards what the run's model accepts (``content: ""`` beside the calls), so
the episode is answered; and a 500 that the request itself caused (the server's validation
error) is the request's error: not retried, the agent's outcome, never an infrastructure error.
A history longer than the model's context ends the episode ``context_overflow``, as in the
built-in loops. The server is a fake on 127.0.0.1 that answers as llama-cpp-python does.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from tests.agents.models.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    error_reply,
    finish_reply,
    tool_call_reply,
)

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
KETTLE = "mini_g1_kettle_price"
ANSWER = "The cheapest kettle is the Steel Kettle (K-1) at 29.90 EUR."
EXAMPLES = ROOT / "examples" / "agents"
COMMANDS = {
    "openai_loop": f"{sys.executable} {EXAMPLES / 'openai_loop.py'}",
    "fetch_loop": f"node {EXAMPLES / 'fetch_loop.mjs'}",
}
VALIDATION_500 = (
    "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', 2, "
    "'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid "
    "string', 'input': None}"
)
"""What llama-cpp-python's server says, with status 500, of an assistant turn whose content is
null (its text, trimmed to one of the seven errors it lists)."""
TEMPLATE_500 = "'dict object' has no attribute 'content'"
"""... and of one without content (its chat template's error)."""
CONTEXT_400 = (
    "This model's maximum context length is 4096 tokens. However, you requested 4281 tokens "
    "(4089 in the messages, 192 in the completion). Please reduce the length of the messages "
    "or completion."
)


def _internal_error(message: str) -> Reply:
    body = {"error": {"message": message, "type": "internal_server_error", "param": None}}
    return Reply(status=500, body=body)


def _as_llamacpp(script: list[Reply]) -> Any:
    """Answers like llama-cpp-python's server: a 500 for an assistant turn whose content is not
    a string, else the next scripted reply."""

    def answer(body: dict[str, Any]) -> Reply:
        for m in body["messages"]:
            if m["role"] == "assistant" and "content" not in m:
                return _internal_error(TEMPLATE_500)
            if m["role"] == "assistant" and not isinstance(m["content"], str):
                return _internal_error(VALIDATION_500)
        return script.pop(0)

    return answer


def _run(tmp_path: Path, server: ScriptedOpenAIServer, command: str) -> str:
    models = tmp_path / "models.yaml"
    alias = {"kind": "openai", "model": "scripted-model", "base_url": server.base_url}
    models.write_text(yaml.safe_dump({"models": {"strict": alias}}))
    config = RunConfig(
        suite=str(MINI),
        agent="external",
        agent_options={"command": command, "grace": 0.5},
        model="strict",
        tasks=[KETTLE],
        out=str(tmp_path / "runs"),
    )
    env = {"SANDBOX_MODELS_FILE": str(models)}
    return run_suite(config, env=env, show_progress=False).path


@pytest.mark.parametrize("example", sorted(COMMANDS))
def test_an_agent_echoing_a_null_content_is_answered_by_a_server_that_refuses_it(
    example: str, tmp_path: Path
) -> None:
    if example == "fetch_loop" and shutil.which("node") is None:
        pytest.skip("node is not installed: the JavaScript example needs Node 18+ (fetch)")
    search = tool_call_reply("search_products_for_shop", {"query": "kettle"})  # content: null
    with ScriptedOpenAIServer() as server:
        server.default = _as_llamacpp([search, finish_reply(ANSWER)])
        run = _run(tmp_path, server, COMMANDS[example])
        sent = list(server.requests)
    (traj,) = read_trajectories(run)
    assert (traj.status.value, traj.final_answer) == ("answered", ANSWER), traj.errors
    assert len(sent) == 2 and traj.usage.model_retries == 0
    echoed = [m for m in sent[1]["messages"] if m["role"] == "assistant"]
    assert echoed == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {
                        "name": "search_products_for_shop",
                        "arguments": '{"query": "kettle"}',
                    },
                }
            ],
        }
    ]
    # the record keeps the agent's request as the agent sent it (what its replay compares)
    recorded = [m for m in traj.exchanges[1]["request"]["messages"] if m["role"] == "assistant"]
    assert [m.get("content", "left out") for m in recorded] == (
        [None] if example == "fetch_loop" else ["left out"]
    )


@pytest.mark.parametrize("message", [VALIDATION_500, TEMPLATE_500])
def test_a_500_the_request_caused_is_its_error_not_retried(message: str, tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = _internal_error(message)
        run = _run(tmp_path, server, COMMANDS["openai_loop"])
        sent = len(server.requests)
    (traj,) = read_trajectories(run)
    assert sent == 1 and traj.usage.model_retries == 0
    assert (traj.status.value, traj.end_reason) == ("error", "model_error:bad_request")
    assert not traj.infra_error  # the agent's outcome: counted, and not run again by --resume
    assert [e.kind for e in traj.errors][0] == "agent"
    assert traj.exchanges[0]["kind"] == "bad_request"


def test_a_server_fault_is_still_retried_and_an_infrastructure_error(tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as server:
        server.push(*[_internal_error("CUDA out of memory") for _ in range(5)])
        server.default = error_reply(503, retry_after=0.01)
        models = tmp_path / "models.yaml"
        alias = {
            "kind": "openai",
            "model": "scripted-model",
            "base_url": server.base_url,
            "retry": {"max_retries": 2, "initial": 0.01, "jitter": 0},
        }
        models.write_text(yaml.safe_dump({"models": {"strict": alias}}))
        config = RunConfig(
            suite=str(MINI),
            agent="external",
            agent_options={"command": COMMANDS["openai_loop"], "grace": 0.5},
            model="strict",
            tasks=[KETTLE],
            out=str(tmp_path / "runs"),
        )
        run = run_suite(config, env={"SANDBOX_MODELS_FILE": str(models)}, show_progress=False)
        sent = len(server.requests)
    (traj,) = read_trajectories(run.path)
    assert sent == 3 and traj.usage.model_retries == 2
    assert (traj.status.value, traj.end_reason) == ("error", "model_error:server")
    assert traj.infra_error


def test_a_history_longer_than_the_context_ends_the_episode_as_context_overflow(
    tmp_path: Path,
) -> None:
    refused = Reply(
        status=400,
        body={
            "error": {
                "message": CONTEXT_400,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    )
    with ScriptedOpenAIServer() as server:
        server.default = refused
        run = _run(tmp_path, server, COMMANDS["openai_loop"])
    (traj,) = read_trajectories(run)
    assert (traj.status.value, traj.end_reason) == ("context_overflow", "context_overflow")
    assert not traj.infra_error and [e.kind for e in traj.errors][0] == "agent"
