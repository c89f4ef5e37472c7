"""Credentials given to a run are used whole and written nowhere (issue 40 item 2).

A secret may reach a run as a URL's user info or query (``--model openai:m@http://u:pw@...``,
``-O url=http://u:pw@host/?token=T``, ``--ray-address ray://admin:pw@...``), a secret-named option
(``--model-option 'extra_body={"api_key": ...}'``), a command's option or environment assignment
(``--mcp-server 'stdio:env MCP_TOKEN=... server'``, ``-O command='OPENAI_API_KEY=... agent
--api-key=...'``). Each is redacted, by the one rule of ``sandbox.store.redact``, in the
manifest, ``--print-config``, every trajectory and the console, while the process that needs it
gets it whole; a resume is given the redacted parts again and refuses a change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.trajectory import Component, ErrorRecord, Status, Trajectory
from sandbox.cli import main
from sandbox.store.record_redaction import redact_trajectory
from tests.agents.models.openai_server import Reply, ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
KETTLE = "mini_g1_kettle_price"
FIXTURE_SERVER = ROOT / "tests" / "sandbox" / "mcp_fixture_server.py"
SECRET = "SEKRIT"


def _leaks(*texts: str, folder: Path | None = None) -> list[str]:
    """Where the secret marker shows: in any text given, or any file under ``folder``."""
    found = [f"text {i}" for i, text in enumerate(texts) if SECRET in text]
    for path in sorted(folder.rglob("*")) if folder else []:
        if path.is_file() and SECRET.encode() in path.read_bytes():
            found.append(str(path))
    return found


AGENT = """\
import json, os, sys
sys.stdin.readline()
whole = os.environ.get("OPENAI_API_KEY") == "SEKRIT_A" and "--api-key=SEKRIT_B" in sys.argv
print(json.dumps({"answer": "whole" if whole else "cut"}))
"""


def _external(tmp_path: Path) -> str:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    return f"OPENAI_API_KEY=SEKRIT_A {sys.executable} {agent} --api-key=SEKRIT_B"


def test_an_external_agents_command_is_run_whole_and_recorded_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = _external(tmp_path)
    runs = tmp_path / "runs"
    argv = ["run", "--suite", str(MINI), "--tasks", KETTLE, "--agent", "external"]
    argv += ["-O", f"command={command}", "-O", "grace=0.5", "--out", str(runs), "--run-id", "r"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert _leaks(out, err, folder=runs) == []
    (line,) = (runs / "r" / "trajectories.jsonl").read_text().splitlines()
    traj = json.loads(line)
    assert traj["final_answer"] == "whole"  # the agent got its key and its option whole
    shown = "OPENAI_API_KEY=*** " + command.split(" ", 1)[1].replace("SEKRIT_B", "***")
    assert traj["agent"]["params"]["command"] == shown
    assert traj["tree"]["external"]["command"] == shown
    manifest = json.loads((runs / "r" / "manifest.json").read_text())
    assert manifest["config"]["agent"]["options"]["command"] == shown

    # a resume is given the command again, whole, or refuses; a changed one is refused
    assert main(["run", "--resume", str(runs / "r")]) == 2
    err = capsys.readouterr().err
    assert "agent.options command carried credentials" in err and SECRET not in err
    assert main(["run", "--resume", str(runs / "r"), "-O", f"command={command} -v"]) == 2
    err = capsys.readouterr().err
    assert "may only give again what the run recorded redacted" in err and SECRET not in err
    assert main(["run", "--resume", str(runs / "r"), "-O", f"command={command}"]) == 0
    out, err = capsys.readouterr()
    assert _leaks(out, err, folder=runs) == []


def _scripted(body: dict[str, Any]) -> Reply:
    """One call of the MCP fixture's ``add``, then Finish with what it said."""
    observations = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if not observations:
        call = {"name": "add", "arguments": json.dumps({"a": 2, "b": 3})}
    else:
        call = {
            "name": "Finish",
            "arguments": json.dumps(
                {"return_type": "give_answer", "final_answer": observations[-1]}
            ),
        }
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": call}],
    }
    body_out = {
        "id": "x",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return Reply(body=body_out)


def test_a_model_url_a_model_option_and_an_mcp_command_are_used_whole_and_recorded_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "queries.yaml"
    tasks.write_text("- ADD 2 3\n")
    runs = tmp_path / "runs"
    with ScriptedOpenAIServer(models=["scripted"]) as server:
        server.default = _scripted
        url = server.base_url.replace("http://", "http://user:SEKRIT_U@")
        argv = ["run", "--suite", str(tasks), "--model", f"openai:scripted@{url}"]
        argv += ["--mcp-server", f"stdio:env MCP_TOKEN=SEKRIT_M {sys.executable} {FIXTURE_SERVER}"]
        argv += ["--model-option", 'extra_body={"api_key": "SEKRIT_O"}']
        argv += ["--out", str(runs), "--run-id", "m"]
        code = main([*argv, "--no-plots"])
        sent = server.requests[0]
    out, err = capsys.readouterr()
    assert code == 0, err
    assert sent.get("api_key") == "SEKRIT_O"  # the option reached the model whole
    assert _leaks(out, err, folder=runs) == []
    manifest = json.loads((runs / "m" / "manifest.json").read_text())
    assert manifest["config"]["model"]["options"] == {"extra_body": {"api_key": "***"}}
    assert manifest["config"]["tools"]["mcp_server"].startswith("stdio:env MCP_TOKEN=*** ")
    (line,) = (runs / "m" / "trajectories.jsonl").read_text().splitlines()
    assert json.loads(line)["model"]["params"] == {"extra_body": {"api_key": "***"}}


def test_print_config_redacts_every_kind_of_secret_and_says_which(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "--print-config", "--agent", "external"]
    argv += ["-O", "url=http://u:SEKRIT_1@host/?token=SEKRIT_2"]
    argv += ["--executor", "ray", "--ray-address", "ray://admin:SEKRIT_3@head:10001"]
    argv += ["--model-option", "api_key=SEKRIT_4"]
    argv += ["--mcp-server", "stdio:server --api-key=SEKRIT_5 --port 3"]
    argv += ["--transport-option", 'headers={"Authorization": "Bearer SEKRIT_6"}']
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert _leaks(out, err) == []
    assert "url: http://***@host/?token=***" in out
    assert "ray_address: ray://***@head:10001" in out
    assert "mcp_server: stdio:server --api-key=*** --port 3" in out
    for said in (
        "agent.options url",
        "model.options api_key",
        "tools.transport_options headers",
        "tools.mcp_server",
        "executor.ray_address",
    ):
        assert f"note: {said} carried credentials" in err, err


def test_a_trajectorys_description_of_its_run_is_redacted_and_its_steps_are_not() -> None:
    traj = Trajectory(
        scenario_id="t",
        agent=Component(name="external", params={"command": "HF_TOKEN=SEKRIT_1 agent"}),
        model=Component(
            name="openai:m@http://u:SEKRIT_2@h/v1",
            params={"params": {"api_key": "SEKRIT_3"}, "base_url": "http://h/v1?key=SEKRIT_4"},
        ),
        status=Status.error,
        errors=[ErrorRecord(kind="infra", message="cannot reach http://u:SEKRIT_5@h/v1")],
        final_answer="the token=SEKRIT_6 the model wrote",
        tree={"external": {"command": "agent --password SEKRIT_7", "exit_code": 1}},
    )
    redact_trajectory(traj)
    line = traj.to_json_line()
    assert [
        s
        for s in ("SEKRIT_1", "SEKRIT_2", "SEKRIT_3", "SEKRIT_4", "SEKRIT_5", "SEKRIT_7")
        if s in line
    ] == []
    assert traj.final_answer == "the token=SEKRIT_6 the model wrote"  # what the model said stays
    assert traj.tree["external"] == {"command": "agent --password ***", "exit_code": 1}
