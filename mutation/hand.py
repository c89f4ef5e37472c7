"""Hand-written mutants: one-line bugs in the core's promises that once shipped green.

Issue 30 found the first nine surviving the whole suite, issue 38 the next eight. Each is
applied to a copy of the checkout and the tests named beside it are run: at least one must fail.
An entry whose ``before`` text is no longer in its file is stale (the code moved): it is
reported, and fails the check, so the table moves with the code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mutation.workdir import copy_checkout

__all__ = ["HAND_MUTANTS", "HandMutant", "HandResult", "check_hand_mutants"]


@dataclass(frozen=True)
class HandMutant:
    file: str
    before: str
    after: str
    breaks: str
    """What the bug breaks, as a user would see it."""
    tests: tuple[str, ...]
    """The tests that must catch it (pytest node ids: the tests that name the behaviour)."""


_DFSDT = "tests/agents/test_dfsdt.py::"
_REPLAY = "tests/sandbox/test_replay_compare.py::"
_OVERLAY = "tests/mock_tools/test_simulation.py::"
_PASS_RATE = "tests/sandbox/eval/test_pass_rate.py::"
_POOLING = "tests/sandbox/view/test_leaderboard_pooling.py::"
_PROXY = "tests/sandbox/external/test_proxy_wire.py::"

HAND_MUTANTS: tuple[HandMutant, ...] = (
    HandMutant(
        "agents/dfsdt.py",
        '"backtracks": search.give_ups + search.depth_limited + search.model_errors,',
        '"backtracks": search.give_ups + search.depth_limited,',
        "the backtracks statistic leaves out pruned model errors",
        (_DFSDT + "test_backtracks_count_every_dead_end_a_pruned_model_error_included",),
    ),
    HandMutant(
        "agents/dfsdt.py",
        "return climb - 1",
        "return climb - 2",
        "DFSDT resumes one level too low after a climb of three or more levels",
        (
            _DFSDT + "test_a_dead_end_resumes_the_search_the_configured_number_of_levels_up",
            _DFSDT + "test_a_climb_past_the_root_ends_the_search",
        ),
    ),
    HandMutant(
        "agents/accounting.py",
        "u.prompt_tokens + u.completion_tokens >= b.max_tokens",
        "u.prompt_tokens + u.completion_tokens > b.max_tokens",
        "--max-tokens N allows one model call after N tokens are spent",
        (
            "tests/agents/test_react.py::"
            "test_a_spend_limit_stops_at_exactly_its_value_and_not_one_call_before",
            "tests/agents/test_accounting.py::"
            "test_each_spend_limit_blocks_exactly_when_it_is_reached",
        ),
    ),
    HandMutant(
        "sandbox/replay/replay.py",
        "if len(got.nodes) > len(expected.nodes):",
        "if len(got.nodes) < len(expected.nodes):",
        "a replay that grew more nodes than the recording is reproduced",
        (_REPLAY + "test_a_re_run_that_grew_a_node_more_is_divergent_at_that_node",),
    ),
    HandMutant(
        "sandbox/replay/replay.py",
        'for field in ("status", "final_answer", "chosen_path"):',
        'for field in ("status", "final_answer"):',
        "a replay that chose another path is reproduced",
        (_REPLAY + "test_a_re_run_that_chose_another_path_is_divergent",),
    ),
    HandMutant(
        "sandbox/replay/replay.py",
        "if ok_a != ok_b:",
        "if False:",
        "a call that failed live and succeeded in replay goes unnoticed",
        (_REPLAY + "test_a_call_that_failed_live_and_succeeded_in_replay_is_divergent",),
    ),
    HandMutant(
        "mock_tools/overlay.py",
        "INSERT OR IGNORE INTO responses",
        "INSERT OR REPLACE INTO responses",
        "a second simulated answer replaces the first one served",
        (
            _OVERLAY
            + "test_two_servers_simulating_one_miss_at_once_both_serve_the_first_stored_answer",
            _OVERLAY + "test_the_overlay_keeps_the_first_answer_stored_for_a_call",
        ),
    ),
    HandMutant(
        "sandbox/eval/pass_rate.py",
        "if not task.solvable and states_cannot_do(answer):",
        "if states_cannot_do(answer):",
        "a refusal on a solvable task is counted as solved",
        (_PASS_RATE + "test_a_refusal_on_a_solvable_task_is_not_solved",),
    ),
    HandMutant(
        "sandbox/eval/pass_rate.py",
        "        if task.solvable:\n",
        "        if False:\n",
        "a give-up with an explanation on a solvable task is counted as solved",
        (_PASS_RATE + "test_give_up_on_solvable_task_is_unsolved",),
    ),
    # issue 38: slips in what users read (the leaderboard) and in what agents are sent (the proxy)
    HandMutant(
        "sandbox/view/pooling.py",
        "counted = [lb for lb in labels if counts(lb)]",
        "counted = list(labels)",
        "a pooled leaderboard row counts infrastructure and judge errors as failures",
        (_POOLING + "test_a_pooled_row_leaves_out_infra_and_judge_errors_and_says_so",),
    ),
    HandMutant(
        "sandbox/view/pooling.py",
        "return headline(rate, excluded=dict(sorted(excluded.items()))), at_k, hat_k",
        "return headline(rate), at_k, hat_k",
        "a pooled leaderboard row no longer says what it left out",
        (_POOLING + "test_a_pooled_row_leaves_out_infra_and_judge_errors_and_says_so",),
    ),
    HandMutant(
        "sandbox/view/pooling.py",
        "key=lambda r: (-(r.entry.started_at",
        "key=lambda r: ((r.entry.started_at",
        "an identical seeded repeat counts from the oldest run, not the newest",
        (_POOLING + "test_an_identical_seeded_repeat_counts_from_the_newest_run",),
    ),
    HandMutant(
        "sandbox/view/leaderboard.py",
        "acc[0] += iv.value * iv.n",
        "acc[0] += iv.value",
        "a pooled row's step scores are summed without their episode weights",
        (_POOLING + "test_step_scores_pool_weighted_by_episodes",),
    ),
    HandMutant(
        "sandbox/view/leaderboard.py",
        "-(r.win_rate if r.win_rate is not None else 0.5),",
        "(r.win_rate if r.win_rate is not None else 0.5),",
        "rows with equal pass rates rank the lower win rate first",
        (_POOLING + "test_equal_pass_rates_rank_the_higher_win_rate_first",),
    ),
    HandMutant(
        "sandbox/external/proxy.py",
        'out.append(chunk({"tool_calls": [{"index": i, **call}]}))',
        'out.append(chunk({"tool_calls": [{"index": 0, **call}]}))',
        "a streamed turn with two tool calls reaches the agent as one",
        (_PROXY + "test_a_streamed_turn_with_two_tool_calls_reaches_the_agent_as_two",),
    ),
    HandMutant(
        "sandbox/external/proxy.py",
        '"stream", "stream_options", "n")',
        '"stream", "n")',
        "the agent's stream_options are sent to the model as a parameter",
        (_PROXY + "test_transport_fields_are_not_model_parameters",),
    ),
    HandMutant(
        "sandbox/external/proxy.py",
        'if body.get("n") not in (None, 1):',
        'if body.get("n") is not None:',
        "an explicit n: 1 is refused",
        (_PROXY + "test_one_choice_is_accepted",),
    ),
)


@dataclass(frozen=True)
class HandResult:
    mutant: HandMutant
    outcome: str
    """``killed`` (a named test failed); ``survived``; ``stale`` (its ``before`` text is not in
    its file once); ``broken`` (its tests fail without it, or pytest could not run them)."""


def _pytest(folder: Path, tests: tuple[str, ...]) -> int:
    """pytest's exit status on ``tests``: 0 passed, 1 a test failed, others: it could not run
    them (a node id not found, a usage error)."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    # no bytecode: a mutant of the same size written within the same second as the original
    # would otherwise be served from the original's cached bytecode, or the reverse
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, cwd=folder, capture_output=True, check=False, env=env).returncode


def check_hand_mutants(root: Path, work: Path) -> list[HandResult]:
    """Apply each hand mutant to a copy of the checkout under ``work`` and run its tests (first
    all of them once on the unchanged copy: a test failing there would tell nothing)."""
    folder = work / "hand"
    if folder.exists():
        shutil.rmtree(folder)
    copy_checkout(root, folder)
    every = tuple(dict.fromkeys(t for m in HAND_MUTANTS for t in m.tests))
    clean = _pytest(folder, every) == 0
    results = []
    for mutant in HAND_MUTANTS:
        target = folder / mutant.file
        original = target.read_text(encoding="utf-8")
        if original.count(mutant.before) != 1:
            results.append(HandResult(mutant, "stale"))
            continue
        if not clean:
            results.append(HandResult(mutant, "broken"))
            continue
        target.write_text(original.replace(mutant.before, mutant.after), encoding="utf-8")
        try:
            status = _pytest(folder, mutant.tests)
        finally:
            target.write_text(original, encoding="utf-8")
        outcome = {0: "survived", 1: "killed"}.get(status, "broken")
        results.append(HandResult(mutant, outcome))
    return results
