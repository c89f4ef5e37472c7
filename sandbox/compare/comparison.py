"""Comparing strategies under identical tool behaviour.

``run_comparison`` runs every agent on the same suite, tasks, trials, seed, fault settings and
model, each into its own run folder under one comparison folder::

    runs/compare-<id>/
        comparison.json     the Comparison below
        react/              an ordinary run folder (manifest, trajectories, scores)
        dfsdt/
        react@4/

``compare_runs`` builds the ``Comparison`` from existing run folders, so any set of runs on the
same suite can be compared again later (and the result extended with win rates or paired tests).
May import ``sandbox.run``, ``eval``, ``store`` and the libraries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.errors import AgentsError
from agents.strategies import option_owners, options_for
from agents.trajectory import Trajectory
from mock_tools import SuiteError, Task, load_suite
from sandbox.compare.stats import PairedComparison, WinCell, paired_tests, win_cells
from sandbox.errors import ConfigError, RunError
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary, label_run, summarise
from sandbox.eval.usage import UsageTotals
from sandbox.eval.win_rate import RunSide
from sandbox.run import resolve_strategy, run_suite, select_tasks
from sandbox.store import RunConfig, RunStore

__all__ = [
    "COMPARISON_FILE",
    "Comparison",
    "StrategyResult",
    "compare_runs",
    "run_comparison",
]

COMPARISON_FILE = "comparison.json"
COMPARISON_SCHEMA = "agent-sandbox/comparison@1"


class StrategyResult(BaseModel):
    """One strategy's run, summarised. Costs are totals; ``per_episode`` divides them."""

    agent: str
    agent_params: dict[str, Any] = Field(default_factory=dict)
    model: str
    run: str = Field(description="Path of the run folder.")
    run_id: str
    episodes: int
    summary: PassSummary
    usage: UsageTotals
    labels: list[EpisodeLabel] = Field(default_factory=list, exclude=True)
    trajectories: list[Trajectory] = Field(default_factory=list, exclude=True)

    @property
    def pass_rate(self) -> float:
        return self.summary.pass_rate.value

    def per_episode(self, total: float) -> float:
        return total / self.episodes if self.episodes else 0.0


class Comparison(BaseModel):
    """Several strategies on the same tasks; extend it with pairwise statistics."""

    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=COMPARISON_SCHEMA, alias="schema")
    id: str = ""
    path: str | None = None
    suite: str
    suite_fingerprint: str = ""
    model: str | None = Field(default=None, description="Shared model, when all runs share one.")
    seed: int | None = None
    groups: list[str] = Field(default_factory=list)
    strategies: list[StrategyResult]
    win_rates: dict[str, dict[str, WinCell]] = Field(
        default_factory=dict, description="win_rates[row][col]: row as candidate against col."
    )
    paired: list[PairedComparison] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))

    def strategy(self, agent: str) -> StrategyResult:
        for s in self.strategies:
            if s.agent == agent:
                return s
        raise KeyError(agent)


def compare_runs(runs: Sequence[str | Path], *, suite_path: str | Path | None = None) -> Comparison:
    """Summarise run folders on the same suite side by side.

    Each run is labelled over the tasks its manifest selected, so a missing episode counts as
    unsolved. ``suite_path`` overrides the suite location recorded in the manifests.
    """
    if not runs:
        raise ConfigError("nothing to compare: give at least one run folder")
    stores = [RunStore.open(r) for r in runs]
    fingerprints = {s.manifest.suite.fingerprint for s in stores}
    if len(fingerprints) > 1:
        listed = ", ".join(f"{s.path} ({s.manifest.suite.fingerprint[:19]})" for s in stores)
        raise RunError(f"the runs used different suite versions and cannot be compared: {listed}")
    first = stores[0].manifest
    path = Path(suite_path or first.config.suite)
    try:
        suite = load_suite(path)
    except SuiteError as e:
        raise ConfigError(f"cannot load the suite of the runs: {e}") from e
    strategies = [_strategy(store, suite.tasks) for store in stores]
    seed = first.seed
    selected = {task_id for s in stores for task_id, _ in s.manifest.episodes}
    tasks = [t for t in suite.tasks if t.id in selected]
    sides = [
        RunSide(name=s.agent, trajectories=s.trajectories, labels=s.labels) for s in strategies
    ]
    names = [s.agent for s in strategies]
    win_rates = win_cells(sides, tasks, seed=seed) if len(set(names)) == len(names) else {}
    paired = paired_tests([(s.agent, s.labels) for s in strategies], tasks)
    models = {s.model for s in strategies}
    seeds = {s.manifest.seed for s in stores}
    groups = sorted({g for s in strategies for g in s.summary.groups})
    return Comparison(
        suite=first.suite.name,
        suite_fingerprint=first.suite.fingerprint,
        model=models.pop() if len(models) == 1 else None,
        seed=seeds.pop() if len(seeds) == 1 else None,
        groups=groups,
        strategies=strategies,
        win_rates=win_rates,
        paired=paired,
    )


def _strategy(store: RunStore, all_tasks: Sequence[Task]) -> StrategyResult:
    m = store.manifest
    by_id = {t.id: t for t in all_tasks}
    selected = [by_id[tid] for tid in dict.fromkeys(k[0] for k in m.episodes) if tid in by_id]
    tasks = selected or select_tasks(all_tasks, m.config.tasks)
    trajectories = store.trajectories()
    labels = label_run(trajectories, tasks)
    return StrategyResult(
        agent=str(m.agent.get("name", m.config.agent)),
        agent_params=dict(m.agent.get("params", {})),
        model=m.config.model,
        run=str(store.path),
        run_id=m.run_id,
        episodes=len(m.episodes) or len(labels),
        summary=summarise(labels, tasks, seed=m.seed),
        usage=UsageTotals.of(trajectories),
        labels=labels,
        trajectories=trajectories,
    )


def run_comparison(
    config: RunConfig,
    agents: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    show_progress: bool = True,
) -> Comparison:
    """Run every agent with ``config`` (its ``agent`` is ignored) and compare the runs."""
    names = [a.strip() for a in agents if a.strip()]
    if not names:
        raise ConfigError("--agents needs at least one agent, e.g. react,dfsdt,react@4")
    configs = [_strategy_config(config, a) for a in names]  # fail before running anything
    labels = [c.agent for c in configs]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"an agent is listed twice in {', '.join(names)}")
    taken = {k for c in configs for k in c.agent_options}
    unused = sorted(set(config.agent_options) - taken)
    if unused:
        owners = "; ".join(f"{o}: {', '.join(option_owners(o)) or 'none'}" for o in unused)
        raise ConfigError(
            f"no agent of {', '.join(labels)} takes option(s) {', '.join(unused)} "
            f"(taken by {owners})"
        )
    comp_id = _comparison_id(config, labels)
    folder = Path(config.out) / comp_id
    runs: list[str] = []
    for run_config in configs:
        run_config = run_config.model_copy(update={"out": str(folder), "run_id": run_config.agent})
        runs.append(run_suite(run_config, env=env, show_progress=show_progress).path)
    comparison = compare_runs(runs, suite_path=config.suite)
    comparison.id = comp_id
    comparison.path = str(folder)
    write_comparison(comparison, folder)
    return comparison


def _strategy_config(config: RunConfig, agent: str) -> RunConfig:
    """``config`` for one strategy of a comparison: its name as the run records it, and the
    shared options it takes."""
    try:
        options = options_for(agent, config.agent_options)
    except AgentsError as e:
        raise ConfigError(str(e)) from e
    one = config.model_copy(update={"agent": agent, "agent_options": options})
    return one.model_copy(update={"agent": resolve_strategy(one).name})


def write_comparison(comparison: Comparison, folder: Path) -> Path:
    file = folder / COMPARISON_FILE
    file.write_text(
        json.dumps(comparison.model_dump(mode="json", by_alias=True), indent=2) + "\n",
        encoding="utf-8",
    )
    return file


def _comparison_id(config: RunConfig, agents: Sequence[str]) -> str:
    now = datetime.now(timezone.utc)
    digest = hashlib.sha256(
        (config.model_dump_json() + ",".join(agents) + now.isoformat()).encode()
    ).hexdigest()[:6]
    return f"compare-{now.strftime('%Y%m%d-%H%M%S')}-{digest}"
