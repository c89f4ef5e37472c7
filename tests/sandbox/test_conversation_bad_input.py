"""The bad input of conversations (issue 36): a task's user that cannot be read is one line and
exit 2 before anything runs; a user model that misbehaves at run time is a labelled outcome of
its episode, never a harness error, and nothing of the run is lost.

- configuration: a persona without instructions, a scripted turn revealing a function the task
  does not offer, a hidden function no turn reveals: ``run`` says one line naming the task and
  field and exits 2, writing no run;
- run time: a user model that answers nothing (``user_failure:empty``), calls a tool it lacks
  (``user_failure:unknown_tool``) or whose endpoint fails (``user_failure:model_error``) ends its
  episode as the user's failure (status ``error``, an error record of kind ``user``, left out of
  the pass rate and counted); one that loops, never ending the conversation, is stopped by
  ``--max-user-turns`` (``budget:max_user_turns``). The other task of the run is scored as
  usual, and its trajectories and scores are written.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.trajectory import Status
from sandbox.cli import main
from sandbox.store import read_trajectories
from tests.agents.models.openai_server import (
    ScriptedOpenAIServer,
    error_reply,
    text_reply,
    tool_call_reply,
)

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tinyworld"
FREEZE = "chat_freeze_which"


def _suite(tmp_path: Path, edit: Callable[[str], str] | None = None) -> Path:
    suite = Path(shutil.copytree(TINY, tmp_path / "bank"))
    if edit is not None:
        chat = suite / "tasks" / "chat.yaml"
        text = chat.read_text(encoding="utf-8")
        changed = edit(text)
        assert changed != text
        chat.write_text(changed, encoding="utf-8")
    return suite


INSTRUCTIONS = "      instructions: Answer questions briefly; agree only to freezing A-2.\n"
SAY = "      - say: Thanks. Also move 10 cents from A-1 to A-2, please.\n"


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            lambda t: t.replace(INSTRUCTIONS, ""),
            "chat.yaml: [1].user.persona.instructions: Field required",
        ),
        (
            lambda t: t.replace(SAY, SAY + "        reveal: [teleport]\n"),
            "chat_rent_then_more: user script turn 1 reveals 'teleport', which the task does "
            "not offer",
        ),
        (
            lambda t: t.replace(
                "  user:\n    script:", "  user:\n    hidden: [refund]\n    script:"
            ),
            "chat.yaml: [0].user: Value error, hidden functions no scripted turn reveals: refund",
        ),
    ],
    ids=["persona-without-instructions", "reveals-unknown-function", "hidden-never-revealed"],
)
def test_a_user_that_cannot_be_read_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[str], str], said: str
) -> None:
    suite = _suite(tmp_path, edit)
    out = tmp_path / "runs"
    code = main(["run", "--suite", str(suite), "--model", "reference", "--out", str(out)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert said in lines[0]
    assert not out.exists() or not any(out.iterdir())


def _loops(body: dict[str, Any]) -> Any:
    return text_reply("Sorry, could you say that again?")


@pytest.mark.parametrize(
    ("answer", "status", "reason"),
    [
        (text_reply(""), Status.error, "user_failure:empty"),
        (tool_call_reply("refund", {"id": "T-1"}), Status.error, "user_failure:unknown_tool"),
        (error_reply(400, message="bad request"), Status.error, "user_failure:model_error"),
        (_loops, Status.budget_exhausted, "budget:max_user_turns"),
    ],
    ids=["answers-nothing", "calls-a-tool-it-lacks", "endpoint-fails", "loops"],
)
def test_a_user_model_that_misbehaves_is_a_labelled_outcome_and_nothing_is_lost(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    answer: Any,
    status: Status,
    reason: str,
) -> None:
    suite = _suite(tmp_path)
    out = tmp_path / "runs"
    argv = ["run", "--suite", str(suite), "--tasks", "chat_*", "--model", "reference"]
    argv += ["--out", str(out), "--max-user-turns", "3", "--no-plots", "--json"]
    with ScriptedOpenAIServer() as server:
        server.default = answer
        code = main([*argv, "--user-model", f"openai:u@{server.base_url}"])
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.err, captured.err
    summary = json.loads(captured.out.strip().splitlines()[-1])
    run = Path(summary["run"])
    trajs = {t.scenario_id: t for t in read_trajectories(run)}
    assert set(trajs) == {FREEZE, "chat_rent_then_more"}  # both episodes written
    freeze = trajs[FREEZE]
    assert (freeze.status, freeze.end_reason) == (status, reason)
    assert trajs["chat_rent_then_more"].status is Status.answered  # the script plays on
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))["pass_rate"]
    users = [e for e in freeze.errors if e.kind == "user"]
    if status is Status.error:  # the user's failure: left out of the pass rate, counted
        assert len(users) == 1 and users[0].node == freeze.nodes[-1].id
        assert freeze.nodes[-1].kind == "user"
        assert (scores["user_failures"], scores["n"], summary["user_failures"]) == (1, 1, 1)
    else:  # a loop is bounded by the budget and counted against the agent's episode
        assert not users and scores.get("user_failures", 0) == 0 and scores["n"] == 2
        assert sum(n.kind == "user" for n in freeze.nodes) == 3
