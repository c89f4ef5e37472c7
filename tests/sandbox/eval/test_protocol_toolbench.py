"""The ``toolbench`` protocol rule by rule, against a fake ToolEval judge on 127.0.0.1.

Each test states the ToolEval rule it protects (StableToolBench's ``eval_pass_rate.py``,
``eval_preference.py`` and ``rtl.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from outcome_builders import add_call, make_run, make_suite, task, traj
from tooleval_judge_server import ToolEvalJudgeServer

from agents.trajectory import Status
from sandbox.cli import main
from sandbox.eval.pass_rate import label_run
from sandbox.eval.protocol import JudgeSettings
from sandbox.eval.protocols import get_protocol
from sandbox.eval.stats import population_std
from sandbox.eval.tooleval.answer import converted_answer, final_step_is_finish
from sandbox.eval.tooleval.preference import shown_first
from sandbox.eval.win_rate import RunSide

TOOLBENCH = get_protocol("toolbench")
TASKS = [task("a"), task("b"), task("c")]


async def labels(judge_server, trajs, tasks=TASKS, samples=1, keys=None):
    keys = keys if keys is not None else [(t.id, 0) for t in tasks]
    return await TOOLBENCH.label(
        trajs, tasks, keys, judge_server.judge(), JudgeSettings(samples=samples)
    )


# -- pass rate -------------------------------------------------------------------------------


async def test_shortcuts_make_no_judge_call(judge_server: ToolEvalJudgeServer) -> None:
    """No Finish as the final step, an empty answer, a give-up: Unsolved without asking."""
    trajs = [
        traj("a", status=Status.budget_exhausted, answer=None, calls=[[add_call(2, 3)]]),
        traj("b", answer="  "),
        traj("c", status=Status.gave_up, answer=None, give_up_text="cannot"),
    ]
    out = await labels(judge_server, trajs, samples=4)
    assert [(lb.label, lb.method, lb.samples) for lb in out] == [
        ("unsolved", "rule", ["unsolved"] * 4)
    ] * 3
    assert "not a Finish" in out[0].reason and "empty" in out[1].reason
    assert judge_server.requests == []


async def test_unsure_gets_a_second_look_whose_status_is_final(
    judge_server: ToolEvalJudgeServer,
) -> None:
    """check_answer_status first; on Unsure, parse_answer_status on the whole answer."""
    judge_server.statuses = {"HMM": ["Unsure"], "MAYBE": ["Unsure"]}
    judge_server.second_looks = {"HMM": ["Solved"], "MAYBE": ["Unsure"]}
    trajs = [
        traj("a", answer="HMM 5", calls=[[add_call(2, 3)]]),
        traj("b", answer="MAYBE 5"),
        traj("c", answer="plainly 5"),
    ]
    out = await labels(judge_server, trajs)
    assert [lb.label for lb in out] == ["solved", "unsure", "solved"]
    assert (
        judge_server.count("check_answer_status") == 3
        and judge_server.count("parse_answer_status") == 2
    )
    second = [p for f, _, p in judge_server.log if f == "parse_answer_status" and "HMM" in p][0]
    # the whole answer: the steps (the tool call and its response) beside the final answer
    assert "add_for_calc" in second and '"answer_details"' in second
    assert '"method"' in second  # the pass-rate second look sees the whole dict, method included


async def test_pass_rate_is_the_mean_over_samples_with_their_spread(
    judge_server: ToolEvalJudgeServer,
) -> None:
    """Sample i's rate = mean over tasks of Solved 1 / Unsure 0.5 / Unsolved 0; the pass rate is
    the mean over samples, the std their population std (numpy's default)."""
    judge_server.statuses = {
        "A1": ["Solved", "Solved", "Unsolved", "Solved"],
        "B1": ["Unsure", "Unsolved", "Unsolved", "Solved"],
        "C1": ["Unsolved"],
    }
    judge_server.second_looks = {"B1": ["Unsure"]}
    trajs = [traj("a", answer="A1"), traj("b", answer="B1"), traj("c", answer="C1")]
    out = await labels(judge_server, trajs, samples=4)
    assert out[0].samples == ["solved", "solved", "unsolved", "solved"]
    assert out[0].score == pytest.approx(0.75) and out[0].label == "solved"
    assert out[1].samples == ["unsure", "unsolved", "unsolved", "solved"]
    summary = TOOLBENCH.summarise(out, TASKS, seed=0)
    # by hand: sample 0 (1 + .5 + 0)/3, sample 1 (1 + 0 + 0)/3, sample 2 0, sample 3 (1 + 1)/3
    expected = [1.5 / 3, 1 / 3, 0.0, 2 / 3]
    assert summary.sample_rates == pytest.approx(expected)
    assert summary.pass_rate.value == pytest.approx(sum(expected) / 4)
    assert summary.sample_std == pytest.approx(population_std(expected))
    assert summary.sample_std == pytest.approx(0.2465, abs=1e-4)  # sqrt(0.243056 / 4)
    assert summary.protocol == "toolbench"


async def test_missing_answers_are_dropped_and_listed(judge_server: ToolEvalJudgeServer) -> None:
    """A test id without an answer leaves the denominator (ToolEval reads only the answers it
    has); an infrastructure failure has no answer either."""
    trajs = [traj("a", answer="5"), traj("b", status=Status.error, answer=None, infra=True)]
    out = await labels(judge_server, trajs)
    assert [(lb.task_id, lb.excluded) for lb in out] == [
        ("a", None),
        ("b", "infra"),
        ("c", "missing"),
    ]
    summary = TOOLBENCH.summarise(out, TASKS, seed=0)
    assert (summary.n, summary.pass_rate.value) == (1, 1.0)
    assert summary.excluded == {"infra": ["b"], "missing": ["c"]}


async def test_an_unparseable_judge_is_a_listed_judge_error(
    judge_server: ToolEvalJudgeServer,
) -> None:
    """A reply that does not parse is retried, then an infra error of the evaluation."""
    judge_server.garbage = {"GARBLED"}
    out = await labels(
        judge_server, [traj("a", answer="GARBLED"), traj("b", answer="5")], TASKS[:2]
    )
    assert out[0].excluded == "judge_error" and "3 attempts" in out[0].reason
    assert judge_server.count("check_answer_status") == 3 + 1
    summary = TOOLBENCH.summarise(out, TASKS[:2], seed=0)
    assert summary.n == 1 and summary.excluded == {"judge_error": ["a"]}


# -- preference ------------------------------------------------------------------------------


async def prefer(
    judge_server, cand, ref, tasks=TASKS, rounds=2, order="alternate", protocol=TOOLBENCH
):
    c = RunSide(name="cand", trajectories=cand, labels=label_run(cand, tasks))
    r = RunSide(name="ref", trajectories=ref, labels=label_run(ref, tasks))
    settings = JudgeSettings(rounds=rounds, order=order)
    return await protocol.prefer(c, r, tasks, judge_server.judge(), settings, seed=7)


async def test_exactly_one_solved_wins_without_select(judge_server: ToolEvalJudgeServer) -> None:
    judge_server.statuses = {"WRONG": ["Unsolved"]}
    out = await prefer(
        judge_server, [traj("a", answer="right")], [traj("a", answer="WRONG")], TASKS[:1]
    )
    assert (out[0].winner, out[0].rounds) == ("candidate", ["candidate", "candidate"])
    assert judge_server.count("select_better_answer") == 0


async def test_both_solved_asks_select_better_answer(judge_server: ToolEvalJudgeServer) -> None:
    out = await prefer(
        judge_server,
        [traj("a", answer="GOOD answer")],
        [traj("a", answer="fine answer")],
        TASKS[:1],
    )
    assert out[0].winner == "candidate" and judge_server.count("select_better_answer") == 2
    shown = [p for f, _, p in judge_server.log if f == "select_better_answer"][0]
    # the judge sees whole answers, without the method's name, final answers cut at 1,000 chars
    assert '"answer_details"' in shown and '"method"' not in shown


async def test_one_unsure_beats_two_unsolved_and_unsure_pairs_are_selected(
    judge_server: ToolEvalJudgeServer,
) -> None:
    judge_server.statuses = {"HMM": ["Unsure"], "BAD": ["Unsolved"]}
    judge_server.second_looks = {"HMM": ["Unsure"]}
    out = await prefer(
        judge_server,
        [traj("a", answer="HMM"), traj("b", answer="HMM GOOD")],
        [traj("a", answer="BAD"), traj("b", answer="HMM")],
        TASKS[:2],
    )
    assert out[0].winner == "candidate" and out[0].rule == "rounds 2-0"
    assert out[1].winner == "candidate"  # both unsure: select_better_answer picks GOOD
    assert judge_server.count("select_better_answer") == 2


async def test_identical_answers_are_a_seeded_coin_without_a_call(
    judge_server: ToolEvalJudgeServer,
) -> None:
    same = [traj("a", answer="same"), traj("b", answer="same"), traj("c", answer="same")]
    first = await prefer(judge_server, same, same)
    again = await prefer(judge_server, same, same)
    assert [o.rounds for o in first] == [o.rounds for o in again]
    assert judge_server.count("select_better_answer") == 0


async def test_order_alternates_round_by_round(judge_server: ToolEvalJudgeServer) -> None:
    """A judge that always picks the first answer shown splits every pair 1-1 (a tie) under
    alternation: each answer is shown first once."""
    cand = [traj(t.id, answer=f"cand {t.id}") for t in TASKS]
    ref = [traj(t.id, answer=f"ref {t.id}") for t in TASKS]
    out = await prefer(judge_server, cand, ref)
    assert [o.winner for o in out] == ["tie"] * 3
    firsts = [
        ("cand" if p.split("Answer 1 (JSON):")[0].count("cand ") else "ref", seed)
        for f, seed, p in judge_server.log
        if f == "select_better_answer"
    ]
    by_round = {}
    for who, seed in firsts:
        by_round.setdefault(seed, []).append(who)
    # round 1 (seed 1001) shows each pair the other way round from round 0 (seed 1000)
    assert sorted(by_round) == [1000, 1001]
    starts = [shown_first("alternate", 7, t.id, 0, 0) for t in TASKS]
    assert sorted(by_round[1000]) == sorted("ref" if s == "reference" else "cand" for s in starts)
    assert sorted(by_round[1001]) == sorted("cand" if s == "reference" else "ref" for s in starts)
    for t in TASKS:
        assert shown_first("alternate", 7, t.id, 0, 0) != shown_first("alternate", 7, t.id, 0, 1)


def test_random_order_is_seeded() -> None:
    """--judge-order random: ToolEval's shuffle, reproducible from the run's seed."""
    picks = [shown_first("random", 3, "t", 0, r) for r in range(40)]
    assert picks == [shown_first("random", 3, "t", 0, r) for r in range(40)]
    assert set(picks) == {"reference", "candidate"}
    assert picks != [shown_first("random", 4, "t", 0, r) for r in range(40)]


async def test_missing_task_rules(judge_server: ToolEvalJudgeServer) -> None:
    """Missing from the candidate: it loses; missing from the reference: the candidate wins;
    missing from both: the candidate (ToolEval checks the reference first)."""
    out = await prefer(judge_server, [traj("b", answer="x")], [traj("a", answer="y")])
    assert [(o.task_id, o.winner, o.rule) for o in out] == [
        ("a", "reference", "missing_candidate"),
        ("b", "candidate", "missing_reference"),
        ("c", "candidate", "missing_reference"),
    ]
    assert judge_server.requests == []
    summary = TOOLBENCH.summarise_wins(out, candidate="c", reference="r", seed=0)
    assert (summary.win_rate.value, summary.tie_rate) == (pytest.approx(2 / 3), 0.0)


async def test_a_tie_counts_nothing_in_toolevals_win_rate(
    judge_server: ToolEvalJudgeServer,
) -> None:
    cand = [traj("a", answer="GOOD"), traj("b", answer="cand b")]
    ref = [traj("a", answer="ref a"), traj("b", answer="ref b")]
    out = await prefer(judge_server, cand, ref, TASKS[:2])
    w = TOOLBENCH.summarise_wins(out, candidate="c", reference="r", seed=0)
    assert (w.wins, w.ties, w.losses) == (1, 1, 0)
    assert w.win_rate.value == pytest.approx(0.5) and w.tie_rate == pytest.approx(0.5)


async def test_normalized_preference(judge_server: ToolEvalJudgeServer) -> None:
    """Both solved: fewer steps wins; neither: the higher details score; one empty final
    answer: the other."""
    normalized = get_protocol("toolbench-normalized")
    judge_server.details = {"MANY": (3, 2)}
    longer = traj("a", answer="x", calls=[[add_call(1, 1)], [add_call(2, 2)]])
    shorter = traj("a", answer="y", calls=[[add_call(1, 1)]])
    failed_many = traj("b", answer="NOT-SOLVED MANY", calls=[[add_call(1, 1)]])
    failed_few = traj("b", answer="NOT-SOLVED few", calls=[[add_call(1, 1)]])
    none = traj("c", status=Status.budget_exhausted, answer=None, calls=[[add_call(1, 1)]])
    some = traj("c", answer="z")
    out = await prefer(
        judge_server, [shorter, failed_few, none], [longer, failed_many, some], protocol=normalized
    )
    assert [o.winner for o in out] == ["candidate", "reference", "reference"]
    assert (
        judge_server.count("check_answer_status") == 0
        and judge_server.count("check_solve_query") > 0
    )


# -- the command line ------------------------------------------------------------------------


def test_toolbench_needs_a_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = make_suite(tmp_path / "suite")
    run = make_run(tmp_path / "runs", suite, "r", [traj("add", answer="5")])
    assert main(["eval", str(run), "--protocol", "toolbench"]) == 2
    assert "needs a judge" in capsys.readouterr().err
    assert main(["eval", str(run), "--judge-samples", "0"]) == 2
    assert main(["eval", str(run), "--protocol", "nope"]) == 2  # the registry lists the names
    assert "toolbench-normalized" in capsys.readouterr().err
    assert not (run / "scores.json").exists()


def test_cli_toolbench_eval_json_and_judge_errors(
    judge_server: ToolEvalJudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path / "suite")
    cand = make_run(
        tmp_path / "runs",
        suite,
        "cand",
        [traj("add", answer="5"), traj("open", answer="GOOD GARBLED")],
    )
    ref = make_run(
        tmp_path / "runs", suite, "ref", [traj("add", answer="6"), traj("open", answer="x")]
    )
    judge_server.garbage = {"GARBLED"}
    args = [
        "eval",
        str(cand),
        "--protocol",
        "toolbench",
        "--judge",
        f"openai:judge@{judge_server.base_url}",
    ]
    code = main([*args, "--reference", str(ref), "--judge-samples", "2", "--json", "--no-plots"])
    out, err = capsys.readouterr()
    assert code == 1 and "judge gave no valid answer" in err
    summary = json.loads(out)
    # add: Solved in both samples; open: a judge error; impossible: no answer (dropped)
    assert summary["protocol"] == "toolbench" and summary["pass_rate"] == 1.0
    assert summary["pass_rate_samples"] == [1.0, 1.0] and summary["pass_rate_std"] == 0.0
    assert summary["excluded"] == {"judge_error": 1, "missing": 1}
    # add: both solved, select_better_answer picks index 0 in each order -> tie;
    # impossible: missing from both -> candidate; open: judge error (not counted)
    assert summary["win_rate"] == pytest.approx(0.5) and summary["tie_rate"] == pytest.approx(0.5)
    scores = json.loads((cand / "scores.json").read_text())
    assert scores["protocol"] == "toolbench"
    assert scores["judge_settings"] == {
        "samples": 2,
        "rounds": 2,
        "temperature": 0.2,
        "order": "alternate",
    }
    report = (cand / "report.md").read_text()
    assert "Protocol **toolbench**" in report and "judge_error" in report
    # nothing is lost: a second run retries only what failed; the rest comes from the cache
    judge_server.garbage = set()
    calls = len(judge_server.requests)
    assert main([*args, "--reference", str(ref), "--judge-samples", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["excluded"] == {"missing": 1}
    fresh = [p for _, _, p in judge_server.log[calls:]]
    assert fresh and all("GARBLED" in p or '"final_answer": "x"' in p for p in fresh)


def test_compare_runs_without_a_common_task_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = make_suite(tmp_path / "one")
    other = make_suite(tmp_path / "other")
    tasks = other / "tasks" / "tasks.yaml"
    tasks.write_text(tasks.read_text().replace("- id: ", "- id: x-"))
    a = make_run(tmp_path / "runs", one, "a", [traj("add", answer="5")])
    b = make_run(tmp_path / "runs", other, "b", [traj("x-add", answer="5")])
    assert main(["compare", "--runs", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 2
    assert "no task id in common" in capsys.readouterr().err


def test_an_episode_cut_short_is_read_to_its_last_node() -> None:
    """ToolBench's converter reads the last message list; an episode without a chosen path (a
    budget ran out) shows the judge the path to its last node."""
    cut = traj("a", status=Status.budget_exhausted, answer=None, calls=[[add_call(2, 3)]])
    cut.chosen_path = []
    answer = converted_answer(cut)
    assert "add_for_calc" in json.dumps(answer) and not final_step_is_finish(answer)
    assert final_step_is_finish(converted_answer(traj("a", answer="5")))
