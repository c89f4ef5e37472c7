"""ToolEval's decisions, each a few judge calls: is an answer solved, which of two is better.

From StableToolBench's ``toolbench/tooleval/evaluators/registered_cls/rtl.py``
(``ReinforceToolLearningEvaluator``) and ToolBench's ``registered_cls/tooleval.py``
(``OpenAINormalizedEvaluator``):

- ``check_is_solved``: an empty final answer or a give-up is Unsolved without asking; otherwise
  ``check_answer_status`` on the final answer, and on Unsure ``parse_answer_status`` on the whole
  answer (a second look whose status is final, Unsure included).
- ``toolbench_round`` (``normalized_openai_completions`` of rtl.py): each answer's status by
  ``check_is_solved``; exactly one Solved wins; both Solved: ``select_better_answer``; else
  exactly one Unsure wins; else ``select_better_answer`` (among the two Unsure, or among all).
  ToolEval asks ``check_task_solvable`` before the last two selections and never uses the
  answer (its ``task_status`` does not reach the prompt): that call is skipped here.
- ``select_better``: identical answers (same final answer and details) are a seeded coin flip
  without a call; otherwise ``select_better_answer`` with both answers as JSON.
- ``normalized_round`` (``OpenAINormalizedEvaluator.normalized_openai_completions``): with both
  final answers non-empty, ``check_solve_query`` on each; both solved: fewer ``total_steps``
  wins, equal steps ``select_best_final_answer`` (identical answers: a coin); neither:
  ``compare_answer_details``; one: it wins. Both empty: ``compare_answer_details``; one empty: the
  other wins. ``compare_answer_details`` asks ``parse_answer_details`` per answer and scores
  ``10 * succeed_tool_calling + 5 * used_tool_types - 5 * ln(total_steps)`` (-100000 without
  steps); the higher wins, a tie is a coin.

Answers are converted-answer dicts (``tooleval_answer``); a round's answers are in the order the
judge is shown them, and the result is the index of the better one. Random choices come from the
``rng`` the caller seeds (the run's seed, task, trial and round), never from global state.
May import ``eval`` modules only.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from typing import Any

from sandbox.eval.judge import Judge
from sandbox.eval.tooleval_answer import empty_or_give_up, same_answer

__all__ = [
    "StatusVerdict",
    "better_fields",
    "check_is_solved",
    "details_score",
    "normalized_round",
    "select_better",
    "toolbench_round",
]

NO_STEPS_SCORE = -100_000.0


class StatusVerdict:
    """A status with how it was reached: ``asked`` (judge calls made) and the judge's reason."""

    __slots__ = ("asked", "reason", "second_look", "status")

    def __init__(self, status: str, reason: str, *, asked: bool, second_look: bool = False):
        self.status = status
        self.reason = reason
        self.asked = asked
        self.second_look = second_look


async def check_is_solved(
    judge: Judge, query: str, answer: dict[str, Any], *, index: int, reason: bool = True
) -> StatusVerdict:
    """Solved / Unsolved / Unsure of one answer, one sample (``index``)."""
    final = str(answer.get("final_answer") or "")
    if empty_or_give_up(final):
        return StatusVerdict("Unsolved", "empty final answer or a give-up", asked=False)
    first = await judge.ask(
        "check_answer_status", {"query": query, "answer": final}, index=index, reason=reason
    )
    if first["answer_status"] != "Unsure":
        return StatusVerdict(first["answer_status"], str(first.get("reason", "")), asked=True)
    whole = json.dumps(answer, ensure_ascii=False)
    second = await judge.ask(
        "parse_answer_status", {"query": query, "answer": whole}, index=index, reason=reason
    )
    return StatusVerdict(
        second["answer_status"], str(second.get("reason", "")), asked=True, second_look=True
    )


async def select_better(
    judge: Judge,
    query: str,
    answers: Sequence[dict[str, Any]],
    *,
    index: int,
    rng: random.Random,
) -> int:
    """0 or 1: the better of two answers (a coin for identical ones)."""
    if same_answer(answers[0], answers[1]):
        return rng.choice([0, 1])
    reply = await judge.ask(
        "select_better_answer",
        better_fields(query, answers[0], answers[1]),
        index=index,
        reason=True,
    )
    return int(reply["index"])


def better_fields(query: str, first: dict[str, Any], second: dict[str, Any]) -> dict[str, str]:
    """``select_better_answer``'s prompt fields: both answers as JSON, ``first`` as answer 0."""
    return {
        "query": query,
        "answer_0": json.dumps(first, ensure_ascii=False),
        "answer_1": json.dumps(second, ensure_ascii=False),
    }


async def toolbench_round(
    judge: Judge,
    query: str,
    answers: Sequence[dict[str, Any]],
    *,
    index: int,
    rng: random.Random,
) -> int:
    """One preference round of ToolEval's default evaluator."""
    statuses = [
        (await check_is_solved(judge, query, a, index=index, reason=False)).status for a in answers
    ]
    solved = [i for i, s in enumerate(statuses) if s == "Solved"]
    if len(solved) == 1:
        return solved[0]
    if len(solved) < 2:
        unsure = [i for i, s in enumerate(statuses) if s == "Unsure"]
        if len(unsure) == 1:
            return unsure[0]
    return await select_better(judge, query, answers, index=index, rng=rng)


def details_score(succeed_tool_calling: int, used_tool_types: int, total_steps: int) -> float:
    """``compare_answer_details``' score of one answer."""
    if total_steps <= 0:
        return NO_STEPS_SCORE
    return 10.0 * succeed_tool_calling + 5.0 * used_tool_types - 5.0 * math.log(total_steps)


async def _compare_details(
    judge: Judge, answers: Sequence[dict[str, Any]], *, index: int, rng: random.Random
) -> int:
    scores = []
    for a in answers:
        parsed = await judge.ask(
            "parse_answer_details",
            {"answer_details": json.dumps(a.get("answer_details"), ensure_ascii=False)},
            index=index,
        )
        scores.append(
            details_score(
                parsed["succeed_tool_calling"],
                parsed["used_tool_types"],
                int(a.get("total_steps") or 0),
            )
        )
    best = max(scores)
    return rng.choice([i for i, s in enumerate(scores) if s == best])


async def normalized_round(
    judge: Judge,
    query: str,
    answers: Sequence[dict[str, Any]],
    *,
    index: int,
    rng: random.Random,
) -> int:
    """One preference round of ToolEval's normalized evaluator."""
    finals = [str(a.get("final_answer") or "") for a in answers]
    nonempty = [i for i, f in enumerate(finals) if f != ""]
    if len(nonempty) == len(answers):
        solved = []
        for i, f in enumerate(finals):
            reply = await judge.ask(
                "check_solve_query", {"query": query, "final_answer": f}, index=index
            )
            if reply["is_solved"]:
                solved.append(i)
        if len(solved) == len(answers):
            steps = [int(a.get("total_steps") or 0) for a in answers]
            shortest = [i for i, s in enumerate(steps) if s == min(steps)]
            if len(shortest) == 1:
                return shortest[0]
            tied = [finals[i] for i in shortest]
            if len(set(tied)) == 1:
                return shortest[rng.randrange(len(shortest))]
            reply = await judge.ask(
                "select_best_final_answer",
                {"query": query, "final_answers": json.dumps(tied, ensure_ascii=False)},
                index=index,
                choices=len(tied),
            )
            return shortest[int(reply["best_answer_index"])]
        if not solved:
            return await _compare_details(judge, answers, index=index, rng=rng)
        return rng.choice(solved)
    if not nonempty:
        return await _compare_details(judge, answers, index=index, rng=rng)
    return rng.choice(nonempty)
