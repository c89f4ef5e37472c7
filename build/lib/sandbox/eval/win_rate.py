"""Win rate of a candidate run against a reference run: the outcome records and their summary,
and the ``default`` protocol's rules, a deterministic judge after ToolEval's.

Records (every protocol): ``PairOutcome`` per paired episode (task, trial), ``summarise_wins``
(wins, losses, ties, win rate with a task-clustered bootstrap interval, tie rate; an outcome
whose judging failed is listed, not counted) and ``mirror`` (the same outcome seen from the other
side). How a tie counts is the protocol's: half a win in ``default``, nothing in ToolEval's
(``eval_preference.py``: ``win_rate = wins / queries``).

The ``default`` protocol's rules, per episode, on the chosen path of each trajectory (DFSDT: the
answer branch):

1. exactly one is solved -> it wins (``rule="solved"``);
2. both solved -> fewer steps wins (``"fewer_steps"``); same number of steps -> "the better
   answer", which rules cannot tell: a tie unless an LLM judge decides (``undecided=True``);
3. neither solved -> more successful tool calls (``"more_successful_calls"``), then more distinct
   APIs called (``"more_distinct_tools"``), then fewer steps; all equal -> a tie (``undecided`` when
   both gave an answer, so a judge may compare them).

"Solved" means the pass-rate label ``solved``; ``unsure`` counts as not solved. A step is one node
(one assistant turn) of the chosen path. A missing trajectory is unsolved with no steps and no
calls (it can still win a both-failed comparison against nothing, never against a real attempt
with more successful calls).

Pure; imports ``eval.pass_rate`` and ``eval.stats`` only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.stats import Interval, bootstrap_ci

Winner = Literal["candidate", "reference", "tie"]
EpisodeKey = tuple[str, int]


class EpisodeFacts(BaseModel):
    """What the rules look at in one episode."""

    solved: bool = False
    steps: int = 0
    successful_calls: int = 0
    distinct_tools: int = 0
    answer: str = ""
    present: bool = True


class PairOutcome(BaseModel):
    task_id: str
    trial: int = 0
    winner: Winner
    rule: str = Field(description="The rule that decided, or why it is a tie.")
    decided_by: Literal["rule", "judge", "none"] = "rule"
    undecided: bool = Field(default=False, description="Rules could not tell; a judge may.")
    rounds: list[Winner] = Field(
        default_factory=list, description="The winner of each preference round (toolbench)."
    )
    judge_error: str | None = Field(
        default=None, description="The judge failed on this pair: listed, not counted."
    )

    @property
    def score(self) -> float:
        return {"candidate": 1.0, "tie": 0.5, "reference": 0.0}[self.winner]


class WinSummary(BaseModel):
    """Candidate vs reference over the paired episodes."""

    candidate: str
    reference: str
    n: int
    wins: int
    losses: int
    ties: int
    win_rate: Interval = Field(description="The protocol's win rate (default: ties as half).")
    tooleval_win_rate: Interval = Field(description="ToolEval-compatible: ties count as 0.")
    tie_rate: float = Field(default=0.0, description="Ties over the counted episodes.")
    tie_value: float = Field(default=0.5, description="What a tie counts in ``win_rate``.")
    by_rule: dict[str, int] = Field(default_factory=dict)
    judge_errors: list[str] = Field(
        default_factory=list, description="Episodes whose judging failed (not counted)."
    )
    outcomes: list[PairOutcome] = Field(default_factory=list)


def episode_facts(traj: Trajectory | None, label: EpisodeLabel | None) -> EpisodeFacts:
    if traj is None:
        return EpisodeFacts(present=False)
    path = traj.chosen() if traj.chosen_path else traj.nodes
    calls = [c for node in path for c in node.calls]
    ok = [c for c in calls if c.observation is not None and c.observation.ok]
    distinct = {(c.tool, c.api) if c.tool else (c.name, None) for c in calls}
    return EpisodeFacts(
        solved=bool(label and label.label == "solved"),
        steps=len(path),
        successful_calls=len(ok),
        distinct_tools=len(distinct),
        answer=(traj.final_answer or "").strip(),
    )


def _by(a: int, b: int, rule: str, task_id: str, trial: int, higher: bool) -> PairOutcome | None:
    if a == b:
        return None
    cand_wins = a > b if higher else a < b
    return PairOutcome(
        task_id=task_id, trial=trial, winner="candidate" if cand_wins else "reference", rule=rule
    )


def compare_episode(
    cand: EpisodeFacts, ref: EpisodeFacts, task_id: str, trial: int = 0
) -> PairOutcome:
    """ToolEval's rules on one pair of episodes."""
    if cand.solved != ref.solved:
        winner: Winner = "candidate" if cand.solved else "reference"
        return PairOutcome(task_id=task_id, trial=trial, winner=winner, rule="solved")
    if cand.solved:
        decided = _by(cand.steps, ref.steps, "fewer_steps", task_id, trial, higher=False)
        if decided:
            return decided
        return PairOutcome(
            task_id=task_id,
            trial=trial,
            winner="tie",
            rule="both_solved_same_steps",
            decided_by="none",
            undecided=True,
        )
    for a, b, rule, higher in (
        (cand.successful_calls, ref.successful_calls, "more_successful_calls", True),
        (cand.distinct_tools, ref.distinct_tools, "more_distinct_tools", True),
        (cand.steps, ref.steps, "fewer_steps", False),
    ):
        decided = _by(a, b, rule, task_id, trial, higher)
        if decided:
            return decided
    return PairOutcome(
        task_id=task_id,
        trial=trial,
        winner="tie",
        rule="both_failed_equal",
        decided_by="none",
        undecided=bool(cand.answer and ref.answer),
    )


def judged(outcome: PairOutcome, preferred: int | None) -> PairOutcome:
    """Apply an LLM judge's preference (0 candidate, 1 reference, None no preference)."""
    if preferred is None:
        return outcome.model_copy(
            update={"rule": outcome.rule + "+judge_tie", "decided_by": "judge"}
        )
    winner: Winner = "candidate" if preferred == 0 else "reference"
    return outcome.model_copy(
        update={"winner": winner, "rule": "better_answer", "decided_by": "judge"}
    )


def _index(
    trajs: Sequence[Trajectory], labels: Sequence[EpisodeLabel]
) -> tuple[dict[EpisodeKey, Trajectory], dict[EpisodeKey, EpisodeLabel]]:
    return (
        {(t.scenario_id, t.trial): t for t in trajs},
        {(lb.task_id, lb.trial): lb for lb in labels},
    )


def pair_keys(
    cand: Mapping[EpisodeKey, object], ref: Mapping[EpisodeKey, object], tasks: Sequence[Task]
) -> list[EpisodeKey]:
    """Every (task, trial) seen on either side, plus trial 0 of tasks seen on neither."""
    ids = {t.id for t in tasks}
    keys = {k for k in (*cand, *ref) if k[0] in ids}
    keys |= {(t.id, 0) for t in tasks if not any(k[0] == t.id for k in keys)}
    order = {t.id: i for i, t in enumerate(tasks)}
    return sorted(keys, key=lambda k: (order[k[0]], k[1]))


def compare_runs(
    cand_trajs: Sequence[Trajectory],
    cand_labels: Sequence[EpisodeLabel],
    ref_trajs: Sequence[Trajectory],
    ref_labels: Sequence[EpisodeLabel],
    tasks: Sequence[Task],
) -> list[PairOutcome]:
    """Rule outcomes for every paired episode, in task order."""
    ct, cl = _index(cand_trajs, cand_labels)
    rt, rl = _index(ref_trajs, ref_labels)
    return [
        compare_episode(
            episode_facts(ct.get(k), cl.get(k)), episode_facts(rt.get(k), rl.get(k)), k[0], k[1]
        )
        for k in pair_keys(ct | {k: None for k in cl}, rt | {k: None for k in rl}, tasks)
    ]


def summarise_wins(
    outcomes: Sequence[PairOutcome],
    *,
    candidate: str,
    reference: str,
    seed: int = 0,
    tie_value: float = 0.5,
) -> WinSummary:
    """Counts and rates over the outcomes the judge could decide; ``tie_value`` is what a tie
    counts in ``win_rate`` (0.5 for ``default``, 0 for ToolEval's)."""
    counted = [o for o in outcomes if o.judge_error is None]
    counts = Counter(o.winner for o in counted)
    clusters = [o.task_id for o in counted]
    value = {"candidate": 1.0, "tie": tie_value, "reference": 0.0}
    return WinSummary(
        candidate=candidate,
        reference=reference,
        n=len(counted),
        wins=counts["candidate"],
        losses=counts["reference"],
        ties=counts["tie"],
        win_rate=bootstrap_ci([value[o.winner] for o in counted], seed=seed, clusters=clusters),
        tooleval_win_rate=bootstrap_ci(
            [1.0 if o.winner == "candidate" else 0.0 for o in counted],
            seed=seed,
            clusters=clusters,
        ),
        tie_rate=counts["tie"] / len(counted) if counted else 0.0,
        tie_value=tie_value,
        by_rule=dict(sorted(Counter(o.rule for o in counted).items())),
        judge_errors=[
            o.task_id if o.trial == 0 else f"{o.task_id}#{o.trial}"
            for o in outcomes
            if o.judge_error is not None
        ],
        outcomes=list(outcomes),
    )


_SWAP: dict[Winner, Winner] = {"candidate": "reference", "reference": "candidate", "tie": "tie"}


def mirror(outcome: PairOutcome) -> PairOutcome:
    """The outcome with candidate and reference swapped (the other cell of a win matrix)."""
    return outcome.model_copy(
        update={
            "winner": _SWAP[outcome.winner],
            "rounds": [_SWAP[w] for w in outcome.rounds],
        }
    )


class RunSide(BaseModel):
    """One run as the win-rate matrix needs it."""

    name: str
    trajectories: list[Trajectory]
    labels: list[EpisodeLabel]
