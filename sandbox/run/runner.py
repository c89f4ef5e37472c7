"""``run_suite(config)``: run the selected tasks x trials of a suite and store a scored run.

One call does, in order: load the suite, resolve the strategy and the model through their
registries, probe a remote model (before any folder is written), hand the episodes to the run's
executor (``sandbox.run.executor``: local asyncio with the run's tools opened once, or Ray), which
runs them with bounded concurrency (each with its own model, tool env scope and agent), append
each trajectory to the run folder as it comes back (group-committed off the event loop:
``sandbox.store.group_commit``; an episode counts as finished once its line is durable), then
score the run with the evaluator and write its report.

``resume_run(path)`` continues a run from its folder: finished episodes are kept, episodes that
ended on an infrastructure or harness error are run again, nothing is duplicated. May import
``sandbox.store``, ``models``, ``tool_envs``, ``eval`` and ``run`` modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import logging
import shutil
import signal
from collections.abc import Coroutine, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agents.budget import Budget
from agents.errors import AgentsError
from agents.plugin_calls import broke, is_foreign, plugin_code
from agents.strategies import ResolvedStrategy
from agents.trajectory import Status, Trajectory
from mock_tools import Suite, SuiteError, Task
from mock_tools.terminal_text import shown
from mock_tools.validate import load_valid_suite
from sandbox.errors import ConfigError, PluginFailure, RunError, RunInterrupted, SandboxError
from sandbox.eval.evaluate import RunScores, evaluate_run_async, run_blocking
from sandbox.eval.headline import headline
from sandbox.eval.judge import DEFAULT_TEMPERATURE
from sandbox.eval.judge_open import JUDGE_CACHE_FILE, open_model_judge
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary, label_episode
from sandbox.eval.report import write_report
from sandbox.eval.usage import UsageTotals
from sandbox.models import ModelProvider, ModelSettings, ModelSpec, build_models, resolve_model
from sandbox.models.preset import with_preset
from sandbox.run.batch import EpisodeBatch, Executor, OnResult, RunSpend, tools_report
from sandbox.run.episode import EpisodePlan
from sandbox.run.executor import EpisodeReports, build_executor
from sandbox.run.progress import RunProgress
from sandbox.run.tasks import select_tasks
from sandbox.store import (
    EpisodeKey,
    Manifest,
    RunConfig,
    RunStatus,
    RunStore,
    SuiteInfo,
    make_run_id,
)
from sandbox.store.group_commit import GroupCommit
from sandbox.store.manifest import git_sha, package_versions
from sandbox.store.redact import REDACTED, redact, redact_data
from sandbox.store.setting import (
    SettingField,
    hidden_parts,
    secret_paths,
    setting_fields,
    value_at,
)
from sandbox.store.suite_folder import suite_folder
from sandbox.tool_envs.factory import select_transport
from sandbox.users import OFFLINE_USERS, UserProvider

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
    note: str | None = Field(default=None, description="Why the run stopped early, if it did.")

    @property
    def pass_rate(self) -> float | None:
        """The headline pass rate (``sandbox.eval.headline``): None when no episode counts."""
        return headline(self.summary).pass_rate

    def json_summary(self) -> dict[str, Any]:
        """The one-line summary of ``sandbox run --json`` (``pass_rate`` null over no episode)."""
        rate = self.pass_rate
        return {
            "run": self.path,
            "episodes": self.episodes,
            "n": self.summary.n,
            "pass_rate": None if rate is None else round(rate, 6),
            "by_status": self.summary.by_status,
            "model_calls": self.usage.model_calls,
            "tokens": self.usage.tokens,
            "cost_usd": round(self.usage.cost, 6),
        } | ({"user_failures": fails} if (fails := self.summary.user_failures) else {})


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
    return run_blocking(run_suite_async(config, env=env, show_progress=show_progress, plots=plots))


SECRET_FIELDS = tuple(secret_paths(RunConfig))
"""The settings a manifest records redacted (those marked ``SECRET``): a resume is given them
again, credentials included."""
SECRET_MAPPINGS = tuple(s.path for s in setting_fields(RunConfig) if s.secret and s.is_mapping)
"""The secret settings that are mappings (``agent.options``...): a resume gives again only the
keys the manifest recorded redacted, and they are merged into the recorded mapping."""
RESUMABLE_OVERRIDES = (
    "budget.max_run_cost",
    "executor.concurrency",
    "eval.plots",
    "output.json_line",
    *SECRET_FIELDS,
)
"""Settings a resume may give (dotted paths): a new run cost budget, how many episodes run at
once (how fast, not what), what the command draws and prints, and what the manifest redacted."""


def resume_run(
    path: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    show_progress: bool = True,
    plots: bool = False,
    overrides: Mapping[str, Any] | None = None,
) -> RunResult:
    """Continue the run in ``path`` with the config in its manifest (and ``overrides`` of the
    settings in ``RESUMABLE_OVERRIDES``, by dotted path)."""
    store = RunStore.open(path)
    given = dict(overrides or {})
    wrong = sorted(set(given) - set(RESUMABLE_OVERRIDES))
    if wrong:
        raise ConfigError(f"a resume can change only {', '.join(RESUMABLE_OVERRIDES)}, not {wrong}")
    _check_secrets(store, given)
    recorded = store.manifest.config
    given = {
        path: {**value_at(recorded, path), **value} if path in SECRET_MAPPINGS else value
        for path, value in given.items()
    }
    if given:
        store.manifest.config = recorded.with_values(given)
    # The suite where it is now (its recorded path works from any folder); resuming still
    # refuses a suite whose fingerprint changed.
    config = store.manifest.config.with_values({"suite": str(store.suite_path())})
    return run_blocking(_execute(config, store, env, show_progress, plots))


def _check_secrets(store: RunStore, given: Mapping[str, Any]) -> None:
    """A resume gives a secret setting again, unchanged; the one it must give (its recorded
    value carried credentials) is not left out."""
    for setting in setting_fields(RunConfig):
        path = setting.path
        if not setting.secret:
            continue
        recorded = value_at(store.manifest.config, path)
        again = given.get(path)
        if setting.is_mapping:
            _check_secret_keys(store.manifest.run_id, setting, recorded, again or {})
            continue
        if path in given and (again if again is None else redact(str(again))) != recorded:
            raise ConfigError(
                f"run {store.manifest.run_id} used {path} {recorded!r}: a resume may only give it "
                "again (with the credentials runs never record), not change it"
            )
        if path not in given and recorded and REDACTED in recorded:
            raise ConfigError(
                f"run {store.manifest.run_id}'s {path} carried credentials, which runs never "
                f"record: resume with {setting.flag_name} and its full value ({recorded})"
            )


def _check_secret_keys(
    run_id: str, setting: SettingField, recorded: dict[str, Any], again: Mapping[str, Any]
) -> None:
    """A resume gives again each key of a secret mapping that the run recorded redacted, with a
    value that redacts to what was recorded, and no other key."""
    hidden = hidden_parts(recorded, recorded=True)
    for key, value in again.items():
        if key not in hidden or redact_data({key: value}) != {key: recorded[key]}:
            raise ConfigError(
                f"run {run_id} used {setting.path} {key} {recorded.get(key)!r}: a resume may only "
                "give again what the run recorded redacted (with the credentials runs never "
                "record), not change it"
            )
    for key in hidden:
        if key not in again:
            raise ConfigError(
                f"run {run_id}'s {setting.path} {key} carried credentials, which runs never "
                f"record: resume with {setting.flag_name} {key}=<its full value> "
                f"({recorded[key]})"
            )


async def run_suite_async(
    config: RunConfig,
    *,
    env: Mapping[str, str] | None = None,
    show_progress: bool = True,
    plots: bool = False,
) -> RunResult:
    return await _execute(config, None, env, show_progress, plots)


# -- the run -------------------------------------------------------------------------------------


def resolve_strategy(config: RunConfig, task_id: str | None = None) -> ResolvedStrategy:
    """The run's (or one task's) strategy with validated options; ``ConfigError`` naming what
    is wrong."""
    try:
        return config.strategy(task_id)
    except AgentsError as e:
        where = f" (task_settings of {task_id})" if task_id is not None else ""
        raise ConfigError(f"{e}{where}") from e


def with_suite_defaults(config: RunConfig, defaults: Mapping[str, Any]) -> RunConfig:
    """``config`` with the episode limits a suite's ``defaults`` set (a BFCL import: BFCL's
    step limit per turn as ``max_depth``) where neither the run nor its preset sets them; a
    key that is no episode limit is a ``ConfigError``."""
    limits = set(Budget.model_fields)
    unknown = sorted(set(defaults) - limits)
    if unknown:
        raise ConfigError(
            f"the suite's defaults name {', '.join(unknown)}: a suite's defaults are episode "
            f"limits ({', '.join(sorted(limits))})"
        )
    try:
        Budget.model_validate(dict(defaults))
    except ValidationError as e:
        problem = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())
        raise ConfigError(f"the suite's defaults: {problem}") from None
    if config.preset is not None:
        return config
    given = config.budget.model_dump()
    values = {f"budget.{k}": v for k, v in defaults.items() if given.get(k) is None}
    return config.with_values(values) if values else config


MAX_EPISODES = 1_000_000
"""The most episodes (tasks x trials) one run may hold: its plan, manifest and index are kept in
memory, so ``--trials 1000000000`` is refused before anything runs instead of exhausting it."""


class _Plan:
    """Everything resolved before the first episode."""

    def __init__(self, config: RunConfig, env: Mapping[str, str] | None) -> None:
        self.env = dict(env or {})
        self.suite = load_run_suite(config.suite)
        self.config = config = with_suite_defaults(config, self.suite.meta.defaults)
        self.tasks = select_tasks(self.suite.tasks, config.tasks)
        if len(self.tasks) * config.trials > MAX_EPISODES:
            raise ConfigError(
                f"--trials {config.trials} of {len(self.tasks)} task(s) is "
                f"{len(self.tasks) * config.trials} episodes, over the {MAX_EPISODES} a run may "
                "hold (MAX_EPISODES)"
            )
        self.strategy = resolve_strategy(config)
        select_transport(config)  # an unknown transport or bad options: before anything runs
        self.model_spec: ModelSpec = with_preset(
            resolve_model(config.model.name, options=config.model.options, env=env), config.preset
        )
        if config.user.model is not None:  # an unknown name: before anything runs
            resolve_model(config.user.model, env=env)
        if self.model_spec.kind in OFFLINE_USERS:
            raise ConfigError(
                f"{config.model.name} plays the user of conversations: give it as --user-model; "
                "the agent's --model is another alias"
            )
        self.models: ModelProvider = build_models(
            self.model_spec, ModelSettings.of(config.model, env)
        )
        self.episodes: list[tuple[Task, int]] = [
            (task, trial) for trial in range(config.trials) for task in self.tasks
        ]
        unknown = sorted(set(config.task_settings) - {t.id for t in self.suite.tasks})
        if unknown:
            raise ConfigError(
                f"--task-setting names {len(unknown)} task(s) the suite does not have: "
                f"{', '.join(unknown[:5])}"
            )
        self.per_task = {
            t.id: (resolve_strategy(config, t.id), config.budget_for(t.id))
            for t in self.tasks
            if t.id in config.task_settings
        }
        self.users = (
            UserProvider(config, self.suite, env) if any(t.user for t in self.tasks) else None
        )

    def for_run(self, run_id: str) -> EpisodePlan:
        return EpisodePlan(
            run_id=run_id,
            strategy=self.strategy,
            models=self.models,
            model_spec=self.model_spec,
            budget=self.config.budget_for(),
            seed=self.config.seed,
            per_task=self.per_task,
            world=self.suite.world,
            users=self.users,
        )


async def _execute(
    config: RunConfig,
    store: RunStore | None,
    env: Mapping[str, str] | None,
    show_progress: bool,
    plots: bool = False,
) -> RunResult:
    if store is not None:
        store.lock()  # first: a second writer is told at once
    try:
        plan = _Plan(config, env)
        executor = build_executor(config)
    except BaseException:
        if store is not None:
            store.release()
        raise
    created = store is None
    try:
        await plan.models.probe()
        if plan.users is not None:
            await plan.users.probe(plan.tasks)
        if config.eval.judge is not None:  # an unreachable judge stops the run before it starts
            async with open_model_judge(config.eval.judge, cache_path=None, temperature=0.0):
                pass
        if store is None:
            store = _create_store(plan)  # only now: a run that cannot start leaves no folder
            finished: dict[EpisodeKey, float] = {}
        else:
            _check_resumable(store, plan)
            finished = store.compact()
            store.manifest.resumed_at.append(datetime.now(timezone.utc))
            store.manifest.status = "running"
            store.manifest.ended_at = None
            store.manifest.error = None
        store.write_manifest()
        todo = [(t, k) for t, k in plan.episodes if (t.id, k) not in finished]
        status = await _run_stored(plan, store, executor, todo, finished, show_progress)
        scores = await _score(store, plan.suite, plots, config.eval.judge)
        store.manifest.status = status  # scores first: a completed run always has them
        store.manifest.ended_at = datetime.now(timezone.utc)
        store.write_manifest()
        return RunResult(
            run_id=store.manifest.run_id,
            path=str(store.path),
            status=status,
            episodes=len(store.manifest.episodes),
            ran=len(todo),
            summary=scores.pass_rate,
            usage=scores.usage,
            labels=scores.labels,
            note=store.manifest.error,
        )
    finally:
        await plan.models.aclose()
        if plan.users is not None:
            await plan.users.aclose()
        if store is not None:
            store.release()
            if created and store.manifest.status == "failed":
                _forget_empty(store)


async def _run_stored(
    plan: _Plan,
    store: RunStore,
    executor: Executor,
    todo: list[tuple[Task, int]],
    finished: Mapping[EpisodeKey, float],
    show_progress: bool,
) -> RunStatus:
    """Run ``todo`` into ``store``; on the way out the manifest says how it ended."""
    config = plan.config
    spend = RunSpend(config.budget.max_run_cost, sum(finished.values()))
    status: RunStatus = "failed"
    try:
        with _terminated_as_cancelled() as stop:
            progress = RunProgress(
                len(plan.episodes),
                title=f"{config.agent.name} x {plan.model_spec.display_name}",
                stream=None if show_progress else _Discard(),
            )
            with progress:
                progress.skip(len(plan.episodes) - len(todo))
                batch = EpisodeBatch(
                    config,
                    plan.suite,
                    plan.for_run(store.manifest.run_id),
                    todo,
                    env=plan.env,
                    spend=spend,
                )
                commit = GroupCommit(store)
                reports = EpisodeReports(todo, f"executor {config.executor.name!r}")
                try:
                    run = executor.run(batch, _keep(commit, progress, executor, spend, reports))
                    if is_foreign(type(executor)):
                        run = _as_plugin(run, reports.what)
                    await _until_failed(run, commit)
                    reports.finish(spend.skipped)
                    await commit.drain()  # the run's episodes are durable before it is scored
                except asyncio.CancelledError:
                    if stop.signal is None:
                        raise
                    raise RunInterrupted(stop.signal) from None
                finally:
                    commit.close()  # what finished is written even when the run stops
        status = "completed"
        if spend.skipped:
            status = "stopped"
            store.manifest.error = (
                f"run budget: max_run_cost {config.budget.max_run_cost} USD reached "
                f"(spent {spend.spent:.4f} USD); {spend.skipped} episode(s) not started; "
                "--resume continues the run"
            )
        return status
    except (KeyboardInterrupt, asyncio.CancelledError, RunInterrupted):
        status = "interrupted"
        store.manifest.error = "interrupted; the finished episodes are kept, --resume continues"
        raise
    except BrokenPipeError:  # the reader of its progress or table went away (`| head`)
        status = "interrupted"
        store.manifest.error = (
            "the reader of its output went away (a closed pipe); the finished episodes are "
            "kept, --resume continues"
        )
        raise
    except SandboxError as e:
        store.manifest.error = str(e)
        raise
    finally:
        store.manifest.tools = tools_report(executor)
        store.close()
        if status not in ("completed", "stopped"):
            store.manifest.status = status
            store.manifest.ended_at = datetime.now(timezone.utc)
            with contextlib.suppress(RunError):  # a full disk: the trajectories are safe already
                store.write_manifest()


async def _as_plugin(run: Coroutine[Any, Any, None], what: str) -> None:
    """An executor of the user's own, run as plugin code (``agents.plugin_calls``)."""
    with plugin_code(what, PluginFailure, passing=(SandboxError,)):
        await run


async def _until_failed(run: Coroutine[Any, Any, None], commit: GroupCommit) -> None:
    """``run`` (the executor's), cancelled as soon as the group commit fails (a group that could
    not be written, a progress line that met a closed pipe): the run stops on that error at
    once, not when the next episode ends."""
    task = asyncio.ensure_future(run)
    failed = asyncio.ensure_future(commit.failed.wait())
    try:
        await asyncio.wait({task, failed}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        failed.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    commit.check()
    task.result()


async def _score(
    store: RunStore, suite: Suite, plots: bool, judge_name: str | None = None
) -> RunScores:
    """Score the run (with the judge ``judge_name`` when given, as ``sandbox eval --judge``
    does: its cache in the run folder) and write its report. Scoring that fails (a record no
    reader can use) marks the run ``failed`` with the reason, so its manifest never stays
    ``running``; a run cut off here by a signal stays ``running``, and ``sandbox eval``
    completes it."""
    try:
        if judge_name is None:
            scores = await evaluate_run_async(store.path, suite)
        else:
            cache = store.path / JUDGE_CACHE_FILE
            async with open_model_judge(
                judge_name, cache_path=cache, temperature=DEFAULT_TEMPERATURE
            ) as judge:
                scores = await evaluate_run_async(store.path, suite, judge=judge)
        write_report(store.path, scores, plots=plots)
    except Exception as e:
        store.manifest.status = "failed"
        store.manifest.error = f"scoring failed: {e}"
        store.manifest.ended_at = datetime.now(timezone.utc)
        with contextlib.suppress(RunError):
            store.write_manifest()
        raise
    return scores


class _Stop:
    signal: int | None = None


@contextlib.contextmanager
def _terminated_as_cancelled() -> Iterator[_Stop]:
    """SIGTERM cancels the run's task (as Ctrl-C does), so it ends ``interrupted``."""
    stop = _Stop()
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def on_signal() -> None:
        stop.signal = signal.SIGTERM
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_signal)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
        yield stop
        return
    try:
        yield stop
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def _forget_empty(store: RunStore) -> None:
    """Remove a run folder that failed before storing any episode (it is not a run)."""
    if store.trajectories_path.is_file() and store.trajectories_path.stat().st_size:
        return
    log.warning("run %s stored no episode: removing %s", store.manifest.run_id, store.path)
    shutil.rmtree(store.path, ignore_errors=True)


def _keep(
    commit: GroupCommit,
    progress: RunProgress,
    executor: Executor,
    spend: RunSpend,
    reports: EpisodeReports,
) -> OnResult:
    """What the runner does with each finished episode, whatever ran it: check that it is one
    the executor was given and has not reported yet, count its cost against the run budget,
    hand its line to the run folder's group commit (the only writer), and show it once the line
    is durable. Nothing of the trajectory is kept but its line until then."""

    def done(task: Task, trial: int, traj: Trajectory) -> None:
        commit.check()  # a group that could not be written stops the run here
        reports.done(task, trial)
        if not isinstance(traj, Trajectory) or (traj.scenario_id, traj.trial) != (task.id, trial):
            raise broke(
                reports.what,
                f"it reported episode {task.id!r} trial {trial} with {_what_it_is(traj)}",
                PluginFailure,
            )
        spend.spent += traj.usage.cost
        label = label_episode(traj, task).label
        episode, status, error = f"{task.id}#{trial}", traj.status.value, traj.infra_error
        usage = traj.usage
        note = error_note(traj)

        def durable() -> None:
            progress.record(
                label,
                episode=episode,
                status=status,
                error=error,  # as the scores count it: left out and listed
                model_calls=usage.model_calls,
                tokens=usage.tokens,
                retries=usage.model_retries,
                simulator_retries=tools_report(executor).get("simulator", {}).get("retries", 0),
                note=note,
            )

        commit.submit(traj.to_json_line().encode("utf-8"), durable)

    return done


# -- helpers -------------------------------------------------------------------------------------

NOTE_CHARS = 200
"""The most characters of an external agent's stderr line the console shows."""


def _what_it_is(traj: object) -> str:
    if isinstance(traj, Trajectory):
        return f"the trajectory of episode {traj.scenario_id!r} trial {traj.trial}"
    return f"a {type(traj).__name__}, not a Trajectory"


def error_note(traj: Trajectory) -> str:
    """Why an episode ended in error, for the console: its end reason and, for an external
    agent, the last line its stderr wrote (cut to ``NOTE_CHARS``, control characters escaped);
    empty for any other ending."""
    if traj.status is not Status.error:
        return ""
    external = traj.tree.get("external")
    tail = external.get("stderr_tail") if isinstance(external, dict) else None
    lines = [ln for ln in tail.splitlines() if ln.strip()] if isinstance(tail, str) else []
    if not lines:
        return traj.end_reason
    last = lines[-1].strip()
    last = last if len(last) <= NOTE_CHARS else last[: NOTE_CHARS - 3] + "..."
    return f"{traj.end_reason}; stderr: {shown(last)}"


def load_run_suite(path: str) -> Suite:
    """The suite a run uses (the packaged default suite for the default path outside the
    checkout): only one ``validate`` accepts (``load_valid_suite``); ``ConfigError`` else."""
    try:
        return load_valid_suite(suite_folder(path))
    except SuiteError as e:
        raise ConfigError(f"cannot load suite: {e}") from e


def _agent_record(plan: _Plan) -> dict[str, Any]:
    """The manifest's agent: its name and options, and the SHA-256 of a system prompt of the
    user's own (``--system-prompt``, ``--system-prompt-file``), so a run says which text it used
    without anyone reading the text."""
    record: dict[str, Any] = {"name": plan.strategy.name, "params": plan.strategy.params}
    prompt = record["params"].get("system_prompt")
    if isinstance(prompt, str):
        record["system_prompt_sha256"] = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    return record


def _create_store(plan: _Plan) -> RunStore:
    config = plan.config
    run_id = config.output.run_id or make_run_id(config)
    suite = plan.suite
    manifest = Manifest(
        run_id=run_id,
        config=config,
        suite=SuiteInfo(
            name=suite.name,
            version=suite.meta.version,
            path=str(Path(suite.path or config.suite).resolve()),
            fingerprint=suite.fingerprint,
        ),
        agent=_agent_record(plan),
        model=plan.model_spec.public(),
        episodes=[(t.id, k) for t, k in plan.episodes],
        seed=config.seed,
        versions=package_versions(),
        git_sha=git_sha(),
    )
    return RunStore.create(config.output.out, manifest)


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
