"""The example agents of ``examples/agents/`` run as ``--agent external``, as a user runs them.

What it protects, for each example (a bare OpenAI-client loop over ``/call``, the same over MCP
with the MCP SDK client, and a Node script with nothing but ``fetch``): through the real command
line, on the offline ``reference`` model behind the proxy, every task of the mini suite is
solved (the reference model follows each task's path from the agent's own requests); the
viewer shows its episodes; ``sandbox replay`` re-runs the agent offline with 0 divergences and
the replayed record (every node, observation and model exchange) is the recorded one byte for
byte; ``sandbox compare`` sets it beside ReAct. The first example also exports to ToolBench's
format and gets step-level scores, and ``sandbox compare --agents`` runs it beside ReAct and
DFSDT in one table (and the leaderboard ranks the three). The Node example is skipped, saying
why, where ``node`` is not installed.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sandbox.cli import main
from sandbox.view.app import create_app

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
EXAMPLES = ROOT / "examples" / "agents"
PYTHON_LOOP = f"{sys.executable} {EXAMPLES / 'openai_loop.py'}"
COMMANDS = {
    "openai_loop": PYTHON_LOOP,
    "mcp_loop": f"{sys.executable} {EXAMPLES / 'mcp_loop.py'}",
    "fetch_loop": f"node {EXAMPLES / 'fetch_loop.mjs'}",
}
RERUN = {"started_at", "ended_at", "run_id", "tree", "model"}
"""What a replay changes in a record: when it ran, its run, the process's timings, and the
model's name (the replay model stands in for it); and below, each tool call's latency."""


def _json_line(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return dict(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))


def _records(run: Path) -> dict[tuple[str, int], dict[str, Any]]:
    lines = (run / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    out = {}
    for line in lines:
        record = json.loads(line)
        record["usage"].pop("wall_seconds")
        for node in record["nodes"]:
            for call in node["calls"]:
                call["observation"].pop("latency_ms")
        out[(record["scenario_id"], record["trial"])] = {
            k: v for k, v in record.items() if k not in RERUN
        }
    return out


@pytest.fixture(scope="module")
def react_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("react")
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--model", "reference"]
    assert main([*argv, "--out", str(out), "--run-id", "react", "--no-plots", "--json"]) == 0
    return str(out / "react")


@pytest.mark.parametrize("example", sorted(COMMANDS))
def test_an_example_agent_runs_scores_shows_replays_exactly_and_compares_with_react(
    example: str, react_run: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if example == "fetch_loop" and shutil.which("node") is None:
        pytest.skip("node is not installed: the JavaScript example needs Node 18+ (fetch)")
    capsys.readouterr()
    runs = tmp_path / "runs"
    argv = [
        "run",
        "--suite",
        str(MINI),
        "--agent",
        "external",
        "-O",
        f"command={COMMANDS[example]}",
    ]
    argv += ["--model", "reference", "--out", str(runs), "--run-id", example, "--no-plots"]
    assert main([*argv, "--json"]) == 0
    line = _json_line(capsys)
    assert line["pass_rate"] == 1.0 and line["by_status"] == {"answered": 4}
    run = runs / example
    recorded = _records(run)
    assert all(r["exchanges"] and r["agent"]["name"] == "external" for r in recorded.values())

    page = TestClient(create_app(runs)).get(
        f"/api/runs/{example}/episodes/mini_g2_order_and_ship/0"
    )
    assert page.status_code == 200 and page.json()["trajectory"]["status"] == "answered"

    replayed = tmp_path / "replayed"
    assert main(["replay", str(run), "--out", str(replayed), "--json"]) == 0
    report = _json_line(capsys)
    assert report["divergent"] == 0 and report["episodes"] == 4
    (again,) = replayed.iterdir()
    assert _records(again) == recorded  # byte for byte, but when and where it ran

    assert main(["compare", "--runs", react_run, str(run), "--json"]) == 0
    compared = _json_line(capsys)
    assert compared["pass_rate"] == {"react": 1.0, "external": 1.0}


def test_compare_runs_an_external_agent_beside_react_and_dfsdt_in_one_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = f"react,dfsdt,external:command={PYTHON_LOOP}"
    argv = ["compare", "--suite", str(MINI), "--agents", agents, "--model", "noisy-reference:0.3"]
    argv += ["--tasks", "mini_g1_track,mini_g2_order_and_ship", "--out", str(tmp_path)]
    assert main([*argv, "--no-plots", "--json"]) == 0
    captured = capsys.readouterr()
    line = json.loads(captured.out.strip().splitlines()[-1])
    assert list(line["pass_rate"]) == ["react", "dfsdt", "external"]
    table = captured.err.split("win rate")[0]
    assert all(name in table for name in ("react", "dfsdt", "external"))
    folder = Path(line["comparison"])
    manifest = json.loads((folder / "external" / "manifest.json").read_text())
    assert manifest["config"]["agent"]["options"] == {"command": PYTHON_LOOP}
    capsys.readouterr()
    assert main(["leaderboard", str(folder), "--json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert {row["agent"] for row in board} == {"react", "dfsdt", f"external(command={PYTHON_LOOP})"}
    # the same tool behaviour: every agent's calls were answered by the same suite and faults
    assert (
        len(
            {
                json.loads((folder / a / "manifest.json").read_text())["suite"]["fingerprint"]
                for a in ("react", "dfsdt", "external")
            }
        )
        == 1
    )


def test_an_external_run_exports_to_toolbench_and_gets_step_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    argv = ["run", "--suite", str(MINI), "--agent", "external", "-O", f"command={PYTHON_LOOP}"]
    argv += ["--model", "reference", "--tasks", "mini_g2_order_and_ship"]
    assert main([*argv, "--out", str(runs), "--run-id", "ext", "--no-plots"]) == 0
    assert main(["export", "toolbench", str(runs / "ext"), str(tmp_path / "export")]) == 0
    (exported,) = (tmp_path / "export").glob("*.json")
    (entry,) = json.loads(exported.read_text()).values()
    calls = [n for n in _chain(entry["answer"]["answer_details"]) if n["role"] == "tool"]
    assert [n["message"]["name"] for n in calls] == [
        "search_products_for_shop",
        "place_order_for_shop",
        "place_order_for_shop",
        "quote_shipping_for_shipping",
        "Finish",
    ]
    assert main(["eval", str(runs / "ext"), "--step-protocol", "default", "--no-plots"]) == 0
    scores = json.loads((runs / "ext" / "scores.json").read_text())
    assert scores["step_scores"]["intervals"]["plan_f1"]["value"] == 1.0


def _chain(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    while nodes:
        out.append(nodes[0])
        nodes = nodes[0].get("next") or []
    return out
