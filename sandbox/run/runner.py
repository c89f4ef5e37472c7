"""``run_suite(config)``: run the selected tasks x trials of a suite and store a scored run.

One call does, in order: load the suite, resolve the strategy and the model through their
registries, probe a remote model (before any folder is written), hand the episodes to the run's
executor (``sandbox.run.executor``: local asyncio with the run's tools opened once, or Ray), which
runs them with bounded concurrency (each with its own model, tool env scope and agent), append
each trajectory to the run folder as it comes back, then score the run with the evaluator and
write its report.

``resume_run(path)`` continues a run from its folder: finished episodes are kept, episodes that
ended on an infrastructure or harness error are run again, nothing is duplicated. May import
``sandbox.store``, ``models``, ``tool_envs``, ``eval`` and ``run`` modules.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agents.errors import AgentsError
from agents.strategies import ResolvedStrategy
from agents.trajectory import Trajectory
from mock_tools import Suite, SuiteError, Task, load_suite
from sandbox.errors import ConfigError, RunError, SandboxError
from sandbox.eval.evaluate import evaluate_run_async
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary, label_episode
from sandbox.eval.report import write_report
from sandbox.eval.usage import UsageTotals
from sandbox.models import ModelProvider, ModelSettings, ModelSpec, build_models, resolve_model
from sandbox.run.batch import EpisodeBatch, OnResult
from sandbox.run.episode import EpisodePlan
from sandbox.run.executor import build_executor
from sandbox.run.progress import RunProgress
from sandbox.run.tasks import select_tasks
from sandbox.store import EpisodeKey, Manifest, RunConfig, RunStore, SuiteInfo, make_run_id
from sandbox.store.manifest import git_sha, package_versions
from sandbox.store.run_store import needs_rerun

__all__ = ["RunResult", "resume_run", "run_suite", "run_suite_async"]

log = logging.getLogger(__name__)


class RunResult(BaseModel):
    """What a run produced; ``path`` holds everything."""

    run_id: str
    path: str
    status: str
    episodes: int = Field(description="Episodes of the run (tasks x trials).")
    ran: int = Field(description="Episodes run by this invocation (resume skips finished ones).")
    summary: PassSummary
    usage: UsageTotals
    labels: list[EpisodeLabel] = Field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.summary.pass_rate.value

    def json_summary(self) -> dict[str, Any]:
        """The one-line summary of ``sandbox run --json``."""
        return {
            "run": self.path,
            "episodes": self.episodes,
            "pass_rate": round(self.pass_rate, 6),
            "by_status": self.summary.by_status,
        }


# -- entry points --------------------------------------------------------------------------------


def run_suite(
    config: RunConfig,
    *,
    env: Mapping[str, str] | None = None,
    show_progress: bool = True,
    plots: bool = False,
) -> RunResult:
    """Run ``config`` into a new run folder under ``config.out``. ``env`` feeds the registry.

    The folder ends with the evaluator's ``scores.json`` and ``report.md`` (and PNG plots when
    ``plots``)."""
    return asyncio.run(run_suite_async(config, env=env, show_progress=show_progress, plots=plots))


def resume_run(
    path: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    show_progress: bool = True,
    plots: bool = False,
) -> RunResult:
    """Continue the run in ``path`` with the config in its manifest."""
    store = RunStore.open(path)
    return asyncio.run(_execute(store.manifest.config, store, env, show_progress, plots))


async def run_suite_async(
    config: RunConfig,
    *,
    env: Mapping[str, str] | None = None,
    show_progress: bool = True,
    plots: bool = False,
) -> RunResult:
    return await _execute(config, None, env, show_progress, plots)


# -- the run -------------------------------------------------------------------------------------


def resolve_strategy(config: RunConfig) -> ResolvedStrategy:
    """The run's strategy with validated options; ``ConfigError`` naming what is wrong."""
    try:
        return config.strategy()
    except AgentsError as e:
        raise ConfigError(str(e)) from e


class _Plan:
    """Everything resolved before the first episode."""

    def __init__(self, config: RunConfig, env: Mapping[str, str] | None) -> None:
        self.config = config
        self.suite = _load(config.suite)
        self.tasks = select_tasks(self.suite.tasks, config.tasks)
        self.strategy = resolve_strategy(config)
        self.model_spec: ModelSpec = resolve_model(
            config.model, options=config.model_options, env=env
        )
        self.models: ModelProvider = build_models(
            self.model_spec, ModelSettings(env=dict(env or {}), cache_path=config.model_cache)
        )
        self.episodes: list[tuple[Task, int]] = [
            (task, trial) for trial in range(config.trials) for task in self.tasks
        ]

    def for_run(self, run_id: str) -> EpisodePlan:
        return EpisodePlan(
            run_id=run_id,
            strategy=self.strategy,
            models=self.models,
            model_spec=self.model_spec,
            budget=self.config.budget(),
            seed=self.config.seed,
        )


async def _execute(
    config: RunConfig,
    store: RunStore | None,
    env: Mapping[str, str] | None,
    show_progress: bool,
    plots: bool = False,
) -> RunResult:
    plan = _Plan(config, env)
    executor = build_executor(config)
    await plan.models.probe()
    if store is None:
        store = _create_store(plan)
        finished: dict[EpisodeKey, Trajectory] = {}
    else:
        _check_resumable(store, plan)
        finished = store.compact()
        store.manifest.resumed_at.append(datetime.now(timezone.utc))
        store.manifest.status = "running"
        store.manifest.ended_at = None
        store.write_manifest()
    todo = [(t, k) for t, k in plan.episodes if (t.id, k) not in finished]
    status = "failed"
    try:
        progress = RunProgress(
            len(plan.episodes),
            title=f"{config.agent} x {config.model}",
            stream=None if show_progress else _Discard(),
        )
        with progress:
            progress.skip(len(plan.episodes) - len(todo))
            batch = EpisodeBatch(config, plan.suite, plan.for_run(store.manifest.run_id), todo)
            await executor.run(batch, _keep(store, progress))
        status = "completed"
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
        raise
    except SandboxError as e:
        store.manifest.error = str(e)
        raise
    finally:
        await plan.models.aclose()
        store.close()
        store.manifest.status = status  # type: ignore[assignment]
        store.manifest.ended_at = datetime.now(timezone.utc)
        store.write_manifest()
    return await _finish(store, plan.suite, ran=len(todo), status=status, plots=plots)


async def _finish(
    store: RunStore, suite: Suite, *, ran: int, status: str, plots: bool
) -> RunResult:
    """Score the stored run once with the evaluator, write its ``scores.json`` and
    ``report.md`` (what ``sandbox eval`` writes), and summarise it as the ``RunResult``."""
    scores = await evaluate_run_async(store.path, suite)
    write_report(store.path, scores, plots=plots)
    return RunResult(
        run_id=store.manifest.run_id,
        path=str(store.path),
        status=status,
        episodes=len(store.manifest.episodes),
        ran=ran,
        summary=scores.pass_rate,
        usage=scores.usage,
        labels=scores.labels,
    )


def _keep(store: RunStore, progress: RunProgress) -> OnResult:
    """What the runner does with each finished episode, whatever ran it: append it to the run
    folder (the only writer), then show it."""

    def done(task: Task, trial: int, traj: Trajectory) -> None:
        store.append(traj)
        label = label_episode(traj, task)
        progress.record(
            label.label,
            episode=f"{task.id}#{trial}",
            status=traj.status.value,
            error=needs_rerun(traj),
            model_calls=traj.usage.model_calls,
            tokens=traj.usage.prompt_tokens + traj.usage.completion_tokens,
        )

    return done


# -- helpers -------------------------------------------------------------------------------------


def _load(path: str) -> Suite:
    try:
        return load_suite(path)
    except SuiteError as e:
        raise ConfigError(f"cannot load suite: {e}") from e


def _create_store(plan: _Plan) -> RunStore:
    config = plan.config
    run_id = config.run_id or make_run_id(config)
    suite = plan.suite
    manifest = Manifest(
        run_id=run_id,
        config=config,
        suite=SuiteInfo(
            name=suite.name,
            version=suite.meta.version,
            path=str(suite.path or config.suite),
            fingerprint=suite.fingerprint,
        ),
        agent={"name": plan.strategy.name, "params": plan.strategy.params},
        model=plan.model_spec.public(),
        episodes=[(t.id, k) for t, k in plan.episodes],
        seed=config.seed,
        versions=package_versions(),
        git_sha=git_sha(),
    )
    return RunStore.create(config.out, manifest)


def _check_resumable(store: RunStore, plan: _Plan) -> None:
    recorded = store.manifest.suite.fingerprint
    if recorded and recorded != plan.suite.fingerprint:
        raise RunError(
            f"the suite at {plan.config.suite} changed since run {store.manifest.run_id} started "
            f"(fingerprint {plan.suite.fingerprint[:19]} != {recorded[:19]}); "
            "start a new run instead of resuming"
        )


class _Discard(io.StringIO):
    """A write-only stream that drops everything (``show_progress=False``)."""

    def write(self, text: str) -> int:
        return len(text)
