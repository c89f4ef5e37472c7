"""Hostile model endpoints, end to end through ``sandbox run``: one regression test per defect of
the hardening issue (numbered as there). Bodies that are not completions are the endpoint's
fault, retried like a 5xx and, when they persist, infrastructure errors that no pass rate
counts."""

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
    raw_reply,
    scripted_alias,
)
from tests.hostile.conftest import MINI

BROKEN = {
    "html-page": raw_reply("<html><body>502 Bad Gateway</body></html>"),
    "cut-body": raw_reply('{"id": "x", "choices": [', content_type="application/json"),
    "empty-body": raw_reply("", content_type="application/json"),
}


@pytest.fixture(autouse=True)
def _impatient(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The ``scripted`` alias: an endpoint the test starts, retried twice 10 ms apart."""
    scripted_alias(monkeypatch, tmp_path)


def _run(server: ScriptedOpenAIServer, out: Path, monkeypatch, *extra: str) -> int:
    monkeypatch.setenv("SANDBOX_SCRIPTED_BASE_URL", server.base_url)
    argv = ["run", "--suite", str(MINI), "--agent", "react", "--no-plots", "--out", str(out)]
    argv += ["--model", "scripted", "--run-id", "r", *extra]
    return main(argv)


@pytest.mark.parametrize("bad", list(BROKEN), ids=list(BROKEN))
def test_15_a_body_that_is_not_a_completion_is_retried_like_a_5xx(
    bad: str, tmp_path, monkeypatch
) -> None:
    with ScriptedOpenAIServer() as server:
        server.push(BROKEN[bad])  # the first request only; the retry gets a real answer
        assert _run(server, tmp_path, monkeypatch, "--tasks", "mini_g1_track") == 0
    (episode,) = read_trajectories(tmp_path / "r")
    assert episode.status == "answered" and not episode.errors
    assert episode.usage.model_retries == 1


def test_15_a_body_that_stays_broken_is_an_infra_error_not_unsolved(
    tmp_path, capsys, monkeypatch
) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = lambda body: BROKEN["html-page"]
        assert _run(server, tmp_path, monkeypatch, "--tasks", "mini_g1_track") == 0
    err = capsys.readouterr()
    assert "Traceback" not in err.out + err.err
    (episode,) = read_trajectories(tmp_path / "r")
    assert episode.status == "error" and episode.usage.model_retries == 2
    assert any("not a completion" in e.message for e in episode.errors)
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    assert scores["infra"]["episodes"] == ["mini_g1_track#0"]


def test_16_retries_are_visible_and_infra_episodes_are_listed_not_counted(
    tmp_path, capsys, monkeypatch
) -> None:
    def kettle_breaks(body: dict) -> Reply:
        asked = json.dumps(body["messages"])
        return BROKEN["html-page"] if "kettle" in asked else default_reply(body)

    with ScriptedOpenAIServer() as server:
        server.default = kettle_breaks
        assert _run(server, tmp_path, monkeypatch, "--tasks", "mini_g1_*") == 0
    shown = capsys.readouterr()
    said = "mini_g1_kettle_price#0 infra error, not counted: model_error:malformed"
    assert f"{said} (calls 1, tokens 0, retries 2)" in shown.err
    assert "infra errors 1" in shown.out
    scores = json.loads((tmp_path / "r" / "scores.json").read_text())
    assert scores["infra"]["episodes"] == ["mini_g1_kettle_price#0"]
    assert scores["infra"]["retries"] == 2
    labels = {lb["task_id"]: lb for lb in scores["labels"]}
    assert labels["mini_g1_kettle_price"]["excluded"] == "infra"
    assert labels["mini_g1_track"]["excluded"] is None
    # the headline counts the one episode that was the agent's, not the infra error
    assert scores["pass_rate"]["n"] == 1
    assert RunStore.open(tmp_path / "r").manifest.status == "completed"
