"""Pass rate: one label per episode (solved / unsolved / unsure), and summaries over a run.

Labelling order (DESIGN §6), first match wins; ``method`` says which step decided:

1. ``rule``
   - no trajectory for a task -> unsolved (it never drops out of the denominator);
   - a user failure (the user of a conversation errored, answered nothing, contradicted its
     instructions, or the record missed under ``--user-miss error``) -> excluded (``"user"``),
     counted apart like infrastructure errors: not the agent's episode;
   - infrastructure error (model endpoint, simulator or tool server down after retries) ->
     ``infra_error=True`` and excluded (``"infra"``): it is not the agent's fault, so the pass
     rate leaves it out and lists it (``excluded``, ``infra_errors``); ``--resume`` runs it again;
   - a task whose world checks are ``calls_only`` (BFCL's rule) -> its state checks decide
     (step 2), however the episode ended;
   - a give-up in a task whose world checks are ``stops_judged`` (τ²'s rule) -> its state
     checks and what it told the user decide, as for an answer;
   - any other error, budget exhausted, context overflow (the history outgrew the model's
     context: the agent's outcome, as ToolBench's search ends a chain that no longer fits) ->
     unsolved;
   - solvable task: gave up, no ``Finish``, empty answer -> unsolved;
   - unsolvable task: gave up with an explanation -> solved (ToolBench: the right behaviour is to
     say why it cannot be done); gave up without one -> unsolved; an answer without checks that
     states it cannot be done (:func:`states_cannot_do`) -> solved.
2. ``check``: the task's deterministic checks decide when it has any (all must pass); in a
   world, its state checks too (``world_results``: the final state against the gold state,
   assertions, forbidden and required actions), and a judge's verdicts on its natural-language
   assertions (``nl_results``: all must be met; a judge that could not answer where every
   other check passed leaves the episode out, ``judge_error``). A label a rule decided carries
   the episode's state checks all the same (they do not change it):
   ``sandbox.eval.state_checks`` sums them over every episode.
3. ``judge``: applied by the caller (``protocol_default``) to labels that come out ``unsure``
   with method ``none``; this module stays pure.
4. ``none``: otherwise unsure.

Scores: solved 1, unsure 0.5, unsolved 0 (StableToolBench's SoPR, ``eval_pass_rate.py``). This
is the ``default`` protocol's labelling; the ``toolbench`` protocol labels with ToolEval's rules
(``protocol_toolbench``) into the same ``EpisodeLabel``, with one label per judge sample.

``summarise`` serves every protocol: the pass rate is the mean episode score over the episodes
that count (a label with ``excluded`` set does not: a judge error, and under ``toolbench`` a
missing or infrastructure-failed episode), with a task-clustered bootstrap interval; with judge
samples it also gives each sample's pass rate and their standard deviation (ddof 0), as
StableToolBench prints them.
Pure; imports ``eval.checks`` and ``eval.stats`` only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from agents.trajectory import Status, Trajectory
from mock_tools.models import Task
from sandbox.eval.checks import CheckResult, all_pass, run_checks
from sandbox.eval.stats import Interval, bootstrap_ci, mean, population_std
from sandbox.store.gc_pause import paused_gc

Label = Literal["solved", "unsolved", "unsure"]
Method = Literal["rule", "check", "judge", "none"]
Exclusion = Literal["missing", "infra", "judge_error", "user"]
SCORES: dict[str, float] = {"solved": 1.0, "unsure": 0.5, "unsolved": 0.0}


def scoring_rule_text(scores: Mapping[str, float] = SCORES) -> str:
    """What each label scores, as a report states it (``solved 1, unsure 0.5, unsolved 0``)."""
    return ", ".join(f"{label} {value:g}" for label, value in scores.items())


_CANNOT_DO = re.compile(
    r"\b(cannot|can ?not|can't|can’t|unable|not able|impossible|not possible|no way to|"
    r"not (?:currently )?(?:available|supported|provided|offered)|(?:does|do) not (?:exist|support|"
    r"provide|offer|have)|doesn't (?:exist|support|provide|offer|have)|don't have|"
    r"no (?:tool|api|function|information|data) (?:is |are )?(?:available|that|to|for)|"
    r"unavailable|unsupported|beyond (?:my|the) (?:capabilit|scope))",
    re.IGNORECASE,
)


class EpisodeLabel(BaseModel):
    """The verdict on one episode and how it was reached."""

    task_id: str
    trial: int = 0
    label: Label
    score: float
    method: Method
    reason: str = ""
    status: str = Field(default="missing", description="Trajectory status, or 'missing'.")
    infra_error: bool = False
    checks: list[CheckResult] = Field(default_factory=list)
    samples: list[Label] = Field(
        default_factory=list,
        description="One label per judge sample (toolbench); ``score`` is their mean.",
    )
    excluded: Exclusion | None = Field(
        default=None, description="Left out of the pass rate, and why (None: it counts)."
    )

    @property
    def episode(self) -> str:
        """``task`` for trial 0, else ``task#trial``: how reports list an episode."""
        return self.task_id if self.trial == 0 else f"{self.task_id}#{self.trial}"


class RateSummary(BaseModel):
    """Counts and the pass rate (mean score) with its bootstrap interval."""

    n: int
    solved: int
    unsolved: int
    unsure: int
    pass_rate: Interval


class PassSummary(RateSummary):
    """A run's pass rate overall, per group, and how the episodes ended."""

    groups: dict[str, RateSummary] = Field(default_factory=dict)
    by_status: dict[str, int] = Field(default_factory=dict)
    by_method: dict[str, int] = Field(default_factory=dict)
    infra_errors: int = Field(
        default=0, description="Episodes ended by an infrastructure error (left out, listed)."
    )
    missing: int = Field(default=0, description="Tasks without any trajectory.")
    user_failures: int = Field(
        default=0,
        description="Episodes a failure of their user ended (conversations; left out, listed).",
    )
    protocol: str = "default"
    sample_rates: list[float] = Field(
        default_factory=list, description="Pass rate of each judge sample (toolbench)."
    )
    sample_std: float | None = Field(
        default=None, description="Standard deviation (ddof 0) of the sample pass rates."
    )
    excluded: dict[str, list[str]] = Field(
        default_factory=dict, description="Episodes left out of the rate, by reason."
    )


def states_cannot_do(text: str) -> bool:
    """Does the text say that the task cannot be done? (a lexical test, English)."""
    return bool(_CANNOT_DO.search(text or ""))


def _label(
    task: Task,
    traj: Trajectory | None,
    label: Label,
    method: Method,
    reason: str,
    checks: list[CheckResult] | None = None,
) -> EpisodeLabel:
    """A label; one decided before the checks (by a rule) still carries the episode's state
    checks in a world (``world_results``): what the agent left in the world is reported for
    every episode, whatever decided its label."""
    if checks is None and traj is not None:
        checks = world_results(traj)
        checks += nl_results(traj, start=len(checks))[0]
    return EpisodeLabel(
        task_id=task.id,
        trial=traj.trial if traj else 0,
        label=label,
        score=SCORES[label],
        method=method,
        reason=reason,
        status=traj.status.value if traj else "missing",
        infra_error=bool(traj and traj.infra_error),
        checks=checks or [],
    )


def give_up_text(traj: Trajectory) -> str:
    """What the agent said when it gave up: the final answer, else the last give-up step's
    Finish text or thought."""
    if traj.final_answer and traj.final_answer.strip():
        return traj.final_answer.strip()
    for node in reversed(traj.nodes):
        if node.kind == "give_up":
            text = (node.finish.final_answer if node.finish else "") or node.content or ""
            if text.strip():
                return text.strip()
    return ""


def label_episode(traj: Trajectory | None, task: Task) -> EpisodeLabel:
    """Label one episode by rules and checks; ``unsure``/``none`` means a judge may decide."""
    if traj is None:
        return _label(task, None, "unsolved", "rule", "no trajectory for this task")
    if traj.status is Status.error:
        if traj.user_error:  # the user of a conversation failed: not the agent's episode
            msg = next((e.message for e in traj.errors if e.kind == "user"), "")
            user = _label(task, traj, "unsolved", "rule", f"user failure: {msg}".strip())
            return user.model_copy(update={"excluded": "user"})
        if traj.infra_error:
            msg = next((e.message for e in traj.errors if e.kind == "infra"), "")
            infra = _label(task, traj, "unsolved", "rule", f"infra error: {msg}".strip())
            return infra.model_copy(update={"excluded": "infra"})
        if not _calls_only(task):
            msg = traj.errors[0].message if traj.errors else traj.end_reason
            return _label(task, traj, "unsolved", "rule", f"error: {msg}".strip())
    if _calls_only(task):
        return _calls_label(traj, task)
    if traj.status is Status.budget_exhausted:
        reason = f"budget exhausted ({traj.end_reason})" if traj.end_reason else "budget exhausted"
        return _label(task, traj, "unsolved", "rule", reason)
    if traj.status is Status.context_overflow:
        reason = "context overflow: the conversation no longer fits the model's context"
        return _label(task, traj, "unsolved", "rule", reason)
    if traj.status is Status.gave_up and _stops_judged(task):
        return _stop_label(traj, task)
    if traj.status is Status.gave_up:
        if task.solvable:
            return _label(task, traj, "unsolved", "rule", "gave up on a solvable task")
        if give_up_text(traj):
            return _label(
                task, traj, "solved", "rule", "gave up with an explanation on an unsolvable task"
            )
        return _label(task, traj, "unsolved", "rule", "gave up without saying why")
    answer = (traj.final_answer or "").strip()
    if traj.final_answer is None:
        return _label(task, traj, "unsolved", "rule", "no Finish call")
    if not answer:
        return _label(task, traj, "unsolved", "rule", "empty final answer")
    world = world_results(traj, start=len(task.checks))
    world += communicated(traj, task, start=len(task.checks) + len(world))
    nl, unjudged = nl_results(traj, start=len(task.checks) + len(world))
    if task.checks or world or nl or unjudged:
        results = run_checks(answer, task.checks) + world + nl
        return _checked(task, traj, results, unjudged, "all checks pass")
    if not task.solvable and states_cannot_do(answer):
        return _label(task, traj, "solved", "rule", "explains that the task cannot be done")
    return _label(task, traj, "unsure", "none", "no checks and no judge")


def _calls_only(task: Task) -> bool:
    return task.world is not None and task.world.checks.calls_only


def _stops_judged(task: Task) -> bool:
    return task.world is not None and task.world.checks.stops_judged


def _stop_label(traj: Trajectory, task: Task) -> EpisodeLabel:
    """An agent that stopped, in a task whose stops are judged (``stops_judged``, τ²'s rule):
    its state checks and what it told the user decide, as for an answer."""
    results = world_results(traj, start=len(task.checks))
    results += communicated(traj, task, start=len(task.checks) + len(results))
    nl, unjudged = nl_results(traj, start=len(task.checks) + len(results))
    results += nl
    if not results and not unjudged:
        return _label(task, traj, "unsolved", "rule", "gave up, and nothing to judge it on")
    return _checked(task, traj, results, unjudged, "stopped, and every check passes")


def _checked(
    task: Task, traj: Trajectory, results: list[CheckResult], unjudged: str, passed: str
) -> EpisodeLabel:
    """The label the check results give: solved when all pass (``passed`` says so), else
    unsolved naming the failures; when all pass but the judge could not answer on the NL
    assertions (``unjudged``: its error), only the judge could decide, so the episode is left
    out (``judge_error``), never failed."""
    if all_pass(results) and unjudged:
        lb = _label(task, traj, "unsolved", "check", f"judge error: {unjudged}", results)
        return lb.model_copy(update={"excluded": "judge_error"})
    if all_pass(results):
        return _label(task, traj, "solved", "check", passed, results)
    failed = "; ".join(f"{r.kind}: {r.detail}" for r in results if not r.passed)
    return _label(task, traj, "unsolved", "check", f"failed checks: {failed}", results)


def _calls_label(traj: Trajectory, task: Task) -> EpisodeLabel:
    """A task judged by its calls alone (``calls_only``, BFCL's rule): the state checks decide,
    however the episode ended."""
    results = world_results(traj, start=len(task.checks))
    if not results:
        return _label(task, traj, "unsolved", "rule", "no state checks were recorded")
    if all_pass(results):
        return _label(task, traj, "solved", "check", "every state check passes", results)
    failed = "; ".join(f"{r.kind}: {r.detail}" for r in results if not r.passed)
    return _label(task, traj, "unsolved", "check", f"failed checks: {failed}", results)


def world_results(traj: Trajectory, start: int = 0) -> list[CheckResult]:
    """The state checks an episode in a world recorded (``Trajectory.world``, which evaluation
    computes again from the world: ``sandbox.eval.world_verdict``) as check results of kind
    ``state:<check>``, numbered from ``start``; a replay that diverged from the recorded states
    is one failed ``state:replay`` result. None outside a world."""
    world = traj.world
    if not world:
        return []
    out: list[CheckResult] = []
    if world.get("divergence"):
        out.append(
            CheckResult(index=start, kind="state:replay", passed=False, detail=world["divergence"])
        )
    for check in world.get("checks") or []:
        out.append(
            CheckResult(
                index=start + len(out),
                kind=f"state:{check.get('kind')}",
                passed=bool(check.get("passed")),
                detail=str(check.get("detail", "")),
            )
        )
    return out


def nl_results(traj: Trajectory, start: int = 0) -> tuple[list[CheckResult], str]:
    """The judge's verdicts on the episode's natural-language assertions (put into
    ``Trajectory.world`` by ``sandbox.eval.nl_judge``) as check results of kind
    ``nl_assertion``, numbered from ``start``, and the judge's error when it could not answer
    ("" otherwise). Nothing when they were not judged (no judge: skipped)."""
    judged = (traj.world or {}).get("nl_assertions")
    if not isinstance(judged, dict):
        return [], ""
    if judged.get("error"):
        return [], str(judged["error"])
    return [
        CheckResult(
            index=start + i,
            kind="nl_assertion",
            passed=bool(v.get("met")),
            detail=f"{'met' if v.get('met') else 'not met'}: {v.get('assertion')!r}"
            + (f" ({v['justification']})" if v.get("justification") else ""),
        )
        for i, v in enumerate(judged.get("verdicts") or [])
    ], ""


def communicated(traj: Trajectory, task: Task, start: int = 0) -> list[CheckResult]:
    """A conversation's ``communicate`` facts: each must appear in one of the agent's replies
    on the chosen path (case and runs of whitespace aside), as check results of kind
    ``communicate``."""
    facts = task.user.communicate if task.user is not None else []
    if not facts:
        return []
    said = " ".join(
        " ".join(n.reply.split()).casefold()
        for n in traj.chosen()
        if n.kind != "user" and n.reply is not None
    )
    return [
        CheckResult(
            index=start + i,
            kind="communicate",
            passed=" ".join(fact.split()).casefold() in said,
            detail=f"{'told' if ' '.join(fact.split()).casefold() in said else 'never told'}: "
            f"{fact!r}",
        )
        for i, fact in enumerate(facts)
    ]


def needs_judge(label: EpisodeLabel) -> bool:
    """Labels that rules and checks could not decide."""
    return label.label == "unsure" and label.method == "none"


def label_run(trajs: Sequence[Trajectory], tasks: Sequence[Task]) -> list[EpisodeLabel]:
    """Label every episode of a run; a task without any trajectory gets one ``unsolved`` label.

    Trajectories of tasks not in ``tasks`` are ignored. Output order: task order, then trial.
    """
    by_task: dict[str, list[Trajectory]] = {}
    for t in trajs:
        by_task.setdefault(t.scenario_id, []).append(t)
    labels: list[EpisodeLabel] = []
    with paused_gc():
        for task in tasks:
            episodes = sorted(by_task.get(task.id, []), key=lambda t: t.trial)
            if not episodes:
                labels.append(label_episode(None, task))
            labels.extend(label_episode(t, task) for t in episodes)
    return labels


def scores_interval(labels: Sequence[EpisodeLabel], seed: int) -> Interval:
    """Mean score with a bootstrap interval that resamples tasks (the trials of a task move
    together)."""
    return bootstrap_ci(
        [lb.score for lb in labels], seed=seed, clusters=[lb.task_id for lb in labels]
    )


def label_expected(
    trajs: Sequence[Trajectory], tasks: Sequence[Task], keys: Sequence[tuple[str, int]]
) -> list[EpisodeLabel]:
    """Rule/check labels of every expected episode (``keys``: ``(task id, trial)``) and of any
    other trajectory of those tasks; an expected episode without a trajectory is a ``missing``
    unsolved label. Order: task order, then trial."""
    by_id = {t.id: t for t in tasks}
    order = {t.id: i for i, t in enumerate(tasks)}
    labels = {
        (lb.task_id, lb.trial): lb for lb in label_run(trajs, tasks) if lb.status != "missing"
    }
    out: list[EpisodeLabel] = []
    wanted = {k for k in keys if k[0] in by_id}
    for key in sorted(wanted | set(labels), key=lambda k: (order[k[0]], k[1])):
        lb = labels.get(key)
        if lb is None:
            lb = label_episode(None, by_id[key[0]]).model_copy(update={"trial": key[1]})
        out.append(lb)
    return out


def counts(label: EpisodeLabel) -> bool:
    """Whether the episode counts in the pass rate (``excluded`` unset): the one rule every
    summary of a run applies (``summarise`` and the leaderboard's pooled rows)."""
    return label.excluded is None


def rate_summary(labels: Sequence[EpisodeLabel], seed: int) -> RateSummary:
    """Counts and the mean score of ``labels`` (those that count) with the task-clustered
    bootstrap interval; over no label the rate is ``n`` 0 (shown ``n/a``,
    ``sandbox.eval.headline``)."""
    counts = Counter(lb.label for lb in labels)
    return RateSummary(
        n=len(labels),
        solved=counts["solved"],
        unsolved=counts["unsolved"],
        unsure=counts["unsure"],
        pass_rate=scores_interval(labels, seed),
    )


def sample_rates(labels: Sequence[EpisodeLabel]) -> list[float]:
    """Sample ``i``'s pass rate: the mean over episodes of their ``i``-th sample's score.

    StableToolBench's ``eval_pass_rate.py``: ``score_r`` over the queries, for each run ``r``.
    Episodes labelled without the judge carry the same label in every sample.
    """
    k = max((len(lb.samples) for lb in labels), default=0)
    if k == 0:
        return []
    rates = []
    for i in range(k):
        rates.append(
            mean([SCORES[lb.samples[i] if i < len(lb.samples) else lb.label] for lb in labels])
        )
    return rates


def summarise(
    labels: Sequence[EpisodeLabel],
    tasks: Sequence[Task],
    *,
    seed: int = 0,
    protocol: str = "default",
) -> PassSummary:
    """Overall and per-group pass rate with seeded bootstrap intervals, and counts.

    Tasks in ``tasks`` without a label count as unsolved (``missing``); labels of tasks not in
    ``tasks`` are ignored; labels with ``excluded`` set are listed, not counted.
    """
    task_by_id = {t.id: t for t in tasks}
    every = [lb for lb in labels if lb.task_id in task_by_id]
    seen = {lb.task_id for lb in every}
    for task in tasks:
        if task.id not in seen:
            every.append(label_episode(None, task))
    kept = [lb for lb in every if counts(lb)]
    excluded: dict[str, list[str]] = {}
    for lb in every:
        if lb.excluded is not None:
            excluded.setdefault(lb.excluded, []).append(lb.episode)
    overall = rate_summary(kept, seed)
    groups: dict[str, list[EpisodeLabel]] = {}
    for lb in kept:
        groups.setdefault(task_by_id[lb.task_id].group, []).append(lb)
    rates = sample_rates(kept)
    return PassSummary(
        **overall.model_dump(),
        groups={g: rate_summary(v, seed) for g, v in sorted(groups.items())},
        by_status=dict(sorted(Counter(lb.status for lb in every).items())),
        by_method=dict(sorted(Counter(lb.method for lb in kept).items())),
        infra_errors=sum(lb.infra_error for lb in every),
        user_failures=sum(1 for lb in every if lb.excluded == "user"),
        missing=sum(1 for lb in every if lb.status == "missing"),
        protocol=protocol,
        sample_rates=rates,
        sample_std=population_std(rates) if rates else None,
        excluded=dict(sorted(excluded.items())),
    )
