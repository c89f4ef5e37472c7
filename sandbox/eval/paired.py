"""The one McNemar pairing of two runs' episodes, used by ``sandbox eval --reference`` and by
``sandbox compare`` alike.

Each side is a run's labels over the episodes the run planned (its manifest's ``(task, trial)``
keys: a planned episode without a trajectory is labelled unsolved, ``missing``) and any other
episode it ran. The pairs are **the episodes both sides labelled**: the same task and trial,
planned (or run) by both runs. An episode only one run planned is not a pair (a task or trial the
other never attempted says nothing about it), and an episode a protocol left out on either side
(a judge error, an answer it drops) takes no part. On those pairs: exact McNemar on solved / not
solved. May import ``eval`` modules.
"""

from __future__ import annotations

from collections.abc import Sequence

from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.stats import PairedTest, mcnemar_exact

__all__ = ["paired_episodes", "paired_test"]

EpisodeKey = tuple[str, int]


def paired_episodes(a: Sequence[EpisodeLabel], b: Sequence[EpisodeLabel]) -> list[EpisodeKey]:
    """The ``(task, trial)`` episodes both label sets hold and neither left out, in ``a``'s
    order."""
    left_out = {(lb.task_id, lb.trial) for lb in (*a, *b) if lb.excluded is not None}
    theirs = {(lb.task_id, lb.trial) for lb in b}
    keys = dict.fromkeys((lb.task_id, lb.trial) for lb in a)
    return [k for k in keys if k in theirs and k not in left_out]


def paired_test(a: Sequence[EpisodeLabel], b: Sequence[EpisodeLabel]) -> PairedTest:
    """Exact McNemar on solved / not solved over ``paired_episodes(a, b)`` (module doc)."""
    solved_a = {(lb.task_id, lb.trial): lb.label == "solved" for lb in a}
    solved_b = {(lb.task_id, lb.trial): lb.label == "solved" for lb in b}
    keys = paired_episodes(a, b)
    return mcnemar_exact([solved_a[k] for k in keys], [solved_b[k] for k in keys])
