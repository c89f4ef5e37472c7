"""ToolEval's decisions (``sandbox.eval.tooleval.rules``) case by case, on a scripted judge.

Each expected winner and each question asked is worked out by hand from StableToolBench's
``registered_cls/rtl.py`` (``check_is_solved``, ``normalized_openai_completions``,
``select_better_answer``) and ``registered_cls/tooleval.py`` (``OpenAINormalizedEvaluator``), as
docs/evaluation.md summarises them. The judge here is a stand-in that records every question
(function, fields, sample index, reason flag, choices) and answers from a script."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from sandbox.eval.tooleval.functions import better_fields
from sandbox.eval.tooleval.rules import (
    check_is_solved,
    details_score,
    normalized_round,
    select_better,
    toolbench_round,
)

Reply = Callable[[dict[str, str]], dict[str, Any]]


class ScriptedJudge:
    """Answers each function with its scripted reply; keeps every question asked."""

    def __init__(self, **replies: Reply) -> None:
        self.replies = replies
        self.asked: list[tuple[str, dict[str, str], int, bool, int]] = []

    async def ask(
        self,
        function: str,
        fields: dict[str, str],
        *,
        index: int = 0,
        reason: bool = False,
        choices: int = 2,
    ) -> dict[str, Any]:
        self.asked.append((function, fields, index, reason, choices))
        return self.replies[function](fields)

    def functions(self) -> list[str]:
        return [a[0] for a in self.asked]


def _answer(text: str, steps: int = 3, details: object = None) -> dict[str, Any]:
    """A converted answer whose ``final_answer`` is the ``Finish`` arguments of ``text``."""
    finish = {"return_type": "give_answer", "final_answer": text}
    final = json.dumps(finish, ensure_ascii=False) if text else ""
    return {"final_answer": final, "total_steps": steps, "answer_details": details or []}


def _status_by_marker(table: dict[str, str]) -> Reply:
    def reply(fields: dict[str, str]) -> dict[str, Any]:
        status = next(s for marker, s in table.items() if marker in fields["answer"])
        return {"answer_status": status, "reason": f"judged {status}"}

    return reply


# -- check_is_solved ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "final",
    [
        "",
        "   ",
        '{"return_type": "give_up_and_restart", "final_answer": "no"}',
        json.dumps({"return_type": "give_answer", "final_answer": ""}),
    ],
)
async def test_empty_answers_and_give_ups_are_unsolved_without_a_question(final: str) -> None:
    judge = ScriptedJudge()
    verdict = await check_is_solved(judge, "q", {"final_answer": final}, index=2)
    assert (verdict.status, verdict.asked, verdict.second_look) == ("Unsolved", False, False)
    assert verdict.reason == "empty final answer or a give-up" and judge.asked == []


async def test_a_verdict_on_the_final_answer_is_final_unless_unsure() -> None:
    judge = ScriptedJudge(check_answer_status=_status_by_marker({"yes": "Solved"}))
    answer = _answer("yes")
    verdict = await check_is_solved(judge, "the query", answer, index=3)
    assert (verdict.status, verdict.reason, verdict.asked, verdict.second_look) == (
        "Solved",
        "judged Solved",
        True,
        False,
    )
    assert judge.asked == [
        (
            "check_answer_status",
            {"query": "the query", "answer": answer["final_answer"]},
            3,
            True,
            2,
        )
    ]


async def test_unsure_gets_a_second_look_at_the_whole_answer() -> None:
    """The second look sees the whole answer as JSON, non-ASCII text as written; its status is
    final and its reason is the one reported."""
    judge = ScriptedJudge(
        check_answer_status=lambda f: {"answer_status": "Unsure"},
        parse_answer_status=lambda f: {"answer_status": "Unsolved", "reason": "no data"},
    )
    answer = _answer("café à Paris", steps=2)
    verdict = await check_is_solved(judge, "q", answer, index=1, reason=False)
    assert (verdict.status, verdict.reason, verdict.asked, verdict.second_look) == (
        "Unsolved",
        "no data",
        True,
        True,
    )
    (first, second) = judge.asked
    assert (first[0], first[2], first[3]) == ("check_answer_status", 1, False)
    assert second == (
        "parse_answer_status",
        {"query": "q", "answer": json.dumps(answer, ensure_ascii=False)},
        1,
        False,
        2,
    )
    assert "café" in second[1]["answer"]


async def test_a_verdict_without_a_reason_reports_an_empty_one() -> None:
    judge = ScriptedJudge(check_answer_status=lambda f: {"answer_status": "Unsolved"})
    verdict = await check_is_solved(judge, "q", _answer("x"), index=0)
    assert (verdict.status, verdict.reason) == ("Unsolved", "")
    second = ScriptedJudge(
        check_answer_status=lambda f: {"answer_status": "Unsure", "reason": "hmm"},
        parse_answer_status=lambda f: {"answer_status": "Solved"},
    )
    verdict = await check_is_solved(second, "q", _answer("x"), index=0)
    assert (verdict.status, verdict.reason, verdict.second_look) == ("Solved", "", True)
    # asked for reasons by default, on both looks
    assert [(a[0], a[3]) for a in second.asked] == [
        ("check_answer_status", True),
        ("parse_answer_status", True),
    ]


# -- toolbench_round ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statuses", "expected", "selected"),
    [
        (("Solved", "Unsolved"), 0, False),  # exactly one Solved wins
        (("Unsolved", "Solved"), 1, False),
        (("Solved", "Unsure"), 0, False),  # one Solved beats an Unsure too
        (("Unsure", "Solved"), 1, False),
        (("Unsure", "Unsolved"), 0, False),  # no Solved: exactly one Unsure wins
        (("Unsolved", "Unsure"), 1, False),
        (("Solved", "Solved"), 1, True),  # both Solved: select_better_answer
        (("Unsure", "Unsure"), 1, True),  # two Unsure: select_better_answer
        (("Unsolved", "Unsolved"), 1, True),  # all failed: select_better_answer
    ],
)
async def test_a_toolbench_round(statuses: tuple[str, str], expected: int, selected: bool) -> None:
    """Statuses are asked for without reasons, at the round's index; the judge's selection (1
    here) decides when the statuses do not."""
    table = {"first": statuses[0], "second": statuses[1]}
    judge = ScriptedJudge(
        check_answer_status=_status_by_marker(table),
        parse_answer_status=_status_by_marker(table),
        select_better_answer=lambda f: {"index": 1},
    )
    answers = [_answer("first"), _answer("second")]
    got = await toolbench_round(judge, "q", answers, index=1001, rng=random.Random(0))
    assert got == expected
    assert ("select_better_answer" in judge.functions()) == selected
    status_questions = [a for a in judge.asked if a[0] != "select_better_answer"]
    assert {(a[2], a[3]) for a in status_questions} == {(1001, False)}
    if selected:
        assert judge.asked[-1] == (
            "select_better_answer",
            better_fields("q", answers[0], answers[1]),
            1001,
            True,
            2,
        )


async def test_identical_answers_are_a_coin_of_the_rounds_generator() -> None:
    """ToolEval's ``check_identity_answers``: the same final answer and the same details are a
    random pick without a question; here the pick is the round's seeded generator's."""
    judge = ScriptedJudge()
    same = [_answer("x", details=[{"role": "tool"}]), _answer("x", details=[{"role": "tool"}])]
    for seed in range(8):
        got = await select_better(judge, "q", same, index=0, rng=random.Random(seed))
        assert got == random.Random(seed).choice([0, 1])
    assert judge.asked == []


# -- the normalized evaluator ------------------------------------------------------------------


def test_the_details_score() -> None:
    """``10 * succeed_tool_calling + 5 * used_tool_types - 5 * ln(total_steps)``."""
    assert details_score(2, 1, 1) == pytest.approx(25.0)
    assert details_score(3, 2, 4) == pytest.approx(40.0 - 5.0 * math.log(4))
    assert details_score(3, 2, 0) == -100_000.0
    assert details_score(3, 2, -1) == -100_000.0


def _solved_unless(marker: str) -> Reply:
    return lambda f: {"is_solved": marker not in f["final_answer"]}


async def test_both_solved_fewer_steps_wins() -> None:
    judge = ScriptedJudge(check_solve_query=_solved_unless("NOT"))
    for steps, winner in (((2, 5), 0), ((5, 2), 1)):
        answers = [_answer("a", steps=steps[0]), _answer("b", steps=steps[1])]
        assert await normalized_round(judge, "q", answers, index=7, rng=random.Random(0)) == winner
    assert judge.asked[0] == (
        "check_solve_query",
        {"query": "q", "final_answer": _answer("a")["final_answer"]},
        7,
        False,
        2,
    )


async def test_an_answer_without_a_step_count_has_none() -> None:
    """Both solved: an answer that states no ``total_steps`` counts 0 steps, fewer than 1."""
    judge = ScriptedJudge(check_solve_query=_solved_unless("NOT"))
    unstated = {"final_answer": _answer("a")["final_answer"], "answer_details": []}
    for answers, winner in (
        ([unstated, _answer("b", steps=1)], 0),
        ([_answer("b", steps=1), unstated], 1),
    ):
        assert await normalized_round(judge, "q", answers, index=0, rng=random.Random(0)) == winner
    assert judge.functions() == ["check_solve_query"] * 4


async def test_both_solved_in_as_few_steps_asks_for_the_best_final_answer() -> None:
    """Only the answers with the fewest steps are shown (as a JSON list); the judge's index is
    into that list."""
    judge = ScriptedJudge(
        check_solve_query=_solved_unless("NOT"),
        select_best_final_answer=lambda f: {"best_answer_index": 1},
    )
    answers = [
        _answer("long", steps=4),
        _answer("été", steps=2),
        _answer("other", steps=2),
        _answer("third", steps=2),
    ]
    got = await normalized_round(judge, "q", answers, index=5, rng=random.Random(0))
    assert got == 2
    tied = [a["final_answer"] for a in answers[1:]]
    assert judge.asked[-1] == (
        "select_best_final_answer",
        {"query": "q", "final_answers": json.dumps(tied, ensure_ascii=False)},
        5,
        False,
        3,  # the reply's index must be below the length of the list shown
    )


async def test_both_solved_with_the_same_final_answer_is_a_coin() -> None:
    judge = ScriptedJudge(check_solve_query=_solved_unless("NOT"))
    answers = [_answer("same", steps=1), _answer("same", steps=3), _answer("same", steps=1)]
    for seed in range(6):
        got = await normalized_round(judge, "q", answers, index=0, rng=random.Random(seed))
        assert got == [0, 2][random.Random(seed).randrange(2)]
    assert "select_best_final_answer" not in judge.functions()


async def test_exactly_one_solved_wins() -> None:
    judge = ScriptedJudge(check_solve_query=_solved_unless("NOT"))
    for texts, winner in ((("NOT a", "b"), 1), (("a", "NOT b"), 0)):
        answers = [_answer(texts[0]), _answer(texts[1])]
        assert await normalized_round(judge, "q", answers, index=0, rng=random.Random(1)) == winner
    assert "parse_answer_details" not in judge.functions()


def _details(counts: dict[str, tuple[int, int]]) -> Reply:
    def reply(fields: dict[str, str]) -> dict[str, Any]:
        ok, kinds = next(v for m, v in counts.items() if m in fields["answer_details"])
        return {"succeed_tool_calling": ok, "used_tool_types": kinds}

    return reply


async def test_neither_solved_the_higher_details_score_wins() -> None:
    """A: 2 calls, 1 tool, 1 step: 25; B: 2 calls, 2 tools, 4 steps: 30 - 5 ln 4 = 23.07."""
    judge = ScriptedJudge(
        check_solve_query=_solved_unless("NOT"),
        parse_answer_details=_details({"A-ü": (2, 1), "B": (2, 2)}),
    )
    a = _answer("NOT a", steps=1, details=[{"role": "tool", "message": "A-ü"}])
    b = _answer("NOT b", steps=4, details=[{"role": "tool", "message": "B"}])
    assert await normalized_round(judge, "q", [a, b], index=2, rng=random.Random(0)) == 0
    assert await normalized_round(judge, "q", [b, a], index=2, rng=random.Random(0)) == 1
    details = [a for a in judge.asked if a[0] == "parse_answer_details"][0]
    assert details == (
        "parse_answer_details",
        {"answer_details": json.dumps(a["answer_details"], ensure_ascii=False)},
        2,
        False,
        2,
    )


async def test_equal_details_scores_are_a_coin() -> None:
    judge = ScriptedJudge(
        check_solve_query=_solved_unless("NOT"),
        parse_answer_details=lambda f: {"succeed_tool_calling": 1, "used_tool_types": 1},
    )
    answers = [_answer("NOT a", steps=2), _answer("NOT b", steps=2)]
    for seed in range(6):
        got = await normalized_round(judge, "q", answers, index=0, rng=random.Random(seed))
        assert got == random.Random(seed).choice([0, 1])


async def test_empty_final_answers() -> None:
    """One empty: the other wins without a question; both empty: the details decide (an
    answer without steps scores -100000)."""
    judge = ScriptedJudge(
        parse_answer_details=lambda f: {"succeed_tool_calling": 0, "used_tool_types": 0}
    )
    for answers, winner in (
        ([_answer(""), _answer("b")], 1),
        ([_answer("a"), _answer("")], 0),
    ):
        assert await normalized_round(judge, "q", answers, index=0, rng=random.Random(0)) == winner
    assert judge.asked == []
    # no steps: -100000; 3 steps and nothing achieved: -5 ln 3, which is better
    both = [_answer("", steps=0), _answer("", steps=3)]
    assert await normalized_round(judge, "q", both, index=0, rng=random.Random(0)) == 1
    assert await normalized_round(judge, "q", both[::-1], index=0, rng=random.Random(0)) == 0
    assert judge.functions() == ["parse_answer_details"] * 4
