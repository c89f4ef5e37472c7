"""The offline kind ``replay``: the assistant turns of a recorded run, episode by episode.

``replay:<run folder>`` serves each episode ``(task, trial)`` the turns its trajectory holds
(``agents.models.replay.ReplayModel``); a request the recording does not hold ends that episode
with a replay divergence. An external agent's episode (its trajectory holds the model exchanges
the agent made through the proxy) is served its recorded answers by position instead
(``agents.models.exchange.ExchangeReplayModel``). May import ``sandbox.store`` and
``sandbox.models.provider`` only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from agents.errors import ReplayDivergence
from agents.model import Message, Model, Turn
from agents.models.exchange import ExchangeReplayModel
from agents.models.replay import ReplayModel
from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.errors import ConfigError
from sandbox.models.provider import ModelSettings, ModelSpec, OfflineModels
from sandbox.store.run_store import read_trajectories

__all__ = ["ReplayModels", "ReplayOptions", "build_replay", "parse_run"]


class ReplayOptions(BaseModel):
    """What ``replay`` reads: the run whose turns it serves."""

    model_config = ConfigDict(extra="forbid")

    run: str


class ReplayModels(OfflineModels):
    def __init__(self, spec: ModelSpec) -> None:
        super().__init__(spec)
        run = str(spec.params.get("run") or "")
        self.run = run
        self.recorded: dict[tuple[str, int], Trajectory] = {
            (t.scenario_id, t.trial): t for t in read_trajectories(run)
        }

    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        recorded = self.recorded.get((task.id, trial))
        if recorded is None:  # a run cut short: this episode alone ends, as a divergence
            return Unrecorded(
                f"replay run {self.run} has no trajectory for task {task.id!r} trial {trial}"
            )
        if recorded.exchanges:
            return ExchangeReplayModel(recorded)
        return ReplayModel(recorded)


class Unrecorded:
    """The replay model of an episode its run does not hold: its first request diverges."""

    name = "replay"

    def __init__(self, message: str) -> None:
        self.message = message

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        raise ReplayDivergence(self.message)


def build_replay(spec: ModelSpec, settings: ModelSettings) -> ReplayModels:
    return ReplayModels(spec)


def parse_run(arg: str, name: str) -> dict[str, Any]:
    if not arg:
        raise ConfigError("model 'replay' needs a recorded run: replay:<run folder>")
    return {"run": arg}
