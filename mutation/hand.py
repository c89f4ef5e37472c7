"""Hand-written mutants: one-line bugs in the core's promises that once shipped green.

Issue 30 found each of these surviving the whole suite. Each is applied to a copy of the
checkout and the tests named beside it are run: at least one must fail. An entry whose ``before``
text is no longer in its file is stale (the code moved): it is reported, and fails the check,
so the table moves with the code.
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
    """The tests that must catch it (pytest node ids or files)."""


HAND_MUTANTS: tuple[HandMutant, ...] = (
    HandMutant(
        "agents/dfsdt.py",
        '"backtracks": search.give_ups + search.depth_limited + search.model_errors,',
        '"backtracks": search.give_ups + search.depth_limited,',
        "the backtracks statistic leaves out pruned model errors",
        ("tests/agents/test_dfsdt.py",),
    ),
    HandMutant(
        "agents/dfsdt.py",
        "return climb - 1",
        "return climb - 2",
        "DFSDT resumes one level too low after a climb of three or more levels",
        ("tests/agents/test_dfsdt.py",),
    ),
    HandMutant(
        "agents/accounting.py",
        "u.prompt_tokens + u.completion_tokens >= b.max_tokens",
        "u.prompt_tokens + u.completion_tokens > b.max_tokens",
        "--max-tokens N allows one model call after N tokens are spent",
        ("tests/agents/test_react.py",),
    ),
    HandMutant(
        "sandbox/replay/replay.py",
        "if len(got.nodes) > len(expected.nodes):",
        "if len(got.nodes) < len(expected.nodes):",
        "a replay that grew more nodes than the recording is reproduced",
        ("tests/sandbox/test_replay_compare.py",),
    ),
    HandMutant(
        "sandbox/replay/replay.py",
        'for field in ("status", "final_answer", "chosen_path"):',
        'for field in ("status", "final_answer"):',
        "a replay that chose another path is reproduced",
        ("tests/sandbox/test_replay_compare.py",),
    ),
    HandMutant(
        "sandbox/replay/replay.py",
        "if ok_a != ok_b:",
        "if False:",
        "a call that failed live and succeeded in replay goes unnoticed",
        ("tests/sandbox/test_replay_compare.py",),
    ),
    HandMutant(
        "mock_tools/overlay.py",
        "INSERT OR IGNORE INTO responses",
        "INSERT OR REPLACE INTO responses",
        "a second simulated answer replaces the first one served",
        ("tests/mock_tools/test_simulation.py",),
    ),
    HandMutant(
        "sandbox/eval/pass_rate.py",
        "if not task.solvable and states_cannot_do(answer):",
        "if states_cannot_do(answer):",
        "a refusal on a solvable task is counted as solved",
        ("tests/sandbox/eval/test_pass_rate.py",),
    ),
    HandMutant(
        "sandbox/eval/pass_rate.py",
        "        if task.solvable:\n",
        "        if False:\n",
        "a give-up with an explanation on a solvable task is counted as solved",
        ("tests/sandbox/eval/test_pass_rate.py",),
    ),
)


@dataclass(frozen=True)
class HandResult:
    mutant: HandMutant
    outcome: str
    """``killed``; ``survived``; ``stale`` (its ``before`` text is not in its file once);
    ``broken`` (its tests fail without it, so they tell nothing)."""


def _tests_pass(folder: Path, tests: tuple[str, ...]) -> bool:
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    # no bytecode: a mutant of the same size written within the same second as the original
    # would otherwise be served from the original's cached bytecode, or the reverse
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(command, cwd=folder, capture_output=True, check=False, env=env)
    return done.returncode == 0


def check_hand_mutants(root: Path, work: Path) -> list[HandResult]:
    """Apply each hand mutant to a copy of the checkout under ``work`` and run its tests."""
    folder = work / "hand"
    if folder.exists():
        shutil.rmtree(folder)
    copy_checkout(root, folder)
    clean = {tests: _tests_pass(folder, tests) for tests in {m.tests for m in HAND_MUTANTS}}
    results = []
    for mutant in HAND_MUTANTS:
        target = folder / mutant.file
        original = target.read_text(encoding="utf-8")
        if original.count(mutant.before) != 1:
            results.append(HandResult(mutant, "stale"))
            continue
        if not clean[mutant.tests]:
            results.append(HandResult(mutant, "broken"))
            continue
        target.write_text(original.replace(mutant.before, mutant.after), encoding="utf-8")
        try:
            caught = not _tests_pass(folder, mutant.tests)
        finally:
            target.write_text(original, encoding="utf-8")
        results.append(HandResult(mutant, "killed" if caught else "survived"))
    return results
