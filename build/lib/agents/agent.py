"""The agent protocol: a strategy that drives a model against a tool env for one episode.

``Agent`` is what the harness calls; ``BaseAgent`` is the convenience base of the built-in
strategies (validated options in, ``params`` out). May import the agents' records (budget, model,
options, toolenv, trajectory), never a strategy.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel

from agents.budget import Budget
from agents.model import Model
from agents.options import AgentOptions
from agents.toolenv import ToolEnv
from agents.trajectory import Trajectory

OptionsT = TypeVar("OptionsT", bound=AgentOptions)


class EpisodeMeta(BaseModel):
    """Identity of an episode, copied into its trajectory."""

    scenario_id: str
    run_id: str = ""
    trial: int = 0
    seed: int = 0


@runtime_checkable
class Agent(Protocol):
    name: str

    @property
    def params(self) -> dict[str, Any]: ...

    async def run(
        self,
        *,
        model: Model,
        env: ToolEnv,
        query: str,
        budget: Budget,
        episode: EpisodeMeta,
    ) -> Trajectory:
        """Run one episode. Never raises for model, tool or budget trouble: those end the
        episode with a status; only bugs propagate."""
        ...


class BaseAgent(Generic[OptionsT]):
    """A strategy with validated options: ``Options`` is its options class.

    Build it from an options object (``DFSDTAgent(DFSDTOptions(width=3))``) or from keyword values
    (``DFSDTAgent(width=3)``); ``params`` (recorded in every trajectory) is the options dumped.
    """

    name: ClassVar[str]
    Options: ClassVar[type[AgentOptions]] = AgentOptions

    def __init__(self, options: OptionsT | None = None, /, **values: Any) -> None:
        if options is None:
            options = cast(OptionsT, self.Options(**values))
        elif values:
            raise TypeError(f"{type(self).__name__}: give an options object or keyword values")
        elif not isinstance(options, self.Options):
            raise TypeError(f"{type(self).__name__} takes {self.Options.__name__}")
        self.options: OptionsT = options

    @property
    def params(self) -> dict[str, Any]:
        return self.options.model_dump(mode="json")
