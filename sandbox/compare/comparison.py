"""Comparing strategies under identical tool behaviour.

``run_comparison`` runs every agent on the same suite, tasks, trials, seed, fault settings and
model, each into its own run folder under one comparison folder::

    runs/compare-<id>/
        comparison.json     the Comparison below
        react/              an ordinary run folder (manifest, trajectories, scores)
        dfsdt/
        react@4/

``compare_runs`` builds the ``Comparison`` from existing run folders (``sandbox compare --runs``),
pairing episodes by task id, under an evaluation protocol (``sandbox.eval.protocols``) and an
optional judge: each run's pass rate (and in a world its state checks), the win-rate matrix
(with two runs, the second over the first) and McNemar per pair. Runs over different suite
versions with the same task ids can be compared: each run is labelled against its own suite, and
the comparison carries a warning that tool behaviour was not identical.
May import ``sandbox.run``, ``eval``, ``store`` and the libraries.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.errors import AgentsError
from agents.strategies import option_owners, options_for
from agents.trajectory import Trajectory
from mock_tools import Suite, SuiteError, Task, load_suite
from sandbox.compare.stats import PairedComparison, WinCell, paired_tests, win_cells
from sandbox.errors import ConfigError
from sandbox.eval.checked_protocol import checked
from sandbox.eval.evaluate import effective_settings
from sandbox.eval.headline import headline
from sandbox.eval.judge import Judge, JudgeUsage
from sandbox.eval.omit_empty import OmitEmpty
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary
from sandbox.eval.protocol import EvalProtocol, JudgeSettings
from sandbox.eval.protocols import DEFAULT_PROTOCOL, get_protocol
from sandbox.eval.state_checks import StateChecks, state_checks
from sandbox.eval.step_report import StepReport, step_reports
from sandbox.eval.steps.selection import ChosenProtocol, StepSelection
from sandbox.eval.usage import UsageTotals
from sandbox.eval.win_rate import PairOutcome, RunSide
from sandbox.run import resolve_strategy, run_suite, select_tasks
from sandbox.store import RunConfig, RunStore
from sandbox.store.suite_folder import suite_folder

__all__ = [
    "COMPARISON_FILE",
    "Comparison",
    "agent_spec",
    "StrategyResult",
    "compare_runs",
    "compare_runs_async",
    "run_comparison",
    "runs_folder",
]

COMPARISON_FILE = "comparison.json"
COMPARISON_SCHEMA = "agent-sandbox/comparison@1"


class StrategyResult(OmitEmpty):
    """One strategy's run, summarised. Costs are totals; ``per_episode`` divides them."""

    omit_when_empty = ("step_scores", "state_checks")

    name: str = Field(
        default="",
        description="The run's name in the comparison: its agent, or its run id "
        "when several runs share an agent.",
    )
    agent: str
    agent_params: dict[str, Any] = Field(default_factory=dict)
    model: str
    run: str = Field(description="Path of the run folder.")
    run_id: str
    episodes: int
    summary: PassSummary
    state_checks: StateChecks | None = Field(
        default=None,
        description="In a world: each state check over the run's episodes, as ``sandbox eval`` "
        "gives it (left out of the JSON elsewhere).",
    )
    usage: UsageTotals
    step_scores: dict[str, StepReport] = Field(
        default_factory=dict,
        description="Step-level scores by step protocol, when the comparison asked for them "
        "(left out of the JSON when not).",
    )
    labels: list[EpisodeLabel] = Field(default_factory=list, exclude=True)
    trajectories: list[Trajectory] = Field(default_factory=list, exclude=True)

    @property
    def pass_rate(self) -> float | None:
        """The run's headline pass rate (``sandbox.eval.headline``); None when nothing counts."""
        return headline(self.summary).pass_rate

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
    protocol: str = DEFAULT_PROTOCOL
    judge_settings: JudgeSettings | None = None
    win_rates: dict[str, dict[str, WinCell]] = Field(
        default_factory=dict, description="win_rates[row][col]: row as candidate against col."
    )
    paired: list[PairedComparison] = Field(default_factory=list)
    outcomes: list[PairOutcome] = Field(
        default_factory=list, description="Every judged pair (later run as candidate)."
    )
    judge: JudgeUsage | None = None
    shared_tasks: int | None = Field(
        default=None, description="Tasks every compared run selected (episodes pair on them)."
    )
    warnings: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))

    def strategy(self, agent: str) -> StrategyResult:
        for s in self.strategies:
            if agent in (s.name, s.agent):
                return s
        raise KeyError(agent)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.strategies]

    def headline(self) -> tuple[WinCell | None, str, str]:
        """With two runs: the second (candidate) over the first (reference), and their names."""
        if len(self.strategies) != 2:
            return None, "", ""
        ref, cand = self.names
        return self.win_rates.get(cand, {}).get(ref), cand, ref


def compare_runs(runs: Sequence[str | Path], **options: Any) -> Comparison:
    """Synchronous ``compare_runs_async`` (same options)."""
    return asyncio.run(compare_runs_async(runs, **options))


async def compare_runs_async(
    runs: Sequence[str | Path],
    *,
    suite_path: str | Path | None = None,
    protocol: EvalProtocol | str = DEFAULT_PROTOCOL,
    judge: Judge | None = None,
    settings: JudgeSettings | None = None,
    seed: int | None = None,
    steps: StepSelection | None = None,
) -> Comparison:
    """Compare run folders side by side (see the module doc).

    Each run is labelled over the tasks its manifest selected, so a missing episode counts as
    unsolved (or, under ``toolbench``, is dropped and listed). ``suite_path`` overrides the
    suite location recorded in the manifests; ``seed`` (default: each run's own for its pass
    rate, as ``sandbox eval`` uses it, and the first run's for what pairs runs) seeds the
    intervals and the judge's coin flips. Runs without a task in common are refused
    (``ConfigError``); ``shared_tasks`` says how many every run has. With ``steps``, each run
    also gets its step-level scores under those step protocols (``StrategyResult.step_scores``).
    """
    if not runs:
        raise ConfigError("nothing to compare: give at least one run folder")
    proto = get_protocol(protocol) if isinstance(protocol, str) else checked(protocol)
    settings = settings or JudgeSettings()
    stores = [RunStore.open(r) for r in runs]
    first = stores[0].manifest
    given_seed, seed = seed, first.seed if seed is None else seed
    suites = [_suite(store, suite_path) for store in stores]
    warnings = _suite_warnings(stores)
    selections = [_selected(store, suite) for store, suite in zip(stores, suites, strict=True)]
    names = _names(stores)
    shared = _check_overlap(names, selections)
    chosen = steps.resolve() if steps is not None else []
    strategies: list[StrategyResult] = []
    for name, store, suite, tasks in zip(names, stores, suites, selections, strict=True):
        own = store.manifest.seed if given_seed is None else given_seed
        result = await _strategy(name, store, tasks, proto, judge, settings, own)
        if chosen:
            result.step_scores = _step_scores(result, suite, tasks, own, chosen)
        strategies.append(result)
    tasks = _union(selections)
    sides = [RunSide(name=s.name, trajectories=s.trajectories, labels=s.labels) for s in strategies]
    win_rates, outcomes = await win_cells(proto, sides, tasks, judge, settings, seed=seed)
    paired = paired_tests([(s.name, s.labels) for s in strategies])
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
        protocol=proto.name,
        judge_settings=effective_settings(proto, settings, judge) if judge else None,
        win_rates=win_rates,
        paired=paired,
        outcomes=outcomes,
        judge=judge.usage.model_copy() if judge is not None else None,
        shared_tasks=shared,
        warnings=warnings,
    )


def _suite(store: RunStore, suite_path: str | Path | None) -> Suite:
    m = store.manifest
    path = Path(suite_path or m.suite.path or m.config.suite)
    try:
        return load_suite(path)
    except SuiteError as e:
        raise ConfigError(f"cannot load the suite of run {store.path} ({path}): {e}") from e


def _suite_warnings(stores: Sequence[RunStore]) -> list[str]:
    fingerprints = {s.manifest.suite.fingerprint for s in stores}
    if len(fingerprints) <= 1:
        return []
    listed = ", ".join(
        f"{s.path} ({s.manifest.suite.name} {_short(s.manifest.suite.fingerprint)})" for s in stores
    )
    return [
        "the runs used different suites (or suite versions): episodes are paired by task id, "
        f"but tool behaviour was not identical across runs: {listed}"
    ]


def _short(fingerprint: str) -> str:
    return fingerprint.removeprefix("sha256:")[:12]


def _selected(store: RunStore, suite: Suite) -> list[Task]:
    m = store.manifest
    by_id = {t.id: t for t in suite.tasks}
    chosen = [by_id[tid] for tid in dict.fromkeys(k[0] for k in m.episodes) if tid in by_id]
    return chosen or select_tasks(suite.tasks, m.config.tasks)


def _check_overlap(names: Sequence[str], selections: Sequence[Sequence[Task]]) -> int:
    """How many task ids every run selected; two runs without a task id in common have nothing
    to compare: a ``ConfigError``."""
    ids = [{t.id for t in tasks} for tasks in selections]
    for (i, a), (j, b) in combinations(enumerate(ids), 2):
        if not a & b:
            raise ConfigError(
                f"runs {names[i]} and {names[j]} have no task id in common (episodes are paired "
                "by task id): compare runs over the same tasks"
            )
    return len(set.intersection(*ids)) if ids else 0


def _union(selections: Sequence[Sequence[Task]]) -> list[Task]:
    """Every task any run selected, once, in first-seen order (the first run's definition)."""
    seen: dict[str, Task] = {}
    for tasks in selections:
        for t in tasks:
            seen.setdefault(t.id, t)
    return list(seen.values())


def _names(stores: Sequence[RunStore]) -> list[str]:
    """Agents, when they tell the runs apart; else run ids; else the folders (with their parent
    folder, then whole)."""
    for pick in (
        lambda s: str(s.manifest.agent.get("name", s.manifest.config.agent.name)),
        lambda s: s.manifest.run_id,
        lambda s: "/".join(s.path.resolve().parts[-2:]),
        lambda s: str(s.path),
    ):
        names = [pick(s) for s in stores]
        if len(set(names)) == len(names):
            return names
    raise ConfigError("a run folder is listed twice")


async def _strategy(
    name: str,
    store: RunStore,
    tasks: Sequence[Task],
    protocol: EvalProtocol,
    judge: Judge | None,
    settings: JudgeSettings,
    seed: int,
) -> StrategyResult:
    m = store.manifest
    trajectories = store.trajectories()
    ids = {t.id for t in tasks}
    keys = [(str(k[0]), int(k[1])) for k in m.episodes if k[0] in ids]
    keys = keys or [(t.id, i) for t in tasks for i in range(max(1, m.config.trials))]
    labels = await protocol.label(trajectories, tasks, keys, judge, settings)
    return StrategyResult(
        name=name,
        agent=str(m.agent.get("name", m.config.agent.name)),
        agent_params=dict(m.agent.get("params", {})),
        model=m.config.model.name,
        run=str(store.path),
        run_id=m.run_id,
        episodes=len(m.episodes) or len(labels),
        summary=protocol.summarise(labels, tasks, seed=seed),
        state_checks=state_checks(labels, tasks, seed=seed),
        usage=UsageTotals.of(trajectories),
        labels=labels,
        trajectories=trajectories,
    )


def _step_scores(
    result: StrategyResult,
    suite: Suite,
    tasks: Sequence[Task],
    seed: int,
    chosen: Sequence[ChosenProtocol],
) -> dict[str, StepReport]:
    """The run's step reports, its episodes in the order ``sandbox eval`` scores them (task,
    then trial), so both give the same intervals."""
    position = {t.id: i for i, t in enumerate(tasks)}
    trajs = sorted(
        (t for t in result.trajectories if t.scenario_id in position),
        key=lambda t: (position[t.scenario_id], t.trial),
    )
    return step_reports(trajs, tasks, suite, seed, chosen)


def runs_folder(runs: Sequence[str | Path], out: str | Path) -> Path:
    """The comparison folder of existing runs: the same runs in the same order, the same folder
    (so a re-run reuses its judge cache)."""
    key = "\n".join(str(Path(r).resolve()) for r in runs)
    return Path(out) / f"compare-runs-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def run_comparison(
    config: RunConfig,
    agents: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    show_progress: bool = True,
    compare: Callable[[list[str]], Comparison] | None = None,
) -> Comparison:
    """Run every agent with ``config`` (its ``agent.name`` is ignored) and compare the runs.

    ``compare`` builds the comparison from the run folders (default: ``compare_runs`` under the
    default protocol, no judge)."""
    configs = agent_configs(config, agents)  # fail before running anything
    labels = _run_ids([c.agent.name for c in configs])
    comp_id = _comparison_id(config, labels)
    folder = Path(config.output.out) / comp_id
    runs: list[str] = []
    for run_config, label in zip(configs, labels, strict=True):
        run_config = run_config.with_values({"output.out": str(folder), "output.run_id": label})
        runs.append(run_suite(run_config, env=env, show_progress=show_progress).path)
    build = compare or (lambda paths: compare_runs(paths, suite_path=suite_folder(config.suite)))
    comparison = build(runs)
    comparison.id = comp_id
    comparison.path = str(folder)
    write_comparison(comparison, folder)
    return comparison


def agent_configs(config: RunConfig, agents: Sequence[str]) -> list[RunConfig]:
    """The run config of each agent of a comparison, each strategy and its options resolved;
    ``ConfigError`` for no agent, an agent listed twice, an unknown agent or option, or an option
    none of the agents takes."""
    names = [a.strip() for a in agents if a.strip()]
    if not names:
        raise ConfigError("--agents needs at least one agent, e.g. react,dfsdt,react@4")
    if len(set(names)) != len(names):
        raise ConfigError(f"an agent is listed twice in {', '.join(names)}")
    configs = [_strategy_config(config, a) for a in names]
    taken = {k for c in configs for k in c.agent.options}
    unused = sorted(set(config.agent.options) - taken)
    if unused:
        labels = _run_ids([c.agent.name for c in configs])
        owners = "; ".join(f"{o}: {', '.join(option_owners(o)) or 'none'}" for o in unused)
        raise ConfigError(
            f"no agent of {', '.join(labels)} takes option(s) {', '.join(unused)} "
            f"(taken by {owners})"
        )
    return configs


_SPEC_OPTION = re.compile(r":(?=\s*[A-Za-z_]\w*\s*=)")
"""Where an option of an agent spec starts: a colon before ``key=``."""


def agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """An agent of ``--agents`` as its name and its own options: ``NAME`` or
    ``NAME:KEY=VALUE[:KEY=VALUE...]`` (``external:command=python my_agent.py``), each VALUE
    read as JSON when it is JSON, else as text; a ``package.module:Name`` path has no options."""
    parts = _SPEC_OPTION.split(spec.strip())
    name, options = parts[0].strip(), {}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        options[key.strip()] = _option_value(value.strip())
    return name, options


def _option_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _run_ids(labels: list[str]) -> list[str]:
    """Run ids of a comparison: each agent's name, numbered when several agents share one
    (two external agents: ``external``, ``external-2``)."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}-{seen[label]}")
    return out


def _strategy_config(config: RunConfig, agent: str) -> RunConfig:
    """``config`` for one strategy of a comparison: its name as the run records it, the
    shared options it takes and its own (``agent_spec``)."""
    name, own = agent_spec(agent)
    try:
        options = {**options_for(name, config.agent.options), **own}
    except AgentsError as e:
        raise ConfigError(str(e)) from e
    one = config.with_values({"agent.name": name, "agent.options": options})
    return one.with_values({"agent.name": resolve_strategy(one).name})


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
