"""One McNemar pairing: ``sandbox eval --reference`` and ``sandbox compare`` test the same
episodes of two runs, so they give the same n and p, also when the runs planned different tasks
and trials (the pairs are the episodes both runs labelled, ``sandbox.eval.paired``)."""

from __future__ import annotations

from pathlib import Path

from harness_suite import suite_path

from sandbox.compare.comparison import compare_runs
from sandbox.eval.evaluate import evaluate_run
from sandbox.eval.paired import paired_test
from sandbox.eval.pass_rate import EpisodeLabel, Exclusion, Label
from sandbox.run import run_suite
from sandbox.store.config import RunConfig


def _run(tmp_path: Path, run_id: str, **config: object) -> str:
    config = dict(
        suite=str(suite_path(tmp_path)), out=str(tmp_path / "runs"), run_id=run_id, **config
    )
    return str(run_suite(RunConfig.model_validate(config), show_progress=False).path)


def test_eval_and_compare_pair_the_same_episodes_of_runs_with_different_selections(
    tmp_path: Path,
) -> None:
    wide = _run(tmp_path, "wide", agent="react", model="noisy-reference:0.6", seed=1, trials=3)
    narrow = _run(
        tmp_path, "narrow", agent="dfsdt", model="noisy-reference:0.2", seed=2, tasks=["*_g1_*"]
    )
    comparison = compare_runs([wide, narrow])
    (pair,) = comparison.paired
    narrow_labels = comparison.strategy("dfsdt").labels
    both_planned = {(lb.task_id, lb.trial) for lb in narrow_labels}
    assert pair.n == len(both_planned) == 2  # the g1 tasks, trial 0: the narrow run's episodes
    for candidate, reference in ((narrow, wide), (wide, narrow)):
        paired = evaluate_run(candidate, reference_run=reference).reference
        assert paired is not None
        assert (paired.paired.n, paired.paired.p_value) == (pair.n, pair.p_value)
        assert {paired.paired.only_a, paired.paired.only_b} == {pair.only_a, pair.only_b}


def _label(task: str, trial: int, label: Label, excluded: Exclusion | None = None) -> EpisodeLabel:
    score = 1.0 if label == "solved" else 0.0
    return EpisodeLabel(
        task_id=task, trial=trial, label=label, score=score, method="check", excluded=excluded
    )


def test_pairs_are_the_episodes_both_sides_labelled_and_neither_left_out() -> None:
    a = [_label("t1", 0, "solved"), _label("t1", 1, "solved"), _label("t2", 0, "unsolved")]
    a.append(_label("t3", 0, "solved", excluded="judge_error"))
    b = [_label("t1", 0, "unsolved"), _label("t2", 0, "solved"), _label("t3", 0, "unsolved")]
    b.append(_label("t4", 0, "solved"))
    test = paired_test(a, b)
    # t1#1 only in a, t4 only in b, t3 left out on a's side: two pairs remain
    assert (test.n, test.only_a, test.only_b, test.both, test.neither) == (2, 1, 1, 0, 0)
