"""``sandbox run --mcp-server``: agents on an MCP server's tools, recorded into a suite, replayed.

What it protects: an agent driven through ``sandbox serve --mcp`` gets the pass rate (and the
per-episode labels) it gets in process on the default suite; ``--record-into`` then ``sandbox
replay`` reproduces every episode offline with the server stopped, and later runs work on the
recorded suite; a server that is not a mock tool server (plain text, structured content,
ToolBench-style and other names, state across calls, tool errors) is run, recorded and
replayed the same way from a task file of queries; a server lost mid-run ends the episodes
that needed it with infrastructure errors, which ``--resume`` runs again.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from served_suite import DEFAULT_SUITE, start_server, stop_server

from mock_tools import load_suite, validate_suite
from sandbox.cli import main
from sandbox.run import run_suite
from sandbox.store import RunConfig, read_trajectories
from tests.agents.models.openai_server import (
    ScriptedOpenAIServer,
    finish_reply,
    free_port,
    tool_call_reply,
)

FIXTURE_SERVER = Path(__file__).with_name("mcp_fixture_server.py")


def _labels(result: Any) -> dict[tuple[str, int], str]:
    return {(lab.task_id, lab.trial): lab.label for lab in result.labels}


def test_agent_through_sandbox_serve_mcp_matches_in_process_and_replays_offline(
    tmp_path: Path, capsys
) -> None:
    base = dict(suite=str(DEFAULT_SUITE), agent="dfsdt", model="noisy-reference", seed=0)
    local = run_suite(RunConfig(**base, out=str(tmp_path / "runs")), show_progress=False)
    port = free_port()
    server = start_server(DEFAULT_SUITE, port)
    recorded = tmp_path / "recorded"
    try:
        config = RunConfig(
            **base,
            out=str(tmp_path / "runs"),
            run_id="over-mcp",
            mcp_server=f"http://127.0.0.1:{port}/mcp",
            record_into=str(recorded),
        )
        live = run_suite(config, show_progress=False)
    finally:
        stop_server(server)
    assert live.summary.by_status == local.summary.by_status
    assert live.pass_rate == local.pass_rate
    assert _labels(live) == _labels(local)
    trajs = read_trajectories(live.path)
    provenances = {
        c.observation.provenance for t in trajs for n in t.nodes for c in n.calls if c.observation
    }
    assert "upstream" in provenances and "hit" not in provenances  # every call went to the server

    # The recorded suite is a valid suite whose tools, tasks and answers came from the server.
    report = validate_suite(recorded)
    suite = load_suite(recorded)
    assert set(suite.apis) == set(load_suite(DEFAULT_SUITE).apis)
    assert len(suite.tasks) == 58 and report.recordings > 0
    assert all(r.provenance.source == "upstream" and r.occurrence for r in suite.recordings)

    # Offline, with the server gone: the agent-level and the call-level replay.
    capsys.readouterr()
    assert main(["replay", live.path]) == 0
    assert "REPRODUCED: 58/58 episodes identical" in capsys.readouterr().out
    assert main(["replay", live.path, "--calls"]) == 0
    assert "REPRODUCED" in capsys.readouterr().out


def test_reference_run_recorded_then_rerun_offline_on_the_recorded_suite(tmp_path: Path) -> None:
    port = free_port()
    server = start_server(DEFAULT_SUITE, port)
    recorded = tmp_path / "recorded"
    try:
        live = run_suite(
            RunConfig(
                suite=str(DEFAULT_SUITE),
                model="reference",
                out=str(tmp_path / "runs"),
                tasks=["g2_*"],
                mcp_server=f"http://127.0.0.1:{port}/mcp",
                record_into=str(recorded),
            ),
            show_progress=False,
        )
    finally:
        stop_server(server)
    offline = run_suite(
        RunConfig(suite=str(recorded), model="reference", out=str(tmp_path / "runs")),
        show_progress=False,
    )
    assert live.pass_rate == 1.0 and offline.pass_rate == 1.0
    assert offline.episodes == live.episodes == 14  # the run's tasks only
    # Every reference call of those tasks has its recording, and offline they are all hits.
    assert validate_suite(recorded).errors == []
    trajs = read_trajectories(offline.path)
    provenances = {c.observation.provenance for t in trajs for n in t.nodes for c in n.calls}
    assert provenances == {"hit"}


# -- a server that is not a mock tool server ------------------------------------------------------


def _policy(body: dict[str, Any]) -> Any:
    """A scripted model: one call chosen from the query (two for TICKET), then Finish with the
    last observation. Stateless, so any number of episodes can share it."""
    messages = body["messages"]
    query = next(m["content"] for m in messages if m["role"] == "user")
    observations = [m["content"] for m in messages if m["role"] == "tool"]
    verb, *words = query.split()
    wanted = 2 if verb == "TICKET" else 1
    if len(observations) < wanted:
        name, args = {
            "WEATHER": lambda: ("get_weather", {"city": words[-1]}),
            "ADD": lambda: ("add", {"a": float(words[0]), "b": float(words[1])}),
            "STOCK": lambda: ("stock_for_warehouse", {"item": words[-1]}),
            "TICKET": lambda: ("next_ticket", {}),
            "BROKEN": lambda: ("broken", {}),
        }[verb]()
        return tool_call_reply(name, args, call_id=f"call_{len(observations)}")
    return finish_reply(observations[-1])


def _task_file(path: Path, queries: list[str]) -> Path:
    path.write_text(yaml.safe_dump(queries))
    return path


def _fixture_server(*extra: str) -> str:
    return f"stdio:{sys.executable} {FIXTURE_SERVER} {' '.join(extra)}".strip()


def test_any_mcp_server_from_a_task_file_is_recorded_and_replays(tmp_path: Path, capsys) -> None:
    queries = ["WEATHER in Oslo", "ADD 2 3", "STOCK bolts", "TICKET twice", "BROKEN please"]
    tasks = _task_file(tmp_path / "queries.yaml", queries)
    recorded = tmp_path / "recorded"
    with ScriptedOpenAIServer(models=["scripted"]) as model_server:
        model_server.default = _policy
        code = main(
            [
                "run",
                "--suite",
                str(tasks),
                "--mcp-server",
                _fixture_server(),
                "--record-into",
                str(recorded),
                "--model",
                f"openai:scripted@{model_server.base_url}",
                "--out",
                str(tmp_path / "runs"),
                "--run-id",
                "fixture",
                "--json",
                "--no-plots",
            ]
        )
        offered = {t["function"]["name"] for t in model_server.requests[0]["tools"]}
    out = capsys.readouterr().out
    assert code == 0, out
    assert json.loads(out.splitlines()[-1])["by_status"] == {"answered": 5}
    assert offered == {
        "get_weather",
        "add",
        "stock_for_warehouse",
        "next_ticket",
        "broken",
        "Finish",
    }

    run = tmp_path / "runs" / "fixture"
    answers = {t.scenario_id: t.final_answer for t in read_trajectories(run)}
    assert answers["q1"] == json.dumps({"error": "", "response": "Sunny, 21 C in Oslo"})
    assert json.loads(answers["q2"])["response"] == {"sum": 5.0}
    assert json.loads(answers["q4"])["response"] == {"ticket": 2}
    assert json.loads(answers["q5"])["error"] == "the tool broke"

    suite = load_suite(recorded)
    assert suite.apis[("warehouse", "stock")].function is None  # ToolBench's form, split back
    assert suite.apis[("fixture_tools", "get_weather")].function == "get_weather"
    tickets = sorted(
        (r.occurrence, r.response.body) for r in suite.recordings if r.api == "next_ticket"
    )
    assert tickets == [(1, {"ticket": 1}), (2, {"ticket": 2})]
    assert [t.id for t in suite.tasks] == ["q1", "q2", "q3", "q4", "q5"]

    assert main(["replay", str(run)]) == 0  # the stdio server is gone: offline
    assert "REPRODUCED: 5/5 episodes identical" in capsys.readouterr().out


def test_a_server_lost_mid_run_is_an_infra_error_and_resume_reruns(tmp_path: Path, capsys) -> None:
    tasks = _task_file(
        tmp_path / "queries.yaml", ["WEATHER in Oslo", "WEATHER in Lima", "WEATHER in Pune"]
    )
    with ScriptedOpenAIServer(models=["scripted"]) as model_server:
        model_server.default = _policy
        args = [
            "run",
            "--suite",
            str(tasks),
            "--mcp-server",
            _fixture_server("--die-after", "2"),  # answers two calls, then exits
            "--model",
            f"openai:scripted@{model_server.base_url}",
            "--concurrency",
            "1",
            "--out",
            str(tmp_path / "runs"),
            "--run-id",
            "lost",
            "--json",
            "--no-plots",
        ]
        assert main(args) == 0
        first = {t.scenario_id: t for t in read_trajectories(tmp_path / "runs" / "lost")}
        lost = first["q3"]
        assert lost.status.value == "error" and lost.end_reason == "tool_error:connection"
        assert [e.kind for e in lost.errors] == ["infra"]
        assert first["q1"].status.value == first["q2"].status.value == "answered"
        capsys.readouterr()
        # A fresh server process answers again: resume runs only the lost episode.
        assert (
            main(["run", "--resume", str(tmp_path / "runs" / "lost"), "--json", "--no-plots"]) == 0
        )
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["by_status"] == {"answered": 3}
    lines = (tmp_path / "runs" / "lost" / "trajectories.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["scenario_id"] for line in lines) == ["q1", "q2", "q3"]


def test_bad_mcp_servers_are_one_line_errors(tmp_path: Path, capsys) -> None:
    out = ["--out", str(tmp_path / "runs"), "--no-plots"]
    assert main(["run", "--mcp-server", "ftp://nowhere", *out]) == 2
    assert "expected an http(s):// URL" in capsys.readouterr().err
    assert main(["run", "--record-into", str(tmp_path / "x"), *out]) == 2
    assert "add --mcp-server" in capsys.readouterr().err
    code = main(["run", "--mcp-server", f"http://127.0.0.1:{free_port()}/mcp", *out])
    err = capsys.readouterr().err
    assert code == 2 and re.search(r"cannot use the MCP server .*: \w+", err)
    assert "Traceback" not in err
    code = main(["run", "--mcp-server", "stdio:definitely-not-a-command-xyz", *out])
    assert code == 2 and "No such file" in capsys.readouterr().err
