"""The ``ray`` executor: a run's episodes on a Ray cluster, results streamed back to the driver.

``ray.init(address=ADDR)`` joins an existing cluster (``ray start --head`` prints the address);
without an address a private local Ray starts on this machine (``address="local"``: never
someone else's cluster; Ray itself binds the machine's address, not 127.0.0.1, and requires its
auth token) and stops with the run. The suite, the config and the resolved model spec (its
API key left out) are shipped once through the object store (``WorkerSetup``). Episodes run on
``EpisodeWorker`` actors, one CPU each, as many as the cluster has CPUs (at most
``--concurrency``): each opens the run's tools once, in process (``open_tool_envs``: the same
in-process mock tool server as a local run), builds the strategy and the models (API keys from the
worker's own environment) and runs ``sandbox.run.episode.run_episode``. So tool behaviour and
every episode are those of a local run.

The driver keeps at most ``--concurrency`` episodes in flight (each sent to the least busy
worker) and calls ``done`` as each comes back; it stays the only writer of the run folder. A
worker process that dies mid-episode is restarted by Ray, which runs its pending episodes again
(``max_restarts``, ``max_task_retries``); the episodes of a worker Ray gives up on run again on
the workers that are left, and only when every worker is lost does an episode become an
infrastructure error that ``--resume`` runs again. Nothing is written twice: an episode's result
reaches ``done`` once. Imports ``ray`` (the optional ``ray`` extra) at module import: the executor
registry imports this module only for ``--executor ray``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from agents.trajectory import Trajectory
from mock_tools import Suite, Task
from sandbox.errors import ConfigError, SandboxError
from sandbox.models import ModelSettings, ModelSpec, build_models, resolve_model
from sandbox.run.batch import EpisodeBatch, OnResult
from sandbox.run.episode import EpisodePlan, failed_episode, run_episode
from sandbox.store import RunConfig
from sandbox.store.setting import value_at
from sandbox.tool_envs import ToolEnvs, open_tool_envs
from sandbox.users import UserProvider

try:
    import ray
    from ray.exceptions import RayActorError, RayTaskError
except ImportError as e:  # pragma: no cover - depends on the install
    raise ConfigError(
        "--executor ray needs the ray extra: pip install 'agent-sandbox[ray]' "
        "(or `pip install -e '.[ray]'` in a checkout)"
    ) from e

__all__ = ["NAMESPACE", "EpisodeWorker", "RayExecutor", "WorkerSetup", "worker_name"]

NAMESPACE = "agent-sandbox"
"""The Ray namespace of the workers, each named ``worker_name(run_id, i)``."""


@dataclass
class WorkerSetup:
    """What every worker needs, shipped once through the object store."""

    config: RunConfig
    suite: Suite
    model_spec: ModelSpec
    run_id: str
    needs_key: bool


def worker_name(run_id: str, index: int) -> str:
    return f"episode-worker-{run_id}-{index}"


class EpisodeWorker:
    """A Ray actor: the run's tools and models, built once, and one episode per call."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self.tasks = {t.id: t for t in setup.suite.tasks}
        self._lock = asyncio.Lock()
        self._stack: AsyncExitStack | None = None
        self._plan: EpisodePlan | None = None
        self._tools: ToolEnvs | None = None

    async def _ready(self) -> tuple[EpisodePlan, ToolEnvs]:
        async with self._lock:
            if self._plan is None or self._tools is None:
                setup, config = self.setup, self.setup.config
                spec = setup.model_spec
                if setup.needs_key:  # the key never travels: this worker's environment has it
                    found = resolve_model(
                        config.model.name, options=config.model.options, env=os.environ
                    )
                    spec = spec.model_copy(update={"api_key": found.api_key})
                models = build_models(spec, ModelSettings.of(config.model, os.environ))
                stack = AsyncExitStack()
                self._tools = await stack.enter_async_context(
                    open_tool_envs(config, setup.suite, os.environ)
                )
                self._stack = stack
                self._plan = EpisodePlan(
                    run_id=setup.run_id,
                    strategy=config.strategy(),
                    models=models,
                    model_spec=spec,
                    budget=config.budget_for(),
                    seed=config.seed,
                    per_task={
                        t: (config.strategy(t), config.budget_for(t)) for t in config.task_settings
                    },
                    world=setup.suite.world,
                    users=UserProvider(config, setup.suite, os.environ)
                    if any(t.user for t in setup.suite.tasks)
                    else None,
                )
            return self._plan, self._tools

    async def run(self, task_id: str, trial: int) -> str:
        """Run one episode; its trajectory as one JSON line."""
        plan, tools = await self._ready()
        traj = await run_episode(plan, tools, self.tasks[task_id], trial)
        return traj.to_json_line()

    def pid(self) -> int:
        return os.getpid()


_RemoteWorker: Any = ray.remote(EpisodeWorker)


class RayExecutor:
    """Episodes on Ray actors (see the module docstring)."""

    def __init__(
        self, address: str | None, *, max_restarts: int = 3, object_store_mb: int = 200
    ) -> None:
        """Ray is joined (or started) when the run starts, not here. A lost worker is restarted
        ``max_restarts`` times; a private local Ray gets an object store of ``object_store_mb``
        (the ``ray`` executor's options, ``sandbox.run.executor.RayOptions``)."""
        self.address = address
        self.max_restarts = max_restarts
        self.object_store_mb = object_store_mb

    def tools_report(self) -> dict[str, Any]:
        """The tools are opened by each worker, in its own process: the run records where."""
        return {"transport": "in-process on each Ray worker"}

    async def run(self, batch: EpisodeBatch, done: OnResult) -> None:
        started = self._init()
        try:
            await self._run(batch, done)
        finally:
            if started:
                ray.shutdown()

    def _init(self) -> bool:
        """Join the cluster, or start a local one; True when this call started Ray."""
        if ray.is_initialized():
            return False
        where = self.address or "a private local Ray"
        try:
            if self.address:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
            else:
                ray.init(
                    address="local",
                    include_dashboard=False,
                    object_store_memory=self.object_store_mb * 1024 * 1024,
                    log_to_driver=False,
                    configure_logging=False,
                )
        except Exception as e:  # Ray raises many types here (connection, version, timeout)
            raise ConfigError(
                f"cannot start Ray ({where}): {type(e).__name__}: {e}; start a cluster with "
                "`ray start --head` and pass --ray-address, or drop --executor ray"
            ) from e
        return True

    async def _run(self, batch: EpisodeBatch, done: OnResult) -> None:
        config, plan = batch.config, batch.plan
        if not batch.todo:
            return
        setup = WorkerSetup(
            config=_shippable(config),
            suite=batch.suite,
            model_spec=plan.model_spec.model_copy(update={"api_key": None}),
            run_id=plan.run_id,
            needs_key=plan.model_spec.api_key is not None,
        )
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        concurrency = config.executor.concurrency
        n = max(1, min(concurrency, cpus, len(batch.todo)))
        per_worker = -(-concurrency // n)
        setup_ref = ray.put(setup)
        workers = [
            _RemoteWorker.options(
                max_restarts=self.max_restarts,
                max_task_retries=self.max_restarts,
                num_cpus=1,
                max_concurrency=per_worker,
                name=worker_name(plan.run_id, i),
                namespace=NAMESPACE,
            ).remote(setup_ref)
            for i in range(n)
        ]
        queue = deque(batch.todo)
        load = [0] * n
        lost: set[int] = set()  # workers Ray gave up restarting
        pending: dict[asyncio.Future[Any], tuple[Task, int, int, Any]] = {}

        def submit() -> None:
            while queue and len(pending) < concurrency:
                task, trial = queue.popleft()
                if not batch.spend.may_start():
                    continue
                i = min((j for j in range(n) if j not in lost), key=load.__getitem__)
                ref = workers[i].run.remote(task.id, trial)
                pending[asyncio.wrap_future(ref.future())] = (task, trial, i, ref)
                load[i] += 1

        try:
            submit()
            while pending:
                finished, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                results = []
                for future in finished:
                    task, trial, i, _ = pending.pop(future)
                    load[i] -= 1
                    if _worker_lost(future) and len(lost | {i}) < n:
                        lost.add(i)  # run it again on a worker that is still there
                        queue.appendleft((task, trial))
                        continue
                    results.append((task, trial, future))
                submit()  # the workers get their next episodes before the driver writes these
                for task, trial, future in results:
                    done(task, trial, _trajectory(plan, task, trial, future))
        finally:
            for _, _, _, ref in pending.values():
                with contextlib.suppress(Exception):
                    ray.cancel(ref)
            for worker in workers:
                with contextlib.suppress(Exception):
                    ray.kill(worker)


def _worker_lost(future: asyncio.Future[Any]) -> bool:
    return not future.cancelled() and isinstance(future.exception(), RayActorError)


def _trajectory(
    plan: EpisodePlan, task: Task, trial: int, future: asyncio.Future[Any]
) -> Trajectory:
    """The episode's trajectory, or the record of a worker lost for good; a ``SandboxError``
    raised in the worker (a tool server that cannot start, say) stops the run as it would
    locally."""
    try:
        return Trajectory.from_json_line(future.result())
    except RayActorError as e:
        return failed_episode(
            plan,
            task,
            trial,
            kind="infra",
            reason="worker_lost",
            message=f"the Ray worker running this episode was lost: {e}",
        )
    except RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, SandboxError):
            raise cause from None
        raise


def _shippable(config: RunConfig) -> RunConfig:
    """The config with its local paths made absolute (a worker may start elsewhere)."""
    paths = {}
    for path in ("suite", "model.cache", "tools.record_into"):
        value = value_at(config, path)
        if value and not os.path.isabs(value):
            paths[path] = os.path.abspath(value)
    return config.with_values(paths)
