"""One episode: a fresh agent and model on a per-episode tool env, and the trajectory it leaves.

A bug in an agent or a model (any exception but a ``SandboxError``, ``SystemExit`` and
``KeyboardInterrupt`` raised in their code included, and a ``CancelledError`` they raise of their
own) does not stop the run: the episode is recorded with status ``error`` and an ``internal``
error holding the traceback, so ``--resume`` runs it again. What a strategy returns is checked
(a ``Trajectory`` of the episode's task; one of a strategy outside the project must also read back
as every reader reads it), and a strategy that has not returned within its episode's
``max_seconds`` and a grace is stopped (``sandbox.run.wall_clock``): the episode ends
``budget_exhausted`` with an agent error record (``agents.plugin_calls`` names such code in
messages). A configuration error of the model endpoint (a refused key, an unknown model:
``ModelError.configuration``) stops the run: ``EndpointConfigError``, with the endpoint's
message; the episode is not recorded, so ``--resume`` runs it once the set-up is fixed. May
import ``sandbox.models``, ``sandbox.tool_envs``, ``sandbox.store``, ``sandbox.run.wall_clock``
and ``agents`` only.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.errors import ModelError
from agents.plugin_calls import cancelled_from_outside, is_foreign, raised_text
from agents.strategies import ResolvedStrategy
from agents.trajectory import Component, ErrorRecord, Status, Trajectory
from mock_tools import Task
from mock_tools.worlds.world import WorldEngine
from sandbox.errors import EndpointConfigError, SandboxError
from sandbox.eval.world_verdict import world_verdict
from sandbox.models import ModelProvider, ModelSpec
from sandbox.run.wall_clock import Overran, overrun_grace, within_wall_clock
from sandbox.store.record_redaction import redact_trajectory
from sandbox.tool_envs import ToolEnvs
from sandbox.users import UserProvider

__all__ = ["EpisodePlan", "failed_episode", "model_budget", "run_episode"]

log = logging.getLogger(__name__)


class EpisodePlan:
    """What every episode of a run shares: the strategy, the models, the budget, the seed; and
    the tasks whose strategy options or budget differ (``RunConfig.task_settings``). A budget
    without ``max_seconds`` takes the model's default (``model_budget``)."""

    def __init__(
        self,
        *,
        run_id: str,
        strategy: ResolvedStrategy,
        models: ModelProvider,
        model_spec: ModelSpec,
        budget: Budget,
        seed: int,
        per_task: Mapping[str, tuple[ResolvedStrategy, Budget]] | None = None,
        world: WorldEngine | None = None,
        users: UserProvider | None = None,
    ) -> None:
        self.run_id = run_id
        self.users = users
        """Who plays the users of conversational tasks."""
        self.world = world
        """The suite's world: each episode's trajectory records its state checks."""
        self.strategy = strategy
        self.models = models
        self.model_spec = model_spec
        self.budget = model_budget(budget, model_spec)
        self.seed = seed
        self.per_task = {
            task: (strategy, model_budget(own, model_spec))
            for task, (strategy, own) in (per_task or {}).items()
        }

    def episodes_at_once(self, concurrency: int) -> int:
        """The episodes to run at once: ``concurrency``, at most the model's ``launch.slots``.
        More episodes than a server serves requests would only wait for it in turn, each with
        its wall clock (``max_seconds``) running while the others are served."""
        launch = self.model_spec.launch
        return min(concurrency, launch.slots) if launch and launch.slots else concurrency

    def for_task(self, task_id: str) -> tuple[ResolvedStrategy, Budget]:
        """The strategy and budget of the task's episodes."""
        return self.per_task.get(task_id, (self.strategy, self.budget))


def model_budget(budget: Budget, spec: ModelSpec) -> Budget:
    """``budget`` with the model's per-episode wall-clock default (``max_seconds`` of its alias
    in ``models.yaml``) where the run and the task set none."""
    if budget.max_seconds is not None or spec.max_seconds is None:
        return budget
    return budget.model_copy(update={"max_seconds": spec.max_seconds})


async def run_episode(plan: EpisodePlan, tools: ToolEnvs, task: Task, trial: int) -> Trajectory:
    """Run episode ``(task, trial)`` and return its trajectory (never raises for a bug in it)."""
    meta = EpisodeMeta(scenario_id=task.id, run_id=plan.run_id, trial=trial, seed=plan.seed)
    started = datetime.now(timezone.utc)
    strategy, budget = plan.for_task(task.id)
    what = agent_name(strategy)
    env = None
    try:
        env = tools.for_episode(task, session=f"{plan.run_id}/{task.id}/{trial}")
        if task.user is not None and plan.users is not None:
            env.user = plan.users.for_episode(task, seed=plan.seed, trial=trial)  # type: ignore[attr-defined]
        model = plan.models.for_episode(task, seed=plan.seed, trial=trial)
        agent = strategy.build()
        run = agent.run(model=model, env=env, query=task.query, budget=budget, episode=meta)
        grace = overrun_grace(agent)
        traj = _checked(await within_wall_clock(run, budget, grace), task, strategy)
    except SandboxError:
        raise
    except Overran as e:
        traj = failed_episode(
            plan,
            task,
            trial,
            kind="agent",
            reason="budget:max_seconds",
            started=started,
            message=f"{what} {e}",
            status=Status.budget_exhausted,
        )
    except asyncio.CancelledError as e:
        if cancelled_from_outside():  # Ctrl-C, SIGTERM: the run stops
            raise
        traj = _crashed(plan, task, trial, started, e, f"{what} raised it of its own")
    except (Exception, SystemExit, KeyboardInterrupt) as e:  # a bug in an agent or model
        if isinstance(e, ModelError) and e.configuration:
            raise EndpointConfigError(
                f"the model endpoint refused the run's configuration ({e.kind}): {e}; fix it, "
                "then run again (--resume RUN goes on with the episodes a run stored)"
            ) from e
        traj = _crashed(plan, task, trial, started, e, f"in {what} or its model")
    finally:
        if env is not None:
            await _reset(env)
    traj.run_id = plan.run_id
    traj.trial = trial
    if plan.world is not None and traj.nodes:
        traj.world = world_verdict(plan.world, task, traj).model_dump(mode="json")
    return redact_trajectory(traj)


def agent_name(strategy: ResolvedStrategy) -> str:
    """How messages name the strategy: ``agent 'react'``, and where a class outside the
    project comes from (``agent 'mine' (my_pkg.agents.Mine)``)."""
    cls = strategy.entry.cls
    if not is_foreign(cls):
        return f"agent {strategy.name!r}"
    return f"agent {strategy.name!r} ({cls.__module__}.{getattr(cls, '__qualname__', cls)})"


def _checked(value: Any, task: Task, strategy: ResolvedStrategy) -> Trajectory:
    """What the strategy returned, when it is a trajectory of ``task`` (``_BadReturn``); one of
    a strategy outside the project must also read back as readers read it."""
    what = agent_name(strategy)
    if not isinstance(value, Trajectory):
        raise _BadReturn(f"{what} returned {type(value).__name__}, not a Trajectory")
    if value.scenario_id != task.id:
        raise _BadReturn(
            f"{what} returned the trajectory of task {value.scenario_id!r}, not of {task.id!r}"
        )
    if not is_foreign(strategy.entry.cls):
        return value
    try:
        return Trajectory.from_json_line(value.to_json_line())
    except (ValueError, TypeError) as e:
        raise _BadReturn(
            f"{what} returned a trajectory no reader can read back: {raised_text(e)}"
        ) from e


class _BadReturn(Exception):
    """A strategy returned something that is not its episode's trajectory."""


async def _reset(env: Any) -> None:
    """Forget the episode's occurrence counts (a transport's own env may fail to: logged)."""
    try:
        await env.reset()
    except asyncio.CancelledError:
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as e:
        log.error("the episode's tool env failed to reset: %s", raised_text(e))


def _crashed(
    plan: EpisodePlan, task: Task, trial: int, started: datetime, e: BaseException, where: str
) -> Trajectory:
    """The record of an episode whose agent, model or tools raised ``e`` (``where``), or whose
    strategy returned what is not its trajectory (``_BadReturn``)."""
    tb = traceback.format_exc()
    if isinstance(e, _BadReturn):
        name, problem = "NotATrajectory", str(e)
    else:
        name, problem = type(e).__name__, f"{raised_text(e)} ({where})"
    # one line: the traceback is kept in the episode's error record
    log.error("episode %s#%d crashed: %s", task.id, trial, problem)
    return failed_episode(
        plan,
        task,
        trial,
        kind="internal",
        reason=f"internal_error:{name}",
        message=f"{problem}\n{tb}",
        started=started,
    )


def failed_episode(
    plan: EpisodePlan,
    task: Task,
    trial: int,
    *,
    kind: Literal["infra", "internal", "agent"],
    reason: str,
    message: str,
    started: datetime | None = None,
    status: Status = Status.error,
) -> Trajectory:
    """The record of an episode that produced no trajectory of its own (a crash in the agent or
    model, or, ``infra``, the machine running it lost): status ``error``, so ``--resume`` runs it
    again and it is never charged to the agent; or, ``agent``, a strategy stopped by the wall
    clock (``budget_exhausted``, charged to it)."""
    now = datetime.now(timezone.utc)
    strategy, _ = plan.for_task(task.id)
    traj = Trajectory(
        run_id=plan.run_id,
        scenario_id=task.id,
        trial=trial,
        agent=Component(name=strategy.name, params=strategy.params),
        model=Component(name=plan.model_spec.display_name, params=plan.model_spec.public()),
        seed=plan.seed,
        status=status,
        end_reason=reason,
        errors=[ErrorRecord(kind=kind, message=message)],
        started_at=started or now,
        ended_at=now,
    )
    return redact_trajectory(traj)
