"""ToolEval's preference over rounds (``sandbox.eval.tooleval.preference``) with a scripted round
rule: who is shown first in each round, what the rule is given (the task's query, the answers as
``process_answer`` leaves them, the round's index and generator), how round wins add up to the
episode's winner, and the missing-answer and judge-failure outcomes. Expected values follow
``eval_preference.py`` / ``annotate_preference`` as docs/evaluation.md states them, by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest
from outcome_builders import call, task, traj

from agents.trajectory import Status
from sandbox.eval.judge import JudgeError
from sandbox.eval.pass_rate import label_run
from sandbox.eval.stats import seeded_rng
from sandbox.eval.tooleval.preference import PREFERENCE_SEED_BASE, prefer_by_rounds, shown_first
from sandbox.eval.win_rate import RunSide

TASKS = [task("a", query="Query of a?"), task("b", query="Query of b?")]


def _coin(*key: object) -> bool:
    return seeded_rng(*key).random() < 0.5


def test_alternate_order_starts_by_a_seeded_coin_and_swaps_every_round() -> None:
    """Round 0 shows the reference first when the coin keyed by (seed, "order", task, trial)
    says so; each later round shows the other side first than the round before."""
    starts = set()
    for n in range(12):
        task_id = f"task-{n}"
        first = "reference" if _coin(9, "order", task_id, 2) else "candidate"
        other = "candidate" if first == "reference" else "reference"
        got = [shown_first("alternate", 9, task_id, 2, r) for r in range(4)]
        assert got == [first, other, first, other]
        starts.add(first)
    assert starts == {"reference", "candidate"}


def test_random_order_draws_a_coin_per_round() -> None:
    """``--judge-order random``: ToolEval's shuffle, a coin keyed by the round as well."""
    got = [shown_first("random", 4, "t", 1, r) for r in range(16)]
    assert got == ["reference" if _coin(4, "order", "t", 1, r) else "candidate" for r in range(16)]


class ScriptedRule:
    """A round rule that picks the answer shown at ``pick`` and records what it was given."""

    def __init__(self, pick: int = 0, fail_on: str | None = None) -> None:
        self.pick = pick
        self.fail_on = fail_on
        self.seen: list[dict[str, Any]] = []

    async def __call__(
        self, judge: object, query: str, answers: list[dict[str, Any]], *, index: int, rng: Any
    ) -> int:
        self.seen.append({"query": query, "answers": answers, "index": index, "draw": rng.random()})
        if self.fail_on is not None and self.fail_on in json.dumps(answers):
            raise JudgeError("the judge gave no valid answer")
        return self.pick


def _side(name: str, trajs: list[Any]) -> RunSide:
    return RunSide(name=name, trajectories=trajs, labels=label_run(trajs, TASKS))


async def _prefer(rule: ScriptedRule, cand: list[Any], ref: list[Any], rounds: int, **kw: Any):
    return await prefer_by_rounds(
        _side("cand", cand),
        _side("ref", ref),
        TASKS,
        object(),
        rule,
        rounds=rounds,
        order=kw.get("order", "alternate"),
        seed=kw.get("seed", 3),
    )


async def test_a_judge_that_always_picks_the_first_answer_ties_over_two_rounds() -> None:
    rule = ScriptedRule(pick=0)
    out = await _prefer(rule, [traj("a", answer="cand")], [traj("a", answer="ref")], rounds=2)
    first = shown_first("alternate", 3, "a", 0, 0)
    second = "candidate" if first == "reference" else "reference"
    assert [(o.task_id, o.winner, o.rule, o.decided_by, o.rounds) for o in out] == [
        ("a", "tie", "rounds 1-1", "judge", [first, second]),
        ("b", "candidate", "missing_reference", "rule", []),
    ]


async def test_more_round_wins_decide_the_episode() -> None:
    """Three rounds, the first-shown answer always picked: the side shown first in rounds 0 and
    2 wins 2-1; picking the second-shown answer hands it to the other side."""
    cand, ref = [traj("a", answer="cand")], [traj("a", answer="ref")]
    first = shown_first("alternate", 3, "a", 0, 0)
    other = "candidate" if first == "reference" else "reference"
    (out, _) = await _prefer(ScriptedRule(pick=0), cand, ref, rounds=3)
    c, r = (2, 1) if first == "candidate" else (1, 2)
    assert (out.winner, out.rule, out.rounds) == (first, f"rounds {c}-{r}", [first, other, first])
    (flipped, _) = await _prefer(ScriptedRule(pick=1), cand, ref, rounds=3)
    assert (flipped.winner, flipped.rule) == (other, f"rounds {r}-{c}")


async def test_each_round_sees_the_query_the_answers_its_index_and_its_generator() -> None:
    rule = ScriptedRule()
    cand = [traj("a", answer="from cand", calls=[[call("add")]], trial=1)]
    ref = [traj("a", answer="from ref", trial=1, agent="dfsdt")]
    out = await _prefer(rule, cand, ref, rounds=2, seed=5)
    assert [(o.task_id, o.trial) for o in out] == [("a", 1), ("b", 0)]
    assert [s["index"] for s in rule.seen] == [PREFERENCE_SEED_BASE, PREFERENCE_SEED_BASE + 1]
    assert PREFERENCE_SEED_BASE == 1000
    assert {s["query"] for s in rule.seen} == {"Query of a?"}
    assert [s["draw"] for s in rule.seen] == [
        seeded_rng(5, "choice", "a", 1, r).random() for r in range(2)
    ]
    for r, seen in enumerate(rule.seen):
        first = shown_first("alternate", 5, "a", 1, r)
        texts = [json.loads(a["final_answer"])["final_answer"] for a in seen["answers"]]
        assert texts == (
            ["from ref", "from cand"] if first == "reference" else ["from cand", "from ref"]
        )
        assert all("method" not in a and "answer_details" in a for a in seen["answers"])


async def test_an_episode_that_failed_in_the_infrastructure_has_no_answer() -> None:
    """It counts as missing: the other side wins without a question."""
    broken = traj("a", status=Status.error, answer=None, infra=True)
    rule = ScriptedRule()
    out = await _prefer(rule, [broken, traj("b")], [traj("a"), traj("b", status=Status.error)], 2)
    assert [(o.task_id, o.winner, o.rule) for o in out][0] == (
        "a",
        "reference",
        "missing_candidate",
    )
    # b's reference ended on an error that was the agent's own (no infra record): it is judged
    assert out[1].rule.startswith("rounds ") and len(rule.seen) == 2


async def test_missing_answers_of_later_trials_name_their_trial() -> None:
    out = await _prefer(ScriptedRule(), [traj("a", trial=2)], [traj("b", trial=3)], rounds=2)
    assert [(o.task_id, o.trial, o.winner, o.rule) for o in out] == [
        ("a", 2, "candidate", "missing_reference"),
        ("b", 3, "reference", "missing_candidate"),
    ]


async def test_a_judge_failure_in_any_round_makes_the_pair_a_listed_judge_error() -> None:
    rule = ScriptedRule(fail_on="BROKEN")
    out = await _prefer(
        rule,
        [traj("a", answer="BROKEN", trial=1), traj("b", answer="fine")],
        [traj("a", answer="x", trial=1), traj("b", answer="y")],
        rounds=2,
    )
    assert [(o.task_id, o.trial) for o in out] == [("a", 1), ("b", 0)]
    assert out[0].model_dump(include={"winner", "rule", "decided_by", "judge_error", "rounds"}) == {
        "winner": "tie",
        "rule": "judge_error",
        "decided_by": "judge",
        "judge_error": "the judge gave no valid answer",
        "rounds": [],
    }
    assert out[1].judge_error is None and len(out[1].rounds) == 2


@pytest.mark.parametrize("order", ["alternate", "random"])
async def test_the_rounds_follow_the_chosen_order(order: str) -> None:
    rule = ScriptedRule(pick=0)
    out = await _prefer(rule, [traj("a", answer="c")], [traj("a", answer="r")], 6, order=order)
    assert out[0].rounds == [shown_first(order, 3, "a", 0, r) for r in range(6)]
