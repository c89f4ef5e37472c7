"""``--judge`` on τ²'s natural-language assertions (``sandbox.eval.nl_judge``): a fake judge on
127.0.0.1 decides the fixture's ``taken`` task (its one assertion: "The agent says the book is
taken."), the label follows, the judgments are recorded and not asked again, a judge that fails
is the evaluation's failure (unjudged, exit 1), never the agent's, and without a judge the
assertions are skipped and counted."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.trajectory import Status
from mock_tools.suite import load_suite
from sandbox.cli import main
from sandbox.eval.nl_judge import JUDGMENTS_FILE, conversation, parse_verdicts
from sandbox.eval.pass_rate import label_episode
from sandbox.store import read_trajectories
from tests.agents.models.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    error_reply,
    free_port,
    scripted_alias,
    text_reply,
)

CHECKOUT = Path(__file__).resolve().parents[1] / "fixtures" / "tau2"
ASSERTION = "The agent says the book is taken."


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tau2") / "library"
    args = ["import", "tau2", str(CHECKOUT), "--domain", "library", "--out", str(out)]
    assert main([*args, "--python", sys.executable]) == 0
    return out


@pytest.fixture(scope="module")
def reference_run(suite_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One reference run of the fixture's three tasks (all solved by their other checks)."""
    out = tmp_path_factory.mktemp("runs")
    args = ["run", "--suite", str(suite_dir), "--model", "reference", "--out", str(out)]
    assert main([*args, "--no-plots", "--json"]) == 0
    return next(out.iterdir())


@pytest.fixture
def run(reference_run: Path, tmp_path: Path) -> Path:
    """A copy of the reference run each test may evaluate (and record into) on its own."""
    return Path(shutil.copytree(reference_run, tmp_path / "run"))


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


@pytest.fixture
def judge(
    server: ScriptedOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ScriptedOpenAIServer:
    """The ``scripted`` alias on the fake judge (retried twice, 10 ms apart), reset."""
    server.reset()
    scripted_alias(monkeypatch, tmp_path)
    monkeypatch.setenv("SANDBOX_SCRIPTED_BASE_URL", server.base_url)
    return server


def verdicts(*met: bool, reason: str = "seen in the conversation") -> Reply:
    body = {
        "verdicts": [{"assertion": i, "met": m, "reason": reason} for i, m in enumerate(met, 1)]
    }
    return text_reply(json.dumps(body))


def _scores(run: Path) -> dict[str, Any]:
    return json.loads((run / "scores.json").read_text())


def _label(run: Path, task: str) -> dict[str, Any]:
    return next(lb for lb in _scores(run)["labels"] if lb["task_id"] == task)


def _eval(run: Path, *extra: str) -> int:
    return main(["eval", str(run), "--no-plots", *extra])


def test_the_judges_verdict_decides_the_label(
    run: Path, judge: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.default = verdicts(True)
    assert _eval(run, "--judge", "scripted") == 0
    taken = _label(run, "taken")
    assert taken["label"] == "solved"
    nl = [c for c in taken["checks"] if c["kind"] == "nl_assertion"]
    assert len(nl) == 1 and nl[0]["passed"] and ASSERTION in nl[0]["detail"]
    summary = _scores(run)["nl_assertions"]
    assert (summary["judged"], summary["met"], summary["asked"]) == (1, 1, 1)
    assert "nl_assertions judged by" in capsys.readouterr().out
    # what the judge was sent: the assertion and the conversation, at τ²'s temperature 0
    [request] = judge.requests
    sent = request["messages"][-1]["content"]
    assert ASSERTION in sent and "\nuser: Hi! I need some help.\n" in sent
    assert "\nassistant: Thank you, it is done.\n" in sent and request["temperature"] == 0.0
    assert "tools" not in request  # a plain JSON answer, no forced call
    # the same episode, another copy, the judge says no: unsolved, by that check alone
    other = Path(shutil.copytree(run, tmp_path / "other"))
    (other / JUDGMENTS_FILE).unlink()
    (other / "judge_cache.sqlite").unlink()  # the judge's request cache would answer too
    judge.default = verdicts(False, reason="it never says so")
    assert _eval(other, "--judge", "scripted") == 0
    taken = _label(other, "taken")
    assert taken["label"] == "unsolved" and taken["excluded"] is None
    assert "not met" in taken["reason"] and "it never says so" in taken["reason"]
    assert {lb["label"] for lb in _scores(other)["labels"] if lb["task_id"] != "taken"} == {
        "solved"
    }


def test_judgments_are_recorded_and_a_second_eval_asks_nothing(
    run: Path, judge: ScriptedOpenAIServer
) -> None:
    judge.default = verdicts(False)
    assert _eval(run, "--judge", "scripted") == 0
    assert len(judge.requests) == 1
    [line] = (run / JUDGMENTS_FILE).read_text().splitlines()
    record = json.loads(line)
    assert (record["task"], record["trial"], record["judge"]) == ("taken", 0, "scripted")
    assert record["digest"].startswith("sha256:")
    assert record["verdicts"][0]["met"] is False
    judge.default = verdicts(True)  # a judge that would now answer otherwise is not asked
    assert _eval(run, "--judge", "scripted", "--no-judge-cache") == 0  # the record alone
    assert len(judge.requests) == 1
    assert _label(run, "taken")["label"] == "unsolved"
    summary = _scores(run)["nl_assertions"]
    assert (summary["from_record"], summary["asked"]) == (1, 0)
    # a line a kill cut short is passed over: the episode is asked again, appended on a line
    # of its own, and the file keeps every whole line
    (run / JUDGMENTS_FILE).write_text(line[: len(line) // 2])
    assert _eval(run, "--judge", "scripted", "--no-judge-cache") == 0
    assert len(judge.requests) == 2
    lines = (run / JUDGMENTS_FILE).read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["verdicts"][0]["met"] is True
    assert _label(run, "taken")["label"] == "solved"


def test_a_rescore_from_the_record_needs_no_endpoint(
    run: Path,
    judge: ScriptedOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    judge.default = verdicts(False)
    assert _eval(run, "--judge", "scripted") == 0
    (run / "judge_cache.sqlite").unlink()
    monkeypatch.setenv("SANDBOX_SCRIPTED_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    assert _eval(run, "--judge", "scripted") == 0  # the judge is down: its record answers
    assert _label(run, "taken")["label"] == "unsolved"
    assert _scores(run)["nl_assertions"]["from_record"] == 1
    (run / JUDGMENTS_FILE).unlink()  # nothing recorded: an unreachable judge stops the eval
    capsys.readouterr()
    assert _eval(run, "--judge", "scripted") == 2
    assert "unreachable" in capsys.readouterr().err


def test_an_episode_that_ended_on_a_spent_budget_is_not_asked_about(
    run: Path, judge: ScriptedOpenAIServer
) -> None:
    """τ² judges a conversation the user or the agent stopped; one that ran out of budget fails
    whatever the judge says, so it is not asked about."""
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    docs = [json.loads(line) for line in lines]
    for doc in docs:
        if doc["scenario_id"] == "taken":
            doc["status"] = "budget_exhausted"
    (run / "trajectories.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    judge.default = verdicts(True)
    assert _eval(run, "--judge", "scripted") == 0
    assert judge.requests == []
    summary = _scores(run)["nl_assertions"]
    assert (summary["not_graded"], summary["judged"], summary["episodes"]) == (1, 0, 1)
    assert _label(run, "taken")["label"] == "unsolved"


def test_a_judge_that_fails_leaves_the_episode_unjudged_not_failed(
    run: Path, judge: ScriptedOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.default = error_reply(500)
    assert _eval(run, "--judge", "scripted") == 1
    err = capsys.readouterr().err
    assert "the judge gave no valid answer for 1 item(s) (label taken)" in err
    assert "Traceback" not in err
    taken = _label(run, "taken")
    assert taken["excluded"] == "judge_error" and "judge" in taken["reason"]
    summary = _scores(run)["nl_assertions"]
    assert (summary["unjudged"], summary["judged"]) == (1, 0)
    assert _scores(run)["pass_rate"]["n"] == 2  # the two other episodes still count
    assert not (run / JUDGMENTS_FILE).exists()  # nothing recorded: the next eval asks again
    judge.default = verdicts(True)
    assert _eval(run, "--judge", "scripted") == 0
    assert _label(run, "taken")["label"] == "solved"


@pytest.mark.parametrize(
    "reply",
    [
        "I think the agent did fine.",
        json.dumps({"verdicts": []}),
        json.dumps({"verdicts": [{"assertion": 2, "met": True}]}),
        json.dumps({"verdicts": [{"assertion": 1, "met": "maybe"}]}),
    ],
)
def test_a_malformed_reply_is_the_judges_failure_not_the_agents(
    run: Path, judge: ScriptedOpenAIServer, reply: str
) -> None:
    judge.default = text_reply(reply)
    assert _eval(run, "--judge", "scripted") == 1
    assert len(judge.requests) == 3  # asked again, up to the judge's attempts
    taken = _label(run, "taken")
    assert taken["excluded"] == "judge_error" and taken["label"] == "unsolved"
    assert _scores(run)["judge"]["invalid_replies"] == 3


def test_an_unreachable_judge_is_one_line_and_exit_2(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = (run / "scores.json").read_bytes()
    assert _eval(run, "--judge", f"openai:judge@http://127.0.0.1:{free_port()}/v1") == 2
    err = capsys.readouterr().err
    assert "unreachable" in err and "Traceback" not in err
    assert (run / "scores.json").read_bytes() == scores


def test_without_a_judge_the_assertions_are_skipped_and_counted(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _eval(run) == 0
    assert "nl_assertions skipped: 1 episodes" in capsys.readouterr().out
    summary = _scores(run)["nl_assertions"]
    assert (summary["skipped"], summary["judged"], summary["judge"]) == (1, 0, None)
    taken = _label(run, "taken")
    assert taken["label"] == "solved"
    assert not [c for c in taken["checks"] if c["kind"] == "nl_assertion"]
    assert main(["eval", str(run), "--no-plots", "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["nl_assertions"] == {"judged": 0, "met": 0, "unjudged": 0, "skipped": 1}


def test_the_rules_judge_skips_the_assertions(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _eval(run, "--judge", "rules-judge") == 0
    assert "nl_assertions skipped: 1 episodes" in capsys.readouterr().out
    assert _label(run, "taken")["label"] == "solved"


def test_an_unjudged_episode_is_left_out_only_where_the_judge_would_decide(
    suite_dir: Path, reference_run: Path
) -> None:
    tasks = {t.id: t for t in load_suite(suite_dir).tasks}
    traj = next(t for t in read_trajectories(reference_run) if t.scenario_id == "taken")
    assert traj.world is not None
    traj.world["nl_assertions"] = {"judge": "j", "error": "judge 'j' failed"}
    lb = label_episode(traj, tasks["taken"])
    assert lb.excluded == "judge_error" and "judge 'j' failed" in lb.reason
    traj.world["checks"][0]["passed"] = False  # the agent failed another check: its own failure
    lb = label_episode(traj, tasks["taken"])
    assert lb.excluded is None and lb.label == "unsolved"


def test_an_agent_that_stops_is_judged_on_its_nl_assertions_too(
    suite_dir: Path, reference_run: Path
) -> None:
    """τ² grades an agent's stop on every part of its reward basis (``stops_judged``), the
    NL assertions included."""
    tasks = {t.id: t for t in load_suite(suite_dir).tasks}
    traj = next(t for t in read_trajectories(reference_run) if t.scenario_id == "taken")
    assert traj.world is not None and tasks["taken"].world is not None
    assert tasks["taken"].world.checks.stops_judged
    traj.status = Status.gave_up
    verdict = {"assertion": ASSERTION, "met": True, "justification": ""}
    traj.world["nl_assertions"] = {"judge": "j", "verdicts": [verdict]}
    assert label_episode(traj, tasks["taken"]).label == "solved"
    traj.world["nl_assertions"] = {"judge": "j", "verdicts": [verdict | {"met": False}]}
    lb = label_episode(traj, tasks["taken"])
    assert lb.label == "unsolved" and "nl_assertion" in lb.reason
    traj.world["nl_assertions"] = {"judge": "j", "error": "down"}
    assert label_episode(traj, tasks["taken"]).excluded == "judge_error"
    # a label a rule decides (a spent budget) still shows the verdicts beside the state checks
    traj.status = Status.budget_exhausted
    traj.world["nl_assertions"] = {"judge": "j", "verdicts": [verdict]}
    lb = label_episode(traj, tasks["taken"])
    assert (lb.label, lb.method) == ("unsolved", "rule")
    kinds = [(c.index, c.kind) for c in lb.checks]
    assert kinds[-1] == (len(kinds) - 1, "nl_assertion") and len(kinds) > 1


def test_run_with_a_judge_scores_with_it_and_export_gives_taus_shape(
    suite_dir: Path, judge: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    judge.default = verdicts(False, reason="no word of it")
    out = tmp_path / "runs"
    args = ["run", "--suite", str(suite_dir), "--model", "reference", "--out", str(out)]
    assert main([*args, "--tasks", "taken", "--no-plots", "--judge", "scripted"]) == 0
    run = next(out.iterdir())
    assert _label(run, "taken")["label"] == "unsolved"
    assert len((run / JUDGMENTS_FILE).read_text().splitlines()) == 1
    results = tmp_path / "results.json"
    assert main(["export", "tau2", str(run), "--out", str(results)]) == 0
    [sim] = json.loads(results.read_text())["simulations"]
    assert sim["reward_info"]["nl_assertions"] == [
        {"nl_assertion": ASSERTION, "met": False, "justification": "no word of it"}
    ]


def test_run_with_an_unreachable_judge_stops_before_any_episode(
    suite_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs"
    args = ["run", "--suite", str(suite_dir), "--model", "reference", "--out", str(out)]
    judge = f"openai:judge@http://127.0.0.1:{free_port()}/v1"
    assert main([*args, "--tasks", "taken", "--judge", judge]) == 2
    assert "unreachable" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_the_conversation_holds_the_tools_answers_and_the_agents_calls(
    reference_run: Path,
) -> None:
    traj = next(t for t in read_trajectories(reference_run) if t.scenario_id == "borrow")
    lines = conversation(traj).splitlines()
    assert lines[0] == "user: Hi! I need some help."
    call = next(i for i, line in enumerate(lines) if "[calls borrow_book(" in line)
    assert lines[call].startswith("assistant: ") and '"reader": "ada"' in lines[call]
    assert lines[call + 1].startswith("tool: ") and '"borrower": "ada"' in lines[call + 1]
    assert lines[-1].startswith("user: ")


def test_a_reply_is_valid_only_with_one_verdict_per_assertion() -> None:
    two = ["A", "B"]
    ok = {"verdicts": [{"assertion": 2, "met": "false"}, {"assertion": 1, "met": True}]}
    got = parse_verdicts(ok, two)
    assert got is not None and [(v.assertion, v.met) for v in got] == [("A", True), ("B", False)]
    for bad in (
        {"verdicts": [{"assertion": 1, "met": True}]},
        {"verdicts": [{"assertion": 1, "met": True}, {"assertion": 1, "met": True}]},
        {"verdicts": [{"assertion": 1, "met": True}, {"assertion": 3, "met": True}]},
        {"verdicts": [{"assertion": 0, "met": True}, {"assertion": 1, "met": True}]},
        {"verdicts": [{"assertion": True, "met": True}, {"assertion": 2, "met": True}]},
        {"results": [{"assertion": 1, "met": True}, {"assertion": 2, "met": True}]},
    ):
        assert parse_verdicts(bad, two) is None
