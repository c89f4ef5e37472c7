"""What runs cost: a priced endpoint's token usage gives an exact ``cost_usd``, per call, episode
and run; ``--max-cost`` stops an episode at the right call; ``--max-run-cost`` stops starting
episodes and leaves the run resumable; a hosted model's price comes from genai-prices, a local
endpoint costs nothing unless priced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.cli import main
from sandbox.models import resolve_model
from sandbox.store import RunStore, read_trajectories
from tests.agents.models.openai_server import ScriptedOpenAIServer, tool_call_reply

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"
PROMPT, COMPLETION = 1000, 100
PRICE_IN, PRICE_OUT = 2.0, 8.0  # USD per 1M tokens
CALL_COST = (PROMPT * PRICE_IN + COMPLETION * PRICE_OUT) / 1_000_000  # 0.0028


def _track(body: dict) -> object:
    """Track the parcel once, then answer; every call reports the same token usage."""
    called = any(m.get("role") == "tool" for m in body["messages"])
    if called:
        args = {"return_type": "give_answer", "final_answer": "Delivered on 2030-01-03."}
        return tool_call_reply("Finish", args, prompt_tokens=PROMPT, completion_tokens=COMPLETION)
    return tool_call_reply(
        "track_parcel_for_shipping",
        {"parcel_id": "PX-100"},
        prompt_tokens=PROMPT,
        completion_tokens=COMPLETION,
    )


def _loop(body: dict) -> object:
    """Track the parcel forever (a model that never answers)."""
    return tool_call_reply(
        "track_parcel_for_shipping",
        {"parcel_id": "PX-100"},
        call_id=f"c{len(body['messages'])}",
        prompt_tokens=PROMPT,
        completion_tokens=COMPLETION,
    )


@pytest.fixture
def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with ScriptedOpenAIServer() as server:
        models = tmp_path / "models.yaml"
        models.write_text(
            "models:\n  priced:\n    kind: openai\n    model: scripted-model\n"
            f"    base_url: {server.base_url}\n"
            f"    price: {{input: {PRICE_IN}, output: {PRICE_OUT}}}\n"
        )
        monkeypatch.setenv("SANDBOX_MODELS_FILE", str(models))
        yield server


def _run(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--suite",
        str(MINI),
        "--model",
        "priced",
        "--agent",
        "react",
        "--out",
        str(tmp_path / "runs"),
        "--no-plots",
        "--json",
        *extra,
    ]


def test_cost_per_call_episode_and_run(priced, tmp_path: Path, capsys) -> None:
    priced.default = _track
    assert main(_run(tmp_path, "--tasks", "mini_g1_track")) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model_calls"] == 2 and summary["tokens"] == 2 * (PROMPT + COMPLETION)
    assert summary["cost_usd"] == pytest.approx(2 * CALL_COST)
    (traj,) = read_trajectories(summary["run"])
    assert [n.usage.cost for n in traj.nodes] == pytest.approx([CALL_COST, CALL_COST])
    assert traj.usage.cost == pytest.approx(2 * CALL_COST)
    scores = json.loads((Path(summary["run"]) / "scores.json").read_text())
    assert scores["usage"]["cost"] == pytest.approx(2 * CALL_COST)
    assert scores["price_source"] == "models.yaml"
    assert "(price: models.yaml)" in (Path(summary["run"]) / "report.md").read_text()


def test_max_cost_stops_the_episode_at_the_call_that_reaches_it(priced, tmp_path, capsys) -> None:
    priced.default = _loop
    budget = 2.5 * CALL_COST  # the third call would start with 2 calls' cost spent: allowed
    assert main(_run(tmp_path, "--tasks", "mini_g1_track", "--max-cost", str(budget))) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    (traj,) = read_trajectories(run)
    assert traj.status.value == "budget_exhausted" and traj.end_reason == "budget:max_cost"
    assert traj.usage.model_calls == 3 and traj.usage.cost == pytest.approx(3 * CALL_COST)
    assert len(priced.requests) == 3


def test_max_run_cost_stops_starting_episodes_and_the_run_resumes(priced, tmp_path, capsys):
    priced.default = _track
    tasks = ["--tasks", "mini_g1_track", "--trials", "3", "--concurrency", "1"]
    assert main(_run(tmp_path, *tasks, "--max-run-cost", str(3 * CALL_COST))) == 0
    run = json.loads(capsys.readouterr().out)["run"]
    store = RunStore.open(run)
    assert store.manifest.status == "stopped" and "max_run_cost" in (store.manifest.error or "")
    assert len(read_trajectories(run)) == 2  # 2 x 2 calls: the third episode never started
    assert len(priced.requests) == 4
    argv = ["run", "--resume", run, "--max-run-cost", "1", "--json", "--no-plots"]
    assert main(argv) == 0
    capsys.readouterr()
    assert RunStore.open(run).manifest.status == "completed"
    assert len(read_trajectories(run)) == 3 and len(priced.requests) == 6


def test_hosted_models_are_priced_from_genai_prices_and_local_ones_are_free() -> None:
    hosted = resolve_model("openai:gpt-4o-mini@https://api.openai.com/v1")
    assert hosted.price is not None and hosted.price.input > 0 and hosted.price.output > 0
    assert hosted.price_source.startswith("genai-prices")
    local = resolve_model("openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1")
    assert local.price is None and local.price_source.startswith("local endpoint")
    assert resolve_model("reference").price_source == "offline model: cost 0"
