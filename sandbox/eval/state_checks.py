"""The state checks of a run in a world, summed over its episodes: per check, how many episodes
passed it, and pass@k / pass^k over the trials, each with a 95% interval.

An episode's label carries its state checks as check results of kind ``state:<check>``
(``pass_rate.world_results``: ``gold``, ``assert``, ``env_assertion``, ``forbid_state``,
``forbid_action``, ``require_action``; a replay that diverged from the recorded states is
``state:replay``), whatever decided the label: a give-up is judged on the state it left too.
Over the episodes that count in the pass rate (``pass_rate.counts``):

- per check: an episode passes it when every check of that kind of its task held (two
  assertions: both); ``episodes`` counts those judged on it, ``passed`` those that passed;
  ``rate`` is their share with the task-clustered bootstrap interval of the pass rate
  (``stats.bootstrap_ci``'s, drawn with the others by ``stats.bootstrap_columns``);
- ``all``: every state check of the episode held, and its replay did not diverge;
- pass@k / pass^k (``stats.pass_at_k``, ``stats.pass_hat_k``) per task from its trials judged on
  the check, for k up to the fewest of any task (``stats.trial_ks``), averaged over tasks, with
  the bootstrap interval over tasks of the per-task values;
- with the suite's tasks, each check of each task (``tasks``): its description (an assertion's
  path and comparison, an action's pattern) and how many of the task's episodes passed it.

Episodes that count without any state check (no step reached the world: nothing to judge) are
``unjudged``; ``diverged`` names those whose replay left the recorded states. ``check_cell`` is
a check's rate as every table shows it. Pure; imports ``eval.pass_rate``, ``eval.stats``,
``eval.headline`` and the task models.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from mock_tools.models import Task
from sandbox.eval.headline import rate_cell
from sandbox.eval.pass_rate import EpisodeLabel, counts
from sandbox.eval.stats import Interval, bootstrap_columns, pass_at_k, pass_hat_k, trial_ks

__all__ = [
    "ALL",
    "CheckRate",
    "StateChecks",
    "TaskCheck",
    "check_cell",
    "episode_checks",
    "state_checks",
    "task_checks",
]

PREFIX = "state:"
"""The kind prefix of a state check's result in a label."""
REPLAY = "replay"
"""The result of a replay that diverged (not a check of the task)."""
ALL = "all"
"""The summary of every state check of an episode at once."""
ORDER = ("gold", "assert", "env_assertion", "forbid_state", "forbid_action", "require_action")
"""The checks in the order a task's checks are judged; others follow by name."""


class CheckRate(BaseModel):
    """One state check over a run's episodes."""

    check: str = Field(
        description="gold | assert | env_assertion | forbid_state | forbid_action | "
        "require_action, or 'all' (every state check of an episode)."
    )
    tasks: int = Field(description="Tasks with episodes judged on it.")
    episodes: int = Field(description="Episodes judged on it (of those that count).")
    passed: int = Field(description="Of those, the episodes that passed it.")
    rate: Interval = Field(description="passed / episodes, task-clustered bootstrap interval.")
    pass_at_k: dict[str, Interval] = Field(
        default_factory=dict, description="Mean over tasks of pass@k, interval over tasks."
    )
    pass_hat_k: dict[str, Interval] = Field(
        default_factory=dict, description="Mean over tasks of pass^k, interval over tasks."
    )


class TaskCheck(BaseModel):
    """One check of one task over that task's episodes."""

    task_id: str
    check: str
    description: str = Field(description="What it checks (a path and comparison, a call).")
    episodes: int
    passed: int


class StateChecks(BaseModel):
    """A run's state checks (``scores.json``'s ``state_checks``)."""

    all: CheckRate
    checks: list[CheckRate] = Field(default_factory=list)
    tasks: list[TaskCheck] = Field(
        default_factory=list, description="Each check of each task (with the suite's tasks)."
    )
    unjudged: int = Field(
        default=0, description="Episodes that count but carry no state check (no verdict)."
    )
    diverged: list[str] = Field(
        default_factory=list, description="Episodes whose replay left the recorded states."
    )

    def rates(self) -> list[CheckRate]:
        """``all`` first, then each check."""
        return [self.all, *self.checks]


def check_cell(rate: CheckRate) -> str:
    """A state check's rate as tables show it: ``66.7% [33.3, 100.0] (6/9)``, then pass^k at
    the largest k when there are trials (the strictest: every one of k trials passed it)."""
    text = f"{rate_cell(rate.rate)} ({rate.passed}/{rate.episodes})"
    if rate.pass_hat_k:
        k = max(rate.pass_hat_k, key=int)
        text += f"; pass^{k} {100 * rate.pass_hat_k[k].value:.1f}%"
    return text


def episode_checks(label: EpisodeLabel) -> list[tuple[str, bool]]:
    """The state checks of an episode as ``(check, passed)``, in the label's order (a
    diverged replay as ``("replay", False)``)."""
    return [
        (c.kind.removeprefix(PREFIX), c.passed) for c in label.checks if c.kind.startswith(PREFIX)
    ]


def task_checks(task: Task) -> list[tuple[str, str]]:
    """The state checks of a task as ``(check, description)``: for each check, in the order
    its results come (the gold state, the assertions, the env assertions, the forbidden states
    and actions, the required actions)."""
    world = task.world
    if world is None:
        return []
    c = world.checks
    out: list[tuple[str, str]] = []
    if c.gold and task.reference.steps:
        ignored = f" (paths left out: {', '.join(c.ignore)})" if c.ignore else ""
        out.append(("gold", "the final state equals the gold state" + ignored))
    out += [("assert", a.describe()) for a in c.assertions]
    out += [("env_assertion", e.describe()) for e in c.env_assertions]
    out += [("forbid_state", a.describe()) for a in c.forbid.states]
    out += [("forbid_action", p.describe()) for p in c.forbid.actions]
    out += [("require_action", p.describe()) for p in c.require.actions]
    return out


def _ordered(names: Iterable[str]) -> list[str]:
    known = [n for n in ORDER if n in names]
    return known + sorted(set(names) - set(ORDER))


def _rate(check: str, outcomes: Sequence[tuple[str, bool]], seed: int) -> CheckRate:
    """``outcomes``: ``(task, passed)`` per episode judged on the check, in episode order. One
    bootstrap over the tasks gives every interval (``stats.bootstrap_columns``): the rate's
    (each task's episodes summed, as ``bootstrap_ci`` clusters them) and each k's pass@k and
    pass^k (one value per task)."""
    per_task: dict[str, list[int]] = {}
    for task, ok in outcomes:
        n_c = per_task.setdefault(task, [0, 0])
        n_c[0] += 1
        n_c[1] += ok
    pairs = [(n, c) for n, c in per_task.values()]
    ks = trial_ks(pairs)
    groups = [
        [(float(c), n)]
        + [(pass_at_k(n, c, k), 1) for k in ks]
        + [(pass_hat_k(n, c, k), 1) for k in ks]
        for n, c in pairs
    ]
    rate, *rest = bootstrap_columns(groups, seed=seed)
    return CheckRate(
        check=check,
        tasks=len(per_task),
        episodes=len(outcomes),
        passed=sum(ok for _, ok in outcomes),
        rate=rate,
        pass_at_k={str(k): iv for k, iv in zip(ks, rest[: len(ks)], strict=True)},
        pass_hat_k={str(k): iv for k, iv in zip(ks, rest[len(ks) :], strict=True)},
    )


def state_checks(
    labels: Sequence[EpisodeLabel], tasks: Sequence[Task] | None = None, *, seed: int = 0
) -> StateChecks | None:
    """The state checks of ``labels`` (those that count; see the module doc), with each
    task's checks when ``tasks`` are given; None when no episode carries one."""
    kept = [lb for lb in labels if counts(lb)]
    judged = [(lb, episode_checks(lb)) for lb in kept]
    if not any(results for _, results in judged):
        return None
    by_check: dict[str, list[tuple[str, bool]]] = {}
    every: list[tuple[str, bool]] = []
    for lb, results in judged:
        if not results:
            continue
        every.append((lb.task_id, all(ok for _, ok in results)))
        passed: dict[str, bool] = {}
        for check, ok in results:
            if check != REPLAY:
                passed[check] = passed.get(check, True) and ok
        for check, ok in passed.items():
            by_check.setdefault(check, []).append((lb.task_id, ok))
    return StateChecks(
        all=_rate(ALL, every, seed),
        checks=[_rate(c, by_check[c], seed) for c in _ordered(by_check)],
        tasks=_task_rows(judged, tasks or []),
        unjudged=sum(1 for _, results in judged if not results),
        diverged=[lb.episode for lb, results in judged if (REPLAY, False) in results],
    )


def _task_rows(
    judged: Sequence[tuple[EpisodeLabel, list[tuple[str, bool]]]], tasks: Sequence[Task]
) -> list[TaskCheck]:
    """Each check of each task, matched to the episodes' results by its place among the
    task's checks of its kind (the second assertion to the second ``state:assert``)."""
    outcomes: dict[tuple[str, str, int], list[bool]] = {}
    for lb, results in judged:
        seen: dict[str, int] = {}
        for check, ok in results:
            i = seen[check] = seen.get(check, -1) + 1
            outcomes.setdefault((lb.task_id, check, i), []).append(ok)
    rows = []
    for task in tasks:
        seen = {}
        for check, description in task_checks(task):
            i = seen[check] = seen.get(check, -1) + 1
            oks = outcomes.get((task.id, check, i))
            if oks:
                rows.append(
                    TaskCheck(
                        task_id=task.id,
                        check=check,
                        description=description,
                        episodes=len(oks),
                        passed=sum(oks),
                    )
                )
    return rows
