"""Under ``--user-miss error`` or ``scripted`` the user model is never asked, so nothing needs
its endpoint.

What it protects: a run made with a model-played user on an endpoint, without
``--model-cache``, is replayed by ``sandbox replay`` (which answers the user from the run's own
trajectories under ``--user-miss error``) and run again from its user record under
``--user-miss error`` and ``scripted``, all with the endpoint stopped: none probes the user model
before its first episode (before, each stopped at the probe: "cannot reach" the endpoint nobody
asks).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sandbox.cli import main
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply, tool_call_reply

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tinyworld"


def _persona_endpoint(body: dict[str, Any]) -> Any:
    last = body["messages"][-1]["content"]
    if "Which account" in last:
        return text_reply("It is A-2.")
    if "Shall I" in last:
        return text_reply("Yes, do it.")
    return tool_call_reply("end_conversation", {"reason": "done"})


def test_runs_under_user_miss_error_need_no_user_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = Path(shutil.copytree(TINY, tmp_path / "bank"))
    argv = ["run", "--suite", str(suite), "--tasks", "chat_freeze_which", "--model", "reference"]
    argv += ["--no-plots", "--json"]
    with ScriptedOpenAIServer() as server:
        server.default = _persona_endpoint
        user = ["--user-model", f"openai:user-sim@{server.base_url}"]
        assert main([*argv, *user, "--out", str(tmp_path / "one")]) == 0
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert first["by_status"] == {"answered": 1}
    run = Path(first["run"])

    assert main(["replay", str(run), "--json", "--out", str(tmp_path / "replayed")]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (report["episodes"], report["divergent"]) == (1, 0)

    again = [*argv, *user, "--user-miss", "error", "--out", str(tmp_path / "two")]
    assert main(again) == 0
    second = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert second["by_status"] == {"answered": 1}
    # --user-miss scripted never asks the model either: a miss is the script's (a persona task
    # has none, so a miss is a user failure), and the endpoint is not probed
    scripted = [*argv, *user, "--user-miss", "scripted", "--out", str(tmp_path / "three")]
    assert main(scripted) == 0
    third = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert third["by_status"] == {"answered": 1}
