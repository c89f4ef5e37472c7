"""Evaluation protocols: what one must provide, and the registry that names them.

A protocol turns trajectories into the two headline figures:

- ``label(trajs, tasks, keys, judge, settings)``: one ``EpisodeLabel`` per expected episode
  (``keys``: ``(task id, trial)`` pairs), and ``summarise(labels, tasks, seed)``: the pass rate;
- ``prefer(candidate, reference, tasks, judge, settings, seed)``: one ``PairOutcome`` per paired
  episode, and ``summarise_wins``: the win rate.

Built-ins (``sandbox.eval.protocols`` registers them): ``default`` (the project's: checks first,
then rules, then a judge), ``toolbench`` (ToolEval, label for label) and
``toolbench-normalized`` (ToolEval's normalized preference). ``docs/evaluation.md`` tables where
they differ. A new protocol is one module with a class like theirs and one
``register_protocol`` call, or nothing but an entry point (``agent_sandbox.protocols``) or its
path (``--protocol my_pkg.protocols:Strict``); ``--protocol`` takes any name ``PROTOCOLS``
resolves.
May import ``agents`` (the registry) and ``eval`` modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, cast

from pydantic import BaseModel, Field

from agents.registry import Registry
from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.eval.judge import Judge
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary, scoring_rule_text, summarise
from sandbox.eval.win_rate import PairOutcome, RunSide, WinSummary, summarise_wins

__all__ = [
    "PROTOCOLS",
    "EpisodeKey",
    "EvalProtocol",
    "ProtocolBase",
    "JudgeSettings",
    "Order",
    "register_protocol",
]

EpisodeKey = tuple[str, int]
Order = Literal["alternate", "random"]


class JudgeSettings(BaseModel):
    """How a protocol uses its judge; ``None`` fields take the protocol's defaults."""

    samples: int | None = Field(default=None, ge=1, description="Judge samples per episode.")
    rounds: int | None = Field(default=None, ge=1, description="Preference rounds per pair.")
    temperature: float | None = Field(default=None, ge=0.0)
    order: Order = Field(
        default="alternate",
        description="Answer order per preference round: alternate (seeded start) or random.",
    )


class EvalProtocol(Protocol):
    """What ``evaluate_run`` and ``compare_runs`` need from a protocol."""

    name: str
    summary: str
    judge_required: bool
    """True when the protocol cannot label without a judge (ToolEval's)."""
    defaults: JudgeSettings
    """The protocol's samples, rounds and temperature when the user gives none."""
    scoring_rule: str
    """What each label scores in the pass rate, as ``report.md`` states it."""
    # Optional: ``labels_each_episode = True`` says an episode's label depends on that episode
    # (and its task) alone, so ``evaluate_run`` labels a run in chunks as it streams it, in
    # constant memory; without it a protocol gets every trajectory of the run in one call.

    async def label(
        self,
        trajs: Sequence[Trajectory],
        tasks: Sequence[Task],
        keys: Sequence[EpisodeKey],
        judge: Judge | None,
        settings: JudgeSettings,
    ) -> list[EpisodeLabel]: ...

    def summarise(
        self, labels: Sequence[EpisodeLabel], tasks: Sequence[Task], *, seed: int
    ) -> PassSummary: ...

    async def prefer(
        self,
        candidate: RunSide,
        reference: RunSide,
        tasks: Sequence[Task],
        judge: Judge | None,
        settings: JudgeSettings,
        *,
        seed: int,
    ) -> list[PairOutcome]: ...

    def summarise_wins(
        self, outcomes: Sequence[PairOutcome], *, candidate: str, reference: str, seed: int
    ) -> WinSummary: ...


class ProtocolBase:
    """The summaries every built-in protocol shares: ``pass_rate.summarise`` (and its
    ``scoring_rule``) and ``win_rate.summarise_wins`` with the protocol's ``tie_value``.
    Subclasses give ``name``,
    ``summary``, ``judge_required``, ``defaults``, ``label`` and ``prefer``."""

    name = ""
    tie_value = 0.5
    """What a tie counts in the win rate."""
    scoring_rule = scoring_rule_text()
    """What each label scores in the pass rate (``pass_rate.SCORES``, which ``summarise`` uses)."""

    def summarise(
        self, labels: Sequence[EpisodeLabel], tasks: Sequence[Task], *, seed: int
    ) -> PassSummary:
        return summarise(labels, tasks, seed=seed, protocol=self.name)

    def summarise_wins(
        self, outcomes: Sequence[PairOutcome], *, candidate: str, reference: str, seed: int
    ) -> WinSummary:
        return summarise_wins(
            outcomes, candidate=candidate, reference=reference, seed=seed, tie_value=self.tie_value
        )


_MEMBERS = ("name", "label", "prefer", "summarise", "summarise_wins")


def _adapt(obj: Any, name: str | None) -> EvalProtocol:
    """A plugin's protocol: an object with the protocol's members, or a class that makes one
    with no arguments."""
    protocol = obj() if isinstance(obj, type) else obj
    missing = [m for m in _MEMBERS if not hasattr(protocol, m)]
    if missing:
        raise TypeError(f"it has no {', '.join(missing)}")
    return cast(EvalProtocol, protocol)


PROTOCOLS: Registry[EvalProtocol] = Registry(
    "evaluation protocol",
    group="agent_sandbox.protocols",
    adapt=_adapt,
    expected="an evaluation protocol (name, label, prefer, summarise, summarise_wins)",
)
"""Protocol name -> protocol: the built-ins (``sandbox.eval.protocols``), what code registered,
plugins (the ``agent_sandbox.protocols`` entry points) and ``package.module:NAME`` paths."""


def register_protocol(protocol: EvalProtocol, *, replace: bool = False) -> EvalProtocol:
    """Make ``protocol`` nameable (``--protocol NAME``)."""
    return PROTOCOLS.register(protocol.name, protocol, replace=replace)
