"""``run_suite(config)``: run the selected tasks x trials of a suite and store a scored run.

One call does, in order: load the suite, resolve agent and model names, probe a remote model
(before any folder is written), build the mock tool app once, run the episodes with bounded
concurrency (each with its own model, tool env scope and agent), append each trajectory to the
run folder as it finishes, then score the run with the evaluator and write its report.

``resume_run(path)`` continues a run from its folder: finished episodes are kept, episodes that
ended on an infrastructure or harness error are run again, nothing is duplicated.
"""

from __future__ import annotations

import asyncio
import fnmatch
import importlib.metadata
import io
import logging
import subprocess
import traceback
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, Field

from agents.agent import EpisodeMeta
from agents.trajectory import Component, ErrorRecord, Status, Trajectory
from mock_tools import (
    MockToolsError,
    Suite,
    SuiteError,
    Task,
    create_app,
    in_process_client,
    load_suite,
)
from sandbox.config import RunConfig
from sandbox.errors import ConfigError, RunError, SandboxError
from sandbox.eval.evaluate import evaluate_run_async
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary, label_episode
from sandbox.eval.report import write_report
from sandbox.eval.usage import UsageTotals
from sandbox.progress import RunProgress
from sandbox.registry import (
    AgentSpec,
    ModelFactory,
    probe_model,
    resolve_agent,
    resolve_model,
)
from sandbox.run_store import (
    EpisodeKey,
    Manifest,
    RunStore,
    SuiteInfo,
    make_run_id,
    needs_rerun,
    read_trajectories,
)
from sandbox.toolenv_http import HttpToolEnv

__all__ = ["RunResult", "UsageTotals", "resume_run", "run_suite", "run_suite_async", "select_tasks"]

log = logging.getLogger(__name__)
_VERSIONED = ("agent-sandbox", "pydantic", "httpx", "fastapi", "openai", "networkx", "rich")


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


class _Plan:
    """Everything resolved before the first episode."""

    def __init__(self, config: RunConfig, env: Mapping[str, str] | None) -> None:
        self.config = config
        self.suite = _load(config.suite)
        self.tasks = select_tasks(self.suite.tasks, config.tasks)
        self.agent: AgentSpec = resolve_agent(
            config.agent,
            width=config.width,
            max_observation_chars=config.max_observation_chars,
            depth_unit=config.depth_unit,
        )
        spec = resolve_model(config.model, env=env)
        replay: dict[EpisodeKey, Trajectory] = {}
        if spec.kind == "replay":
            replay = {(t.scenario_id, t.trial): t for t in read_trajectories(spec.params["run"])}
        if config.fork is not None:
            from sandbox.fork import ForkModelFactory, load_forked_episode

            self.models: ModelFactory = ForkModelFactory(
                spec, config.fork, load_forked_episode(config.fork)
            )
        else:
            self.models = ModelFactory(spec, replay=replay, cache_path=config.model_cache)
        if config.tools_url is None and config.miss_policy in ("simulate", "upstream"):
            raise ConfigError(
                f"miss policy {config.miss_policy!r} needs a tool server configured for it: "
                f"start `python -m mock_tools serve {config.suite} --miss-policy "
                f"{config.miss_policy} ...` and pass --tools-url"
            )
        self.episodes: list[tuple[Task, int]] = [
            (task, trial) for trial in range(config.trials) for task in self.tasks
        ]


async def _execute(
    config: RunConfig,
    store: RunStore | None,
    env: Mapping[str, str] | None,
    show_progress: bool,
    plots: bool = False,
) -> RunResult:
    plan = _Plan(config, env)
    await probe_model(plan.models)
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
        async with _tool_client(plan) as client:
            await _check_tools(client, plan)
            progress = RunProgress(
                len(plan.episodes),
                title=f"{config.agent} x {config.model}",
                stream=None if show_progress else _Discard(),
            )
            with progress:
                progress.skip(len(plan.episodes) - len(todo))
                await _run_episodes(plan, store, client, todo, progress)
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


async def _run_episodes(
    plan: _Plan,
    store: RunStore,
    client: httpx.AsyncClient,
    todo: list[tuple[Task, int]],
    progress: RunProgress,
) -> None:
    limit = asyncio.Semaphore(plan.config.concurrency)

    async def one(task: Task, trial: int) -> None:
        async with limit:
            traj = await _episode(plan, store.manifest.run_id, client, task, trial)
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

    jobs = [asyncio.ensure_future(one(task, trial)) for task, trial in todo]
    try:
        await asyncio.gather(*jobs)
    finally:
        for job in jobs:
            job.cancel()


async def _episode(
    plan: _Plan, run_id: str, client: httpx.AsyncClient, task: Task, trial: int
) -> Trajectory:
    config = plan.config
    env = HttpToolEnv(
        client,
        task,
        plan.suite.apis,
        session=f"{run_id}/{task.id}/{trial}",
        faults=config.run_faults(),
    )
    meta = EpisodeMeta(scenario_id=task.id, run_id=run_id, trial=trial, seed=config.seed)
    started = datetime.now(timezone.utc)
    try:
        model = plan.models.for_episode(task, seed=config.seed, trial=trial)
        agent = plan.agent.build()
        traj = await agent.run(
            model=model, env=env, query=task.query, budget=config.budget(), episode=meta
        )
    except SandboxError:
        raise
    except Exception as e:  # a bug in an agent or model: record it, keep the other episodes
        log.error("episode %s#%d crashed:\n%s", task.id, trial, traj_tb := traceback.format_exc())
        traj = Trajectory(
            run_id=run_id,
            scenario_id=task.id,
            trial=trial,
            agent=Component(name=plan.agent.name, params=plan.agent.params),
            model=Component(name=plan.models.spec.name, params=plan.models.params()),
            seed=config.seed,
            status=Status.error,
            end_reason=f"internal_error:{type(e).__name__}",
            errors=[ErrorRecord(kind="internal", message=f"{type(e).__name__}: {e}\n{traj_tb}")],
            started_at=started,
            ended_at=datetime.now(timezone.utc),
        )
    finally:
        await env.reset()
    traj.run_id = run_id
    traj.trial = trial
    return traj


# -- helpers -------------------------------------------------------------------------------------


def select_tasks(tasks: Sequence[Task], patterns: Sequence[str]) -> list[Task]:
    """Tasks whose id equals or fnmatch-es any pattern (comma lists allowed); all if none."""
    wanted = [p.strip() for item in patterns for p in item.split(",") if p.strip()]
    if not wanted:
        return list(tasks)
    picked = [t for t in tasks if any(t.id == p or fnmatch.fnmatchcase(t.id, p) for p in wanted)]
    unmatched = [
        p for p in wanted if not any(t.id == p or fnmatch.fnmatchcase(t.id, p) for t in tasks)
    ]
    if unmatched or not picked:
        sample = ", ".join(t.id for t in tasks[:8]) + (", ..." if len(tasks) > 8 else "")
        raise ConfigError(
            f"no task matches {', '.join(unmatched) or ', '.join(wanted)}; task ids look like: "
            f"{sample}"
        )
    return picked


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
        agent={"name": plan.agent.name, "params": plan.agent.params},
        model=plan.models.params(),
        episodes=[(t.id, k) for t, k in plan.episodes],
        seed=config.seed,
        versions=_versions(),
        git_sha=_git_sha(),
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


class _ToolClient:
    """The run's HTTP client: in process to a fresh app, or to ``--tools-url``."""

    def __init__(self, plan: _Plan) -> None:
        config = plan.config
        if config.tools_url:
            self.client = httpx.AsyncClient(base_url=config.tools_url.rstrip("/"), timeout=60.0)
        else:
            try:
                app = create_app(plan.suite, miss_policy=config.miss_policy)
            except MockToolsError as e:
                raise ConfigError(f"cannot build the mock tool server: {e}") from e
            self.client = in_process_client(app, timeout=60.0)

    async def __aenter__(self) -> httpx.AsyncClient:
        return await self.client.__aenter__()

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)


def _tool_client(plan: _Plan) -> _ToolClient:
    return _ToolClient(plan)


async def _check_tools(client: httpx.AsyncClient, plan: _Plan) -> None:
    """One ``/health`` call: a remote tool server must answer and serve the same suite."""
    if not plan.config.tools_url:
        return
    url = plan.config.tools_url
    try:
        r = await client.get("/health", timeout=10.0)
        health = r.json()
    except (httpx.HTTPError, ValueError) as e:
        raise ConfigError(
            f"the tool server at {url} does not answer /health ({type(e).__name__}); start it "
            f"with `python -m mock_tools serve {plan.config.suite}` or drop --tools-url"
        ) from e
    served = health.get("fingerprint") if isinstance(health, dict) else None
    if served and served != plan.suite.fingerprint:
        log.warning(
            "the tool server at %s serves a different suite version than %s", url, plan.config.suite
        )


def _versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for dist in _VERSIONED:
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def _git_sha() -> str | None:
    root = Path(__file__).resolve().parents[1]
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and sha else None


class _Discard(io.StringIO):
    """A write-only stream that drops everything (``show_progress=False``)."""

    def write(self, text: str) -> int:
        return len(text)
