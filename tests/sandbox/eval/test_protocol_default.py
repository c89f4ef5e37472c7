"""The ``default`` protocol's judge, over real HTTP: a majority of samples, a second look on an
Unsure majority, and ``select_better_answer`` on whole answers in both orders."""

from __future__ import annotations

from outcome_builders import add_call, task, traj
from tooleval_judge_server import ToolEvalJudgeServer

from sandbox.eval.pass_rate import label_run
from sandbox.eval.protocol import JudgeSettings
from sandbox.eval.protocol_default import majority
from sandbox.eval.protocols import get_protocol
from sandbox.eval.win_rate import RunSide

DEFAULT = get_protocol("default")


def test_majority() -> None:
    assert majority(["Solved", "Unsolved", "Solved"]) == "Solved"
    assert majority(["Solved", "Unsolved"]) == "Unsure"
    assert majority([]) == "Unsure"


async def test_majority_of_samples_and_a_second_look(judge_server: ToolEvalJudgeServer) -> None:
    judge_server.statuses = {"MIXED": ["Solved", "Unsolved", "Unsolved"], "HMM": ["Unsure"]}
    judge_server.second_looks = {"HMM": ["Solved", "Solved", "Unsolved"]}
    tasks = [task("a"), task("b"), task("c", solvable=False)]
    trajs = [
        traj("a", answer="MIXED"),
        traj("b", answer="HMM", calls=[[add_call(2, 3)]]),
        traj("c", answer="it works"),
    ]
    keys = [(t.id, 0) for t in tasks]
    out = await DEFAULT.label(trajs, tasks, keys, judge_server.judge(), JudgeSettings(samples=3))
    assert [(lb.label, lb.method) for lb in out] == [
        ("unsolved", "judge"),
        ("solved", "judge"),
        ("solved", "judge"),
    ]
    assert "Solved 1, Unsolved 2" in out[0].reason and "second look" in out[1].reason
    assert (
        judge_server.count("check_answer_status") == 9
        and judge_server.count("parse_answer_status") == 3
    )
    # the judge is told that task c cannot be done
    asked_c = [p for f, _, p in judge_server.log if "it works" in p]
    assert asked_c and all("cannot be done with the tools" in p for p in asked_c)


async def test_checks_and_rules_come_before_the_judge(judge_server: ToolEvalJudgeServer) -> None:
    tasks = [task("a", checks=[{"kind": "contains", "value": "5"}])]
    out = await DEFAULT.label(
        [traj("a", answer="5")], tasks, [("a", 0)], judge_server.judge(), JudgeSettings()
    )
    assert out[0].method == "check" and judge_server.requests == []


async def test_undecided_pairs_go_to_the_judge_in_both_orders_with_whole_answers(
    judge_server: ToolEvalJudgeServer,
) -> None:
    tasks = [task("a")]
    cand = [traj("a", answer="GOOD five", calls=[[add_call(2, 3)]])]
    ref = [traj("a", answer="five", calls=[[add_call(2, 3)]])]
    sides = [
        RunSide(name=n, trajectories=t, labels=label_run(t, tasks))
        for n, t in (("c", cand), ("r", ref))
    ]
    out = await DEFAULT.prefer(
        sides[0], sides[1], tasks, judge_server.judge(), JudgeSettings(rounds=2), seed=0
    )
    assert (out[0].winner, out[0].rule, out[0].decided_by) == (
        "candidate",
        "better_answer",
        "judge",
    )
    asked = [p for f, _, p in judge_server.log if f == "select_better_answer"]
    assert len(asked) == 4  # 2 rounds x both orders
    assert sum("GOOD" in p.split("Answer 1 (JSON):")[0] for p in asked) == 2
    assert all("add_for_calc" in p for p in asked)  # the steps, not the final answers alone
    w = DEFAULT.summarise_wins(out, candidate="c", reference="r", seed=0)
    assert w.tie_value == 0.5


async def test_a_position_biased_judge_cancels_out(judge_server: ToolEvalJudgeServer) -> None:
    tasks = [task("a")]
    cand, ref = [traj("a", answer="one")], [traj("a", answer="two")]
    sides = [
        RunSide(name=n, trajectories=t, labels=label_run(t, tasks))
        for n, t in (("c", cand), ("r", ref))
    ]
    out = await DEFAULT.prefer(
        sides[0], sides[1], tasks, judge_server.judge(), JudgeSettings(), seed=0
    )
    assert out[0].winner == "tie" and out[0].decided_by == "judge"
