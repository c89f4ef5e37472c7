"""The kind ``fork``: the first K recorded steps of an episode, then a live model takes over.

"What would another model have done from here?" A forked run's config names the model ``fork``
with options ``{run, task, trial, until_step, then}``: every episode replays the chosen path of
the recorded episode up to step ``until_step`` (``agents.models.fork.ForkModel``), and every later
request goes to the model named ``then``, built through the registry like any other.
``sandbox.replay.fork.fork_run`` writes such a config. May import ``sandbox.store``,
``sandbox.models.provider`` and ``sandbox.models.specs`` only.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.model import Model
from agents.models.fork import ForkModel
from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.errors import ConfigError
from sandbox.models.provider import MODEL_KINDS, ModelProvider, ModelSettings, ModelSpec
from sandbox.models.specs import resolve_model
from sandbox.store.error_text import first_error
from sandbox.store.run_store import read_trajectories

__all__ = ["ForkModels", "ForkOptions", "build_fork", "forked_episode", "load_episode"]


class ForkOptions(BaseModel):
    """What a fork replays and who continues."""

    model_config = ConfigDict(extra="forbid")

    run: str = Field(description="The run folder the recorded steps come from.")
    task: str
    trial: int = Field(default=0, ge=0)
    until_step: int = Field(ge=0, description="Steps of the chosen path replayed first.")
    then: str = Field(description="The model that continues (any model name).")


def load_episode(run: str, task: str, trial: int) -> Trajectory:
    for traj in read_trajectories(run):
        if traj.scenario_id == task and traj.trial == trial:
            return traj
    raise ConfigError(f"run {run} has no episode {task!r} trial {trial}")


class ForkModels:
    def __init__(self, options: ForkOptions, recorded: Trajectory, live: ModelProvider) -> None:
        self.options = options
        self.recorded = recorded
        self.live = live

    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        live = self.live.for_episode(task, seed=seed, trial=trial)
        try:
            return ForkModel(self.recorded, self.options.until_step, live)
        except ValueError as e:
            raise ConfigError(f"cannot fork {self.options.task!r}: {e}") from e

    async def probe(self) -> None:
        await self.live.probe()

    async def aclose(self) -> None:
        await self.live.aclose()


def forked_episode(options: ForkOptions) -> Trajectory:
    """The recorded episode a fork replays; ``ConfigError`` when it is missing or too short."""
    recorded = load_episode(options.run, options.task, options.trial)
    steps = len(recorded.chosen_path)
    if options.until_step > steps:
        raise ConfigError(
            f"episode {options.task!r} has {steps} steps on its chosen path; "
            "--until-step must be at most that"
        )
    return recorded


def build_fork(spec: ModelSpec, settings: ModelSettings) -> ForkModels:
    try:
        options = ForkOptions.model_validate(spec.params)
    except ValidationError as e:
        raise ConfigError(
            f"model 'fork' needs run, task, until_step and then: {first_error(e)}"
        ) from e
    recorded = forked_episode(options)
    then = resolve_model(options.then, env=settings.env)
    if then.kind == "fork":
        raise ConfigError("a fork cannot continue with another fork")
    live = MODEL_KINDS.get(then.kind).build(then, settings)
    return ForkModels(options, recorded, live)
