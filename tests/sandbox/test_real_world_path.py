"""The real-world path on StableToolBench's own queries: a suite with no recordings, an agent on
an OpenAI-compatible endpoint, and a simulator endpoint that plays every missing API.

The first run simulates every observation and keeps them in the suite's overlay; a second run
makes no simulator call and sees identical observations; a replay of the first run needs neither
endpoint. Offline, the built-in ``explorer`` model with the ``schema-sim`` simulator runs the
same import end to end. The data is read from ../shared/data (the tests skip without it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.models.explorer import fill_arguments
from mock_tools.overlay import OVERLAY_FILE, OverlayStore
from sandbox.cli import main
from sandbox.replay import replay_run
from sandbox.store import RunStore, read_trajectories
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "stabletoolbench"
QUERIES = DATA / "solvable_queries" / "test_instruction" / "G1_instruction.json"
SLICE = 3


@pytest.fixture(scope="module")
def stb_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not QUERIES.is_file():
        pytest.skip(f"StableToolBench queries not found at {QUERIES.resolve()} (present in CI)")
    root = tmp_path_factory.mktemp("stb")
    sliced = root / "G1_instruction.json"
    sliced.write_text(json.dumps(json.loads(QUERIES.read_text())[:SLICE]))
    suite = root / "suite"
    assert main(["import", "toolbench-queries", str(sliced), "--out", str(suite)]) == 0
    return suite


def _agent(body: dict[str, Any]) -> Any:
    """Call the first offered tool with arguments filled from its schema, then answer."""
    if any(m.get("role") == "tool" for m in body["messages"]):
        args = {"return_type": "give_answer", "final_answer": "Here is what I found."}
        return tool_call_reply("Finish", args)
    fn = next(t["function"] for t in body["tools"] if t["function"]["name"] != "Finish")
    query = body["messages"][1]["content"]
    return tool_call_reply(fn["name"], fill_arguments(fn.get("parameters") or {}, query, {}))


def _simulator(body: dict[str, Any]) -> Any:
    """Play any API: echo the call's arguments (as the simulator prompt states them)."""
    arguments = body["messages"][-1]["content"].rsplit("New call, arguments:\n", 1)[-1]
    return text_reply(json.dumps({"error": "", "response": {"echo": json.loads(arguments)}}))


def _observations(run: str) -> dict[str, list[tuple[str, str]]]:
    return {
        t.scenario_id: [
            (c.observation.provenance, c.observation.content)
            for n in t.nodes
            for c in n.calls
            if c.observation is not None
        ]
        for t in read_trajectories(run)
    }


def _run(suite: Path, out: Path, agent_url: str, sim_url: str, *extra: str) -> list[str]:
    return [
        "run",
        "--suite",
        str(suite),
        "--agent",
        "react",
        "--model",
        f"openai:agent-model@{agent_url}",
        "--miss-policy",
        "simulate",
        "--simulator",
        f"openai:simulator-model@{sim_url}",
        "--out",
        str(out),
        "--no-plots",
        "--json",
        *extra,
    ]


def test_simulated_misses_are_kept_reused_and_replayable(stb_suite: Path, tmp_path, capsys):
    with ScriptedOpenAIServer() as agent, ScriptedOpenAIServer() as simulator:
        agent.default = _agent
        simulator.default = _simulator
        assert main(_run(stb_suite, tmp_path / "first", agent.base_url, simulator.base_url)) == 0
        first = json.loads(capsys.readouterr().out)["run"]
        simulated = len(simulator.requests)
        assert simulated == SLICE  # one call per episode, each a miss
        sent = simulator.requests[0]
        assert sent["temperature"] == 0 and sent["response_format"] == {"type": "json_object"}
        assert "Documentation:" in sent["messages"][1]["content"]

        assert main(_run(stb_suite, tmp_path / "second", agent.base_url, simulator.base_url)) == 0
        second = json.loads(capsys.readouterr().out)["run"]
        assert len(simulator.requests) == simulated  # every miss served from the overlay

    observed = _observations(first)
    assert len(observed) == SLICE
    assert all(p == "simulated" for calls in observed.values() for p, _ in calls)
    assert _observations(second) == observed
    traj = read_trajectories(first)[0]
    origin = traj.nodes[0].calls[0].observation.origin
    assert origin["model"] == f"openai:simulator-model@{simulator.base_url}"
    assert origin["source"] == "simulated" and origin["recorded_at"]

    manifest = RunStore.open(first).manifest
    assert manifest.tools["overlay"]["entries_at_start"] == 0
    assert manifest.tools["overlay"]["entries_at_end"] == SLICE
    assert manifest.tools["simulator"]["calls"] == SLICE
    assert len(OverlayStore(stb_suite / OVERLAY_FILE)) == SLICE
    # both endpoints are gone: the replay needs neither
    report = replay_run(first)
    assert report.ok and report.episodes == SLICE


def test_a_simulator_that_is_down_is_infrastructure_not_the_agent(
    stb_suite: Path, tmp_path, capsys
):
    with ScriptedOpenAIServer() as agent:
        agent.default = _agent
        argv = _run(stb_suite, tmp_path / "down", agent.base_url, "http://127.0.0.1:9/v1")
        argv += ["--overlay", str(tmp_path / "empty-overlay.sqlite")]
        assert main(argv) == 0
        run = json.loads(capsys.readouterr().out)["run"]
    trajectories = read_trajectories(run)
    assert all(t.status.value == "error" and t.infra_error for t in trajectories)
    assert all(t.end_reason.startswith("tool_infra") for t in trajectories)
    scores = json.loads((Path(run) / "scores.json").read_text())
    assert scores["infra"]["errors"] == SLICE and len(scores["infra"]["episodes"]) == SLICE
    assert len(OverlayStore(tmp_path / "empty-overlay.sqlite")) == 0  # nothing failed is kept


def test_offline_the_explorer_runs_an_import_with_schema_sim(stb_suite: Path, tmp_path, capsys):
    argv = ["run", "--suite", str(stb_suite), "--model", "explorer", "--agent", "react"]
    argv += ["--miss-policy", "simulate", "--simulator", "schema-sim"]
    argv += ["--overlay", str(tmp_path / "overlay.sqlite"), "--out", str(tmp_path), "--json"]
    assert main([*argv, "--no-plots"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == SLICE and summary["by_status"] == {"answered": SLICE}
    observed = _observations(summary["run"])
    assert all(p == "simulated" for calls in observed.values() for p, _ in calls)
    assert all(len(calls) >= 2 for calls in observed.values())  # every offered tool, once
