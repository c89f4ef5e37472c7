"""Endpoint errors classified by what they mean (issue 23), end to end through ``sandbox run``
against an OpenAI-compatible server the test starts on 127.0.0.1:

- a configuration error (401, 403, 404 model not found, an unknown model named in a 400) stops
  the run at the first one: exactly one model call, exit 2 with the endpoint's message, the run
  resumable;
- a context overflow ends that episode as ``context_overflow``, counted unsolved, and DFSDT
  prunes that node under ``--on-model-error prune``;
- a malformed body (not a list of choices, nested 100,000 levels, not UTF-8, impossible token
  counts) is retried, then an infrastructure error, never ``internal_error``; tool-call
  arguments sent as a JSON object are accepted as that object.

The error bodies are the servers' own shapes and messages (OpenAI's API reference; vLLM's
``vllm/entrypoints`` and ``vllm/v1/engine/input_processor.py``; SGLang's tokenizer manager;
llama.cpp's ``tools/server``; Ollama's OpenAI-compatible layer), looked up, not invented.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.cli import main
from sandbox.store import RunStore, read_trajectories
from tests.agents.models.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    default_reply,
    finish_reply,
    raw_reply,
    scripted_alias,
    tool_call_reply,
)
from tests.hostile.conftest import MINI

REFUSALS = {
    "401-openai": Reply(
        status=401,
        body={
            "error": {
                "message": "Incorrect API key provided: sk-test. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    ),
    "403": Reply(status=403, body={"error": {"message": "Forbidden: no access to this model"}}),
    "404-vllm": Reply(
        status=404,
        body={
            "object": "error",
            "message": "The model `qwen-8b` does not exist.",
            "type": "NotFoundError",
            "param": None,
            "code": 404,
        },
    ),
    "404-ollama": Reply(
        status=404,
        body={
            "error": {
                "message": 'model "llama9" not found, try pulling it first',
                "type": "api_error",
                "param": None,
                "code": None,
            }
        },
    ),
    "400-unknown-model": Reply(
        status=400,
        body={
            "error": {
                "message": "Invalid model name passed in model=qwen-8b. Call `/v1/models` to "
                "view available models for your key.",
                "type": "None",
                "param": "None",
                "code": "400",
            }
        },
    ),
}

OVERFLOWS = {
    "openai": {
        "error": {
            "message": "This model's maximum context length is 4096 tokens. However, you "
            "requested 8009 tokens (8009 in the messages, None in the completion). Please reduce "
            "the length of the messages or completion.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
    "vllm": {
        "object": "error",
        "message": "This model's maximum context length is 32768 tokens. However, you requested "
        "33792 tokens (32768 in the messages, 1024 in the completion). Please reduce the length "
        "of the messages or completion.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
    "vllm-v1": {
        "error": {
            "message": "The decoder prompt (length 40000) is longer than the maximum model length "
            "of 32768. Make sure that `max_model_len` is no smaller than the number of text "
            "tokens.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    },
    "sglang": {
        "object": "error",
        "message": "The input (40000 tokens) is longer than the model's context length (32768 "
        "tokens).",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    },
    "llama.cpp": {
        "error": {
            "code": 400,
            "message": "request (4476 tokens) exceeds the available context size (4096 tokens)",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 4476,
            "n_ctx": 4096,
        }
    },
    "ollama": {
        "error": {
            "message": "prompt too long; exceeded max context length by 412 tokens",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    },
}


def _completion(message: dict, usage: dict | None = None) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _nested(depth: int) -> str:
    return '{"choices": [{"message": {"role": "assistant", "content": "x"}}], "x": ' + (
        "[" * depth + "]" * depth + "}"
    )


MALFORMED = {
    "choices-not-a-list": Reply(body={"choices": "not a list"}),
    "message-not-an-object": Reply(body={"choices": [{"index": 0, "message": "hello"}]}),
    "content-a-number": Reply(body=_completion({"role": "assistant", "content": 42})),
    "nested-100000-levels": raw_reply(_nested(100_000), content_type="application/json"),
    "nested-200-levels": raw_reply(_nested(200), content_type="application/json"),
    "not-utf8": Reply(
        headers={"content-type": "application/json"},
        raw=b'{"choices": [{"message": {"role": "assistant", "content": "caf\xe9"}}]}',  # type: ignore[arg-type]
    ),
    "negative-usage": Reply(
        body=_completion(
            {"role": "assistant", "content": "x"},
            {"prompt_tokens": -200, "completion_tokens": -10, "total_tokens": -210},
        )
    ),
    "fractional-usage": Reply(
        body=_completion(
            {"role": "assistant", "content": "x"},
            {"prompt_tokens": 10.5, "completion_tokens": 5, "total_tokens": 15.5},
        )
    ),
    "absurd-usage": Reply(
        body=_completion(
            {"role": "assistant", "content": "x"},
            {"prompt_tokens": 10**9, "completion_tokens": 5, "total_tokens": 10**9 + 5},
        )
    ),
}


@pytest.fixture(autouse=True)
def _impatient(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The ``scripted`` alias: an endpoint the test starts, retried twice 10 ms apart."""
    scripted_alias(monkeypatch, tmp_path)


def _run(server: ScriptedOpenAIServer, out: Path, monkeypatch, *extra: str) -> int:
    monkeypatch.setenv("SANDBOX_SCRIPTED_BASE_URL", server.base_url)
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--no-plots", "--out", str(out)]
    return main([*argv, "--model", "scripted", "--run-id", "r", *extra])


@pytest.mark.parametrize("refusal", list(REFUSALS), ids=list(REFUSALS))
def test_a_configuration_error_makes_exactly_one_model_call_and_exits_2(
    refusal: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    """Before: every episode still ran, each error left out of the pass rate as infra, and the
    command exited 0 with ``"pass_rate": 0.0``; ``--resume`` re-ran them forever."""
    with ScriptedOpenAIServer() as server:
        server.default = REFUSALS[refusal]
        code = _run(server, tmp_path, monkeypatch, "--concurrency", "4", "--json")
        calls = len(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and calls == 1
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    message = REFUSALS[refusal].body.get("error", REFUSALS[refusal].body)["message"]
    assert message[:40] in line and "--resume" in line
    assert not (tmp_path / "r").exists()  # nothing was stored: no run folder is left


def test_a_configuration_error_mid_run_stops_it_resumably(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """A key revoked after the first episode: the run stops at the first refusal (exit 2), keeps
    what it stored, starts nothing else; resumed with the endpoint fixed, it finishes without
    storing any episode twice."""

    def revoked_after_track(body: dict) -> Reply:
        asked = json.dumps(body["messages"])
        return REFUSALS["401-openai"] if "PX-100" in asked else default_reply(body)

    with ScriptedOpenAIServer() as server:
        server.default = revoked_after_track
        code = _run(server, tmp_path, monkeypatch, "--concurrency", "1", "--tasks", "mini_g1_*")
        assert code == 2
        assert "Incorrect API key" in capsys.readouterr().err
        store = RunStore.open(tmp_path / "r")
        assert store.manifest.status == "failed" and "Incorrect API key" in store.manifest.error
        (stored,) = read_trajectories(tmp_path / "r")
        assert stored.scenario_id == "mini_g1_kettle_price" and stored.status.value == "answered"
        server.default = default_reply
        assert main(["run", "--resume", str(tmp_path / "r"), "--no-plots"]) == 0
    episodes = read_trajectories(tmp_path / "r")
    assert sorted(t.scenario_id for t in episodes) == ["mini_g1_kettle_price", "mini_g1_track"]
    assert RunStore.open(tmp_path / "r").manifest.status == "completed"


@pytest.mark.parametrize("server_kind", list(OVERFLOWS), ids=list(OVERFLOWS))
def test_a_context_overflow_ends_one_episode_as_context_overflow(
    server_kind: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    """Before: a 400 ``context_length_exceeded`` was an infrastructure error, left out of the
    pass rate and run again by every ``--resume``. Now it ends that episode only, with status
    ``context_overflow``, counted unsolved; it is asked once (no retry)."""

    def kettle_overflows(body: dict) -> Reply:
        if "kettle" in json.dumps(body["messages"]):
            return Reply(status=400, body=OVERFLOWS[server_kind])
        return default_reply(body)

    with ScriptedOpenAIServer() as server:
        server.default = kettle_overflows
        assert _run(server, tmp_path, monkeypatch, "--tasks", "mini_g1_*", "--json") == 0
        kettle_calls = sum("kettle" in json.dumps(b["messages"]) for b in server.requests)
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert kettle_calls == 1
    assert line["by_status"] == {"answered": 1, "context_overflow": 1} and line["n"] == 2
    episodes = {t.scenario_id: t for t in read_trajectories(tmp_path / "r")}
    overflow = episodes["mini_g1_kettle_price"]
    assert overflow.status.value == "context_overflow" and not overflow.infra_error
    assert overflow.end_reason == "context_overflow" and overflow.nodes[-1].kind == "error"
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    label = next(lb for lb in scores["labels"] if lb["task_id"] == "mini_g1_kettle_price")
    assert label["label"] == "unsolved" and label["excluded"] is None
    assert "context overflow" in label["reason"]
    assert scores["infra"]["errors"] == 0 and scores["pass_rate"]["n"] == 2


def test_dfsdt_prunes_a_node_that_overflows_and_goes_on(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """Under ``--on-model-error prune`` an overflowing child is pruned like any failed model
    call: its sibling is generated and the search answers."""
    with ScriptedOpenAIServer() as server:
        server.push(
            tool_call_reply("track_parcel_for_shipping", {"parcel_id": "PX-100"}),
            Reply(status=400, body=OVERFLOWS["openai"]),
            finish_reply("Yes, parcel PX-100 was delivered on 2030-01-03."),
        )
        extra = ["--agent", "dfsdt", "--on-model-error", "prune", "--tasks", "mini_g1_track"]
        assert _run(server, tmp_path, monkeypatch, *extra) == 0
    (episode,) = read_trajectories(tmp_path / "r")
    assert episode.status.value == "answered" and episode.tree["model_errors"] == 1
    assert [n.kind for n in episode.nodes] == ["action", "error", "finish"]


@pytest.mark.parametrize("bad", list(MALFORMED), ids=list(MALFORMED))
def test_a_malformed_body_is_retried_then_an_infra_error_never_internal(
    bad: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    """Before: ``{"choices": "not a list"}``, a body nested 100,000 levels deep, token counts of
    -210 ended as ``internal_error`` with a stored traceback (or were counted: a negative total
    defeats ``--max-tokens`` and the cost). Now each is retried, then an infrastructure error."""
    with ScriptedOpenAIServer() as server:
        server.default = MALFORMED[bad]
        assert _run(server, tmp_path, monkeypatch, "--tasks", "mini_g1_track") == 0
        calls = len(server.requests)
    out = capsys.readouterr()
    assert calls == 3 and "Traceback" not in out.err  # the first call and 2 retries
    (episode,) = read_trajectories(tmp_path / "r")
    assert episode.status.value == "error" and episode.infra_error
    assert [e.kind for e in episode.errors] == ["infra"]
    assert "not a completion" in episode.errors[0].message
    assert episode.usage.prompt_tokens == 0 and episode.usage.model_retries == 2
    assert "infra errors 1" in out.out


def test_tool_call_arguments_sent_as_an_object_are_accepted_as_sent(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """Several servers send ``arguments`` as a JSON object instead of a string. Before: an
    ``internal_error``. Now the call runs with that object and records it as sent."""
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "track_parcel_for_shipping", "arguments": {"parcel_id": "PX-100"}},
    }
    with ScriptedOpenAIServer() as server:
        server.push(
            Reply(body=_completion({"role": "assistant", "content": None, "tool_calls": [call]}))
        )
        assert _run(server, tmp_path, monkeypatch, "--tasks", "mini_g1_track") == 0
    (episode,) = read_trajectories(tmp_path / "r")
    assert episode.status.value == "answered" and not episode.errors
    first = episode.nodes[0].calls[0]
    assert first.arguments == '{"parcel_id": "PX-100"}' and first.args == {"parcel_id": "PX-100"}
    assert first.observation is not None and first.observation.ok


def test_probe_does_not_crash_on_a_bad_body(tmp_path: Path, capsys, monkeypatch) -> None:
    """Before: ``sandbox probe`` died with a traceback on ``{"choices": "not a list"}``."""
    with ScriptedOpenAIServer() as server:
        server.default = MALFORMED["choices-not-a-list"]
        monkeypatch.setenv("SANDBOX_SCRIPTED_BASE_URL", server.base_url)
        code = main(["probe", "--model", "scripted", "--suite", str(MINI), "--json"])
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.err
    assert json.loads(out.out.strip().splitlines()[-1])["model"] == "scripted"


def test_a_run_with_a_context_overflow_replays_exactly(tmp_path: Path, capsys, monkeypatch) -> None:
    """The overflowing call is an ``error`` node of kind ``context_length``: the replay model
    raises it again, and the replayed episode ends as ``context_overflow`` too."""

    def kettle_overflows(body: dict) -> Reply:
        if "kettle" in json.dumps(body["messages"]):
            return Reply(status=400, body=OVERFLOWS["llama.cpp"])
        return default_reply(body)

    with ScriptedOpenAIServer() as server:
        server.default = kettle_overflows
        assert _run(server, tmp_path, monkeypatch, "--tasks", "mini_g1_*") == 0
    assert main(["replay", str(tmp_path / "r")]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_judge_that_refuses_the_model_stops_the_eval_after_one_call(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """The judge's endpoint answers 404 model-not-found to every question (its ``/models``
    works): one call, then ``sandbox eval`` stops with the endpoint's message and exit 2, instead
    of failing every question as a judge error."""
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--model", "reference"]
    assert main([*argv, "--no-plots", "--out", str(tmp_path), "--run-id", "r"]) == 0
    with ScriptedOpenAIServer() as server:
        server.default = REFUSALS["404-vllm"]
        judge = f"openai:qwen-8b@{server.base_url}"
        code = main(["eval", str(tmp_path / "r"), "--protocol", "toolbench", "--judge", judge])
        calls = len(server.requests)
    err = capsys.readouterr().err
    assert code == 2 and calls == 1 and "Traceback" not in err
    assert "The model `qwen-8b` does not exist" in err
